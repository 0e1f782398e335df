package datapath

import (
	"runtime"
	"sync/atomic"
	"time"
)

// HostSpeed is how fast the host ran plain code at one moment, on the slowest of the CPUs
// probed: the same binary on the same machine reads the same figures within a few percent,
// so a comparison can tell a runner that slowed down (a neighbour on a shared core, a lower
// clock) from a change in the transport, whose code the probe does not run.
type HostSpeed struct {
	// ComputeNs is the time of one step of a dependent chain of integer operations: the
	// core's clock and its share of a shared core.
	ComputeNs float64
	// CopyNsPerKiB is the time a 256 KiB memory copy took per KiB: the caches and the
	// memory path as a neighbour contends for them.
	CopyNsPerKiB float64
	// PingPongNs is the round trip of a cache line between threads on two CPUs, the path
	// every message of an in-process requester and responder takes: where the host placed
	// the CPUs relative to each other. 0 with one CPU.
	PingPongNs float64
	// CPUs counts the CPUs probed.
	CPUs int
}

// Probe sizes: a chain step is a few ns, so a repetition of the chain lasts about 0.1 ms and
// one of the copy some µs, each far below a scheduler slice: the fastest of several missed
// every preemption.
const (
	probeChain      = 1 << 15
	probeChainReps  = 9
	probeCopyBytes  = 256 << 10
	probeCopyReps   = 31
	probeMaxCPUs    = 8
	probePings      = 1000
	probePingReps   = 7
	probePingStall  = 20 * time.Millisecond
	probeChainInit  = 0x9E3779B97F4A7C15
	probeChainMulti = 0x2545F4914F6CDD1D
)

// ProbeHost measures HostSpeed on each CPU the process may run on (the first 8), a thread
// pinned to each in turn, and between each CPU and the next, and reports the slowest figures:
// a measurement is as fast as the slowest CPU it runs on. It takes about 2 ms per CPU. Where
// threads cannot be pinned it probes the CPU it runs on.
func ProbeHost() HostSpeed {
	cpus, err := AllowedCPUs()
	if err != nil || len(cpus) == 0 {
		cpus = []int{-1}
	}
	cpus = cpus[:min(len(cpus), probeMaxCPUs)]
	ch := make(chan HostSpeed, 1)
	go func() {
		// The pinned thread is never unlocked: it exits with the goroutine, its affinity
		// with it.
		runtime.LockOSThread()
		src, dst := make([]byte, probeCopyBytes), make([]byte, probeCopyBytes)
		for i := range src {
			src[i] = byte(i)
		}
		copy(dst, src) // first touch: page faults are not the host's speed
		var hs HostSpeed
		probe := func() {
			hs.CPUs++
			hs.ComputeNs = max(hs.ComputeNs, ChainStepNs(probeChain, probeChainReps))
			hs.CopyNsPerKiB = max(hs.CopyNsPerKiB, fastest(probeCopyReps, func() { copy(dst, src) })/(probeCopyBytes>>10))
		}
		for _, c := range cpus {
			if c < 0 || PinThread(c) == nil {
				probe()
			}
		}
		if hs.CPUs == 0 {
			probe() // no CPU would take the thread: the one it runs on
		}
		for i := 1; i < len(cpus) && cpus[0] >= 0; i++ {
			if PinThread(cpus[i-1]) == nil {
				hs.PingPongNs = max(hs.PingPongNs, pingPong(cpus[i]))
			}
		}
		ch <- hs
	}()
	return <-ch
}

// Chain runs n steps of xorshift-multiply, each depending on the one before: work of a
// steady cost per step that the compiler cannot drop (the result depends on every step).
// The probe times it, and the soft provider's post cost spins with it. Not inlined:
// functions start 32-byte aligned, so its loop sits alike in every build and the figure
// compares across builds of different code.
//
//go:noinline
func Chain(n int) uint64 {
	x := uint64(probeChainInit)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		x *= probeChainMulti
	}
	return x
}

// ChainStepNs is the time of one Chain step on the calling thread, in ns: the fastest of
// reps runs of n steps.
func ChainStepNs(n, reps int) float64 {
	return fastest(reps, func() { runtime.KeepAlive(Chain(n)) }) / float64(n)
}

// fastest runs f reps times and returns its fastest run in ns.
func fastest(reps int, f func()) float64 {
	best := time.Duration(1<<63 - 1)
	for range reps {
		t := time.Now()
		f()
		best = min(best, time.Since(t))
	}
	return float64(best.Nanoseconds())
}

// pingPong is the fastest round trip, ns, of a cache line between the calling thread (pinned)
// and a thread pinned to cpu; 0 when cpu would not take the thread or the exchange stalled
// (the host did not run one of the two CPUs).
func pingPong(cpu int) float64 {
	var line struct {
		_ [64]byte // a line of its own: no neighbour's writes in the round trip
		v atomic.Uint64
		_ [56]byte
	}
	var stop atomic.Bool
	pinned, done := make(chan bool), make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
		ok := PinThread(cpu) == nil
		pinned <- ok
		for want := uint64(1); ok; want += 2 {
			for line.v.Load() != want {
				if stop.Load() {
					return
				}
			}
			line.v.Store(want + 1)
		}
	}()
	if !<-pinned {
		<-done
		return 0
	}
	defer func() { stop.Store(true); <-done }()
	best, v := time.Duration(1<<63-1), uint64(0)
	for range probePingReps {
		t := time.Now()
		for range probePings {
			line.v.Store(v + 1)
			v += 2
			for spins := 1; line.v.Load() != v; spins++ {
				if spins&1023 == 0 && time.Since(t) > probePingStall {
					return 0
				}
			}
		}
		best = min(best, time.Since(t))
	}
	return float64(best.Nanoseconds()) / probePings
}
