package rpcrdma

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// overspend makes c ignore its credits: it submits n calls at once, however many it was
// granted, and posts them in one batch.
func overspend(c *Conn, n int, call Call) error {
	c.cl.credits = uint32(c.cl.outstanding + n)
	for k := range n {
		call.Tag = uint64(1000 + k)
		if err := c.Submit(call); err != nil {
			return fmt.Errorf("call %d of %d: %w", k+1, n, err)
		}
	}
	return c.Idle()
}

// A requester that sends more calls than it was granted (RFC 8166 section 3.3) loses the
// connection, with a cause that says so; one that keeps to its grant never does.
func TestCallBeyondGrantFailsConnection(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.Credits, sc.Credits = 16, 4
	p := newPair(t, rc, sc)
	// At the grant: 4 SINKs with Read chunks in flight at a time, again and again.
	calls := make([]Call, 40)
	for k := range calls {
		calls[k] = Call{Proc: benchprog.ProcSink, Size: 8 << 10, Tag: uint64(k)}
	}
	for _, r := range func() []Result { r, _ := p.run(calls, nil); return r }() {
		if r.Err != nil {
			t.Fatalf("at the grant: %v", r.Err)
		}
	}
	if g := p.req.cl.credits; g != 4 || p.rsp.stats.MaxServing != 4 {
		t.Fatalf("granted %d, at most %d calls in service; want 4, 4", g, p.rsp.stats.MaxServing)
	}
	// Beyond it: 6 at once, all received before the responder looks (one batch).
	if err := overspend(p.req, 6, Call{Proc: benchprog.ProcSink, Size: 8 << 10}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	var res [16]Result
	for deadline := time.Now().Add(hangGuard); p.rsp.err == nil && time.Now().Before(deadline); {
		p.rsp.Progress(res[:])
		p.req.Progress(res[:])
	}
	if !errors.Is(p.rsp.err, ErrCreditOverrun) || !strings.Contains(p.rsp.err.Error(), "4 granted") {
		t.Fatalf("6 calls with 4 credits granted: the responder's connection ended with %v (max %d in service); want ErrCreditOverrun naming the grant",
			p.rsp.err, p.rsp.stats.MaxServing)
	}
}

// The same with the requester in another process, over the soft provider's TCP wire.
func TestProcessCallBeyondGrantFailsConnection(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.Credits, sc.Credits = 16, 4
	p := startPeer(t, "req", rc, sc)
	call := fmt.Sprintf("CALL %d %d 0", benchprog.ProcSink, 8<<10)
	if got := p.do(call, "RES"); got != "RES ok "+fmt.Sprint(int(rpcproto.ClassShort)) {
		t.Fatal(got)
	}
	// The peer posts 6 calls at once; this side does not look until they are all here.
	if _, err := fmt.Fprintf(p.in, "OVERSPEND 6 %d %d\n", benchprog.ProcSink, 8<<10); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-p.lines:
		if line != "OK" {
			t.Fatalf("peer: %s", line)
		}
	case <-time.After(hangGuard):
		t.Fatal("the peer never posted its calls")
	}
	time.Sleep(200 * time.Millisecond)
	c := p.local
	var res [16]Result
	for deadline := time.Now().Add(hangGuard); c.err == nil && time.Now().Before(deadline); {
		c.Progress(res[:])
	}
	if !errors.Is(c.err, ErrCreditOverrun) || !strings.Contains(c.err.Error(), "4 granted") {
		t.Fatalf("6 calls with 4 credits granted: the responder's connection ended with %v (max %d in service); want ErrCreditOverrun naming the grant",
			c.err, c.stats.MaxServing)
	}
}

// muxRig is a poller's Mux with a shared sink pool of bufs buffers, serving what dials l.
type muxRig struct {
	t    *testing.T
	dev  datapath.Device
	l    datapath.Listener
	cq   datapath.CQ
	mux  *Mux
	sh   *share
	cfg  Config
	wcs  []datapath.Completion
	idle bool // call Idle when the CQ is empty (a poller's idle sweep)
}

