package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// engineClient is one poller's share of a point's connections as a workloads.Client: Submit
// goes to the next connection with a free credit; the connections share one CQ, which
// Progress polls once for all of them (a Mux routes the completions), and Wait blocks on
// for the event and hybrid poll modes. It allocates nothing per RPC.
type engineClient struct {
	conns []*rpcrdma.Conn
	cq    datapath.CQ
	mux   *rpcrdma.Mux
	wcs   []datapath.Completion
	next  int
	res   []rpcrdma.Result
	// convs are the connections' Conversations, when the program holds state per
	// connection: torn down on Close, failures told to log.
	convs []rpcproto.Conversation
	log   io.Writer
	// cb records the server's calls the connections answered (Conversation.Service).
	cb *results.Recorder
	// done collects the connections' final Stats and cb when the poller closes the client.
	done func(st []rpcrdma.Stats, cb *results.Recorder)
	// recovered collects the sessions the connections set up again (recoverer).
	recovered func(results.Recoveries)
}

var (
	_ workloads.Client = (*engineClient)(nil)
	_ workloads.Waiter = (*engineClient)(nil)
)

func (c *engineClient) Submit(r *workloads.Request) error {
	call := rpcrdma.Call{Proc: r.Proc, Size: int(max(r.CallSize, r.ReplySize)), Kind: r.Class, Tag: r.Tag}
	for range c.conns {
		k := c.next
		if c.next++; c.next == len(c.conns) {
			c.next = 0
		}
		if k < len(c.convs) && c.convs[k].Lost() {
			continue // its session is set up again once its calls are in (Progress)
		}
		err := c.conns[k].Submit(call)
		if err != rpcrdma.ErrNoCredit {
			return err
		}
	}
	return workloads.ErrBusy
}

