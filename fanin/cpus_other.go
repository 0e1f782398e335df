//go:build !linux

package fanin

// cpuSet is the CPUs this process may run on (nil: unknown).
func cpuSet() []int { return nil }