func newMuxRig(t *testing.T, addr string, cfg Config, bufs int) *muxRig {
	dev, l := softListener(t, addr)
	cq, err := dev.NewCQ(8 * CQNeed(dev, cfg))
	if err != nil {
		t.Fatal(err)
	}
	r := &muxRig{t: t, dev: dev, l: l, cq: cq, mux: NewMux(cq, MuxConfig{}), cfg: cfg,
		wcs: make([]datapath.Completion, 64), idle: true}
	if r.sh, err = newShare(dev, cfg.withDefaults(), bufs); err != nil {
		t.Fatal(err)
	}
	r.mux.share = r.sh
	t.Cleanup(func() {
		r.mux.Close()
		r.sh.close()
		cq.Close()
	})
	return r
}

// accept serves the next connection request on the rig's Mux, driving the Mux meanwhile.
func (r *muxRig) accept(dial func() error) *Conn {
	r.t.Helper()
	served := make(chan *Conn, 1)
	go func() {
		req, err := r.l.Accept(context.Background())
		if err != nil {
			served <- nil
			return
		}
		c, _ := AcceptOn(r.dev, req, r.cfg, r.mux)
		served <- c
	}()
	if err := dial(); err != nil {
		r.t.Fatal(err)
	}
	c := <-served
	if c == nil {
		r.t.Fatal("accept failed")
	}
	return c
}

// step polls the Mux's CQ once and hands what it got to the Mux.
func (r *muxRig) step() {
	if n, _ := r.cq.Poll(r.wcs); n > 0 {
		r.mux.Handle(r.wcs[:n])
	} else if r.idle {
		r.mux.Idle()
	}
}

// dialLocal dials the rig from this process.
func (r *muxRig) dialLocal(cfg Config) (req, srv *Conn) {
	r.t.Helper()
	srv = r.accept(func() (err error) {
		req, err = Dial(context.Background(), r.dev, r.l.Addr(), cfg)
		return err
	})
	r.t.Cleanup(func() { req.Close() })
	return req, srv
}

// keepSourcing keeps a's credits busy with SOURCE calls answered in responder-provided Read
// chunks (a withholds RDMA_DONE, so each pins a shared sink buffer).
func keepSourcing(a *Conn, res []Result) {
	for a.Submit(Call{Proc: benchprog.ProcSource, Size: 3000, Class: rpcproto.ClassResponderRead}) == nil {
	}
	a.Progress(res)
}

// sinkOnce runs one SINK with a Read chunk on b while step drives the rest, and reports
// whether it completed within d.
func sinkOnce(t *testing.T, b *Conn, d time.Duration, step func()) bool {
	t.Helper()
	if err := b.Submit(Call{Proc: benchprog.ProcSink, Size: 16 << 10, Tag: 77}); err != nil {
		t.Fatal(err)
	}
	var res [8]Result
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		step()
		n, err := b.Progress(res[:])
		for _, r := range res[:n] {
			if r.Err != nil {
				t.Fatalf("well-behaved SINK: %v", r.Err)
			}
			return true
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return false
}

// holding counts the sink buffers c's contexts hold.
func holding(c *Conn) int {
	n := 0
	for k := range c.sv.ctxs {
		if c.sv.ctxs[k].sink != nil {
			n++
		}
	}
	return n
}

// A connection whose peer withholds RDMA_DONE cannot hold a poller's whole shared sink
// pool: a well-behaved connection's calls still get buffers.
func TestSharedSinksLeaveOtherConnectionsAShare(t *testing.T) {
	cfg := testCfg(1024)
	cfg.ResponderRead, cfg.Credits = true, 16
	rig := newMuxRig(t, soft.InprocPrefix+"fairsinks", cfg, 8)
	a, sa := rig.dialLocal(cfg)
	b, _ := rig.dialLocal(cfg)
	sa.cfg.DoneTimeout = time.Hour
	faults(a).suppressDone = true
	var res [32]Result
	for deadline := time.Now().Add(hangGuard); len(rig.sh.sinks.waiting) == 0; {
		keepSourcing(a, res[:])
		rig.step()
		if time.Now().After(deadline) {
			t.Fatal("connection A never filled the pool")
		}
	}
	step := func() { keepSourcing(a, res[:]); rig.step() }
	for k := range 20 {
		if !sinkOnce(t, b, 5*time.Second, step) {
			t.Fatalf("SINK %d of the well-behaved connection did not complete in 5s while A, withholding RDMA_DONE, holds %d of the %d shared sink buffers",
				k+1, holding(sa), rig.sh.sinks.max)
		}
	}
}

// DoneTimeout holds while other connections keep the poller's CQ busy: the Mux never goes
// idle here, and the chunk A's peer never finished with is released all the same.
func TestDoneTimeoutWhileCQBusy(t *testing.T) {
	cfg := testCfg(1024)
	cfg.ResponderRead = true
	rig := newMuxRig(t, soft.InprocPrefix+"busydone", cfg, 8)
	rig.idle = false
	a, sa := rig.dialLocal(cfg)
	b, _ := rig.dialLocal(cfg)
	sa.cfg.DoneTimeout = 50 * time.Millisecond
	faults(a).suppressDone = true
	if err := a.Submit(Call{Proc: benchprog.ProcSource, Size: 3000, Class: rpcproto.ClassResponderRead, Tag: 1}); err != nil {
		t.Fatal(err)
	}
	var res [16]Result
	start := time.Now()
	for sa.stats.DoneTimeouts == 0 {
		rig.step()
		a.Progress(res[:])
		b.Submit(Call{Proc: benchprog.ProcNull}) // ErrNoCredit: the next turn
		if _, err := b.Progress(res[:]); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 3*time.Second {
			t.Fatalf("A's Read chunk still exposed %v after the call, with a DoneTimeout of %v, while B kept the CQ busy (%d replies pending RDMA_DONE)",
				time.Since(start), sa.cfg.DoneTimeout, sa.sv.pendingDone)
		}
	}
}

// rigDo sends a command to the peer and waits for its answer, driving the rig meanwhile.
func rigDo(t *testing.T, p *peerProc, rig *muxRig, cmd string) string {
	t.Helper()
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(hangGuard); time.Now().Before(deadline); {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the peer exited; its stderr:\n%s", p.stderr.String())
			}
			return line
		default:
			rig.step()
		}
	}
	t.Fatalf("the peer never answered %s", cmd)
	return ""
}

