package soft_test

import (
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
)

// The slowdown holds completions back exactly as configured: a 4 KiB SEND over a 1 Gbit/s
// link takes 32768 ns, then the 50 µs delay; neither side's completion is polled a
// nanosecond earlier, both are right then.
func TestSlowdownHoldsCompletionsBack(t *testing.T) {
	var now atomic.Int64
	defer soft.SetClock(now.Load)()
	p := newPair(t, soft.Config{CompletionDelay: 50 * time.Microsecond, Bandwidth: 1e9}, "inproc:", datapath.QPConfig{}, nil, nil)
	defer p.close(t)
	a := p.reg(t, p.devA, 4096, rwAll)
	b := p.reg(t, p.devB, 4096, rwAll)
	if _, err := p.b.PostRecv([]datapath.RecvWR{{ID: 1, SGL: sge(b, 4096)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.a.PostSend([]datapath.SendWR{{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: sge(a, 4096)}}); err != nil {
		t.Fatal(err)
	}
	wcs := make([]datapath.Completion, 2)
	const due = 32768 + 50000
	for _, at := range []int64{0, 32768, due - 1} {
		now.Store(at)
		for _, cq := range []datapath.CQ{p.cqA, p.cqB} {
			if n, err := cq.Poll(wcs); n != 0 || err != nil {
				t.Fatalf("at %d ns: %d completions (%v), want none before %d ns", at, n, err, due)
			}
		}
	}
	now.Store(0)
	if err := p.cqA.Wait(time.Microsecond); !errors.Is(err, datapath.ErrTimeout) {
		t.Fatalf("Wait shorter than the hold: %v, want a timeout", err)
	}
	now.Store(due)
	for _, cq := range []datapath.CQ{p.cqA, p.cqB} {
		if err := cq.Wait(time.Second); err != nil {
			t.Fatal(err)
		}
		if n, err := cq.Poll(wcs); n != 1 || err != nil || wcs[0].Status != datapath.StatusSuccess {
			t.Fatalf("at %d ns: %d completions (%v) %+v, want 1", int64(due), n, err, wcs[0])
		}
	}
}

// A post cost spins the poster for it per send queue work request (as many chain steps as the
// machine runs in that time) and holds no completion back: the CQ hands a completion over
// as soon as it exists, without reading the slowdown's clock.
func TestPostCostSpinsThePoster(t *testing.T) {
	if got, want := soft.PostSteps(soft.Config{PostCost: time.Microsecond}), 1000*soft.StepsPerNs(); got < 1 || math.Abs(float64(got)-want) > 1 {
		t.Errorf("1 µs of post cost is %d chain steps, want %.0f", got, want)
	}
	if got := soft.PostSteps(soft.Config{CompletionDelay: time.Microsecond}); got != 0 {
		t.Errorf("a delay alone spins %d steps per post", got)
	}
	var ticks atomic.Int64
	defer soft.SetClock(func() int64 { return ticks.Add(1) })()
	p := newPair(t, soft.Config{PostCost: 100 * time.Nanosecond}, "inproc:", datapath.QPConfig{}, nil, nil)
	defer p.close(t)
	a := p.reg(t, p.devA, 4096, rwAll)
	b := p.reg(t, p.devB, 4096, rwAll)
	if _, err := p.b.PostRecv([]datapath.RecvWR{{ID: 1, SGL: sge(b, 64)}, {ID: 2, SGL: sge(b, 64)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.a.PostSend([]datapath.SendWR{
		{ID: 3, Op: datapath.OpSend, SGL: sge(a, 64)},
		{ID: 4, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: sge(a, 64)},
	}); err != nil {
		t.Fatal(err)
	}
	wcs := make([]datapath.Completion, 2)
	before := ticks.Load()
	if n, err := p.cqB.Poll(wcs); n != 2 || err != nil {
		t.Fatalf("%d receive completions (%v), want both at once", n, err)
	}
	if n, err := p.cqA.Poll(wcs); n != 1 || err != nil || wcs[0].ID != 4 {
		t.Fatalf("%d send completions (%v) %+v, want the signaled one", n, err, wcs[0])
	}
	if read := ticks.Load() - before; read != 0 {
		t.Errorf("polling read the slowdown's clock %d times: a post cost alone holds nothing back", read)
	}
}

// With the slowdown on, post and poll still allocate nothing.
func TestSlowdownAllocFree(t *testing.T) {
	p := newPair(t, soft.Config{CompletionDelay: time.Nanosecond, Bandwidth: 1e12, PostCost: time.Nanosecond}, "inproc:", datapath.QPConfig{}, nil, nil)
	defer p.close(t)
	a := p.reg(t, p.devA, 4096, rwAll)
	b := p.reg(t, p.devB, 4096, rwAll)
	recv := []datapath.RecvWR{{ID: 1, SGL: sge(b, 4096)}}
	sends := []datapath.SendWR{
		{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: sge(a, 1024)},
		{ID: 3, Op: datapath.OpRead, Flags: datapath.FlagSignaled, SGL: sge(a, 4096), RemoteAddr: b.Addr(), RKey: b.RKey()},
	}
	wcs := make([]datapath.Completion, 4)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := p.b.PostRecv(recv); err != nil {
			t.Fatal(err)
		}
		if _, err := p.a.PostSend(sends); err != nil {
			t.Fatal(err)
		}
		pollN(t, p.cqA, wcs[:2])
		pollN(t, p.cqB, wcs[:1])
	})
	if allocs != 0 {
		t.Fatalf("post+poll with a slowdown allocates %v times per round", allocs)
	}
}

// A delay-only slowdown holds a completion back from when its poller first finds it, and
// every completion found together is due together: two SENDs pushed before the first Poll
// are both released exactly one delay after it, not one delay each.
func TestSlowdownDelayFromFirstPoll(t *testing.T) {
	var now atomic.Int64
	defer soft.SetClock(now.Load)()
	const delay = 800
	p := newPair(t, soft.Config{CompletionDelay: delay}, "inproc:", datapath.QPConfig{}, nil, nil)
	defer p.close(t)
	a := p.reg(t, p.devA, 4096, rwAll)
	b := p.reg(t, p.devB, 4096, rwAll)
	if _, err := p.b.PostRecv([]datapath.RecvWR{{ID: 1, SGL: sge(b, 64)}, {ID: 2, SGL: sge(b, 64)}}); err != nil {
		t.Fatal(err)
	}
	now.Store(1000)
	send := datapath.SendWR{Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: sge(a, 64)}
	if _, err := p.a.PostSend([]datapath.SendWR{send, send}); err != nil {
		t.Fatal(err)
	}
	wcs := make([]datapath.Completion, 4)
	const found = 5000 // the poller finds them later than they happened
	for _, at := range []int64{found, found + delay - 1} {
		now.Store(at)
		if n, err := p.cqB.Poll(wcs); n != 0 || err != nil {
			t.Fatalf("at %d ns: %d completions (%v), want none before %d ns", at, n, err, found+delay)
		}
	}
	now.Store(found + delay)
	if n, err := p.cqB.Poll(wcs); n != 2 || err != nil {
		t.Fatalf("at %d ns: %d completions (%v), want both", found+delay, n, err)
	}
	// A short hold is spun out, bounded by Wait's timeout (the clock here never moves): the
	// sender's two completions, first found now.
	if n, err := p.cqA.Poll(wcs); n != 0 || err != nil {
		t.Fatalf("the sender's completions were not held back: %d (%v)", n, err)
	}
	if err := p.cqA.Wait(time.Millisecond); !errors.Is(err, datapath.ErrTimeout) {
		t.Fatalf("Wait on a held completion with a stopped clock: %v, want a timeout", err)
	}
	now.Store(found + 2*delay)
	if err := p.cqA.Wait(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n, err := p.cqA.Poll(wcs); n != 2 || err != nil {
		t.Fatalf("the sender's completions once due: %d (%v), want 2", n, err)
	}
}
