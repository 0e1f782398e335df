package datapath

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// PollMode is how a polling loop waits when its completion queue is empty.
type PollMode uint8

const (
	// PollBusy spins on CQ.Poll: the lowest latency, one CPU fully used per poller whether
	// or not there is traffic.
	PollBusy PollMode = iota
	// PollEvent blocks in CQ.Wait whenever a poll finds nothing (the completion channel, in
	// verbs terms): no CPU while idle, a wakeup (a system call and a scheduler hop, tens of
	// microseconds) on the latency of every RPC that finds the poller asleep.
	PollEvent
	// PollHybrid spins after the last completion and then blocks like PollEvent: a loaded
	// poller never sleeps, an idle one stops using the CPU. With no Poll.Spin it adapts its
	// spin to the time between its completions, from DefaultHybridSpin up to 20 times that,
	// so that a closed loop of long round trips does not sleep between them (see Idler);
	// with one it spins exactly that long.
	PollHybrid
)

func (m PollMode) String() string {
	switch m {
	case PollBusy:
		return "busy"
	case PollEvent:
		return "event"
	case PollHybrid:
		return "hybrid"
	}
	return "unknown"
}

// DefaultHybridSpin is the least an adaptive hybrid poller (Spin zero) spins after its last
// completion: a few round trips of a fast device or of a small RPC over a slow software one
// (soft over TCP, rxe); it spins longer when its completions come further apart.
const DefaultHybridSpin = 50 * time.Microsecond

// Poll is a polling loop's wait policy, as the CLI spells it: "busy", "event",
// "hybrid" or "hybrid:SPIN" (a Go duration such as 50us).
type Poll struct {
	Mode PollMode
	// Spin is how long a hybrid poller spins after its last completion; 0 adapts it to the
	// time between completions, from DefaultHybridSpin up to 20 times that. A fixed spin
	// suits a poller that shares its CPUs with what makes its completions (the soft
	// provider's goroutines), where spinning longer only delays them. Ignored by the other
	// modes.
	Spin time.Duration
}

// ParsePoll parses the CLI form of a Poll.
func ParsePoll(s string) (Poll, error) {
	name, spin, hasSpin := strings.Cut(s, ":")
	var p Poll
	switch name {
	case "busy":
		p.Mode = PollBusy
	case "event":
		p.Mode = PollEvent
	case "hybrid":
		p.Mode = PollHybrid
	default:
		return Poll{}, errors.New("poll mode " + strconv.Quote(s) + ": want busy, event, hybrid or hybrid:SPIN (e.g. hybrid:50us)")
	}
	if hasSpin {
		if p.Mode != PollHybrid {
			return Poll{}, errors.New("poll mode " + strconv.Quote(s) + ": only hybrid takes a spin time")
		}
		d, err := time.ParseDuration(spin)
		if err != nil || d <= 0 {
			return Poll{}, errors.New("poll mode " + strconv.Quote(s) + ": the spin time must be a positive duration such as 50us")
		}
		p.Spin = d
	}
	return p, nil
}

// Normalized drops a spin from the policies that take none.
func (p Poll) Normalized() Poll {
	if p.Mode != PollHybrid || p.Spin < 0 {
		p.Spin = 0
	}
	return p
}

func (p Poll) String() string {
	p = p.Normalized()
	if p.Mode == PollHybrid && p.Spin > 0 {
		return "hybrid:" + p.Spin.String()
	}
	return p.Mode.String()
}

