package datapath

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// PinThread restricts the calling thread (sched_setaffinity with pid 0 names the thread, not
// the process) to cpu. The caller has locked its goroutine to the thread
// (runtime.LockOSThread) and never unlocks it, so the affinity dies with the thread.
func PinThread(cpu int) error {
	var set unix.CPUSet
	if cpu < 0 || cpu >= len(set)*64 {
		return &OpError{Op: fmt.Sprintf("sched_setaffinity cpu %d", cpu), Err: unix.EINVAL}
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		// EINVAL here means cpu is offline or outside the process's cpuset.
		return &OpError{Op: fmt.Sprintf("sched_setaffinity cpu %d", cpu), Err: err}
	}
	return nil
}

// AllowedCPUs lists the CPUs the process may run on (the affinity taskset, cgroup cpusets and
// container CPU limits set), ascending.
func AllowedCPUs() ([]int, error) {
	// Affinity is per thread, and the caller's thread (or the main thread, if a poller ever
	// ran there) may be pinned. A fresh goroutine is unlocked, and unlocked goroutines never
	// run on a poller's thread, so its thread has the process's mask.
	type result struct {
		set unix.CPUSet
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		r.err = unix.SchedGetaffinity(0, &r.set)
		ch <- r
	}()
	r := <-ch
	if r.err != nil {
		return nil, &OpError{Op: "sched_getaffinity", Err: r.err}
	}
	var cpus []int
	for c := 0; c < len(r.set)*64; c++ {
		if r.set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
