package datapath

import (
	"errors"
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
	// PollHybrid spins for Poll.Spin after the last completion and then blocks like
	// PollEvent: a loaded poller never sleeps, an idle one stops using the CPU.
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

// DefaultHybridSpin is how long a hybrid poller spins after its last completion when Spin
// is zero: a few round trips of a slow software device (soft over TCP, rxe), so that a
// closed-loop peer's next call finds the poller still spinning.
const DefaultHybridSpin = 50 * time.Microsecond

// Poll is a polling loop's wait policy, as the CLI spells it: "busy", "event",
// "hybrid" or "hybrid:SPIN" (a Go duration such as 50us).
type Poll struct {
	Mode PollMode
	// Spin is how long a hybrid poller keeps spinning after its last completion
	// (0: DefaultHybridSpin). Ignored by the other modes.
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

// Normalized fills in the default spin of a hybrid policy.
func (p Poll) Normalized() Poll {
	if p.Mode == PollHybrid && p.Spin <= 0 {
		p.Spin = DefaultHybridSpin
	}
	if p.Mode != PollHybrid {
		p.Spin = 0
	}
	return p
}

func (p Poll) String() string {
	p = p.Normalized()
	if p.Mode == PollHybrid {
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
// nothing; ShouldWait reads the clock only every idleCheckEvery empty polls of a streak.
// The zero value is a busy policy.
type Idler struct {
	mode  PollMode
	spin  int64 // ns
	clock func() int64
	// streak counts empty polls since the last active one; since is the clock when the
	// streak's first clock check happened.
	streak uint32
	since  int64
}

// idleCheckEvery is how many empty polls pass between clock reads of a hybrid streak: an
// empty poll costs tens of nanoseconds, so the spin overshoots by at most a few
// microseconds.
const idleCheckEvery = 64

// NewIdler returns an Idler for p; clock returns monotonic nanoseconds (nil: the runtime's).
func NewIdler(p Poll, clock func() int64) Idler {
	p = p.Normalized()
	if clock == nil {
		clock = monotonic
	}
	return Idler{mode: p.Mode, spin: int64(p.Spin), clock: clock}
}

// Active records a poll that found work.
func (w *Idler) Active() { w.streak = 0 }

// ShouldWait records a poll that found nothing and says whether the loop should now block
// in CQ.Wait. After a wait the streak continues: a hybrid poller that woke without work
// waits again at its next empty poll.
func (w *Idler) ShouldWait() bool {
	switch w.mode {
	case PollEvent:
		return true
	case PollHybrid:
		w.streak++
		if w.streak == 1 {
			w.since = w.clock()
			return false
		}
		if w.streak%idleCheckEvery != 0 {
			return false
		}
		if w.clock()-w.since >= w.spin {
			w.streak-- // keep waiting at every empty poll until work comes
			return true
		}
	}
	return false
}

var epoch = time.Now()

func monotonic() int64 { return int64(time.Since(epoch)) }
