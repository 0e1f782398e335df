package datapath

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	// Keep the main thread for the main goroutine. A poller that ran on the main thread would
	// leave it wedged rather than discarded (it cannot exit), which the test below checks.
	runtime.LockOSThread()
}

// affinityProbe records, from inside the poller's thread, what that thread's affinity is.
type affinityProbe struct {
	set    unix.CPUSet
	tid    int
	err    error
	probed bool
}

func (a *affinityProbe) Handle([]Completion) error { return a.probe() }
func (a *affinityProbe) Idle() error               { return a.probe() }

func (a *affinityProbe) probe() error {
	if !a.probed {
		a.probed = true
		a.err = unix.SchedGetaffinity(0, &a.set)
		a.tid = unix.Gettid()
	}
	return ErrStopPoller
}

func TestPollerPinsItsThread(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) == 0 {
		t.Fatal("AllowedCPUs is empty")
	}
	// CPU 0 if the process may use it, and the last allowed CPU, so that a poller that
	// merely inherited a one-CPU mask cannot pass for both.
	cpus := []int{allowed[0], allowed[len(allowed)-1]}
	if allowed[0] != 0 {
		t.Logf("CPU 0 is outside this process's CPU set %v (taskset or cgroup cpuset); testing %v", allowed, cpus)
	}
	for _, cpu := range cpus {
		h := &affinityProbe{}
		p := NewPoller(PollerConfig{Pin: true, CPU: cpu})
		p.Start(emptyCQ{}, h)
		if err := p.Wait(); err != nil {
			t.Fatalf("pinned to %d: %v", cpu, err)
		}
		if h.err != nil {
			t.Fatalf("sched_getaffinity in the poller thread: %v", h.err)
		}
		if h.set.Count() != 1 || !h.set.IsSet(cpu) {
			t.Fatalf("poller thread affinity has %d CPUs (cpu %d set: %v), want exactly CPU %d", h.set.Count(), cpu, h.set.IsSet(cpu), cpu)
		}
		if got := p.Stats().CPU; got != cpu {
			t.Fatalf("Stats().CPU = %d, want %d", got, cpu)
		}
		// The goroutine exited while locked, so the runtime must discard the pinned thread
		// rather than hand it to other goroutines.
		if h.tid == os.Getpid() {
			// The main thread cannot exit; the runtime wedges it instead, still unusable
			// by other goroutines.
			t.Logf("poller ran on the main thread %d, which the runtime keeps wedged", h.tid)
			continue
		}
		task := fmt.Sprintf("/proc/self/task/%d", h.tid)
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pinned thread %d still exists 5s after its poller ended", h.tid)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Unpinned: the thread keeps the process's mask.
	h := &affinityProbe{}
	p := NewPoller(PollerConfig{})
	p.Start(emptyCQ{}, h)
	if err := p.Wait(); err != nil || h.set.Count() != len(allowed) || p.Stats().CPU != -1 {
		t.Fatalf("unpinned poller: %v, %d CPUs in mask, want %d; stats CPU %d", err, h.set.Count(), len(allowed), p.Stats().CPU)
	}
}

func TestPollerPinErrors(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	// A CPU beyond the allowed set (the highest a CPUSet can name is as good as any).
	bad := 1023
	if allowed[len(allowed)-1] >= bad {
		t.Skipf("this machine allows CPU %d; no CPU number outside its set to test with", bad)
	}
	for _, cpu := range []int{bad, -1, 5000} {
		p := NewPoller(PollerConfig{Pin: true, CPU: cpu})
		err := runInGoroutine(p, emptyCQ{}, &recorder{})
		var oe *OpError
		if !errors.As(err, &oe) || !errors.Is(err, unix.EINVAL) || oe.Op != fmt.Sprintf("sched_setaffinity cpu %d", cpu) {
			t.Fatalf("pinning to CPU %d: %v, want an EINVAL OpError naming the CPU", cpu, err)
		}
	}
}

func TestDefaultCPUPickerUsesAllowedSet(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	for _, l := range strings.Split(string(b), "\n") {
		list, ok := strings.CutPrefix(l, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		for _, r := range strings.Split(strings.TrimSpace(list), ",") {
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			a, _ := strconv.Atoi(lo)
			z, _ := strconv.Atoi(hi)
			for c := a; c <= z; c++ {
				set.Set(c)
			}
		}
	}
	if len(allowed) != set.Count() {
		t.Fatalf("AllowedCPUs %v, Cpus_allowed_list has %d", allowed, set.Count())
	}
	for _, c := range allowed {
		if !set.IsSet(c) {
			t.Fatalf("AllowedCPUs %v has %d, not in Cpus_allowed_list", allowed, c)
		}
	}
	c, err := NewCPUPicker()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2*len(allowed); i++ {
		if got := c.Next(); got != allowed[i%len(allowed)] {
			t.Fatalf("pick %d = %d, want %d from %v", i, got, allowed[i%len(allowed)], allowed)
		}
	}
}

func BenchmarkPollerRunEmptyPinned(b *testing.B) {
	allowed, err := AllowedCPUs()
	if err != nil {
		b.Fatal(err)
	}
	benchmarkRunEmpty(b, PollerConfig{Pin: true, CPU: allowed[len(allowed)-1]})
}

// cpusFromPinned calls AllowedCPUs on a pinned poller's thread.
type cpusFromPinned struct {
	cpus []int
	err  error
}

func (c *cpusFromPinned) Handle([]Completion) error { return c.Idle() }
func (c *cpusFromPinned) Idle() error {
	c.cpus, c.err = AllowedCPUs()
	return ErrStopPoller
}

func TestAllowedCPUsFromPinnedThread(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) < 2 {
		t.Skipf("the process may only use CPU %v; pinning cannot narrow that", allowed)
	}
	h := &cpusFromPinned{}
	p := NewPoller(PollerConfig{Pin: true, CPU: allowed[0]})
	p.Start(emptyCQ{}, h)
	if err := p.Wait(); err != nil || h.err != nil {
		t.Fatal(err, h.err)
	}
	if fmt.Sprint(h.cpus) != fmt.Sprint(allowed) {
		t.Fatalf("AllowedCPUs on a thread pinned to %d = %v, want the process set %v", allowed[0], h.cpus, allowed)
	}
}
