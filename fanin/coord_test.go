package fanin

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

const testSecret = "0123456789abcdef0123456789abcdef"

// startCoordinator runs a coordinator of a job of size ranks (rank 0 serving) heartbeating
// every beat; its run's result arrives on the channel once cancel is called or it is done.
func startCoordinator(t *testing.T, size int, beat time.Duration) (*coordinator, <-chan *collected, context.CancelFunc) {
	t.Helper()
	layout, err := NewLayout(size, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	co, err := listenCoordinator(layout, "127.0.0.1", []byte(testSecret), beat, 100*time.Millisecond, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	co.changed = func(*collected) {}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *collected, 1)
	go func() { done <- co.run(ctx, time.Second, time.Minute) }()
	t.Cleanup(func() {
		cancel()
		co.l.Close() // no listener left behind for the next test to find
	})
	return co, done, cancel
}

// rawHello connects to addr and says hello m, as a process of its own choosing would.
func rawHello(t *testing.T, addr string, m msg) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)); err != nil {
		t.Fatal(err)
	}
	return c
}

// within runs f and fails the test if it has not returned after d (the bound a bug would
// break by far).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still waiting after %v", what, d)
	}
}

// A wall-clock step of a rank between points (an hour back) stretches no wait: the next
// point's clock exchange sees the step and its start wait stays within its bound; a step after
// the exchange is cut to the bound; a stop ends the wait at once.
func TestClockStepDoesNotStretchWaits(t *testing.T) {
	co, _, cancel := startCoordinator(t, 2, time.Second)
	l, err := dialCoordinator(co.addr(), testSecret, 1, "h1", RoleClient, time.Second, func(string, bool) {})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	var step atomic.Int64
	l.wall = func() time.Time { return time.Now().Add(time.Duration(step.Load())) }
	clk, err := l.clockOffset(clockExchanges)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{l: l, clk: clk, clkAt: time.Now()}
	within(t, 5*time.Second, "point 1's start", func() {
		if err := g.vote(nil, time.Second, 0); err != nil {
			t.Error(err)
		}
	})
	step.Store(int64(-time.Hour))
	within(t, 5*time.Second, "point 2's start, an hour's clock step after point 1", func() {
		if err := g.vote(nil, time.Second, 0); err != nil {
			t.Error(err)
		}
	})
	_, clocks := g.Starts()
	if off := time.Duration(clocks[1].Offset); len(clocks) != 2 || (off-time.Hour).Abs() > time.Duration(clocks[1].Error)+time.Second {
		t.Errorf("clock estimates %+v: point 2's offset is not the hour stepped", clocks)
	}
	// Stepped after the estimate: the wait is at most the lead and the estimate's error.
	within(t, 5*time.Second, "a start an hour ahead by a stale estimate", func() {
		at := time.Now().Add(2 * time.Millisecond).UnixNano()
		if err := l.startWait(at, 2*time.Millisecond, clock{Offset: 0, Error: int64(time.Millisecond)}); err != nil {
			t.Error(err)
		}
	})
	// A stop ends a wait however long.
	within(t, 5*time.Second, "a start wait when rank 0 stops", func() {
		go func() {
			time.Sleep(50 * time.Millisecond)
			cancel()
		}()
		step.Store(0)
		err := l.startWait(time.Now().Add(time.Hour).UnixNano(), time.Hour, clock{})
		if err == nil || !strings.Contains(err.Error(), "stopped: rank 0 was stopped") {
			t.Errorf("start wait: %v, want stopped", err)
		}
	})
}

