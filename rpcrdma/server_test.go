package rpcrdma

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// TestServe runs the responder side on Serve's pollers (other goroutines, as in a real
// server) and two requesters in this goroutine, with every class and verification on.
func TestServe(t *testing.T) {
	dev, l := softListener(t, soft.InprocPrefix+"0")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var served []uint64
	cfg := testCfg(4096)
	cfg.ResponderRead = true
	serveErr := make(chan error, 1)
	go func() {
		serveErr <- Serve(ctx, dev, l, ServeConfig{
			Endpoint: cfg,
			Poller:   datapath.PollerConfig{Poll: datapath.Poll{Mode: datapath.PollEvent}, EventTimeout: time.Millisecond},
			Done: func(c *Conn, err error) {
				mu.Lock()
				defer mu.Unlock()
				if c != nil {
					served = append(served, c.stats.Served)
				}
			},
		})
	}()
	var reqs []*Conn
	for range 2 {
		c, err := Dial(context.Background(), dev, l.Addr(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, c)
	}
	calls := []Call{
		{Proc: benchprog.ProcNull},
		{Proc: benchprog.ProcEcho, Size: 100},
		{Proc: benchprog.ProcEcho, Size: 20000},
		{Proc: benchprog.ProcSink, Size: 20000},
		{Proc: benchprog.ProcSource, Size: 20000},
		{Proc: benchprog.ProcSource, Size: 20000, Class: rpcproto.ClassReplyChunk},
		{Proc: benchprog.ProcSource, Size: 20000, Class: rpcproto.ClassResponderRead},
		{Proc: benchprog.ProcSink, Size: 3, Class: rpcproto.ClassPosZeroRead},
	}
	const rounds = 50
	var done [16]Result
	deadline := time.Now().Add(10 * time.Second)
	for k, c := range reqs {
		sent, got := 0, 0
		for got < rounds*len(calls) {
			if time.Now().After(deadline) {
				t.Fatalf("requester %d: %d of %d done", k, got, rounds*len(calls))
			}
			for sent < rounds*len(calls) {
				if err := c.Submit(calls[sent%len(calls)]); errors.Is(err, ErrNoCredit) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				sent++
			}
			n, err := c.Progress(done[:])
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range done[:n] {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			got += n
		}
	}
	for _, c := range reqs {
		c.Close()
	}
	// The responders see their connections break and report them.
	waitUntil(deadline, func() bool { mu.Lock(); defer mu.Unlock(); return len(served) == 2 })
	cancel()
	if err := <-serveErr; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(served) != 2 || served[0] != rounds*uint64(len(calls)) || served[1] != served[0] {
		t.Fatalf("served %v, want 2 × %d", served, rounds*len(calls))
	}
}

// TestMux serves two connections that share one CQ from one poller.
func TestMux(t *testing.T) {
	prov := soft.New(soft.Config{})
	cdev, _ := prov.Open("")
	sdev, _ := prov.Open("")
	defer cdev.Close()
	defer sdev.Close()
	l, err := sdev.Listen(soft.InprocPrefix + "0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cq, err := sdev.NewCQ(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer cq.Close()
	mux := NewMux(cq, MuxConfig{})
	var reqs []*Conn
	for range 2 {
		ch := make(chan *Conn, 1)
		go func() {
			req, err := l.Accept(context.Background())
			if err != nil {
				t.Error(err)
				ch <- nil
				return
			}
			c, err := AcceptOn(sdev, req, testCfg(4096), mux)
			if err != nil {
				t.Error(err)
			}
			ch <- c
		}()
		c, err := Dial(context.Background(), cdev, l.Addr(), testCfg(4096))
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, c)
		rc := <-ch
		if rc == nil {
			t.FailNow()
		}
		if _, err := rc.Progress(nil); err == nil {
			t.Error("Progress on a shared CQ must be refused")
		}
	}
	p := datapath.NewPoller(datapath.PollerConfig{})
	p.Start(cq, mux)
	var done [8]Result
	deadline := time.Now().Add(10 * time.Second)
	for i := range 200 {
		for _, c := range reqs {
			for {
				err := c.Submit(Call{Proc: benchprog.ProcSource, Size: 100 * i, Tag: uint64(i)})
				if err == nil {
					break
				}
				if !errors.Is(err, ErrNoCredit) || time.Now().After(deadline) {
					t.Fatal(err)
				}
				c.Progress(done[:])
			}
		}
	}
	for _, c := range reqs {
		for c.stats.Completed < 200 && time.Now().Before(deadline) {
			n, err := c.Progress(done[:])
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range done[:n] {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
			}
		}
	}
	for i, c := range reqs {
		if c.stats.Completed != 200 || c.stats.Failed != 0 {
			t.Errorf("requester %d: %d completed, %d failed", i, c.stats.Completed, c.stats.Failed)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	for i, c := range mux.Conns() {
		if c.stats.Replies.Total() != 200 {
			t.Errorf("responder %d answered %d", i, c.stats.Replies.Total())
		}
		c.Close()
	}
	for _, c := range reqs {
		c.Close()
	}
}

// TestOverTCP runs the class matrix with the responder and the requester on separate soft
// devices joined by a TCP connection (the soft provider's between-process mode), where
// completions arrive from the provider's own goroutines, not from the poster's.
func TestOverTCP(t *testing.T) {
	prov := soft.New(soft.Config{})
	cdev, _ := prov.Open("")
	sdev, _ := prov.Open("")
	defer cdev.Close()
	defer sdev.Close()
	l, err := sdev.Listen("127.0.0.1:0")
	if errors.Is(err, datapath.ErrNotSupported) {
		t.Skip("soft provider without TCP mode")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, mem := range []MemoryMode{MemoryPreregistered, MemoryWindows} {
		cfg := testCfg(4096)
		cfg.Memory, cfg.ResponderRead, cfg.RemoteInvalidate, cfg.ReverseCredits = mem, true, true, 2
		ch := make(chan *Conn, 1)
		go func() {
			c, err := Accept(context.Background(), sdev, l, cfg)
			if err != nil {
				t.Error(err)
			}
			ch <- c
		}()
		req, err := Dial(context.Background(), cdev, l.Addr(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		rsp := <-ch
		if rsp == nil {
			t.FailNow()
		}
		p := &pair{t: t, req: req, rsp: rsp}
		p.call(p.req, Call{Proc: benchprog.ProcNull})
		for _, from := range []*Conn{p.req, p.rsp} {
			for i, tc := range classCases(4096) {
				tc.call.Tag = uint64(i)
				r := p.call(from, tc.call)
				if r.Err != nil || r.CallClass != tc.wantCall || r.ReplyClass != tc.wantReply {
					t.Errorf("%s %s %s: err %v, classes %s/%s, want %s/%s", mem, from.params.Role, tc.name, r.Err, r.CallClass, r.ReplyClass, tc.wantCall, tc.wantReply)
				}
			}
		}
		req.Close()
		rsp.Close()
	}
}

// serveForTest runs Serve in a goroutine; stop ends it and returns its error.
func serveForTest(t *testing.T, dev datapath.Device, l datapath.Listener, cfg ServeConfig) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, dev, l, cfg) }()
	return func() error { cancel(); return <-errc }
}

func TestServeRefusesBeyondMaxConnections(t *testing.T) {
	for _, tcp := range []bool{false, true} {
		prov := soft.New(soft.Config{})
		cdev, _ := prov.Open("")
		sdev, _ := prov.Open("")
		addr := soft.InprocPrefix + "max"
		if tcp {
			addr = "127.0.0.1:0"
		}
		l, err := sdev.Listen(addr)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var ends []error
		stop := serveForTest(t, sdev, l, ServeConfig{Endpoint: testCfg(4096), MaxConnections: 2,
			Poller: datapath.PollerConfig{Poll: datapath.Poll{Mode: datapath.PollEvent}, EventTimeout: time.Millisecond},
			Done: func(c *Conn, err error) {
				mu.Lock()
				ends = append(ends, err)
				mu.Unlock()
			}})
		var held []*Conn
		for range 2 {
			c, err := Dial(context.Background(), cdev, l.Addr(), testCfg(4096))
			if err != nil {
				t.Fatalf("tcp=%v: connection within the limit: %v", tcp, err)
			}
			held = append(held, c)
		}
		_, err = Dial(context.Background(), cdev, l.Addr(), testCfg(4096))
		var rej *RejectReasonError
		var drej *datapath.RejectedError
		if !errors.As(err, &rej) || !errors.As(err, &drej) || !strings.Contains(rej.Reason, "2 connections") || !strings.Contains(err.Error(), "max-connections") {
			t.Fatalf("tcp=%v: third connection: %v; want a RejectReasonError naming the limit", tcp, err)
		}
		// A served connection still works, and once one closes, a new one is taken.
		if r := callServed(t, held[0], Call{Proc: benchprog.ProcNull}); r.Err != nil {
			t.Fatalf("tcp=%v: NULL on a held connection: %v", tcp, r.Err)
		}
		held[1].Close()
		var again *Conn
		for deadline := time.Now().Add(10 * time.Second); again == nil; {
			if again, err = Dial(context.Background(), cdev, l.Addr(), testCfg(4096)); err != nil {
				if time.Now().After(deadline) {
					t.Fatalf("tcp=%v: no connection taken after one closed: %v", tcp, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		again.Close()
		held[0].Close()
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		refused := 0
		for _, e := range ends {
			var re *RefusedError
			if errors.As(e, &re) {
				refused++
			}
		}
		mu.Unlock()
		if refused < 1 {
			t.Fatalf("tcp=%v: Done saw %v; want the refusal reported", tcp, ends)
		}
		l.Close()
		cdev.Close()
		sdev.Close()
	}
}

func TestServeIdleTimeout(t *testing.T) {
	dev, _ := soft.New(soft.Config{}).Open("")
	defer dev.Close()
	l, err := dev.Listen(soft.InprocPrefix + "idle")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ended := make(chan error, 4)
	stop := serveForTest(t, dev, l, ServeConfig{Endpoint: testCfg(4096), IdleTimeout: 20 * time.Millisecond,
		Poller: datapath.PollerConfig{Poll: datapath.Poll{Mode: datapath.PollEvent}, EventTimeout: time.Millisecond},
		Done:   func(c *Conn, err error) { ended <- err }})
	defer stop()
	c, err := Dial(context.Background(), dev, l.Addr(), testCfg(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := callServed(t, c, Call{Proc: benchprog.ProcNull}); r.Err != nil {
		t.Fatal(r.Err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, ErrIdleTimeout) {
			t.Fatalf("connection ended with %v, want ErrIdleTimeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("idle connection never timed out")
	}
	// The requester sees its connection break.
	var res [1]Result
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := c.Progress(res[:]); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("requester never saw the idle-timed-out connection close")
		}
	}
}

// TestServeManyConnectionsFewPollers: 24 connections dealt to 2 pollers, served at once.
func TestServeManyConnectionsFewPollers(t *testing.T) {
	dev, _ := soft.New(soft.Config{}).Open("")
	defer dev.Close()
	l, err := dev.Listen(soft.InprocPrefix + "many")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	served := map[*Conn]uint64{}
	stop := serveForTest(t, dev, l, ServeConfig{Endpoint: testCfg(4096), Pollers: 2, MaxConnections: 24,
		Poller: datapath.PollerConfig{Poll: datapath.Poll{Mode: datapath.PollHybrid}, EventTimeout: time.Millisecond},
		Done: func(c *Conn, err error) {
			mu.Lock()
			defer mu.Unlock()
			if c != nil {
				served[c] = c.stats.Served
			}
		}})
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(context.Background(), dev, l.Addr(), testCfg(4096))
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for k := range 50 {
				if r := callServed(t, c, Call{Proc: benchprog.ProcEcho, Size: 100 + i + k, Tag: uint64(k)}); r.Err != nil {
					t.Errorf("connection %d call %d: %v", i, k, r.Err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Each connection's count is final once the server saw its requester close it (the
	// replies whose Send completion no later one reported count then).
	waitUntil(time.Now().Add(hangGuard), func() bool { mu.Lock(); defer mu.Unlock(); return len(served) == 24 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	total := uint64(0)
	for _, n := range served {
		total += n
	}
	if len(served) != 24 || total != 24*50 {
		t.Fatalf("%d connections served %d calls, want 24 and %d", len(served), total, 24*50)
	}
}

// callServed makes one call on a requester whose responder runs elsewhere (Serve) and waits
// for its result.
func callServed(t *testing.T, c *Conn, call Call) Result {
	t.Helper()
	return callAndWait(c, call)
}

// TestServeSharesSinks serves three requesters whose calls need sink buffers (Read chunks,
// Position Zero Read chunks, SOURCE results in Write, Reply and responder-provided Read
// chunks) from one poller whose shared pool holds two (and one reserved for each
// connection): calls wait for a buffer and then
// complete, verified, and a connection registers only its own send and receive buffers.
func TestServeSharesSinks(t *testing.T) {
	dev, l := softListener(t, soft.InprocPrefix+"0")
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testCfg(1024)
	cfg.ResponderRead = true
	type end struct {
		waits      uint64
		registered int
		made       int
		shared     bool
		err        error
	}
	var mu sync.Mutex
	var ends []end
	serveErr := make(chan error, 1)
	go func() {
		serveErr <- Serve(ctx, dev, l, ServeConfig{
			Endpoint:    cfg,
			SinkBuffers: 2,
			Poller:      datapath.PollerConfig{Poll: datapath.Poll{Mode: datapath.PollEvent}, EventTimeout: time.Millisecond},
			Done: func(c *Conn, err error) {
				mu.Lock()
				defer mu.Unlock()
				if c == nil {
					ends = append(ends, end{err: err})
					return
				}
				ends = append(ends, end{c.stats.SinkWaits, c.RegisteredBytes(), c.sinks.made, c.sinks.shared, nil})
			},
		})
	}()
	var reqs []*Conn
	for range 3 {
		c, err := Dial(context.Background(), dev, l.Addr(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, c)
	}
	calls := []Call{
		{Proc: benchprog.ProcSink, Size: 20000},
		{Proc: benchprog.ProcSource, Size: 20000},
		{Proc: benchprog.ProcNull},
		{Proc: benchprog.ProcSource, Size: 20000, Class: rpcproto.ClassReplyChunk},
		{Proc: benchprog.ProcSource, Size: 20000, Class: rpcproto.ClassResponderRead},
		{Proc: benchprog.ProcEcho, Size: 5000, Class: rpcproto.ClassPosZeroRead},
	}
	const total = 40 * 6
	sent, got := make([]int, len(reqs)), make([]int, len(reqs))
	var done [16]Result
	deadline := time.Now().Add(20 * time.Second)
	for finished := 0; finished < len(reqs); {
		if time.Now().After(deadline) {
			t.Fatalf("done %v of %d each", got, total)
		}
		finished = 0
		// Every requester keeps its credits' worth outstanding: together far more calls
		// than the pool has buffers.
		for k, c := range reqs {
			for sent[k] < total {
				if err := c.Submit(calls[sent[k]%len(calls)]); errors.Is(err, ErrNoCredit) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				sent[k]++
			}
			n, err := c.Progress(done[:])
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range done[:n] {
				if r.Err != nil {
					t.Fatalf("requester %d: %v", k, r.Err)
				}
			}
			if got[k] += n; got[k] == total {
				finished++
			}
		}
	}
	for _, c := range reqs {
		c.Close()
	}
	waitUntil(deadline, func() bool { mu.Lock(); defer mu.Unlock(); return len(ends) == len(reqs) })
	cancel()
	if err := <-serveErr; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ends) != len(reqs) {
		t.Fatalf("%d connections reported, want %d: %+v", len(ends), len(reqs), ends)
	}
	var waits uint64
	want := registeredFormula(cfg.withDefaults(), 0, cfg.Credits, false)
	for _, e := range ends {
		if e.err != nil {
			t.Fatal(e.err)
		}
		if !e.shared || e.made > 2+len(reqs) {
			t.Errorf("sink pool shared %v with %d buffers, want shared with at most 2 and one reserved per connection", e.shared, e.made)
		}
		if e.registered != want {
			t.Errorf("a served connection registered %d bytes, formula without sinks %d", e.registered, want)
		}
		waits += e.waits
	}
	if waits == 0 {
		t.Error("no call waited for a sink buffer: the pool was not the bound")
	}
}

// softListener opens an in-process soft device and listens on addr; both close when the test
// ends.
func softListener(t *testing.T, addr string) (datapath.Device, datapath.Listener) {
	t.Helper()
	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	l, err := dev.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return dev, l
}

// waitUntil polls cond until it holds or deadline passes; the caller then checks what it
// waited for.
func waitUntil(deadline time.Time, cond func() bool) {
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}
