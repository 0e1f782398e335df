package fanin

import "golang.org/x/sys/unix"

// cpuSet is the CPUs this process may run on (nil: unknown).
func cpuSet() []int {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(0, &s); err != nil {
		return nil
	}
	var cpus []int
	for i := range 1024 {
		if s.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}
