package datapath

import (
	"os"
	"runtime"
)

// Procs is how many Ps (GOMAXPROCS) a process needs for the pollers whose wait policies are
// polls: one per poller, and one more for everything else (the soft provider's socket
// goroutines, RDMA-CM events, the session's sampler) when every poller may spin, since a
// spinning poller keeps its P.
//
// It is meant for providers whose completions come from goroutines of the process (soft over
// TCP), where more Ps than that cost time instead of saving it. A P with nothing to do parks
// its thread; a goroutine made runnable (a poller woken by its CQ, a socket writer handed a
// frame) then wakes that thread through a futex and runs there, a thread hop per message that
// a P already running would not make (figures: docs/performance.md).
//
// Where pollers wait in system calls (verbs in event mode: poll(2) on the completion channel)
// the runtime's default is better: with no idle P, the runtime gives the P of a thread blocked
// in a system call to another thread, a thread wake-up per wait. There EnsureProcs keeps the default and only adds the P a spinning poller needs beside it.
func Procs(polls []Poll) int {
	spinning := 0
	for _, p := range polls {
		if p.Mode != PollEvent {
			spinning++
		}
	}
	return max(len(polls), spinning+1)
}

// SizeRuntime sets GOMAXPROCS to Procs(polls), unless the GOMAXPROCS environment variable
// already set it, and returns the value in effect.
func SizeRuntime(polls []Poll) int {
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	n := Procs(polls)
	runtime.GOMAXPROCS(n)
	return n
}

// EnsureProcs raises GOMAXPROCS to Procs(polls) when it is lower, unless the GOMAXPROCS
// environment variable set it, and returns the value in effect. It is for providers whose
// pollers spend their time in cgo calls (verbs), where the runtime's default (one P per CPU)
// is right unless spinning pollers take every P.
//
// With no idle P, the runtime's sysmon takes the P of a thread that has been in one cgo call
// for more than one of its ticks (20 µs to 10 ms), and every P it takes sets it ticking every
// 20 µs again. A verbs post that rings the doorbell of a software device does the device's
// work inside the call (tens of µs on rxe under emulation), so spinning pollers that hold
// every P kept sysmon waking thousands of times a second, each wake taking a CPU from a
// poller. One idle P stops that: sysmon then leaves a P in a cgo call alone for 10 ms
// (figures: docs/performance.md).
func EnsureProcs(polls []Poll) int {
	cur := runtime.GOMAXPROCS(0)
	if os.Getenv("GOMAXPROCS") != "" {
		return cur
	}
	if n := Procs(polls); n > cur {
		runtime.GOMAXPROCS(n)
		return n
	}
	return cur
}
