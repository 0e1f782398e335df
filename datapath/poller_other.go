//go:build !linux

package datapath

import "fmt"

// PinThread pins the calling thread to cpu; thread affinity is only implemented on Linux,
// the platform the benchmark targets.
func PinThread(cpu int) error {
	return &OpError{Op: fmt.Sprintf("sched_setaffinity cpu %d", cpu), Err: ErrNotSupported}
}

// AllowedCPUs lists the CPUs the process may run on; only implemented on Linux.
func AllowedCPUs() ([]int, error) {
	return nil, &OpError{Op: "sched_getaffinity", Err: ErrNotSupported}
}
