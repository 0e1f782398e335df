package transport

import (
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// cgoCalls reads the runtime's count of calls from Go into C.
func cgoCalls() uint64 {
	s := []metrics.Sample{{Name: "/cgo/go-to-c-calls:calls"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkNullRPC is a depth-1 NULL RPC between this project's requester and responder on
// one device (rxe0 in the VM), each end on its own locked thread polling its own CQ and
// handing the completions to a Mux, as the tool's client and server pollers do: ns/op is a
// full round trip (the mean), rtt-p50-ns and rtt-min-ns its median and minimum. Beside it,
// what one RPC costs in calls into C, both ends together: cgo-calls/op (every Go to C call
// of the process), polls/op (CQ polls), empty-polls/op (the polls that found nothing: the
// waiting, which busy polling spends in crossings), posts/op (Sends posted and receives
// completed).
//
// It runs twice: with each end's posts deferred to its next poll (datapath.Deferrer, which
// rpcrdma uses wherever the provider offers it) and with every post a C call of its own
// (verbs.Config.ImmediatePosts), as before deferring existed. What deferring saves is
// cgo-calls/op minus polls/op: the crossings that only posted.
func BenchmarkNullRPC(b *testing.B) {
	for _, posts := range []struct {
		name      string
		immediate bool
		probe     bool
	}{{"deferred", false, false}, {"immediate", true, false}, {"deferred,turnarounds", false, true}} {
		b.Run("posts="+posts.name, func(b *testing.B) {
			nullRPC(b, verbs.Config{ImmediatePosts: posts.immediate, Turnarounds: posts.probe})
		})
	}
}

// muxEnd is one end: a CQ, its Mux, the poll counters of its thread, and its Idler, through
// which a busy end passes through the scheduler as the tool's pollers do.
type muxEnd struct {
	cq          datapath.CQ
	mux         *rpcrdma.Mux
	wcs         []datapath.Completion
	polls, idle uint64
	idler       datapath.Idler
}

// step polls once and hands what it found to the Mux.
func (e *muxEnd) step(b *testing.B) {
	n, err := e.cq.Poll(e.wcs)
	if err != nil {
		b.Error(err)
		return
	}
	e.polls++
	if n == 0 {
		e.idle++
		err = e.mux.Idle()
		e.idler.ShouldWait()
	} else {
		err = e.mux.Handle(e.wcs[:n])
	}
	if err != nil {
		b.Error(err)
	}
}

func newMuxEnd(b *testing.B, dev datapath.Device, cfg rpcrdma.Config) *muxEnd {
	cq, err := dev.NewCQ(4 * rpcrdma.CQNeed(dev, cfg))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cq.Close() })
	return &muxEnd{cq: cq, mux: rpcrdma.NewMux(cq, rpcrdma.MuxConfig{}), wcs: make([]datapath.Completion, 32),
		idler: datapath.NewIdler(datapath.Poll{Mode: datapath.PollBusy}, nil)}
}

func nullRPC(b *testing.B, vcfg verbs.Config) {
	// Two busy ends and an idle P beside them, as the tool sizes the runtime on verbs.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	busy := datapath.Poll{Mode: datapath.PollBusy}
	datapath.EnsureProcs([]datapath.Poll{busy, busy})
	cdev, sdev, l, _ := setupVerbs(b, vcfg)
	cfg := rpcrdma.Config{SendSize: 4096, RecvSize: 4096, Credits: 1, MaxPayload: 4096}
	srv, cli := newMuxEnd(b, sdev, cfg), newMuxEnd(b, cdev, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := make(chan error, 1)
	go func() {
		req, err := l.Accept(ctx)
		if err == nil {
			_, err = rpcrdma.AcceptOn(sdev, req, cfg, srv.mux)
		}
		accepted <- err
	}()
	ccfg := cfg
	ccfg.CQ = cli.cq
	conn, err := rpcrdma.Dial(ctx, cdev, l.Addr(), ccfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := <-accepted; err != nil {
		b.Fatal(err)
	}
	if err := cli.mux.Attach(conn); err != nil {
		b.Fatal(err)
	}

	// The responder's poller: its own locked thread, busy, until the benchmark ends.
	var stop, snap atomic.Bool
	snapped := make(chan endSnap, 1)
	served := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(served)
		for !stop.Load() {
			srv.step(b)
			if snap.Load() { // a plain load per poll: the counters stay the thread's own
				snap.Store(false)
				var posts uint64
				for _, c := range srv.mux.Conns() {
					st := c.Stats()
					posts += st.Send.Count + st.Recv.Count
				}
				ta, _ := datapath.Turnarounds(srv.cq)
				snapped <- endSnap{srv.polls, srv.idle, posts, ta}
			}
		}
	}()
	defer func() {
		stop.Store(true)
		<-served
		for _, c := range srv.mux.Conns() {
			c.Close()
		}
		conn.Close()
	}()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	call := rpcrdma.Call{Proc: benchprog.ProcNull}
	var res [4]rpcrdma.Result
	rpc := func() {
		if err := conn.Submit(call); err != nil {
			b.Fatal(err)
		}
		for {
			cli.step(b)
			n, err := conn.Results(res[:])
			if err != nil {
				b.Fatal(err)
			}
			if n == 1 {
				if res[0].Err != nil {
					b.Fatal(res[0].Err)
				}
				return
			}
		}
	}
	for range 100 {
		rpc() // warm up: receives posted, slices at their working size
	}
	posts := func() uint64 {
		st := conn.Stats()
		return st.Send.Count + st.Recv.Count
	}
	// The responder's counters, taken by its own thread: at the start while no RPC is
	// outstanding (only its empty polls move between that and the first call), and at the
	// end.
	snap.Store(true)
	s0 := <-snapped
	posts0, c0 := posts(), cgoCalls()
	cpolls0, cidle0 := cli.polls, cli.idle
	cta0, probe := datapath.Turnarounds(cli.cq)
	// Each RPC's round trip as well, for the median beside ns/op's mean (the last 64Ki), with
	// one clock read per RPC as the tool's Driver takes: the reading that ends one round trip
	// starts the next (time.Since(epoch) reads only the monotonic clock).
	rtts := make([]time.Duration, 1<<16)
	nrtt := 0
	epoch := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	t0 := time.Since(epoch)
	for b.Loop() {
		rpc()
		t1 := time.Since(epoch)
		rtts[nrtt&(len(rtts)-1)] = t1 - t0
		t0 = t1
		nrtt++
	}
	b.StopTimer()
	c1 := cgoCalls()
	snap.Store(true)
	s1 := <-snapped
	// Sorted only now: the responder keeps polling until its snapshot, and the sort's time
	// must not add to its counts.
	rtts = rtts[:min(nrtt, len(rtts))]
	slices.Sort(rtts)
	b.ReportMetric(float64(rtts[len(rtts)/2].Nanoseconds()), "rtt-p50-ns")
	b.ReportMetric(float64(rtts[0].Nanoseconds()), "rtt-min-ns")
	n := float64(b.N)
	b.ReportMetric(float64(c1-c0)/n, "cgo-calls/op")
	b.ReportMetric(float64(cli.polls-cpolls0+s1.polls-s0.polls)/n, "polls/op")
	b.ReportMetric(float64(cli.idle-cidle0+s1.idle-s0.idle)/n, "empty-polls/op")
	b.ReportMetric(float64(posts()-posts0+s1.posts-s0.posts)/n, "posts/op")
	if probe {
		// Each end's turnarounds per RPC: the Go side of the round trip, end by end, and the
		// C posting that ends each.
		cta1, _ := datapath.Turnarounds(cli.cq)
		ct, st := cta1.Sub(cta0), s1.ta.Sub(s0.ta)
		b.ReportMetric(float64(ct.Count+st.Count)/n, "turns/op")
		b.ReportMetric(float64(ct.Total.Nanoseconds())/n, "client-turn-ns/op")
		b.ReportMetric(float64(st.Total.Nanoseconds())/n, "server-turn-ns/op")
		b.ReportMetric(float64(ct.Quantile(0.5).Nanoseconds()), "client-turn-p50-ns")
		b.ReportMetric(float64(st.Quantile(0.5).Nanoseconds()), "server-turn-p50-ns")
		b.ReportMetric(float64((ct.Post+st.Post).Nanoseconds())/n, "post-ns/op")
	}
}

// endSnap is what the responder's thread reports of itself: polls, empty polls, posts and
// its CQ's turnarounds.
type endSnap struct {
	polls, idle, posts uint64
	ta                 datapath.Turnaround
}
