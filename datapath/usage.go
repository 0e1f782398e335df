package datapath

import "time"

// ThreadUsage is what the kernel accounted to one thread (a poller's), read at two moments
// to tell whether the poller had a CPU to itself: a busy poller that got one ran for the whole
// interval and was never switched out against its will.
type ThreadUsage struct {
	// CPU is user plus system time.
	CPU time.Duration `json:"cpu_ns"`
	// Involuntary counts the times the scheduler took the CPU away from the thread
	// (nonvoluntary context switches); Voluntary the times it blocked (waited).
	Involuntary uint64 `json:"involuntary_switches"`
	Voluntary   uint64 `json:"voluntary_switches"`
}

// Sub returns u - earlier: the usage of the interval between the two readings.
func (u ThreadUsage) Sub(earlier ThreadUsage) ThreadUsage {
	return ThreadUsage{CPU: u.CPU - earlier.CPU, Involuntary: u.Involuntary - earlier.Involuntary, Voluntary: u.Voluntary - earlier.Voluntary}
}