// The same with the peer that withholds RDMA_DONE in another process, over TCP.
func TestProcessSharedSinksLeaveOtherConnectionsAShare(t *testing.T) {
	cfg := testCfg(1024)
	cfg.ResponderRead, cfg.Credits = true, 16
	rig := newMuxRig(t, "127.0.0.1:0", cfg, 8)
	rig.cfg.DoneTimeout = time.Hour
	var p *peerProc
	sa := rig.accept(func() error { p = spawnPeer(t, "req", cfg, rig.l.Addr()); return nil })
	b, _ := rig.dialLocal(cfg)
	for _, cmd := range []string{"SUPPRESS 1", fmt.Sprintf("HOG %d 3000 %d", benchprog.ProcSource, rpcproto.ClassResponderRead)} {
		if got := rigDo(t, p, rig, cmd); got != "OK" {
			t.Fatalf("%s: %s", cmd, got)
		}
	}
	for deadline := time.Now().Add(hangGuard); len(rig.sh.sinks.waiting) == 0; {
		rig.step()
		if time.Now().After(deadline) {
			t.Fatal("the peer never filled the pool")
		}
	}
	for k := range 20 {
		if !sinkOnce(t, b, 5*time.Second, rig.step) {
			t.Fatalf("SINK %d of the well-behaved connection did not complete in 5s while the peer process, withholding RDMA_DONE, holds %d of the %d shared sink buffers",
				k+1, holding(sa), rig.sh.sinks.max)
		}
	}
	if sa.err != nil {
		t.Fatalf("the hogging peer's connection: %v", sa.err)
	}
}

// fillWithHogs dials n connections to rig whose peers withhold RDMA_DONE (DoneTimeout an
// hour), then lets each in turn keep its credits busy with SOURCEs in responder-provided Read
// chunks until the pool refuses it a buffer (a call of it waits). It returns a step that
// drives the rig and keeps every hog busy.
func fillWithHogs(t *testing.T, rig *muxRig, n int, cfg Config) (step func(), servers []*Conn) {
	t.Helper()
	var hogs, busy []*Conn
	for range n {
		h, sh := rig.dialLocal(cfg)
		sh.cfg.DoneTimeout = time.Hour
		faults(h).suppressDone = true
		hogs, servers = append(hogs, h), append(servers, sh)
	}
	var res [32]Result
	step = func() {
		for _, h := range busy {
			keepSourcing(h, res[:])
		}
		rig.step()
	}
	for k, sh := range servers {
		busy = hogs[:k+1]
		for deadline := time.Now().Add(hangGuard); ; {
			step()
			parked := false
			for _, w := range rig.sh.sinks.waiting {
				parked = parked || w.c == sh
			}
			if parked {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("hog %d of %d never found the pool refusing it (it holds %d buffers)", k+1, n, holding(sh))
			}
		}
	}
	return step, servers
}