func (c *engineClient) Progress(done []workloads.Completed) (int, error) {
	if _, err := poll(c.cq, c.mux, c.wcs); err != nil {
		return 0, err
	}
	n := 0
	for i, conn := range c.conns {
		if n == len(done) {
			break
		}
		k, err := conn.Results(c.res[:min(len(c.res), len(done)-n)])
		for _, r := range c.res[:k] {
			done[n] = workloads.Completed{Tag: r.Tag, Err: r.Err, CallClass: r.CallClass.Kind(), ReplyClass: r.ReplyClass.Kind()}
			n++
		}
		if err != nil {
			return n, err
		}
		if i < len(c.convs) && (k > 0 || c.convs[i].Lost()) {
			if err := c.recover(i); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// Wait blocks on the connections' CQ.
func (c *engineClient) Wait(timeout time.Duration) error { return c.cq.Wait(timeout) }

// Turnarounds implements datapath.TurnaroundProber with its CQ's probe, when it has one.
func (c *engineClient) Turnarounds() (datapath.Turnaround, bool) { return datapath.Turnarounds(c.cq) }

// Close hands the connections' counters over and closes them.
func (c *engineClient) Close() error {
	st := make([]rpcrdma.Stats, len(c.conns))
	var first error
	for i, conn := range c.conns {
		if i < len(c.convs) {
			if r, ok := c.convs[i].(recoverer); ok && c.recovered != nil {
				s, n := r.Recoveries()
				c.recovered(results.Recoveries{Sessions: s, ClientIDs: n})
			}
			tearDown(i, conn, c.convs[i], c.cq, c.mux, c.log)
		}
		st[i] = conn.Stats()
		if err := conn.Close(); err != nil && first == nil {
			first = err
		}
	}
	if c.done != nil {
		c.done(st, c.cb)
	}
	if c.cq != nil {
		if err := c.cq.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// EngineConfig says how Engine connects.
type EngineConfig struct {
	// Provider and Device are the datapath provider and the device to open ("" its
	// first).
	Provider datapath.Provider
	Device   string
	// Addr is the server's address; empty starts a responder in this process.
	Addr string
	// Verify checks every payload end to end (workloads.Config.Verify).
	Verify bool
	// Poll is how the measuring pollers wait; a responder in this process waits the same
	// way, except that it does not spin forever: busy becomes hybrid.
	Poll datapath.Poll
	// Transport are the engine's knobs, the same for every point.
	Transport Transport
	// Codec marshals the calls of the workloads' program, when it is not the benchmark
	// program or another program's NULL: for example an NFS program set up with the files
	// it names. Its methods must not change it: every connection shares it.
	Codec rpcproto.Codec
	// Cred is the credential of every call (zero: AUTH_NONE); see rpcrdma.Config.Cred.
	Cred oncrpc.OpaqueAuth
	// Log takes the connections a responder in this process could not set up (nil:
	// discarded): the requester sees only a refused or failed connection.
	Log io.Writer
	// ResponderDone, when set and a responder runs in this process, is called as each of its
	// pollers stops, when the Connector closes, with the poller's counters over the whole
	// session (its turnaround probe's reading included, when the provider has one).
	ResponderDone func(poller int, st datapath.PollerStats)
}

// Engine returns the Connector of the transport engine: each point's connections dialed
// over c.Provider's device to c.Addr, or to a responder it starts in this process, sized
// for every point of pts.
func Engine(c EngineConfig, pts []workloads.Point) (session.Connector, error) {
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Addr == "" {
		return openLocal(c, pts)
	}
	dev, err := c.Provider.Open(c.Device)
	if err != nil {
		return nil, err
	}
	return &engineConnector{dev: dev, addr: c.Addr, cfg: rpcrdma.Config{Verify: c.Verify, Cred: c.Cred}, tr: c.Transport, codec: c.Codec, log: c.Log}, nil
}

// Polls lists the wait policy of every poller Engine(c, pts) runs at once at its widest point:
// the measuring pollers and, without Addr, the responder's. datapath.SizeRuntime takes it.
func (c EngineConfig) Polls(pts []workloads.Point) []datapath.Poll {
	n := 0
	for _, pt := range pts {
		n = max(n, pt.Workload.Pollers, 1)
	}
	polls := make([]datapath.Poll, n, n+1)
	for i := range polls {
		polls[i] = c.Poll
	}
	if c.Addr == "" && c.Provider != nil {
		polls = append(polls, c.Provider.Defaults().LocalPoll(c.Poll))
	}
	return polls
}

// engineConnector dials each point's connections over a provider's device, to a server
// in this process (local) or elsewhere.
type engineConnector struct {
	dev   datapath.Device
	addr  string
	cfg   rpcrdma.Config // Verify; per point: SendSize, RecvSize, Credits, MaxPayload
	tr    Transport
	codec rpcproto.Codec // nil: codecFor the point's workload
	local *localServer
	log   io.Writer
}

// localServer is the responder of run and of sweep without --addr.
type localServer struct {
	r      *Responder
	cancel context.CancelFunc
	done   chan error
	peer   *peerStats // its connections' counters, for the points' peer_ops
	poll   datapath.Poll
}

// openLocal starts a responder in this process, advertising the largest inline sizes so
// that the client's offer alone sets each point's thresholds (RFC 8797: each way the minimum
// of the sender's send and the receiver's receive size), and sized for every point's depth
// and payload.
func openLocal(c EngineConfig, pts []workloads.Point) (session.Connector, error) {
	p := c.Provider
	dev, err := p.Open(c.Device)
	if err != nil {
		return nil, err
	}
	credits, payload := max(rpcrdma.DefaultCredits, c.Transport.Credits), 0
	for _, pt := range pts {
		credits = max(credits, pt.Workload.Depth)
		payload = max(payload, pt.Workload.MaxPayload())
	}
	scfg := rpcrdma.Config{SendSize: wire.MaxInline, RecvSize: wire.MaxInline, Credits: credits,
		MaxPayload: PayloadSize(payload), Verify: c.Verify,
		// The client's choices decide: the R bit and responder Read chunks take effect only
		// when both ends offer them, and the memory mode applies to the responder's own
		// exposed replies (responder-provided Read chunks).
		Memory: c.Transport.Memory, RemoteInvalidate: c.Transport.RemoteInvalidate, ResponderRead: c.Transport.ResponderRead}
	ctx, cancel := context.WithCancel(context.Background())
	poll := p.Defaults().LocalPoll(c.Poll)
	ls := &localServer{cancel: cancel, done: make(chan error, 1), peer: newPeerStats("responder in this process", c.Log), poll: poll}
	conns := 0
	for _, pt := range pts {
		conns = max(conns, pt.Workload.Connections)
	}
	pcfg := datapath.PollerConfig{Poll: poll}
	if len(pts) > 0 && len(pts[0].Workload.CPUs) > 0 {
		w := &pts[0].Workload
		// The requester's pollers pinned and this one not, each process would place it
		// anew, beside them or not: its points spread by tens of percent between processes
		// (docs/gate-results.md). It takes the CPU of the list after the requester's.
		pcfg.Pin, pcfg.CPU = true, w.CPUs[max(w.Pollers, 1)%len(w.CPUs)]
	}
	r, err := Listen(ResponderConfig{Provider: p, Device: c.Device, Serve: rpcrdma.ServeConfig{Endpoint: scfg, Pollers: 1,
		MaxConnections: 2*conns + 4, Poller: pcfg, Done: ls.peer.done,
		PollerDone: c.ResponderDone}})
	if err != nil {
		cancel()
		dev.Close()
		return nil, err
	}
	ls.r = r
	go func() { ls.done <- r.Serve(ctx) }()
	return &engineConnector{dev: dev, addr: r.Addr(), cfg: rpcrdma.Config{Verify: c.Verify}, tr: c.Transport, local: ls,
		codec: c.Codec, log: c.Log}, nil
}

// localAddr is an address to listen on for a server in this process. RDMA-CM binds to an
// address of the device's netdev, not to loopback: the device's first IPv4 address from an
// IPv4-mapped GID (RoCE), else an address of a GID's netdev (iWARP devices, siw and iWARP
// NICs, have MAC-based GIDs: their address is only on the netdev), else 127.0.0.1 (soft).
// Port 0 picks a free port.
func localAddr(info datapath.DeviceInfo) string { return localAddrWith(info, netdevAddrs) }

// localAddrWith is localAddr with addrs listing a netdev's addresses.
func localAddrWith(info datapath.DeviceInfo, addrs func(netdev string) []net.IP) string {
	for _, p := range info.Ports {
		for _, g := range p.GIDs {
			ip := net.ParseIP(g.GID)
			if ip4 := ip.To4(); ip4 != nil && !ip4.IsUnspecified() {
				return net.JoinHostPort(ip4.String(), "0")
			}
		}
	}
	var v6 net.IP
	for _, p := range info.Ports {
		for _, g := range p.GIDs {
			if g.NetDev == "" {
				continue
			}
			for _, ip := range addrs(g.NetDev) {
				if ip4 := ip.To4(); ip4 != nil && !ip4.IsUnspecified() {
					return net.JoinHostPort(ip4.String(), "0")
				}
				if v6 == nil && ip.IsGlobalUnicast() {
					v6 = ip
				}
			}
		}
	}
	if v6 != nil {
		return net.JoinHostPort(v6.String(), "0")
	}
	return "127.0.0.1:0"
}

// netdevAddrs lists the addresses of network interface name (none if it has none or does
// not exist).
func netdevAddrs(name string) []net.IP {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil
	}
	as, _ := ifi.Addrs()
	var ips []net.IP
	for _, a := range as {
		if ipn, ok := a.(*net.IPNet); ok {
			ips = append(ips, ipn.IP)
		}
	}
	return ips
}

// codecFor is the codec of the program a workload drives: the benchmark program's, or the
// NULL procedure of another program.
func codecFor(w *workloads.Config) rpcproto.Codec {
	if w.Program == 0 {
		return &benchprog.Codec{}
	}
	return rpcproto.NullCodec{P: w.Table()}
}

// PayloadSize rounds a payload bound up to XDR's 4-byte unit, at least 4 KiB.
func PayloadSize(n int) int { return max(4096, (n+3)&^3) }

func (c *engineConnector) Device() *datapath.DeviceInfo {
	info := c.dev.Info()
	return &info
}

func (c *engineConnector) Point(pt workloads.Point) (workloads.Opener, func() session.PointReport, error) {
	cfg := c.cfg
	cfg.SendSize, cfg.RecvSize = pt.Threshold, pt.Threshold
	cfg.Credits = pt.Workload.Depth
	if c.tr.Credits != 0 {
		cfg.Credits = c.tr.Credits
	}
	c.tr.Apply(&cfg)
	cfg.MaxPayload = PayloadSize(pt.Workload.MaxPayload())
	codec := c.codec
	if codec == nil {
		codec = codecFor(&pt.Workload)
	}
	cfg.Codec = codec
	ps := new(pointStats)
	open := func(ctx context.Context, poller, conns int) (workloads.Client, error) {
		if proc, ok := measuredAlone(codec, &pt.Workload); ok {
			return c.openMeasured(ctx, codec, proc, cfg, ps.done)
		}
		cl := &engineClient{res: make([]rpcrdma.Result, 64), wcs: make([]datapath.Completion, 64),
			log: c.log, done: ps.done, recovered: ps.recovered}
		cq, err := c.dev.NewCQ(cqNeed(c.dev, cfg, codec) * conns)
		if err != nil {
			return nil, &datapath.OpError{Op: "create CQ", Err: err}
		}
		cl.cq = cq
		cl.mux = rpcrdma.NewMux(cq, rpcrdma.MuxConfig{KeepBroken: true})
		ccfg := cfg
		ccfg.CQ = cq
		conv, _ := codec.(rpcproto.Conversation)
		for range conns {
			cc := ccfg
			var cv rpcproto.Conversation
			if conv != nil {
				cv = conv.NewConn()
				if cl.cb == nil {
					cl.cb = callbackRecorder(cv)
				}
				serve(&cc, cv, cl.cb)
			}
			conn, err := c.dial(ctx, cc, cv, cl.mux)
			if conn != nil {
				cl.conns = append(cl.conns, conn)
				if cv != nil {
					cl.convs = append(cl.convs, cv)
				}
			}
			if err != nil {
				cl.Close() // tears down what was set up
				return nil, err
			}
			if cv == nil {
				continue
			}
			if n := cv.Slots(); n > 0 {
				conn.LimitCalls(n)
				if n < cc.Credits && c.log != nil && len(cl.convs) == 1 {
					fmt.Fprintf(c.log, "rpcrdma-bench: warning: %s granted %d session slots for a depth of %d: at most %d calls outstanding per connection\n",
						c.addr, n, cc.Credits, n)
				}
			}
		}
		return cl, nil
	}
	report := func() session.PointReport { return c.report(ps) }
	return open, report, nil
}

// pointStats collects what a point's pollers hand over as they close their clients.
type pointStats struct {
	mu    sync.Mutex
	stats []rpcrdma.Stats
	cbs   []*results.Recorder
	recov results.Recoveries
}

func (ps *pointStats) done(st []rpcrdma.Stats, cb *results.Recorder) {
	ps.mu.Lock()
	ps.stats = append(ps.stats, st...)
	if cb != nil {
		ps.cbs = append(ps.cbs, cb)
	}
	ps.mu.Unlock()
}

func (ps *pointStats) recovered(r results.Recoveries) {
	ps.mu.Lock()
	ps.recov.Sessions += r.Sessions
	ps.recov.ClientIDs += r.ClientIDs
	ps.mu.Unlock()
}

// report is what the point's connections negotiated, posted and recovered, once every
// poller closed its client.
func (c *engineConnector) report(ps *pointStats) session.PointReport {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.stats) == 0 {
		return session.PointReport{}
	}
	var ops results.Ops
	for _, s := range ps.stats {
		addStatsOps(&ops, &s)
		// A requester's count here is the replies the peer sent by Send With Invalidate,
		// each of which spared this side a LOCAL_INV (results/SCHEMA.md, `ops`); its own
		// (RDMA_DONE, --done-invalidate) end the peer's windows and count as Sends.
		addOp(&ops.Send, s.SendInv)
		ops.SendInv.Count -= s.SendInv.Count
		ops.SendInv.Bytes -= s.SendInv.Bytes
		ops.SendInv.Count += s.RemoteInvalidated
	}
	rep := session.PointReport{Negotiated: negotiated(&ps.stats[0]), Ops: &ops,
		Threshold: effectiveThreshold(ps.stats[0].Params.Inline, c.tr)}
	if ps.recov.Sessions > 0 {
		r := ps.recov
		rep.Recoveries = &r
	}
	if len(ps.cbs) > 0 {
		if p, err := results.Summarize(results.Params{}, time.Time{}, time.Time{}, ps.cbs...); err == nil {
			rep.Callbacks, rep.Recalls = p.Callbacks, p.Recalls
		}
	}
	if c.local != nil {
		rep.PeerOps = c.local.peer.take(len(ps.stats), peerWait)
		if c.local.poll.Mode != datapath.PollEvent {
			rep.SpinningPeers = 1
		}
	} else {
		rep.PeerOps, rep.PeerOpsInferred = inferredPeerOps(ps.stats), true
	}
	return rep
}

// effectiveThreshold is the inline threshold a connection ran with: the smaller negotiated
// size of the directions the point's threshold set (those tr does not override); 0 when tr
// overrides both.
func effectiveThreshold(in wire.Inline, tr Transport) int {
	th := 0
	if tr.SendSize == 0 {
		th = in.SendSize
	}
	if tr.RecvSize == 0 && (th == 0 || in.RecvSize < th) {
		th = in.RecvSize
	}
	return th
}

func addOp(dst *results.OpCount, src rpcrdma.OpCount) {
	dst.Count += src.Count
	dst.Bytes += src.Bytes
}

// negotiated maps one connection's negotiated parameters to the results schema.
func negotiated(s *rpcrdma.Stats) *results.Negotiated {
	p := &s.Params
	n := &results.Negotiated{
		Role:                         p.Role.String(),
		Local:                        privateData(p.Local, p.LocalSent),
		InlineSendBytes:              p.Inline.SendSize,
		InlineRecvBytes:              p.Inline.RecvSize,
		CreditsRequested:             p.Credits,
		CreditsGranted:               int(s.MaxCredit),
		RemoteInvalidation:           p.Inline.RemoteInvalidate,
		RegisteredBytesPerConnection: s.RegisteredBytes,
	}
	if p.PeerSent {
		pd := privateData(p.Peer, true)
		n.Peer = &pd
	}
	return n
}

func privateData(d wire.PrivateData, sent bool) results.PrivateData {
	if !sent {
		return results.PrivateData{}
	}
	var b [wire.PrivateDataSize]byte
	k, err := d.Encode(b[:])
	if err != nil {
		return results.PrivateData{}
	}
	v := d.Version
	if v == 0 {
		v = wire.PrivateDataVersion
	}
	return results.PrivateData{Hex: hex.EncodeToString(b[:k]), Valid: true, Version: int(v),
		RemoteInvalidate: d.RemoteInvalidate, SendBytes: d.SendSize, RecvBytes: d.RecvSize}
}

func (c *engineConnector) Close() error {
	var errs []error
	if c.local != nil {
		c.local.cancel()
		errs = append(errs, <-c.local.done, c.local.r.Close())
	}
	errs = append(errs, c.dev.Close())
	return errors.Join(errs...)
}

// peerStats collects the final Stats of the connections a responder in this process served,
// so that a point can report the RDMA operations of both sides: the responder performs the
// Reads and Writes of the requester's chunks, which the requester never counts.
type peerStats struct {
	mu    sync.Mutex
	cond  *sync.Cond
	stats []rpcrdma.Stats
	taken int // stats before this index belong to earlier points
	who   string
	log   io.Writer
}

func newPeerStats(who string, log io.Writer) *peerStats {
	p := &peerStats{who: who, log: log}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// done is the responder's rpcrdma.ServeConfig.Done.
func (p *peerStats) done(c *rpcrdma.Conn, err error) {
	if c == nil {
		LogSetupError(p.log, p.who, err)
		return
	}
	// A connection the responder itself ended (a protocol violation, a failed check) says why
	// here, on its side; the provider's breaks are the requester's closes at a point's end.
	var ce *rpcrdma.ConnError
	if errors.As(err, &ce) && !errors.Is(ce.Err, datapath.ErrBroken) && !errors.Is(ce.Err, datapath.StatusFlushed.Err()) && p.log != nil {
		fmt.Fprintf(p.log, "rpcrdma-bench %s: %s\n", p.who, ConnEndLine(c, err))
	}
	p.mu.Lock()
	p.stats = append(p.stats, c.Stats())
	p.mu.Unlock()
	p.cond.Broadcast()
}

// LogSetupError reports to w a connection the responder who could not set up: the requester
// sees only a refused or failed connection, so the cause must be told on the responder's
// side.
func LogSetupError(w io.Writer, who string, err error) {
	if err != nil {
		fmt.Fprintf(w, "rpcrdma-bench %s: a connection could not be set up: %v\n", who, err)
	}
}

// peerWait bounds the wait for the responder's side of a point's connections to end after
// the requester closed them: the responder notices the disconnect on its next poll.
const peerWait = 2 * time.Second

// take returns the Ops of the next n connections the responder finished, waiting up to wait
// for them; nil if they did not all finish in time (a partial count would mislead).
func (p *peerStats) take(n int, wait time.Duration) *results.Ops {
	deadline := time.Now().Add(wait)
	t := time.AfterFunc(wait, p.cond.Broadcast)
	defer t.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.stats)-p.taken < n && time.Now().Before(deadline) {
		p.cond.Wait()
	}
	if len(p.stats)-p.taken < n {
		// Let the late ones count toward no point rather than the next one.
		p.taken = len(p.stats)
		return nil
	}
	var ops results.Ops
	for _, s := range p.stats[p.taken : p.taken+n] {
		addStatsOps(&ops, &s)
	}
	p.taken += n
	return &ops
}

// addStatsOps adds one connection's operation counts to ops: what it posted, and the
// invalidations it did itself.
func addStatsOps(ops *results.Ops, s *rpcrdma.Stats) {
	addOp(&ops.Send, s.Send)
	addOp(&ops.Write, s.Write)
	addOp(&ops.Read, s.Read)
	addOp(&ops.Recv, s.Recv)
	addOp(&ops.SendInv, s.SendInv)
	ops.LocalInv.Count += s.LocalInvs
	ops.BindMW.Count += s.Binds
}

// inferredPeerOps is what a responder in another process did, as far as the requester's own
// counters show it: every Send it received was the responder's Send (With Invalidate, when
// it invalidated a key), every Send it made the responder received, and the responder's
// RDMA Reads and Writes are the segments of this side's chunks it pulled and filled
// (rpcrdma.Stats.PeerRead, PeerWrite). Its windows and local invalidations are not visible.
func inferredPeerOps(stats []rpcrdma.Stats) *results.Ops {
	var ops results.Ops
	for _, s := range stats {
		ops.Send.Count += s.Recv.Count - s.RemoteInvalidated
		ops.Send.Bytes += s.Recv.Bytes
		ops.SendInv.Count += s.RemoteInvalidated
		addOp(&ops.Recv, s.Send)
		addOp(&ops.Recv, s.SendInv)
		addOp(&ops.Read, s.PeerRead)
		addOp(&ops.Write, s.PeerWrite)
	}
	return &ops
}