// A rank that joined and then sends nothing (a stopped process) is given up after 5
// heartbeats, by rank and host, and told to stop.
func TestSilentRankGivenUp(t *testing.T) {
	co, done, _ := startCoordinator(t, 2, 20*time.Millisecond)
	c := rawHello(t, co.addr(), msg{Kind: msgHello, Rank: 1, Host: "h1", Role: string(RoleClient), Secret: testSecret})
	defer c.Close()
	var col *collected
	within(t, 10*time.Second, "the coordinator, with rank 1 silent", func() { col = <-done })
	if len(col.failed) != 1 || col.failed[0].rank != 1 || col.failed[0].host != "h1" || !strings.Contains(col.failed[0].what, "sent nothing for") || !col.gaveUp {
		t.Fatalf("failures %+v (gave up %v), want rank 1 on h1, silent", col.failed, col.gaveUp)
	}
	cn := newConn(c)
	for {
		m, err := cn.recv(maxMsg)
		if err != nil {
			t.Fatalf("rank 1 was not told to stop: %v", err)
		}
		if m.Kind == msgStop {
			if !strings.Contains(m.Err, "gave this rank up") {
				t.Errorf("stop: %q", m.Err)
			}
			break
		}
	}
}

// Hellos with the job's secret but for a rank that joined, a server rank as a client, or a
// rank not in the job are refused; the rank that joined keeps its place and runs its point.
func TestHelloRefusedLeavesRankAlone(t *testing.T) {
	co, done, _ := startCoordinator(t, 2, time.Second)
	l, err := dialCoordinator(co.addr(), testSecret, 1, "h1", RoleClient, time.Second, func(string, bool) {})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if _, err := l.clockOffset(1); err != nil { // rank 1 has joined
		t.Fatal(err)
	}
	for _, m := range []msg{{Rank: 1, Role: string(RoleClient)}, {Rank: 0, Role: string(RoleClient)}, {Rank: 5, Role: string(RoleClient)}} {
		m.Kind, m.Host, m.Secret = msgHello, "stray", testSecret
		c := rawHello(t, co.addr(), m)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("hello %+v: the coordinator answered it", m)
		}
		c.Close()
	}
	within(t, 10*time.Second, "rank 1's point", func() {
		if _, _, err := l.vote(0, nil, 0, 0); err != nil {
			t.Errorf("rank 1's vote after the refusals: %v", err)
		}
	})
	within(t, 10*time.Second, "rank 1's report", func() {
		if !l.report(&rankResult{}, 5*time.Second) {
			t.Error("rank 0 did not take rank 1's report")
		}
	})
	col := <-done
	if len(col.failed) != 0 || col.results[1] == nil || col.nrefused != 3 {
		t.Fatalf("failures %+v, rank 1's result %v, %d refused: want rank 1's result and 3 refusals", col.failed, col.results[1], col.nrefused)
	}
	for i, want := range []string{"a second hello for rank 1, which joined from 127.0.0.1:", "a hello for rank 0 as a client, which is a server rank", "a hello for rank 5, not a rank of the job"} {
		if !strings.Contains(col.refused[i].Cause, want) {
			t.Errorf("refusal %d: %q, want %q", i, col.refused[i].Cause, want)
		}
	}
}

// Estimates that agree narrow each other; after a step they do not, and the new one holds.
func TestRefineClock(t *testing.T) {
	if got := refine(clock{Offset: 100, Error: 50}, 0, clock{Offset: 120, Error: 50}); got != (clock{Offset: 110, Error: 40}) {
		t.Errorf("agreeing estimates: %+v, want their intersection 110±40", got)
	}
	if got := refine(clock{Offset: 0, Error: 50}, time.Second, clock{Offset: int64(time.Hour), Error: 50}); got != (clock{Offset: int64(time.Hour), Error: 50}) {
		t.Errorf("a stepped clock: %+v, want the new estimate", got)
	}
	if got := refine(clock{Offset: 0, Error: 10}, 10*time.Second, clock{Offset: 500_000, Error: 10}); got.Offset != 500_000 || got.Error != 10 {
		// 100 ppm over 10 s widens 10 ns to 1 ms: the new one is inside it.
		t.Errorf("an aged estimate: %+v, want the new one, 500000±10", got)
	}
}

