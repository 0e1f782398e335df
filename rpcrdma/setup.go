package rpcrdma

// Connection setup: dialing and accepting with RFC 8797 private data, the queue depths and
// the memory plan a connection's negotiation calls for, and posting the first receives.

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/mempool"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// Dial connects to a responder at addr on dev and sets up a requester endpoint.
func Dial(ctx context.Context, dev datapath.Device, addr string, cfg Config) (*Conn, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Memory == MemoryPreregistered {
		cfg.RemoteInvalidate = false // see Config.RemoteInvalidate
	}
	var pd [wire.PrivateDataSize + wire.ExtSize]byte
	local, n := ownPrivateData(cfg, pd[:])
	c := &Conn{cfg: cfg, sharedCQ: cfg.CQ != nil}
	c.params.Role = RoleRequester
	c.params.Local, c.params.LocalSent = local, !cfg.NoPrivateData
	cq, qpc, err := newCQ(dev, cfg, cfg.Credits, cfg.ReverseCredits)
	if err != nil {
		return nil, err
	}
	c.cq = cq
	if err := c.allocPD(dev, &qpc); err != nil {
		c.Close()
		return nil, err
	}
	qp, err := dev.Connect(ctx, addr, qpc, pd[:n])
	if err != nil {
		c.Close()
		return nil, &SetupError{"connect", dialError(err)}
	}
	c.qp = qp
	peer, ok := wire.FindPrivateData(qp.PeerPrivateData())
	pext := wire.FindExt(qp.PeerPrivateData())
	if err := c.prepare(peer, ok, pext, cfg.Credits, cfg.ReverseCredits); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.start(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// ownPrivateData encodes into b what this side sends while connecting: the RFC 8797
// message (unless NoPrivateData) and the extension block. cfg is validated, so the sizes
// encode.
func ownPrivateData(cfg Config, b []byte) (wire.PrivateData, int) {
	local := wire.PrivateData{RemoteInvalidate: cfg.RemoteInvalidate, SendSize: cfg.SendSize, RecvSize: cfg.RecvSize}
	n := 0
	if !cfg.NoPrivateData {
		n, _ = local.Encode(b)
	}
	return local, n + wire.EncodeExt(b[n:], wire.Ext{ResponderRead: cfg.ResponderRead, Reverse: cfg.ReverseCredits > 0})
}

// Accept waits for one connection request on l and sets up a responder endpoint for it.
func Accept(ctx context.Context, dev datapath.Device, l datapath.Listener, cfg Config) (*Conn, error) {
	req, err := l.Accept(ctx)
	if err != nil {
		return nil, &SetupError{"accept", err}
	}
	return AcceptRequest(dev, req, cfg)
}

// AcceptRequest sets up a responder endpoint for a pending connection request.
func AcceptRequest(dev datapath.Device, req datapath.ConnRequest, cfg Config) (*Conn, error) {
	return acceptRequest(dev, req, cfg, nil)
}

// acceptRequest does AcceptRequest's work: the connection is established with its receives
// posted. With m, the connection is one of m's poller's (on its CQ, in the protection domain
// and with the sink pool of a Serve poller), and it returns with m.mu held, for the caller
// to hand the connection over (see AcceptOn).
func acceptRequest(dev datapath.Device, req datapath.ConnRequest, cfg Config, m *Mux) (*Conn, error) {
	var sh *share
	if m != nil {
		sh = m.share
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		refuse(req, err)
		return nil, err
	}
	if sh != nil {
		// The poller's connections share a protection domain, so no key of a region may
		// reach the peer: what this side exposes (replies in responder-provided Read chunks,
		// the chunks of reverse calls) goes through type 2 windows bound to this queue pair.
		cfg.Memory = MemoryWindows
	}
	if cfg.Memory == MemoryPreregistered {
		// As in Dial: every chunk of ours, reverse calls' included, carries the region's
		// key, and a Send With Invalidate of it would end the connection.
		cfg.RemoteInvalidate = false
	}
	peer, ok := wire.FindPrivateData(req.PrivateData())
	pext := wire.FindExt(req.PrivateData())
	reverse := 0
	if pext.Reverse {
		reverse = cfg.ReverseCredits
	}
	var pd [wire.PrivateDataSize + wire.ExtSize]byte
	local, n := ownPrivateData(cfg, pd[:])
	c := &Conn{cfg: cfg, sharedCQ: cfg.CQ != nil}
	if sh != nil {
		c.sinks = sh.sinks
	}
	c.params.Role = RoleResponder
	c.params.Local, c.params.LocalSent = local, !cfg.NoPrivateData
	cq, qpc, err := newCQ(dev, cfg, reverse, cfg.Credits)
	if err != nil {
		refuse(req, err)
		return nil, err
	}
	c.cq = cq
	if sh != nil {
		c.pd, c.maxMW, qpc.PD = sh.pd, dev.Info().MaxMW, sh.pd
	} else if err := c.allocPD(dev, &qpc); err != nil {
		refuse(req, err)
		c.Close()
		return nil, err
	}
	// The receives are posted before the requester hears the answer (QPConfig.Prepare): it
	// may send its first call the moment the connection is established, and a Send that
	// finds no receive is retried only for so long on InfiniBand and RoCE (RNR), and not at
	// all on iWARP, where it ends the connection.
	if err := c.prepare(peer, ok, pext, reverse, cfg.Credits); err != nil {
		refuse(req, err)
		c.Close()
		return nil, err
	}
	locked := false
	qpc.Prepare = func(qp datapath.Conn) error {
		if m != nil {
			// Held from posting the receives until the hand-over (AcceptOn): a completion
			// the poller sees for this queue pair before then makes it wait for the lock.
			m.mu.Lock()
			locked = true
		}
		c.qp = qp
		return c.start()
	}
	qp, err := req.Accept(qpc, pd[:n])
	if err != nil {
		if locked {
			m.mu.Unlock()
		}
		c.qp = nil // Accept destroyed it
		err = &SetupError{"accept", err}
		refuse(req, err) // a failed Accept leaves the request undecided when it could not answer
		c.Close()
		return nil, err
	}
	c.qp = qp // the provider's, or what a wrapper around the request made of it
	return c, nil
}

// sizing computes the queue depths for a side that sends calls with up to out credits and
// grants up to in credits.
type sizing struct {
	slots, ctxs, recvTarget, recvBufs, sends, sqDepth int
}

func plan(cfg Config, out, in int, responderRead bool) sizing {
	var s sizing
	// A slot is busy from Submit until its Result is returned: one per credit.
	s.slots = out
	// Contexts serve the peer's calls (one per credit, and as many again for calls that
	// arrive before our reply's Send completion is polled) and pull responder-provided
	// Read chunks of replies to our own calls.
	s.ctxs = 2*in + out
	if responderRead {
		// Replies waiting for RDMA_DONE keep their context: at most in of them.
		s.ctxs += in
	}
	// Contexts whose unsignalled reply Send is not yet known complete.
	s.ctxs += signalEvery(in)
	// Receives for the peer's calls, for replies to ours, and, with responder-provided Read
	// chunks, for the RDMA_DONE each such reply may bring.
	s.recvTarget = in + out
	if responderRead {
		s.recvTarget += in
	}
	if s.recvTarget == 0 {
		s.recvTarget = 1
	}
	// Held receives: calls being served (ctxs) and replies not yet returned.
	s.recvBufs = s.recvTarget + recvBatch + s.ctxs + out
	s.sends = s.slots + s.ctxs + 16
	// Per call: two binds, the Send, a READ and RDMA_DONE, two LOCAL_INVs; per served call:
	// its READs or WRITEs (one per segment), a bind, the Send, a LOCAL_INV.
	s.sqDepth = 8*s.slots + (cfg.Limits.ReadSegments+cfg.Limits.WriteSegments+cfg.Limits.ReplySegments+4)*s.ctxs + 16
	return s
}

// queueDepths are the send and receive queue depths of a side that sends calls with up to
// out credits and grants up to in credits.
func queueDepths(dev datapath.Device, cfg Config, out, in int) (sq, rq int) {
	s := plan(cfg, out, in, cfg.ResponderRead)
	sq, rq = s.sqDepth, s.recvTarget+recvBatch+1
	if maxWR := dev.Info().MaxQPWR; maxWR > 0 {
		sq, rq = min(sq, maxWR), min(rq, maxWR)
	}
	return sq, rq
}

// cqNeed is how many CQ entries one connection configured by cfg (defaults applied) may
// need at once: every work request its queues can hold, all of which complete when the
// connection breaks. A CQ shared by connections must hold the sum.
func cqNeed(dev datapath.Device, cfg Config, out, in int) int {
	sq, rq := queueDepths(dev, cfg, out, in)
	return sq + rq
}

// CQNeed is how many entries a CQ shared by connections (Config.CQ) must hold for each
// requester connection configured by cfg.
func CQNeed(dev datapath.Device, cfg Config) int {
	cfg = cfg.withDefaults()
	return cqNeed(dev, cfg, cfg.Credits, cfg.ReverseCredits)
}

func newCQ(dev datapath.Device, cfg Config, out, in int) (datapath.CQ, datapath.QPConfig, error) {
	sq, rq := queueDepths(dev, cfg, out, in)
	cq := cfg.CQ
	if cq == nil {
		var err error
		if cq, err = dev.NewCQ(sq + rq); err != nil {
			return nil, datapath.QPConfig{}, &SetupError{"create CQ", err}
		}
	}
	return cq, datapath.QPConfig{
		SendCQ: cq, RecvCQ: cq,
		MaxSendWR: sq, MaxRecvWR: rq,
		MaxSendSGE: 3, MaxRecvSGE: 1,
		RDMAReadDepth: ReadDepth,
		// Small Sends (headers, NULL calls and replies) go inline in the work request:
		// the NIC then need not read them from memory.
		MaxInlineData: maxInline,
	}, nil
}

// prepare derives the negotiated parameters and sets up the memory, slots and contexts: all
// of a connection's setup that does not need its queue pair.
func (c *Conn) prepare(peer wire.PrivateData, peerSent bool, pext wire.Ext, out, in int) error {
	cfg := c.cfg
	p := &c.params
	p.Peer, p.PeerSent = peer, peerSent
	local := p.Local
	if !p.LocalSent {
		local = wire.DefaultPrivateData // what the peer assumes of us (RFC 8797 section 5.1)
	}
	p.Inline = wire.Negotiate(local, peer)
	p.ResponderRead = cfg.ResponderRead && pext.ResponderRead
	p.Reverse = cfg.ReverseCredits > 0 && (pext.Reverse || c.params.Role == RoleRequester && cfg.Service != nil)
	p.Memory = cfg.Memory
	p.Credits, p.Grant = out, in
	if c.params.Role == RoleRequester && !p.Reverse {
		in = 0 // the responder will never call us: post nothing for it
		p.Grant = 0
	}
	s := plan(cfg, out, in, p.ResponderRead)

	access := mempool.DefaultAccess
	if cfg.Memory == MemoryWindows {
		access = datapath.AccessLocalWrite | datapath.AccessMWBind
	}
	// A reply in a responder-provided Read chunk is exposed through a window over exactly
	// the reply, read-only, in both memory modes (where the device has windows): the peer
	// must not get the region's key with write rights for it.
	c.replyWindows = p.ResponderRead && (cfg.Memory == MemoryWindows || c.maxMW > 0)
	if c.replyWindows {
		access |= datapath.AccessMWBind
	}
	big := headroom + cfg.MaxPayload + tailroom
	// Every pool is sized for the most this connection may ever need (every credit, at
	// MaxPayload) but committed only as RPCs use it (Lazy; buffers are reused last-in
	// first-out, and receives are posted for the credits actually granted), so a connection
	// costs what its traffic needs, not its worst case. The warm-up faults in what a
	// measurement uses. A device that pins registered memory commits it all at
	// registration.
	pools := []mempool.PoolConfig{
		{Name: "send", Size: sendBufSize, Count: s.sends, Lazy: true},
		{Name: "recv", Size: cfg.RecvSize, Count: s.recvBufs, Lazy: true},
	}
	if s.slots > 0 {
		pools = append(pools,
			mempool.PoolConfig{Name: "out", Size: big, Count: s.slots, Lazy: true},
			mempool.PoolConfig{Name: "in", Size: big, Count: s.slots, Lazy: true})
	}
	if s.ctxs > 0 && c.sinks == nil {
		pools = append(pools, mempool.PoolConfig{Name: "sink", Size: big, Count: s.ctxs, Lazy: true})
	}
	region, err := mempool.New(c.pd, mempool.Config{Pools: pools, Access: access})
	if err != nil {
		return &SetupError{"register memory", err}
	}
	c.region = region
	c.sendPool = region.Pool("send")
	c.recvPool = region.Pool("recv")
	c.outPool = region.Pool("out")
	c.inPool = region.Pool("in")
	if p := region.Pool("sink"); p != nil {
		c.sinks = ownSinks(p)
	}

	c.recvBase, c.recvPerGrant, c.recvCap = out, 1, s.recvTarget+recvBatch
	if p.ResponderRead {
		c.recvPerGrant = 2 // and one for the RDMA_DONE of each reply in a Read chunk
	}
	c.recvWRs = make([]datapath.RecvWR, 0, s.recvBufs)
	c.recvSGEs = make([]datapath.SGE, s.recvBufs)
	// Each batch entry's SGL is fixed to its own arena element once, here: replenish then
	// writes only the ID and the SGE, no slice header (and no write barrier check).
	for i, wrs := 0, c.recvWRs[:s.recvBufs]; i < len(wrs); i++ {
		wrs[i].SGL = c.recvSGEs[i : i+1 : i+1]
	}
	c.sendWRs = make([]datapath.SendWR, 0, 64)
	c.sendSGEs = make([]datapath.SGE, 0, 128)
	c.wcs = make([]datapath.Completion, 64)
	c.hdr = newHeader(cfg.Limits)

	if err := c.cl.init(c, s.slots, out, c.pd); err != nil {
		return err
	}
	if err := c.sv.init(c, s.ctxs, in, c.pd); err != nil {
		return err
	}
	c.setRecvTarget(c.sv.granted)
	c.stats.Params = c.params
	c.stats.RegisteredBytes = c.RegisteredBytes()
	return nil
}

// start begins work on the established queue pair: every receive this side may need is
// posted before it sends anything (RFC 8167 section 4.3).
func (c *Conn) start() error {
	c.qpn = c.qp.QPN()
	c.maxInlineData = c.qp.Caps().MaxInlineData
	// The batch slack only where the receive queue has room for it (a device's MaxQPWR
	// may have clamped it).
	c.recvCap = min(c.recvCap, c.qp.Caps().MaxRecvWR)
	c.setRecvTarget(c.sv.granted)
	if err := c.flush(); err != nil { // posts the first receives
		if cause := c.qp.Err(); cause != nil && errors.Is(err, datapath.ErrBroken) {
			err = fmt.Errorf("%w: %w", err, cause) // what broke it, not only that it is
		}
		return &SetupError{"post receives", err}
	}
	if !c.sharedCQ {
		// Whoever drives this connection polls its CQ (Progress) and posts (Submit,
		// Progress): from now on the poll posts what they queued, in the same provider call.
		// A connection on a shared CQ waits until its Mux takes it over (Mux.adopt).
		c.deferPosts()
	}
	return nil
}

// deferPosts lets the provider hand this connection's posts to the device with its next poll
// (datapath.Deferrer), where it can. A provider that cannot (or a refusal) leaves posting
// immediate, which is as correct and only costs more calls.
func (c *Conn) deferPosts() {
	if d, ok := c.qp.(datapath.Deferrer); ok {
		_ = d.DeferPosts()
	}
}

// maxInline is the inline data size asked of the queue pair.
const maxInline = 256

// ReadDepth is the RDMA Reads a connection's queue pair serves and issues at once (its
// responder resources and initiator depth), before the provider clamps it to the device's
// max_qp_rd_atom.
const ReadDepth = 16

// sendBufSize holds any transport header this endpoint sends (including a reply echoing a
// Write list at Limits) plus the small RPC messages built in it.
const sendBufSize = 2048

func newHeader(l wire.Limits) *wire.Header {
	return &wire.Header{
		ReadList:    make([]wire.ReadSegment, 0, l.ReadSegments+1),
		WriteList:   make([]wire.Segment, 0, l.WriteSegments+1),
		WriteCounts: make([]int, 0, l.WriteChunks+1),
		Reply:       make([]wire.Segment, 0, l.ReplySegments+1),
	}
}

// allocPD gives the connection a protection domain of its own, so that no key it hands
// out works on another connection, and names it in the queue pair's configuration.
func (c *Conn) allocPD(dev datapath.Device, qpc *datapath.QPConfig) error {
	pd, err := dev.AllocPD()
	if err != nil {
		return &SetupError{"allocate protection domain", err}
	}
	c.maxMW = dev.Info().MaxMW
	c.pd, c.ownPD = pd, true
	qpc.PD = pd
	return nil
}
