package main

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// checkCPUs fails when a CPU of --cpus is not one this process may run on, before anything
// is measured: pinning a poller to it would fail only once the run has started.
func checkCPUs(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	allowed, err := datapath.AllowedCPUs()
	if err != nil {
		// Not knowable here (not Linux, a sandbox): pinning will say.
		return nil
	}
	for _, c := range cpus {
		if !slices.Contains(allowed, c) {
			return fmt.Errorf("--cpus: CPU %d is not available to this process (it may run on %s of %d CPUs)", c, cpuList(allowed), runtime.NumCPU())
		}
	}
	return nil
}

// cpuList writes ascending cpus as ranges: "0-3,6".
func cpuList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); i++ {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		p := strconv.Itoa(cpus[i])
		if j > i {
			p += "-" + strconv.Itoa(cpus[j])
		}
		parts = append(parts, p)
		i = j
	}
	return strings.Join(parts, ",")
}
