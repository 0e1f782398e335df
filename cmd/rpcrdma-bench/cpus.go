package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// cpuSetSize is the number of CPUs a unix.CPUSet holds (glibc's CPU_SETSIZE).
const cpuSetSize = 1024

// checkCPUs fails when a CPU of --cpus is not one this process may run on, before anything
// is measured: pinning a poller to it would fail only once the run has started.
func checkCPUs(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		// Not knowable here (not Linux, a sandbox): pinning will say.
		return nil
	}
	for _, c := range cpus {
		if c < 0 || !set.IsSet(c) {
			return fmt.Errorf("--cpus: CPU %d is not available to this process (it may run on %s of %d CPUs)", c, cpuList(&set), runtime.NumCPU())
		}
	}
	return nil
}

// cpuList writes set as ranges: "0-3,6".
func cpuList(set *unix.CPUSet) string {
	var parts []string
	for c := 0; c < cpuSetSize; c++ {
		if !set.IsSet(c) {
			continue
		}
		e := c
		for e+1 < cpuSetSize && set.IsSet(e+1) {
			e++
		}
		if e == c {
			parts = append(parts, strconv.Itoa(c))
		} else {
			parts = append(parts, strconv.Itoa(c)+"-"+strconv.Itoa(e))
		}
		c = e
	}
	return strings.Join(parts, ",")
}
