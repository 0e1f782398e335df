// Package workloadstest provides an in-memory workloads.Client and a manual clock, so that
// drivers, runners and the CLI are tested without the transport engine or a network.
package workloadstest

import (
	"errors"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// Clock is a manual monotonic clock in nanoseconds, safe for concurrent use.
type Clock struct{ ns atomic.Int64 }

// Now returns the current reading; use it as Driver.Clock.
func (c *Clock) Now() int64 { return c.ns.Load() }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

var epoch = time.Now()

// Fake is a workloads.Client that completes every RPC a fixed Latency after it was submitted,
// in submission order, with message classes from a simple threshold model. It allocates
// nothing per RPC. Configure its exported fields before the first Submit.
type Fake struct {
	// Clock, when set, is the time base, and every Progress call advances it by Tick (the
	// time a poll takes), so a run on a Fake is deterministic. Nil uses the real monotonic
	// clock (for tests that run the CLI end to end).
	Clock *Clock
	Tick  time.Duration
	// Prog is the program whose table says which payloads are DDP-eligible (nil: the
	// benchmark program).
	Prog *rpcproto.Program
	// Latency is how long after Submit an RPC completes.
	Latency time.Duration
	// Credits caps outstanding RPCs: Submit returns workloads.ErrBusy beyond it (0: no cap
	// but the capacity given to New).
	Credits int
	// StallFrom and StallUntil withhold every completion while the clock is in
	// [StallFrom, StallUntil): a server that stops answering for a while.
	StallFrom, StallUntil int64
	// Threshold is the inline threshold of the class model (default 4096): a direction
	// whose payload plus Overhead exceeds it is chunked when its payload is DDP-eligible
	// (SINK call, SOURCE reply) and long otherwise. A rough model of RFC 8166 section 3.5,
	// good for tests; the engine decides for real.
	Threshold int
	// FailAfter, when positive, makes Progress return Err once exactly this many RPCs
	// completed (the connection broke after them).
	FailAfter int
	Err       error
	// FailEvery, when positive, completes every FailEvery-th RPC with RPCErr (a failed RPC,
	// not a failed Client).
	FailEvery int
	RPCErr    error
	// Observe, when set, is called at the start of every Progress with the Fake itself.
	Observe func(f *Fake)

	ring       []pending
	head, n    int
	submitted  int
	completed  int
	maxOutstnd int
}

type pending struct {
	tag         uint64
	due         int64
	call, reply rpcproto.Kind
}

// Overhead is the header bytes the class model adds to each payload.
const Overhead = 100

// New returns a Fake that holds up to capacity outstanding RPCs.
func New(capacity int) *Fake { return &Fake{ring: make([]pending, capacity)} }

var _ workloads.Client = (*Fake)(nil)

// ErrFakeOverflow is returned by Submit when more RPCs are outstanding than New's capacity.
var ErrFakeOverflow = errors.New("workloadstest: more RPCs outstanding than the fake holds")

func (f *Fake) now() int64 {
	if f.Clock != nil {
		return f.Clock.Now()
	}
	return int64(time.Since(epoch))
}

// Submit queues req to complete Latency from now.
func (f *Fake) Submit(req *workloads.Request) error {
	if f.Credits > 0 && f.n >= f.Credits {
		return workloads.ErrBusy
	}
	if f.n == len(f.ring) {
		return ErrFakeOverflow
	}
	call, reply := f.classes(req)
	f.ring[(f.head+f.n)%len(f.ring)] = pending{tag: req.Tag, due: f.now() + int64(f.Latency), call: call, reply: reply}
	f.n++
	f.submitted++
	f.maxOutstnd = max(f.maxOutstnd, f.n)
	return nil
}

func (f *Fake) classes(req *workloads.Request) (call, reply rpcproto.Kind) {
	if req.Class != rpcproto.Auto {
		return req.Class, req.Class
	}
	th := f.Threshold
	if th == 0 {
		th = 4096
	}
	class := func(size uint32, ddp bool) rpcproto.Kind {
		switch {
		case int(size)+Overhead <= th:
			return rpcproto.Short
		case ddp:
			return rpcproto.Chunked
		}
		return rpcproto.Long
	}
	prog := f.Prog
	if prog == nil {
		prog = benchprog.Prog
	}
	ddp := prog.Procs[req.Proc].DDP
	return class(req.CallSize, ddp&rpcproto.InCall != 0), class(req.ReplySize, ddp&rpcproto.InReply != 0)
}

// Progress advances the clock by Tick and returns the RPCs that are due, unless stalled.
func (f *Fake) Progress(done []workloads.Completed) (int, error) {
	if f.Observe != nil {
		f.Observe(f)
	}
	if f.Clock != nil {
		f.Clock.Advance(f.Tick)
	}
	if f.FailAfter > 0 && f.completed >= f.FailAfter {
		return 0, f.Err
	}
	now := f.now()
	if now >= f.StallFrom && now < f.StallUntil {
		return 0, nil
	}
	k := 0
	for k < len(done) && f.n > 0 && (f.FailAfter <= 0 || f.completed < f.FailAfter) {
		p := &f.ring[f.head]
		if p.due > now {
			break
		}
		done[k] = workloads.Completed{Tag: p.tag, CallClass: p.call, ReplyClass: p.reply}
		if f.FailEvery > 0 && (f.completed+1)%f.FailEvery == 0 {
			done[k].Err = f.RPCErr
		}
		k++
		f.head = (f.head + 1) % len(f.ring)
		f.n--
		f.completed++
	}
	return k, nil
}

// Outstanding is the number of RPCs submitted and not yet returned by Progress.
func (f *Fake) Outstanding() int { return f.n }

// MaxOutstanding is the most RPCs that were ever outstanding at once.
func (f *Fake) MaxOutstanding() int { return f.maxOutstnd }

// Submitted and Completed count RPCs over the Fake's life.
func (f *Fake) Submitted() int { return f.submitted }
func (f *Fake) Completed() int { return f.completed }