// However many connections withhold RDMA_DONE, and however small the pool, a well-behaved
// connection's calls still get a sink buffer, and the hogs hold at most half the shared
// buffers beyond their reserves: the first case is the probe of two hogs that took the whole
// pool of 8 (6 and 2) while the third connection's SINK never completed.
func TestHogsLeaveEveryConnectionABuffer(t *testing.T) {
	for _, tc := range []struct{ pool, hogs int }{{8, 2}, {2, 2}, {1, 3}, {8, 5}, {16, 4}} {
		t.Run(fmt.Sprintf("pool=%d/hogs=%d", tc.pool, tc.hogs), func(t *testing.T) {
			cfg := testCfg(1024)
			cfg.ResponderRead, cfg.Credits = true, 16
			rig := newMuxRig(t, soft.InprocPrefix+fmt.Sprintf("hogs%d-%d", tc.pool, tc.hogs), cfg, tc.pool)
			b, _ := rig.dialLocal(cfg)
			step, hogs := fillWithHogs(t, rig, tc.hogs, cfg)
			for k := range 20 {
				if !sinkOnce(t, b, 5*time.Second, step) {
					held := make([]int, len(hogs))
					for j, h := range hogs {
						held[j] = holding(h)
					}
					t.Fatalf("SINK %d of the well-behaved connection did not complete in 5s while %d connections withholding RDMA_DONE hold %v of the pool's %d shared buffers",
						k+1, tc.hogs, held, rig.sh.sinks.max)
				}
			}
			// Peers whose buffers never came back take, all together, at most half the
			// shared ones beyond their reserves.
			shared := 0
			for _, h := range hogs {
				shared += max(0, holding(h)-1)
			}
			if shared > tc.pool/2 {
				t.Fatalf("%d connections withholding RDMA_DONE hold %d of the %d shared buffers beyond their reserves, want at most half", tc.hogs, shared, tc.pool)
			}
		})
	}
}

// delayRelay forwards TCP connections to target, passing on what the dialing side sends
// delay after it came: every RDMA Read a server pulls through it is answered that late.
func delayRelay(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			open = append(open, in, out)
			mu.Unlock()
			wg.Add(3)
			go func() { defer wg.Done(); io.Copy(in, out); in.Close() }()
			q := make(chan relayChunk, 1024)
			go func() {
				defer wg.Done()
				defer close(q)
				for {
					b := make([]byte, 64<<10)
					n, err := in.Read(b)
					if n > 0 {
						q <- relayChunk{time.Now().Add(delay), b[:n]}
					}
					if err != nil {
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				for c := range q {
					time.Sleep(time.Until(c.at))
					if _, err := out.Write(c.b); err != nil {
						break
					}
				}
				out.Close()
			}()
		}
	}()
	return l.Addr().String()
}

type relayChunk struct {
	at time.Time
	b  []byte
}

// Peers that answer every RDMA Read 200 ms late, keeping 64 SINKs outstanding each, do not
// hold a small pool away from a well-behaved connection: it completes 50 SINKs before the
// slow peers complete 20 between them.
func TestSlowReadersLeaveOthersTheirBuffers(t *testing.T) {
	for _, tc := range []struct{ pool, slow int }{{2, 2}, {8, 3}} {
		t.Run(fmt.Sprintf("pool=%d/slow=%d", tc.pool, tc.slow), func(t *testing.T) {
			cfg := testCfg(1024)
			cfg.Credits = 64
			rig := newMuxRig(t, "127.0.0.1:0", cfg, tc.pool)
			relay := delayRelay(t, rig.l.Addr(), 200*time.Millisecond)
			var slow []*Conn
			for range tc.slow {
				var h *Conn
				rig.accept(func() (err error) {
					h, err = Dial(context.Background(), rig.dev, relay, cfg)
					return err
				})
				t.Cleanup(func() { h.Close() })
				slow = append(slow, h)
			}
			b, _ := rig.dialLocal(cfg)
			var res [64]Result
			slowDone := 0
			step := func() {
				for _, h := range slow {
					for h.Submit(Call{Proc: benchprog.ProcSink, Size: 16 << 10}) == nil {
					}
					n, err := h.Progress(res[:])
					if err != nil {
						t.Fatalf("slow reader: %v", err)
					}
					slowDone += n
				}
				rig.step()
			}
			// The slow readers' calls reach the server first and take what they may.
			for deadline := time.Now().Add(hangGuard); len(rig.sh.sinks.waiting) == 0; {
				step()
				if time.Now().After(deadline) {
					t.Fatal("the slow readers never filled the pool")
				}
			}
			for k := range 50 {
				if !sinkOnce(t, b, hangGuard, step) {
					t.Fatalf("SINK %d of the well-behaved connection never completed", k+1)
				}
				if slowDone >= 20 {
					t.Fatalf("the slow readers completed %d SINKs (each RDMA Read answered 200 ms late) while the well-behaved connection completed %d: it waits on their buffers",
						slowDone, k+1)
				}
			}
		})
	}
}

