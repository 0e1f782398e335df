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
// a P already running would not make. On two cores, a soft server in event mode answered a
// NULL round trip in 32-37 µs with one P and in 48 µs with the default two.
//
// Where pollers wait in system calls (verbs in event mode: poll(2) on the completion channel)
// the runtime's default is better: with no idle P, the runtime gives the P of a thread blocked
// in a system call to another thread, a thread wake-up per wait. On rxe under TCG an
// event-mode NULL round trip took 683-706 µs with one P and 338-342 µs with two.
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
