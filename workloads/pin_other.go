//go:build !linux

package workloads

import (
	"errors"
	"fmt"
	"runtime"
)

// lockAndPin locks the goroutine to its thread; pinning needs Linux.
func lockAndPin(cpu int) error {
	runtime.LockOSThread()
	if cpu >= 0 {
		return &PinError{CPU: cpu, Err: errors.New("not supported on " + runtime.GOOS)}
	}
	return nil
}

// PinError is a poller thread that could not be pinned to its CPU.
type PinError struct {
	CPU int
	Err error
}

func (e *PinError) Error() string { return fmt.Sprintf("pin to cpu %d: %v", e.CPU, e.Err) }
func (e *PinError) Unwrap() error { return e.Err }
