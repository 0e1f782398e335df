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

// HostCPUPressure is the share of the last 10 s in which some runnable task on this host
// waited for a CPU (/proc/pressure/cpu, "some avg10", in percent), or an error wrapping
// ErrNotSupported where the kernel has no pressure stall information.
func HostCPUPressure() (float64, error) {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0, &OpError{Op: "read /proc/pressure/cpu", Err: errors.Join(ErrNotSupported, err)}
	}
	return parsePressure(b)
}

// parsePressure reads "some avg10=1.23 avg60=... total=..." from a PSI file.
func parsePressure(b []byte) (float64, error) {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("some "))
		if !ok {
			continue
		}
		for f := range bytes.FieldsSeq(rest) {
			if v, ok := bytes.CutPrefix(f, []byte("avg10=")); ok {
				p, err := strconv.ParseFloat(string(v), 64)
				if err != nil || p < 0 || p > 100 {
					return 0, &OpError{Op: "parse /proc/pressure/cpu", Err: errors.New("bad avg10 " + strconv.Quote(string(v)))}
				}
				return p, nil
			}
		}
	}
	return 0, &OpError{Op: "parse /proc/pressure/cpu", Err: errors.New(`no "some avg10=" field`)}
}
