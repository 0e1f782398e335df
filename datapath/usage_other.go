//go:build !linux

package datapath

// SelfThreadUsage needs Linux's RUSAGE_THREAD.
func SelfThreadUsage() (ThreadUsage, error) {
	return ThreadUsage{}, &OpError{Op: "getrusage RUSAGE_THREAD", Err: ErrNotSupported}
}

// Gettid is Linux only; elsewhere it returns -1.
func Gettid() int { return -1 }

// HostCPU is a reading of the host's CPU accounting (Linux only).
type HostCPU struct{}

// ReadHostCPU needs Linux's /proc/stat.
func ReadHostCPU() (HostCPU, error) {
	return HostCPU{}, &OpError{Op: "read /proc/stat", Err: ErrNotSupported}
}

// Since has nothing to say without Linux's accounting.
func (h HostCPU) Since(earlier HostCPU) (pressure float64, pressureOK bool, other float64, otherOK bool) {
	return 0, false, 0, false
}
