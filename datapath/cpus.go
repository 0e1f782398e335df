package datapath

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// CheckCPUs fails when a CPU of cpus is not one this process may run on, so that a caller
// can say so before it measures: pinning a poller to it would fail only once it started.
// Where AllowedCPUs cannot know (not Linux, a sandbox), pinning will say.
func CheckCPUs(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil
	}
	for _, c := range cpus {
		if !slices.Contains(allowed, c) {
			return fmt.Errorf("CPU %d is not available to this process (it may run on %s of %d CPUs)", c, FormatCPUs(allowed), runtime.NumCPU())
		}
	}
	return nil
}

// FormatCPUs writes ascending cpus as ranges: "0-3,6".
func FormatCPUs(cpus []int) string {
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
