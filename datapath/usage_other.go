//go:build !linux

package datapath

// SelfThreadUsage needs Linux's RUSAGE_THREAD.
func SelfThreadUsage() (ThreadUsage, error) {
	return ThreadUsage{}, &OpError{Op: "getrusage RUSAGE_THREAD", Err: ErrNotSupported}
}

// Gettid is Linux only; elsewhere it returns -1.
func Gettid() int { return -1 }

// HostCPUPressure needs Linux's pressure stall information.
func HostCPUPressure() (float64, error) {
	return 0, &OpError{Op: "read /proc/pressure/cpu", Err: ErrNotSupported}
}
