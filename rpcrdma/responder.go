package rpcrdma

import (
	"errors"
	"fmt"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/mempool"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// Context states.
const (
	ctxFree    = iota
	ctxPulling // READs of a Read chunk or Position Zero Read chunk outstanding
	ctxReplying
	ctxAwaitDone // reply sent in a responder-provided Read chunk, waiting for RDMA_DONE
	ctxPulled    // holds a pulled reply to one of our own calls, until its slot is released
	ctxSinkWait  // waits for a sink buffer (sinks.park); resume says what comes next
)

// What a context does once it gets the sink buffer it waited for.
const (
	resumePull      = iota // pull the Read chunk at the end of the inline message
	resumePullWhole        // pull a Position Zero Read chunk
	resumeServe            // serve the call (SOURCE builds its result in the buffer)
)

// What a context waits for.
const (
	ctxWaitRead = 1 << iota
	ctxWaitSend
	ctxWaitDone
	ctxWaitInv
)

// sctx serves one incoming call (or holds a reply pulled from a responder-provided Read
// chunk). hdr is the call's transport header, swapped in from the receive path by a pointer
// swap, without a copy of its lists.
type sctx struct {
	state, waits uint8
	resume       uint8
	pos0         bool // the message came in a Position Zero Read chunk
	recv         *mempool.Buf
	// sink holds chunk data or the whole pulled message, or a SOURCE result: taken from
	// the connection's sinks only for as long as the call needs it.
	sink        *mempool.Buf
	send        *mempool.Buf // reply transport header (and small replies)
	hdr         *wire.Header
	msg         []byte // the RPC message (inline part)
	chunk       []byte // Read chunk data at a non-zero position
	credit      uint32
	deadline    time.Time
	pullAt      int64 // when its Read chunk's pull was posted (Conn.batchNow)
	sinkAt      int64 // when it took its sink buffer (Conn.batchNow)
	mw          datapath.MW
	mwKey       uint32
	mwUsed      bool
	serving     bool // counted in server.serving
	invalidated bool // the message's receive invalidated invKey (Send With Invalidate)
	invKey      uint32
	seq         uint64 // number of its reply Send, in posting order
	served      bool   // its reply is an RPC reply: Stats.Served counts it once the Send completed
	// svcProc is the procedure of a call Config.Service answered (-1 otherwise), arrived
	// when its receive was handled, svcFailed whether it failed (Config.Served).
	svcProc   int32
	arrived   int64
	svcFailed bool
}

// server is the side of a Conn that serves calls: forward for a responder, reverse for a
// requester.
type server struct {
	c     *Conn
	ctxs  []sctx
	free  []int32
	grant uint32 // most credits granted
	// granted is the largest grant sent so far: receives are posted for it.
	granted uint32
	// remoteInv: replies may use Send With Invalidate (see invalidateKey).
	remoteInv bool
	rh        *wire.Header // reply header scratch
	rpc       oncrpc.Call
	rep       oncrpc.Reply
	// svc answers the calls instead of the benchmark program (Config.Service, requester).
	svc      rpcproto.Service
	svcProg  [2]uint32
	svcProcs int
	waiting  []int32 // contexts in ctxAwaitDone, oldest first
	// late are replies whose chunk DoneTimeout released and whose RDMA_DONE may still come.
	late []lateDone
	// pendingDone counts waiting and late; awaitCap bounds it (receives are reserved for
	// that many RDMA_DONE messages).
	pendingDone, awaitCap int
	// serving counts calls received and not yet answered.
	serving int
	// sinkHeld counts the buffers of a shared sink pool this side's contexts hold
	// (sinks.allow).
	sinkHeld int
	// pulls are the contexts whose Read chunk is being pulled, oldest first (a queue pair's
	// RDMA Reads complete in order): the oldest tells peerSlow. readAt is when one last
	// completed, or when pulls began: ReadTimeout bounds the time since.
	pulls  []int32
	readAt int64 // Conn.batchNow
	// slow says the last shared sink buffer this side gave back was held longer than
	// slowHold (an RDMA Read answered late, an RDMA_DONE late or never sent), or none came
	// back yet: a peer is slow until it shows otherwise.
	slow bool
	// Reply Sends are signalled only every sigEvery (as Linux does): an unsignalled one is
	// known complete when a later signalled one completes, so its context waits in retire
	// until then. seq numbers reply Sends in posting order; posted is the last one handed
	// to the provider.
	sigEvery, unsig int
	seq, posted     uint64
	retire          []int32
}

// signalEvery is how often Sends are signalled for an endpoint with n credits: often
// enough that the contexts or slots waiting for a completion stay few.
func signalEvery(n int) int { return max(1, min(16, n/2)) }

// startServing counts x as a call received and not yet answered, or fails the connection
// and reports false when the call is beyond the largest grant sent (RFC 8166 section 3.3:
// granted calls are unanswered, so the peer has no credit left). Only calls count: replies
// to our reverse calls and RDMA_DONE never come here.
func (sv *server) startServing(x *sctx) bool {
	if !sv.withinGrant() {
		return false
	}
	sv.count(x)
	return true
}

// count is startServing once the grant was checked: small enough to inline on the call path.
func (sv *server) count(x *sctx) {
	x.serving = true
	sv.serving++
	sv.c.stats.MaxServing = max(sv.c.stats.MaxServing, sv.serving)
}

// withinGrant reports whether one more call may be unanswered, and fails the connection
// when not. Small enough to inline: the failure is overGrant's.
func (sv *server) withinGrant() bool {
	return sv.serving < int(sv.granted) || sv.overGrant()
}

// overGrant fails the connection for a call beyond the grant, and reports false.
func (sv *server) overGrant() bool {
	sv.c.fail("serve call", fmt.Errorf("%w: call %d unanswered with %d granted", ErrCreditOverrun, sv.serving+1, sv.granted))
	return false
}

// answered ends what startServing began, when the answer is queued.
func (sv *server) answered(x *sctx) {
	if x.serving {
		x.serving = false
		sv.serving--
	}
}

func (sv *server) init(c *Conn, n, grant int, dev datapath.PD) error {
	sv.c = c
	sv.grant = uint32(grant)
	// The peer starts with one credit (RFC 8166 section 3.3.1): receives for more are posted
	// when it asks for more (grantFor).
	sv.granted = min(1, sv.grant)
	sv.remoteInv = c.params.Role == RoleResponder && c.params.Inline.RemoteInvalidate
	sv.rh = newHeader(c.cfg.Limits)
	sv.rpc = oncrpc.Call{}
	if c.params.Role == RoleRequester && c.cfg.Service != nil {
		sv.svc = c.cfg.Service
		sv.svcProg[0], sv.svcProg[1] = sv.svc.Program()
		sv.svcProcs = len(sv.svc.Procs())
	}
	if c.params.ResponderRead {
		sv.awaitCap = int(sv.granted)
	}
	sv.ctxs = make([]sctx, n)
	sv.free = make([]int32, 0, n)
	sv.waiting = make([]int32, 0, n)
	sv.pulls = make([]int32, 0, n)
	sv.slow = true
	sv.late = make([]lateDone, 0, max(sv.awaitCap, 1))
	sv.retire = make([]int32, 0, n)
	sv.sigEvery = signalEvery(grant)
	for i := n - 1; i >= 0; i-- {
		x := &sv.ctxs[i]
		x.send = c.sendPool.Get()
		if c.replyWindows {
			mw, err := dev.AllocMW()
			if err != nil {
				return &SetupError{"allocate memory window", err}
			}
			x.mw = mw
		}
		sv.free = append(sv.free, int32(i))
	}
	return nil
}

// returnSinks gives the buffers of a shared sink pool that the contexts hold back to it, and
// forgets the contexts waiting for one, once the queue pair is gone (nothing can reach the
// buffers any more). A shared pool belongs to the poller's thread: only a connection it
// served holds or waits for its buffers, and that one is closed on that thread. A pool of
// the connection's own goes with its region.
func (sv *server) returnSinks() {
	if sv.c == nil || sv.c.sinks == nil || !sv.c.sinks.shared {
		return
	}
	s := sv.c.sinks
	parked := false
	for k := range sv.ctxs {
		x := &sv.ctxs[k]
		if x.sink != nil {
			s.put(x.sink)
			s.putBack(sv)
			x.sink = nil
		}
		parked = parked || x.state == ctxSinkWait
	}
	if parked {
		s.drop(sv.c)
	}
}

func (sv *server) closeMWs() {
	for i := range sv.ctxs {
		if mw := sv.ctxs[i].mw; mw != nil {
			mw.Close()
		}
	}
}

// take claims a context for the message just decoded into c.hdr, swapping the header in.
func (sv *server) take(buf *mempool.Buf) (int32, *sctx) {
	c := sv.c
	if len(sv.free) == 0 {
		c.recvPool.Put(buf)
		c.fail("serve call", ErrCreditOverrun)
		return -1, nil
	}
	i := sv.free[len(sv.free)-1]
	sv.free = sv.free[:len(sv.free)-1]
	x := &sv.ctxs[i]
	if x.hdr == nil {
		// A context gets its header scratch the first time it serves: contexts are taken
		// last-in first-out, so a peer that keeps few calls outstanding costs few of them.
		x.hdr = newHeader(c.cfg.Limits)
	}
	x.hdr, c.hdr = c.hdr, x.hdr
	x.recv, x.msg, x.chunk, x.pos0, x.waits = buf, nil, nil, false, 0
	x.svcProc, x.svcFailed = -1, false
	x.credit = x.hdr.Credit
	return i, x
}

// release returns a context to the free list.
func (sv *server) release(i int32) {
	c := sv.c
	x := &sv.ctxs[i]
	if x.recv != nil {
		c.recvPool.Put(x.recv)
		x.recv = nil
	}
	if x.sink != nil {
		c.sinks.put(x.sink) // a shared pool's waiting calls get it from the Mux (wakeSinks)
		x.sink = nil
		if c.sinks.shared {
			c.sinks.putBack(sv)
			sv.slow = sv.c.batchNow()-x.sinkAt > int64(slowHold)
		}
	}
	x.msg, x.chunk = nil, nil
	x.served = false
	x.state = ctxFree
	sv.free = append(sv.free, i)
}

// needSink gives x a sink buffer, or parks it until one is free (then resumes it with then)
// and reports false.
func (sv *server) needSink(i int32, x *sctx, then uint8) bool {
	if x.sink != nil {
		return true
	}
	c := sv.c
	if s := c.sinks; !s.shared || s.allow(sv) {
		if x.sink = s.get(); x.sink != nil {
			if s.shared {
				s.held(sv)
				x.sinkAt = c.batchNow()
			}
			return true
		}
	}
	if c.sinks.made == 0 && c.sinks.err != nil {
		// Nothing could be registered and no buffer is out to come back: waiting would
		// be for ever.
		c.fail("register sink buffers", c.sinks.err)
		return false
	}
	x.state, x.resume = ctxSinkWait, then
	c.sinks.park(c, i)
	c.stats.SinkWaits++
	return false
}

// resume continues the call in context i, parked by needSink, with the buffer b.
func (sv *server) resume(i int32, b *mempool.Buf) {
	x := &sv.ctxs[i]
	x.sink = b
	x.sinkAt = sv.c.batchNow()
	sv.c.sinks.held(sv)
	switch x.resume {
	case resumePull:
		sv.pullChunk(i, x)
	case resumePullWhole:
		sv.pullWhole(i, x)
	default:
		sv.serve(i, x)
	}
}

func (sv *server) grantFor(requested uint32) uint32 {
	g := min(requested, sv.grant)
	if g == 0 {
		g = 1 // RFC 8166 section 3.3.1: never grant zero
	}
	if g > sv.granted {
		// The first grant above the high-water mark: post the receives behind it (flush
		// does, before this reply leaves) and reserve RDMA_DONE receives to match.
		sv.granted = g
		sv.c.setRecvTarget(g)
		if sv.c.params.ResponderRead {
			sv.awaitCap = int(g)
		}
	}
	sv.c.stats.Granted = g
	return g
}

// onBadHeader answers a message whose transport header failed to decode with RDMA_ERROR
// (RFC 8166 section 4.5): ERR_VERS for an unknown version, ERR_CHUNK otherwise. RDMA_ERROR
// messages are never answered.
func (sv *server) onBadHeader(buf *mempool.Buf, err error) {
	c := sv.c
	c.recvPool.Put(buf)
	// Its direction is unknown, so its credit value is ignored (RFC 8167 section 4.1).
	if !c.hdr.ErrorReply(err, sv.grantFor(sv.granted), sv.rh) {
		return
	}
	sb := c.sendPool.Get()
	if sb == nil {
		return
	}
	n, _ := sv.rh.Encode(sb.Bytes())
	c.queue(&datapath.SendWR{ID: wrID(kindErrSend, sb.Index()), Op: datapath.OpSend, Flags: datapath.FlagSignaled}, sb.SGE(n))
	c.stats.ErrorsSent++
}

// checkEnable lets a responder's reverse calls flow once the requester has sent a call:
// the requester posts all its receives before its first Send (RFC 8167 section 6 leaves
// this signal to the upper layer; here it is the first forward call).
func (sv *server) checkEnable() {
	cl := &sv.c.cl
	if cl.canEnable && !cl.enabled {
		cl.enabled = true
	}
}

// onCall starts serving an RDMA_MSG call; msg is its inline RPC message.
func (sv *server) onCall(buf *mempool.Buf, msg []byte) {
	c := sv.c
	if sv.grant == 0 {
		c.recvPool.Put(buf)
		c.fail("serve call", ErrCreditOverrun)
		return
	}
	sv.checkEnable()
	// The grant is checked before a context is taken, as onPositionZero does: beyond it
	// the connection fails, and the receive buffer goes back.
	if !sv.withinGrant() {
		c.recvPool.Put(buf)
		return
	}
	i, x := sv.take(buf)
	if x == nil {
		return
	}
	sv.count(x)
	x.msg = msg
	if sv.svc != nil {
		x.arrived = nanotime()
	}
	if be32(msg) != x.hdr.XID {
		sv.xidMismatch(i, x)
		return
	}
	if len(x.hdr.ReadList) == 0 {
		sv.serve(i, x)
		return
	}
	// A Read chunk: this program's DDP-eligible item is the last of its body, so the one
	// chunk must sit at the end of the inline part (RFC 8166 section 3.4.5).
	pos := x.hdr.ReadList[0].Position
	total := 0
	for _, r := range x.hdr.ReadList {
		if r.Position != pos {
			sv.errorReply(i, x, wire.ErrCodeChunk)
			return
		}
		total += int(r.Length)
	}
	if int(pos) != len(msg) || total > c.cfg.MaxPayload+4 {
		sv.errorReply(i, x, wire.ErrCodeChunk)
		return
	}
	if sv.needSink(i, x, resumePull) {
		sv.pullChunk(i, x)
	}
}

// pullChunk pulls the Read chunk of the call in x (checked by onCall) into its sink buffer,
// where the payload goes after the headroom.
func (sv *server) pullChunk(i int32, x *sctx) {
	x.chunk = x.sink.Bytes()[headroom : headroom+readLen(x.hdr)]
	sv.pull(i, x, headroom)
}

// readLen is the length of h's Read list, validated by the caller.
func readLen(h *wire.Header) int {
	n := 0
	for _, r := range h.ReadList {
		n += int(r.Length)
	}
	return n
}

// onPositionZero starts pulling an RDMA_NOMSG message's Position Zero Read chunk. One that
// names no outstanding call of ours cannot be a reply to one: where this side serves calls,
// it is counted as a call before anything is pulled, so a peer beyond its grant gets no
// context, buffer or RDMA Read.
func (sv *server) onPositionZero(buf *mempool.Buf, wc *datapath.Completion) {
	call := sv.grant > 0 && sv.c.cl.lookup(sv.c.hdr.XID) == nil
	if call && !sv.withinGrant() {
		sv.c.recvPool.Put(buf)
		return
	}
	i, x := sv.take(buf)
	if x == nil {
		return
	}
	x.pos0 = true
	if call {
		sv.count(x) // within the grant, checked above
	}
	total := 0
	bad := false
	for _, r := range x.hdr.ReadList {
		bad = bad || r.Position != 0
		total += int(r.Length)
	}
	if bad || total > sv.c.sinks.size || total < 8 {
		// Before the pull nothing tells a call from a reply to one of our calls but the
		// XID: one that names an outstanding call of ours is taken as its reply, and that
		// RPC fails (RFC 8166 section 4.5.2), with no RDMA_ERROR sent back.
		if sv.c.cl.onUnpullable(x.hdr.XID, wc, errReplyUnpullable) {
			sv.release(i)
			return
		}
		x.hdr.Credit = sv.granted // direction unknown: its credit value is ignored (RFC 8167 section 4.1)
		sv.errorReply(i, x, wire.ErrCodeChunk)
		return
	}
	// If this is a reply in a responder-provided Read chunk, the responder may have
	// invalidated one of the call's keys with it: the calling half needs to know.
	x.invalidated, x.invKey = wc.Invalidated, wc.InvRKey
	if sv.needSink(i, x, resumePullWhole) {
		sv.pullWhole(i, x)
	}
}

// pullWhole pulls the Position Zero Read chunk of x (checked by onPositionZero) into its
// sink buffer: the whole RPC message.
func (sv *server) pullWhole(i int32, x *sctx) {
	x.msg = x.sink.Bytes()[:readLen(x.hdr)]
	sv.pull(i, x, 0)
}

// pull posts the RDMA READs of x's Read list into its sink buffer at off; the last one is
// signalled (READs complete in order on a reliable connection).
func (sv *server) pull(i int32, x *sctx, off int) {
	c := sv.c
	list := x.hdr.ReadList
	for k, r := range list {
		wr := datapath.SendWR{ID: wrID(kindUnsignaled, 0), Op: datapath.OpRead, RemoteAddr: r.Offset, RKey: r.Handle}
		if k == len(list)-1 {
			wr.ID, wr.Flags = wrID(kindCtxRead, uint32(i)), datapath.FlagSignaled
		}
		c.queue(&wr, x.sink.Sub(off, int(r.Length)))
		off += int(r.Length)
	}
	x.state, x.waits = ctxPulling, ctxWaitRead
	x.pullAt = c.batchNow()
	if len(sv.pulls) == 0 {
		sv.readAt = x.pullAt
	}
	sv.pulls = append(sv.pulls, i)
}

// slowHold is how long a peer may keep a buffer on its account (an RDMA Read of a chunk, a
// reply in a responder-provided Read chunk awaiting RDMA_DONE) before peerSlow calls it slow:
// far above an RDMA Read's time on a fabric (microseconds) or over loopback TCP (about
// 100 µs), far below the 200 ms of a peer that answers late on purpose.
const slowHold = 10 * time.Millisecond

// peerSlow reports whether the peer keeps the buffers it is given for long: the last one
// that came back was held longer than slowHold (or none came back yet), or its oldest pull
// or reply awaiting RDMA_DONE has been out that long already. Such a peer gets fewer shared
// sink buffers (sinks.allow).
func (sv *server) peerSlow(now int64) bool {
	if sv.slow {
		return true
	}
	if len(sv.pulls) > 0 && now-sv.ctxs[sv.pulls[0]].pullAt > int64(slowHold) {
		return true
	}
	return len(sv.waiting) > 0 && now-mono(sv.ctxs[sv.waiting[0]].deadline) > int64(slowHold-sv.c.cfg.DoneTimeout)
}

// pulled ends the pull of context i.
func (sv *server) pulled(i int32) {
	sv.readAt = sv.c.batchNow()
	for k, j := range sv.pulls {
		if j == i {
			sv.pulls = append(sv.pulls[:k], sv.pulls[k+1:]...)
			return
		}
	}
}

// ErrReadTimeout ends a connection whose peer answered none of the RDMA Reads of its Read
// chunks for longer than Config.ReadTimeout: the buffers they read into cannot be reused
// before the queue pair is gone.
var ErrReadTimeout = errors.New("rpcrdma: RDMA Reads unanswered for longer than the read timeout")

// expirePulls fails the connection when pulls are outstanding and none completed for
// ReadTimeout. The time runs from the last completion, not from each pull's post: Reads
// beyond the queue pair's read depth wait in the provider for earlier ones, so a peer that
// answers each in time may still take long over many.
func (sv *server) expirePulls(now time.Time) {
	if len(sv.pulls) == 0 {
		return
	}
	if d := time.Duration(mono(now) - sv.readAt); d > sv.c.cfg.ReadTimeout {
		sv.c.fail("pull a Read chunk", fmt.Errorf("%w (%v): none of %d answered for %v", ErrReadTimeout, sv.c.cfg.ReadTimeout, len(sv.pulls), d.Round(time.Millisecond)))
	}
}

func (sv *server) onReadDone(i uint32) {
	c := sv.c
	x := &sv.ctxs[i]
	if x.state != ctxPulling {
		return
	}
	sv.pulled(int32(i))
	x.waits &^= ctxWaitRead
	if !x.pos0 {
		sv.serve(int32(i), x)
		return
	}
	// The whole message: a long call, or a reply to one of our calls in a
	// responder-provided Read chunk.
	if be32(x.msg[4:]) == uint32(oncrpc.CallMsg) {
		if sv.grant == 0 {
			c.fail("serve call", ErrCreditOverrun)
			return
		}
		sv.checkEnable()
		if !x.serving && !sv.startServing(x) {
			sv.release(int32(i))
			return
		}
		if be32(x.msg) != x.hdr.XID {
			sv.xidMismatch(int32(i), x)
			return
		}
		sv.serve(int32(i), x)
		return
	}
	sv.answered(x) // a reply to nothing, counted as a call in case it was one
	x.state = ctxPulled
	c.recvPool.Put(x.recv)
	x.recv = nil
	if !c.cl.onPulledReply(int32(i), x.hdr.XID, x.msg) {
		sv.release(int32(i))
	}
}

// smallOff is where small replies are built in a send buffer: past any transport header.
const smallOff = sendBufSize / 2

// reply sends the RPC reply held contiguously in buf[off:off+n]. If the reply has a
// DDP-eligible item, it lies at buf[ddp:ddp+ddpLen] (ddp < 0: none) and is the end of the
// message but for its pad. The class follows RFC 8166 section 3.5: the Write chunk for the
// item when the call provided one that holds it; the Reply chunk when provided and large
// enough; inline when it fits; otherwise a responder-provided Read chunk when negotiated
// (the reliable-reply draft's section 4.1.1), else ERR_CHUNK. svcrdma, which has no
// responder-provided Read chunks, answers ERR_CHUNK as soon as a provided chunk is too small.
func (sv *server) reply(i int32, x *sctx, buf *mempool.Buf, off, n, ddp, ddpLen int) {
	c := sv.c
	ch := x.hdr
	if len(ch.ReadList)|len(ch.WriteCounts) == 0 && !ch.HasReply && wire.MinHeaderSize+n <= c.params.Inline.SendSize {
		// Most replies: a call without chunks answered inline. Its header has no chunks
		// either (no Header scratch to fill and encode), nor a key to invalidate.
		wire.PutNoChunks(x.send.Bytes(), ch.XID, wire.Version, sv.grantFor(ch.Credit), wire.ProcMsg)
		flags := sv.signal(i, x, x.sink != nil && c.sinks.shared || x.svcProc >= 0)
		c.queueSend(wrID(kindReplySend, uint32(i)), flags, x.send.SGE(wire.MinHeaderSize), buf.Sub(off, n))
		sv.answered(x)
		x.state = ctxReplying
		c.stats.Replies.add(rpcproto.ClassShort)
		x.served = true
		return
	}
	h := sv.rh
	h.Reset()
	h.XID, h.Vers, h.Credit, h.Proc = ch.XID, wire.Version, sv.grantFor(ch.Credit), wire.ProcMsg
	// The Write list comes back with its segment count unchanged and the lengths used
	// (RFC 8166 section 4.4.6.1: zero for unused chunks).
	// The length test skips two empty appends (runtime calls) on every reply to a call
	// without a Write list.
	if len(ch.WriteCounts) > 0 {
		h.WriteList = append(h.WriteList, ch.WriteList...)
		h.WriteCounts = append(h.WriteCounts, ch.WriteCounts...)
		for k := range h.WriteList {
			h.WriteList[k].Length = 0
		}
	}
	sendT := c.params.Inline.SendSize
	var sgl [2]datapath.SGE
	nsge := 1
	// The first reply resource that holds the reply wins; one that is too small is passed
	// over for the next (draft-cel-nfsv4-rpcrdma-reliable-reply section 4.1.1: a responder
	// MUST use a responder-provided Read chunk when every requester-provided resource is too
	// small), and only when none is left is it RDMA_ERROR ERR_CHUNK. rpcproto.ClassAuto: none yet.
	class := rpcproto.ClassAuto
	if ddp >= 0 && len(ch.WriteCounts) > 0 {
		segs := ch.WriteChunk(0)
		if sv.scatter(segs, h.WriteList[:len(segs)], buf, ddp, ddpLen) {
			sgl[1] = buf.Sub(off, ddp-off)
			nsge, class = 2, rpcproto.ClassWriteChunk
		}
	}
	if class == rpcproto.ClassAuto && ch.HasReply {
		// scatter queues nothing when the chunk is too short, so h is untouched then.
		h.Reply = append(h.Reply[:0], ch.Reply...)
		if sv.scatter(ch.Reply, h.Reply, buf, off, n) {
			h.Proc, h.HasReply = wire.ProcNoMsg, true // as svcrdma: RDMA_NOMSG
			class = rpcproto.ClassReplyChunk
		} else {
			h.Reply = h.Reply[:0]
		}
	}
	hs := wire.MinHeaderSize // the header of a reply without chunks, most replies
	if len(h.WriteCounts) > 0 || h.HasReply {
		hs = h.Layout().Size()
	}
	if class == rpcproto.ClassAuto && hs+n <= sendT {
		sgl[1] = buf.Sub(off, n)
		nsge, class = 2, rpcproto.ClassShort
	}
	if class == rpcproto.ClassAuto && c.params.ResponderRead && sv.pendingDone < sv.awaitCap {
		h.Proc = wire.ProcNoMsg
		// The Write list stays in the header, every chunk at length zero (RFC 8166
		// section 3.4.6: unused chunks are returned with their lengths zeroed).
		key := c.region.MR().RKey()
		if x.mw != nil {
			key = datapath.NextRKey(x.mw.RKey())
			c.queue(&datapath.SendWR{ID: wrID(kindUnsignaled, 0), Op: datapath.OpBindMW, MW: x.mw, RKey: key,
				BindAccess: datapath.AccessRemoteRead}, buf.Sub(off, n))
			x.mwKey, x.mwUsed = key, true
		}
		h.ReadList = append(h.ReadList, wire.ReadSegment{Position: 0,
			Segment: wire.Segment{Handle: key, Length: uint32(n), Offset: buf.Addr() + uint64(off)}})
		class = rpcproto.ClassResponderRead
		x.waits |= ctxWaitDone
		x.deadline = time.Now().Add(c.cfg.DoneTimeout)
		sv.waiting = append(sv.waiting, i)
		sv.pendingDone++
	}
	if class == rpcproto.ClassAuto {
		sv.overrun(i, x)
		return
	}
	hl, err := h.Encode(x.send.Bytes()[:smallOff])
	if err != nil {
		sv.overrun(i, x)
		return
	}
	sgl[0] = x.send.SGE(hl)
	wr := datapath.SendWR{ID: wrID(kindReplySend, uint32(i)), Op: datapath.OpSend}
	if key, ok := sv.invalidateKey(ch); ok {
		wr.Op, wr.InvRKey = datapath.OpSendInv, key
	}
	// A reply waiting for RDMA_DONE is tracked through its own completion. So is one that
	// holds a buffer of a shared sink pool: an unsignalled Send is known complete only when
	// a later one of the same connection is, and other connections may be waiting for it.
	// So is a Service's reply, whose completion ends the time Config.Served reports.
	sv.post(i, x, &wr, sgl[:nsge], class == rpcproto.ClassResponderRead || x.sink != nil && c.sinks.shared || x.svcProc >= 0)
	c.stats.Replies.add(class)
	x.served = true
}

// post queues the reply Send of context i, signalled when force is set or its turn has
// come, and ends the call's service.
func (sv *server) post(i int32, x *sctx, wr *datapath.SendWR, sgl []datapath.SGE, force bool) {
	wr.Flags |= sv.signal(i, x, force)
	sv.c.queue(wr, sgl...)
	sv.answered(x)
	x.state = ctxReplying
}

// signal numbers the reply Send of context i and returns its flags: signalled when force is
// set or its turn has come, else it waits in retire for a later signalled one.
func (sv *server) signal(i int32, x *sctx, force bool) datapath.SendFlags {
	sv.seq++
	x.seq = sv.seq
	if force || sv.unsig+1 >= sv.sigEvery {
		sv.unsig = 0
		x.waits |= ctxWaitSend
		return datapath.FlagSignaled
	}
	sv.unsig++
	sv.retire = append(sv.retire, i)
	return 0
}

// invalidateKey picks the requester key a reply invalidates with Send With Invalidate
// (RFC 8797 section 4.1): one of this XID's chunks, preferring the reply-side chunk (the
// Write chunk's first segment, else the Reply chunk's, else the Read chunk's). The requester
// invalidates the others itself. Linux's svcrdma (svc_rdma_get_inv_rkey) is stricter: it
// invalidates only when every segment of the call carries one and the same key, and sends a
// plain Send otherwise; this requester binds a window per chunk, so for a call with two
// chunks svcrdma would invalidate none and this responder invalidates one.
//
// Only forward replies do so. RFC 8797 section 4.1 lets "the responder" use Send With
// Invalidate for its RPC replies when both R bits are set; RFC 8167 gives the reverse
// direction no such rule, and the responder's R bit promises nothing about the keys in its
// reverse calls (a preregistered peer would expose its region-wide key there, whose
// invalidation ends the connection). So reverse replies use a plain Send and the reverse
// requester invalidates its own windows with LOCAL_INV.
func (sv *server) invalidateKey(ch *wire.Header) (uint32, bool) {
	if !sv.remoteInv {
		return 0, false
	}
	switch {
	case len(ch.WriteList) > 0:
		return ch.WriteList[0].Handle, true
	case ch.HasReply && len(ch.Reply) > 0:
		return ch.Reply[0].Handle, true
	case len(ch.ReadList) > 0:
		return ch.ReadList[0].Handle, true
	}
	return 0, false
}

// scatter queues RDMA WRITEs of buf[off:off+n] across the segments segs (in order) and
// records the lengths written in out. It reports false, queueing nothing, if the segments
// are too short (the requester's reply resources cannot hold the reply).
func (sv *server) scatter(segs []wire.Segment, out []wire.Segment, buf *mempool.Buf, off, n int) bool {
	var room uint64
	for _, s := range segs {
		room += uint64(s.Length)
	}
	if room < uint64(n) {
		return false
	}
	c := sv.c
	for k, s := range segs {
		m := min(int(s.Length), n)
		out[k].Length = uint32(m)
		if m == 0 {
			continue
		}
		c.queue(&datapath.SendWR{ID: wrID(kindUnsignaled, 0), Op: datapath.OpWrite, RemoteAddr: s.Offset, RKey: s.Handle},
			buf.Sub(off, m))
		off += m
		n -= m
	}
	return true
}

// xidMismatch answers a call whose rdma_xid is not its RPC XID with ERR_CHUNK: RFC 8166
// section 4.5.2 counts the mismatch among the XDR errors of the transport header. (Linux's
// svcrdma does not check: it serves the call and replies under the RPC XID.)
func (sv *server) xidMismatch(i int32, x *sctx) {
	sv.errorReply(i, x, wire.ErrCodeChunk)
}

// overrun answers a reply that fits none of the reply resources with RDMA_ERROR ERR_CHUNK
// (svcrdma's answer to any reply that does not fit); the requester fails that RPC.
func (sv *server) overrun(i int32, x *sctx) {
	sv.c.stats.ReplyOverruns++
	sv.errorReply(i, x, wire.ErrCodeChunk)
}

// errorReply answers the call in x with RDMA_ERROR.
func (sv *server) errorReply(i int32, x *sctx, code wire.ErrCode) {
	c := sv.c
	h := sv.rh
	h.Reset()
	h.XID, h.Vers, h.Credit, h.Proc, h.Err = x.hdr.XID, x.hdr.Vers, sv.grantFor(x.hdr.Credit), wire.ProcError, code
	if code == wire.ErrCodeVers {
		h.VersLow, h.VersHigh = wire.Version, wire.Version
	}
	n, _ := h.Encode(x.send.Bytes())
	sge := [1]datapath.SGE{x.send.SGE(n)}
	sv.post(i, x, &datapath.SendWR{ID: wrID(kindReplySend, uint32(i)), Op: datapath.OpSend}, sge[:], true)
	c.stats.ErrorsSent++
}

// sent counts x's reply among the calls served once its Send is known complete.
func (sv *server) sent(x *sctx) {
	if x.served {
		sv.c.stats.Served++
		x.served = false
		if x.svcProc >= 0 {
			sv.servedCall(x)
		}
	}
}

// servedCall tells Config.Served of a Service's call whose reply was sent.
func (sv *server) servedCall(x *sctx) {
	if sv.c.cfg.Served == nil {
		return
	}
	class := rpcproto.Short
	switch {
	case x.pos0:
		class = rpcproto.Long
	case x.chunk != nil:
		class = rpcproto.Chunked
	}
	sv.c.cfg.Served(uint32(x.svcProc), class, nanotime()-x.arrived, x.svcFailed)
}

// sentAll counts the posted replies waiting to be known complete (retire) as sent.
func (sv *server) sentAll() {
	for _, j := range sv.retire {
		if x := &sv.ctxs[j]; x.seq <= sv.posted {
			sv.sent(x)
		}
	}
}

func (sv *server) onReplySent(i uint32) {
	x := &sv.ctxs[i]
	if x.state != ctxReplying && x.state != ctxAwaitDone {
		return
	}
	// The send queue executes in order: every reply Send posted before this one is done.
	k := 0
	for ; k < len(sv.retire) && sv.ctxs[sv.retire[k]].seq < x.seq; k++ {
		sv.sent(&sv.ctxs[sv.retire[k]])
		sv.release(sv.retire[k])
	}
	if k > 0 {
		n := copy(sv.retire, sv.retire[k:])
		sv.retire = sv.retire[:n]
	}
	sv.sent(x)
	x.waits &^= ctxWaitSend
	if x.waits&ctxWaitDone != 0 {
		x.state = ctxAwaitDone
		return
	}
	if x.waits == 0 {
		sv.release(int32(i))
	}
}