// MarshalText makes a Poll read as its CLI form in configs and results files.
func (p Poll) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses the CLI form; empty means busy.
func (p *Poll) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*p = Poll{}
		return nil
	}
	v, err := ParsePoll(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Idler applies a Poll policy in a polling loop without reading the clock on the busy path:
// the loop calls Active after a poll that found work and ShouldWait after one that found
// nothing; ShouldWait reads the clock only every idleCheckEvery empty polls (of a streak, in
// hybrid mode). It also passes through the Go scheduler at most every YieldEvery, in every
// mode, so that the runtime never has to preempt the loop; the clock checks for that pass
// come every idleCheckEvery empty polls while polls are quick, and more often when they are
// not (see yieldSlack). The zero value is a busy policy on the runtime's clock.
//
// An adaptive hybrid Idler (Poll.Spin zero) fits its spin to the loop's own traffic. A fixed
// spin shorter than the time between a closed loop's completions (a round trip of a large
// RPC, a slow peer) puts a wakeup on every round trip (figures: docs/performance.md). So the
// Idler keeps a moving average of how long the loop went without
// work before work came, over the streaks no longer than a cap (spinCapFactor times
// DefaultHybridSpin; longer ones are idle periods, not traffic), and spins for twice that,
// never less than DefaultHybridSpin and never more than the cap: a loop whose work keeps
// coming does not sleep, sparse work costs no more spinning than a fixed spin, and an idle
// loop still stops using the CPU after at most the cap.
type Idler struct {
	mode  PollMode
	clock func() int64
	// base is the configured spin, limit the most it adapts to, spin the spin now (all ns);
	// gap is the moving average of the idle streaks that ended in work.
	base, limit, spin, gap int64
	// streak counts empty polls since the last active one; since is the clock at the
	// streak's first empty poll and last at its latest clock check; waited says the streak
	// went into CQ.Wait.
	streak      uint32
	since, last int64
	waited      bool
	// empties counts empty polls since the yield's last clock check, which comes every
	// every-th (0: idleCheckEvery) and read checked; yielded is the clock at the last pass
	// through the scheduler, yield makes it (nil: runtime.Gosched).
	empties, every   uint32
	checked, yielded int64
	yield            func()
}

// YieldEvery is how often a polling loop passes through the Go scheduler of its own accord,
// at an empty poll (Idler.ShouldWait).
//
// A polling loop never blocks, so the runtime preempts it once it has run 10 ms without such
// a pass (sysmon's time slice): a signal to its thread, a hand-off of the locked thread to
// another and back, and, when the preemption finds the loop inside a cgo call (a long
// doorbell), its P taken away, after which sysmon wakes every 20 µs for a millisecond or
// more. On a machine whose CPUs are all polling, each of those wake-ups switches a poller
// out. A pass of its own, between two polls that found nothing, leaves only the hand-off, at
// a moment with nothing on the way (what that saves: docs/performance.md). Where idle CPUs
// absorb sysmon, the preemption costs little beyond its hand-off, and the pass makes that
// hand-off up to twice as often, at moments when nothing is on the way.
const YieldEvery = 5 * time.Millisecond

// idleCheckEvery is how many empty polls pass between clock reads of a hybrid streak: an
// empty poll costs tens of nanoseconds, so the spin overshoots by at most a few
// microseconds.
const idleCheckEvery = 64

// yieldSlack bounds how late the pass through the scheduler may come after YieldEvery: each
// clock check for it sets the next after as many empty polls as took half the slack since
// the last one (at least one, at most idleCheckEvery). A poll is not always quick: one that
// spins in C (verbs.Config.PollSpin) makes 64 device polls, and the kernel takes a poller's
// CPU for its own work on the device (rxe runs an RDMA Read's responder in ksoftirqd on the
// CPU that posted it). A check every idleCheckEvery slow polls comes too late for the
// runtime's 10 ms, whose preemptions then keep sysmon waking and taking pollers' CPUs, so the
// checks are fitted to the polls (figures: docs/performance.md).
const yieldSlack = 500 * time.Microsecond

// spinCapFactor bounds an adaptive hybrid Idler's spin: at most this many times
// DefaultHybridSpin (1 ms).
const spinCapFactor = 20

// NewIdler returns an Idler for p; clock returns monotonic nanoseconds (nil: the runtime's).
func NewIdler(p Poll, clock func() int64) Idler {
	p = p.Normalized()
	if clock == nil {
		clock = monotonic
	}
	// A fixed spin is an adaptive one whose cap is its base.
	s, limit := int64(p.Spin), int64(p.Spin)
	if s == 0 {
		s = int64(DefaultHybridSpin)
		limit = spinCapFactor * s
	}
	return Idler{mode: p.Mode, clock: clock, base: s, limit: limit, spin: s}
}

// Active records a poll that found work. It reads the clock only when the streak it ends
// went into a wait, where a clock read is nothing next to the wakeup.
func (w *Idler) Active() {
	if w.streak == 0 || w.mode != PollHybrid {
		w.streak = 0
		return
	}
	// The streak's length: up to its last clock check (a streak shorter than one check
	// interval counts as none), or to now after a wait.
	idle := w.last - w.since
	if w.waited {
		idle = w.clock() - w.since
	}
	w.streak, w.waited = 0, false
	if idle > w.limit {
		// An idle period, not a gap in the traffic: sparse work (an RPC a second) must not
		// make the poller spin to the cap after each one.
		return
	}
	w.gap += (idle - w.gap) / 4
	w.spin = min(max(2*w.gap, w.base), w.limit)
}

// ShouldWait records a poll that found nothing and says whether the loop should now block
// in CQ.Wait. After a wait the streak continues: a hybrid poller that woke without work
// waits again at every empty poll until work comes.
func (w *Idler) ShouldWait() bool {
	if w.every == 0 {
		w.every = idleCheckEvery
	}
	if w.empties++; w.empties >= w.every {
		w.empties = 0
		if w.clock == nil {
			w.clock = monotonic
		}
		now := w.clock()
		if w.checked != 0 {
			// The next check after as many polls as took half the slack this time.
			perPoll := max((now-w.checked)/int64(w.every), 1)
			w.every = uint32(min(max(int64(yieldSlack)/2/perPoll, 1), idleCheckEvery))
		}
		w.checked = now
		w.maybeYield(now)
	}
	switch w.mode {
	case PollEvent:
		return true
	case PollHybrid:
		if w.waited {
			return true
		}
		w.streak++
		if w.streak == 1 {
			w.since = w.clock()
			w.last = w.since
			return false
		}
		if w.streak%idleCheckEvery != 0 {
			return false
		}
		w.last = w.clock()
		if w.last-w.since >= w.spin {
			w.waited = true
			return true
		}
	}
	return false
}

// maybeYield passes through the scheduler when the last pass is YieldEvery old (see
// YieldEvery). A locked thread's pass is a hand-off between two threads, which costs tens of
// microseconds, so it is made no more often than that.
func (w *Idler) maybeYield(now int64) {
	if w.yielded == 0 {
		w.yielded = now
		return
	}
	if now-w.yielded < int64(YieldEvery) {
		return
	}
	w.yielded = now
	if w.yield != nil {
		w.yield()
		return
	}
	runtime.Gosched()
}

// Spin is how long a hybrid Idler spins now before it waits (0 for the other modes).
func (w *Idler) Spin() time.Duration {
	if w.mode != PollHybrid {
		return 0
	}
	return time.Duration(w.spin)
}

var epoch = time.Now()

func monotonic() int64 { return int64(time.Since(epoch)) }