// An RDMA Read unanswered for longer than ReadTimeout fails the connection, as DoneTimeout
// bounds a withheld RDMA_DONE: the buffer it reads into comes back with the queue pair.
func TestReadTimeoutBoundsSlowRead(t *testing.T) {
	cfg := testCfg(1024)
	rig := newMuxRig(t, "127.0.0.1:0", cfg, 4)
	rig.cfg.ReadTimeout = 200 * time.Millisecond
	relay := delayRelay(t, rig.l.Addr(), time.Second)
	var h *Conn
	sh := rig.accept(func() (err error) {
		h, err = Dial(context.Background(), rig.dev, relay, cfg)
		return err
	})
	t.Cleanup(func() { h.Close() })
	if err := h.Submit(Call{Proc: benchprog.ProcSink, Size: 16 << 10, Tag: 1}); err != nil {
		t.Fatal(err)
	}
	var res [4]Result
	for deadline := time.Now().Add(hangGuard); sh.err == nil; {
		rig.step()
		if n, _ := h.Progress(res[:]); n > 0 && res[0].Err == nil {
			t.Fatalf("the SINK whose RDMA Read was answered 1 s late completed; want the connection failed after the read timeout of %v", rig.cfg.ReadTimeout)
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's connection never failed")
		}
	}
	if !errors.Is(sh.err, ErrReadTimeout) {
		t.Fatalf("the server's connection failed with %v, want ErrReadTimeout", sh.err)
	}
}

// A Position Zero call beyond the grant fails the connection before it is pulled: the peer
// gets no context, sink buffer or RDMA Read for it.
func TestPositionZeroBeyondGrantNotPulled(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.Credits, sc.Credits = 16, 4
	p := newPair(t, rc, sc)
	calls := make([]Call, 8)
	for k := range calls {
		calls[k] = Call{Proc: benchprog.ProcEcho, Size: 5000, Class: rpcproto.ClassPosZeroRead, Tag: uint64(k)}
	}
	for _, r := range func() []Result { r, _ := p.run(calls, nil); return r }() {
		if r.Err != nil {
			t.Fatalf("at the grant: %v", r.Err)
		}
	}
	if g := p.req.cl.credits; g != 4 {
		t.Fatalf("granted %d, want 4", g)
	}
	reads := p.rsp.stats.Read.Count
	if err := overspend(p.req, 6, Call{Proc: benchprog.ProcEcho, Size: 5000, Class: rpcproto.ClassPosZeroRead}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	var res [16]Result
	for deadline := time.Now().Add(hangGuard); p.rsp.err == nil && time.Now().Before(deadline); {
		p.rsp.Progress(res[:])
		p.req.Progress(res[:])
	}
	if !errors.Is(p.rsp.err, ErrCreditOverrun) || !strings.Contains(p.rsp.err.Error(), "4 granted") {
		t.Fatalf("6 Position Zero calls with 4 credits granted: the responder's connection ended with %v; want ErrCreditOverrun naming the grant", p.rsp.err)
	}
	if n := p.rsp.stats.Read.Count - reads; n > 4 {
		t.Fatalf("the responder posted %d RDMA Reads for 6 Position Zero calls with 4 credits granted: it pulled calls beyond the grant", n)
	}
}
