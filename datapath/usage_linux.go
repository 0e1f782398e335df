package datapath

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// SelfThreadUsage reads the calling thread's usage (getrusage RUSAGE_THREAD): one system
// call, for a poller to read at the edges of a measured interval on its own locked thread.
func SelfThreadUsage() (ThreadUsage, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return ThreadUsage{}, &OpError{Op: "getrusage RUSAGE_THREAD", Err: err}
	}
	return ThreadUsage{
		CPU:         time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		Involuntary: uint64(ru.Nivcsw),
		Voluntary:   uint64(ru.Nvcsw),
	}, nil
}

// Gettid is the calling thread's id.
func Gettid() int { return unix.Gettid() }

// HostCPU is a reading of the host's CPU accounting; two readings give what happened between
// them (HostCPU.Since).
type HostCPU struct {
	// BusyTicks and TotalTicks sum the first "cpu" line of /proc/stat (USER_HZ ticks): busy
	// is everything but idle and iowait; guest time is already inside user.
	BusyTicks, TotalTicks uint64
	// StallUs is /proc/pressure/cpu's "some total" (µs in which some runnable task waited
	// for a CPU); HasStall false where the kernel has no pressure stall information.
	StallUs  uint64
	HasStall bool
	// SelfNs is the CPU time this process has used.
	SelfNs int64
	// Wall is when the reading was taken.
	Wall time.Time
}

// userHZ is the unit of /proc/stat's times, fixed at 100 on every Linux architecture.
const userHZ = 100

// ReadHostCPU reads the host's CPU accounting: /proc/stat, /proc/pressure/cpu (optional) and
// this process's usage.
func ReadHostCPU() (HostCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return HostCPU{}, &OpError{Op: "read /proc/stat", Err: err}
	}
	h, err := parseStat(b)
	if err != nil {
		return HostCPU{}, err
	}
	if b, err := os.ReadFile("/proc/pressure/cpu"); err == nil {
		if v, err := parseStall(b); err == nil {
			h.StallUs, h.HasStall = v, true
		}
	}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return HostCPU{}, &OpError{Op: "getrusage RUSAGE_SELF", Err: err}
	}
	h.SelfNs = ru.Utime.Nano() + ru.Stime.Nano()
	h.Wall = time.Now()
	return h, nil
}

// Since returns, between earlier and h, the share of wall time in which some task on the host
// waited for a CPU (percent; pressureOK false without pressure stall information) and the
// share of the host's CPU time that other processes used (percent; otherOK false over less
// than minTicks of CPU time, where tick sampling would decide it). The first counts this
// process's own threads waiting for each other; the second is what a neighbour took.
func (h HostCPU) Since(earlier HostCPU) (pressure float64, pressureOK bool, other float64, otherOK bool) {
	if wall := h.Wall.Sub(earlier.Wall); h.HasStall && earlier.HasStall && wall > 0 && h.StallUs >= earlier.StallUs {
		pressure, pressureOK = min(100, 100*float64(h.StallUs-earlier.StallUs)*1e3/float64(wall)), true
	}
	if h.TotalTicks >= earlier.TotalTicks+minTicks && h.BusyTicks >= earlier.BusyTicks {
		tick := float64(time.Second / userHZ)
		busy := float64(h.BusyTicks-earlier.BusyTicks) * tick
		self := float64(h.SelfNs - earlier.SelfNs)
		other, otherOK = min(100, max(0, 100*(busy-self)/(float64(h.TotalTicks-earlier.TotalTicks)*tick))), true
	}
	return pressure, pressureOK, other, otherOK
}

// minTicks is the least CPU time (in USER_HZ ticks, summed over the CPUs) over which Since
// tells other processes' share: /proc/stat samples a tick at a time, so a few ticks more or
// less would move a shorter span's share by tens of percent.
const minTicks = 50

// parseStat reads the aggregate "cpu user nice system idle iowait irq softirq steal guest
// guest_nice" line of /proc/stat.
func parseStat(b []byte) (HostCPU, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return HostCPU{}, &OpError{Op: "parse /proc/stat", Err: errors.New(`no aggregate "cpu" line first`)}
	}
	var h HostCPU
	for i, v := range f[1:min(len(f), 9)] { // user .. steal; guest is inside user
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return HostCPU{}, &OpError{Op: "parse /proc/stat", Err: errors.New("bad cpu time " + strconv.Quote(string(v)))}
		}
		h.TotalTicks += n
		if i != 3 && i != 4 { // idle, iowait
			h.BusyTicks += n
		}
	}
	return h, nil
}

// parseStall reads "some avg10=... total=N" from a PSI file.
func parseStall(b []byte) (uint64, error) {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("some "))
		if !ok {
			continue
		}
		for f := range bytes.FieldsSeq(rest) {
			if v, ok := bytes.CutPrefix(f, []byte("total=")); ok {
				n, err := strconv.ParseUint(string(v), 10, 64)
				if err != nil {
					return 0, &OpError{Op: "parse /proc/pressure/cpu", Err: errors.New("bad total " + strconv.Quote(string(v)))}
				}
				return n, nil
			}
		}
	}
	return 0, &OpError{Op: "parse /proc/pressure/cpu", Err: errors.New(`no "some total=" field`)}
}