// A rank that joins after rank 0 was stopped (no rank failed) is told to stop, and why.
func TestLateRankToldToStop(t *testing.T) {
	co, _, cancel := startCoordinator(t, 3, time.Second)
	stopped := make(chan struct{})
	l1, err := dialCoordinator(co.addr(), testSecret, 1, "h1", RoleClient, time.Second, func(string, bool) { close(stopped) })
	if err != nil {
		t.Fatal(err)
	}
	defer l1.close()
	if _, err := l1.clockOffset(1); err != nil { // rank 1 has joined: the run goes on
		t.Fatal(err)
	}
	cancel()
	within(t, 10*time.Second, "rank 1's stop", func() { <-stopped })
	why := make(chan string, 1)
	l2, err := dialCoordinator(co.addr(), testSecret, 2, "h2", RoleClient, time.Second, func(s string, _ bool) { why <- s })
	if err != nil {
		t.Fatal(err)
	}
	defer l2.close()
	select {
	case s := <-why:
		if s != "rank 0 was stopped" {
			t.Errorf("rank 2 told to stop: %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("rank 2, joining after rank 0 was stopped, was not told to stop")
	}
}

// A client rank whose rank 0 dies mid-point stops at once (its drain skipped) and writes its
// own points to OwnOut, with rank 0's loss as the cause.
func TestRank0LostOwnPoints(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // rank 0: answers the hello and the clock, then dies
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		c := newConn(nc)
		time.AfterFunc(300*time.Millisecond, func() { nc.Close() })
		for {
			m, err := c.recv(maxMsg)
			if err != nil {
				return
			}
			if m.Kind == msgClock {
				c.send(msg{Kind: msgClock, T0: m.T0, T1: time.Now().UnixNano()})
			}
		}
	}()
	layout, err := NewLayout(2, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fanin.json.1")
	t0 := time.Now().UTC()
	c := Config{Comm: NewLocal(2, "h1")[1], OwnOut: out, RunConfig: map[string]string{"command": "fanin"}, Grace: time.Second, Log: io.Discard,
		Measure: func(ctx, hurry context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
			<-ctx.Done()
			select {
			case <-hurry.Done():
			case <-time.After(5 * time.Second):
				t.Error("rank 0 lost, and the drain not skipped")
			}
			r := results.NewRecorder()
			for i := range 100 {
				r.Record(rpcproto.Short, rpcproto.Short, int64(1000+i), 8)
			}
			p, err := results.Summarize(results.Params{Procedure: "ECHO", Class: "auto", Depth: 1, Connections: 1}, t0, time.Now().UTC(), r)
			return &results.Run{Start: t0, End: p.End, Points: []results.Point{p}, Status: results.Status{State: results.StateInterrupted, Message: "stopped"}}, err
		}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	hurry, hasten := context.WithCancel(context.Background())
	defer hasten()
	var why atomic.Pointer[string]
	l, err := dialCoordinator(ln.Addr().String(), testSecret, 1, "h1", RoleClient, time.Second, func(s string, h bool) {
		why.Store(&s)
		if h {
			hasten()
		}
		stop()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	var merr error
	within(t, 20*time.Second, "rank 1, rank 0 lost", func() {
		merr = c.measure(ctx, hurry, wireup{Hosts: []string{"h0", "h1"}, Servers: map[int]string{0: "h0:20049"}}, layout, 1, l, &why, 0)
	})
	if merr == nil || !strings.Contains(merr.Error(), "rank 0 (host h0): lost before it had rank 1's results: connection to the coordinator (rank 0) lost") {
		t.Fatalf("rank 1: %v, want rank 0's loss", merr)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status.State != results.StateFailed || !strings.HasPrefix(f.Status.Message, "rank 1's own points only: rank 0 (host h0): lost") ||
		len(f.Points) != 1 || f.Points[0].RTT.Count != 100 || len(f.Points[0].FanIn.Ranks) != 1 || f.Points[0].FanIn.Failed[0].Rank != 0 {
		t.Errorf("rank 1's file: status %+v, %d points", f.Status, len(f.Points))
	}
}
