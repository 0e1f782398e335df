package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// The driver over the real engine allocates nothing per RPC: a run of 4000 RPCs allocates
// no more than a run of 1000, give or take the background. (testing.AllocsPerRun would set GOMAXPROCS to 1, where the
// in-process server's busy poller and this one take turns by preemption: measure directly.)
func TestEngineDriverAllocs(t *testing.T) {
	c, err := workloads.Config{Prog: benchprog.Prog, Depth: 8, Count: 1000, Warmup: workloads.NoWarmup}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	pt := workloads.Point{Threshold: 4096, Depth: 8, Workload: c}
	conn, err := openLocal(EngineConfig{Provider: soft.New(soft.Config{}), Log: io.Discard}, []workloads.Point{pt})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	open, _, err := conn.Point(pt)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := open(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.(*engineClient).Close()
	mallocs := func(count int64) uint64 {
		c.Count = count
		d, err := workloads.NewDriver(c, 0, cl, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, err := d.Run(context.Background())
		runtime.ReadMemStats(&after)
		if err != nil || st.Completed != uint64(count) {
			t.Fatalf("run: %v, %d completed", err, st.Completed)
		}
		return after.Mallocs - before.Mallocs
	}
	mallocs(100) // warm the connection up
	a, b := mallocs(1000), mallocs(4000)
	t.Logf("mallocs: %d for 1000 RPCs, %d for 4000", a, b)
	// 3000 more RPCs: one allocation per RPC would be 3000 more; other goroutines (the
	// server's, the runtime's) account for a few.
	if b > a+100 {
		t.Fatalf("%d allocations for 1000 RPCs, %d for 4000: the hot path allocates", a, b)
	}
}

func TestLocalAddr(t *testing.T) {
	rxe := datapath.DeviceInfo{Ports: []datapath.PortInfo{{GIDs: []datapath.GIDInfo{
		{GID: "fe80::5054:ff:fe12:3456"}, {GID: "::ffff:10.0.2.15"}}}}}
	if got := localAddr(rxe); got != "10.0.2.15:0" {
		t.Fatalf("rxe: %q", got)
	}
	if got := localAddr(datapath.DeviceInfo{}); got != "127.0.0.1:0" {
		t.Fatalf("no GIDs: %q", got)
	}
	// iWARP (siw): MAC-based GIDs; the address is on the GID's netdev.
	siw := datapath.DeviceInfo{NodeType: "RNIC", Ports: []datapath.PortInfo{{GIDs: []datapath.GIDInfo{
		{GID: "5254:0012:3456:0000:0000:0000:0000:0000", NetDev: "eth0"}}}}}
	addrs := map[string][]net.IP{"eth0": {net.ParseIP("fe80::1"), net.ParseIP("2001:db8::7"), net.ParseIP("192.0.2.9")}}
	lookup := func(n string) []net.IP { return addrs[n] }
	if got := localAddrWith(siw, lookup); got != "192.0.2.9:0" {
		t.Fatalf("siw: %q", got)
	}
	addrs["eth0"] = addrs["eth0"][:2]
	if got := localAddrWith(siw, lookup); got != "[2001:db8::7]:0" {
		t.Fatalf("siw, IPv6 only: %q", got)
	}
	delete(addrs, "eth0")
	if got := localAddrWith(siw, lookup); got != "127.0.0.1:0" {
		t.Fatalf("siw, no address: %q", got)
	}
	// The loopback interface exists everywhere: the real lookup finds its address.
	lo := datapath.DeviceInfo{Ports: []datapath.PortInfo{{GIDs: []datapath.GIDInfo{{GID: "0000::1", NetDev: "lo"}}}}}
	if got := localAddr(lo); got != "127.0.0.1:0" {
		t.Fatalf("lo: %q", got)
	}
}

// The responder's counters of a point are those of as many connections as the point had; if
// they do not all arrive in time, none are reported (and none leak into the next point).
func TestPeerStatsTake(t *testing.T) {
	p := newPeerStats("test", io.Discard)
	p.stats = []rpcrdma.Stats{{Write: rpcrdma.OpCount{Count: 2, Bytes: 8}}, {Write: rpcrdma.OpCount{Count: 3, Bytes: 12}}}
	if ops := p.take(2, time.Millisecond); ops == nil || ops.Write.Count != 5 || ops.Write.Bytes != 20 {
		t.Fatalf("two connections: %+v", ops)
	}
	p.stats = append(p.stats, rpcrdma.Stats{Read: rpcrdma.OpCount{Count: 1}})
	if ops := p.take(2, 10*time.Millisecond); ops != nil {
		t.Fatalf("one of two connections reported: %+v", ops)
	}
	p.stats = append(p.stats, rpcrdma.Stats{Read: rpcrdma.OpCount{Count: 7}})
	if ops := p.take(1, time.Millisecond); ops == nil || ops.Read.Count != 7 {
		t.Fatalf("the next point got %+v", ops)
	}
}

// A connection the responder could not set up is reported on the responder's side, with the
// cause (the requester sees only a refusal).
func TestResponderReportsSetupErrors(t *testing.T) {
	var b strings.Builder
	p := newPeerStats("server", &b)
	p.done(nil, errors.New("ibv_reg_mr: cannot allocate memory registering 8 MiB: the locked-memory limit"))
	if !strings.Contains(b.String(), "rpcrdma-bench server: a connection could not be set up: ibv_reg_mr: cannot allocate memory") {
		t.Fatalf("logged %q", b.String())
	}
	if len(p.stats) != 0 {
		t.Fatalf("a failed setup counted as a connection")
	}
}

func TestInferredPeerOps(t *testing.T) {
	st := []rpcrdma.Stats{
		{Send: rpcrdma.OpCount{Count: 10, Bytes: 1000}, Recv: rpcrdma.OpCount{Count: 10, Bytes: 600}, RemoteInvalidated: 4,
			PeerRead: rpcrdma.OpCount{Count: 3, Bytes: 3 << 16}, PeerWrite: rpcrdma.OpCount{Count: 5, Bytes: 5 << 12}},
		{Send: rpcrdma.OpCount{Count: 2, Bytes: 200}, Recv: rpcrdma.OpCount{Count: 2, Bytes: 120}},
		// RDMA_DONE by Send With Invalidate (--done-invalidate): the responder received it.
		{SendInv: rpcrdma.OpCount{Count: 3, Bytes: 84}},
	}
	got := inferredPeerOps(st)
	want := results.Ops{
		Send: results.OpCount{Count: 8, Bytes: 720}, SendInv: results.OpCount{Count: 4},
		Recv: results.OpCount{Count: 15, Bytes: 1284},
		Read: results.OpCount{Count: 3, Bytes: 3 << 16}, Write: results.OpCount{Count: 5, Bytes: 5 << 12},
	}
	if *got != want {
		t.Fatalf("inferred %+v, want %+v", *got, want)
	}
}

// TestEnginePolls: the pollers a session runs at once, as datapath.SizeRuntime sizes the
// runtime for them: the widest point's measuring pollers, and the in-process responder's.
func TestEnginePolls(t *testing.T) {
	pts := []workloads.Point{{Workload: workloads.Config{Prog: benchprog.Prog, Pollers: 1}}, {Workload: workloads.Config{Prog: benchprog.Prog, Pollers: 2}}}
	busy := datapath.Poll{Mode: datapath.PollBusy}
	// A device makes verbs' completions: the responder's spin adapts to the time between them.
	local := EngineConfig{Poll: busy, Provider: verbs.New(verbs.Config{})}.Polls(pts)
	want := []datapath.Poll{busy, busy, {Mode: datapath.PollHybrid}}
	if !slices.Equal(local, want) {
		t.Errorf("in process: %v, want %v", local, want)
	}
	// On soft the responder's completions come from this process's goroutines: its spin
	// stays fixed instead of growing to the time between them.
	onSoft := EngineConfig{Poll: busy, Provider: soft.New(soft.Config{})}.Polls(pts)
	want[2] = datapath.Poll{Mode: datapath.PollHybrid, Spin: datapath.DefaultHybridSpin}
	if !slices.Equal(onSoft, want) {
		t.Errorf("in process on soft: %v, want %v", onSoft, want)
	}
	ev := datapath.Poll{Mode: datapath.PollEvent}
	remote := EngineConfig{Poll: ev, Addr: "10.0.0.1:20049", Provider: soft.New(soft.Config{})}.Polls(pts[:1])
	if !slices.Equal(remote, []datapath.Poll{ev}) {
		t.Errorf("to a server: %v, want one event poller", remote)
	}
	if n := datapath.Procs(local); n != 4 {
		t.Errorf("Procs(in process) = %d, want 4: three spinning pollers and the rest", n)
	}
}

// A responder in this process reports each of its pollers when the Connector closes, with
// the counters of everything it served.
func TestEngineResponderDone(t *testing.T) {
	c, err := workloads.Config{Prog: benchprog.Prog, Depth: 4, Count: 300, Warmup: workloads.NoWarmup}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	pt := workloads.Point{Threshold: 4096, Depth: 4, Workload: c}
	type report struct {
		poller int
		st     datapath.PollerStats
	}
	var got []report
	cfg := EngineConfig{Provider: soft.New(soft.Config{}), Log: io.Discard,
		ResponderDone: func(i int, st datapath.PollerStats) { got = append(got, report{i, st}) }}
	conn, err := openLocal(cfg, []workloads.Point{pt})
	if err != nil {
		t.Fatal(err)
	}
	open, _, err := conn.Point(pt)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	cl, err := open(context.Background(), 0, 1)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	d, err := workloads.NewDriver(c, 0, cl, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Run(context.Background())
	cl.(*engineClient).Close()
	if err != nil || st.Completed != 300 {
		t.Fatalf("run: %v, %d completed", err, st.Completed)
	}
	if len(got) != 0 {
		t.Fatalf("responder reported %d pollers before the Connector closed", len(got))
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	// Each call is at least one receive completion at the responder.
	if len(got) != 1 || got[0].poller != 0 || got[0].st.Completions < 300 || got[0].st.HasTurnaround {
		t.Fatalf("responder's reports: %+v; want poller 0 once, with at least 300 completions and no probe (soft)", got)
	}
}

// An interrupt ends a connection's set-up: a dial to a server that never answers returns
// when the opener's context is cancelled, not when the handshake gives up.
func TestOpenEndsWithItsContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accepts and says nothing
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	c, err := workloads.Config{Prog: benchprog.Prog, Depth: 1, Count: 10, Warmup: workloads.NoWarmup}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	pt := workloads.Point{Threshold: 4096, Depth: 1, Workload: c}
	conn, err := Engine(EngineConfig{Provider: soft.New(soft.Config{HandshakeTimeout: time.Minute}), Addr: l.Addr().String(), Log: io.Discard}, []workloads.Point{pt})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	open, _, err := conn.Point(pt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		cl, err := open(ctx, 0, 1)
		if cl != nil {
			cl.(*engineClient).Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("open after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("open still waiting 30 s after its context was cancelled")
	}
}
