package rpcrdma

import (
	"errors"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/mempool"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// Role says which end of the connection an endpoint is: the requester connects and sends
// forward-direction calls; the responder accepts and serves them. Either may do the other's
// job in the reverse direction (RFC 8167).
type Role uint8

const (
	RoleRequester Role = iota
	RoleResponder
)

func (r Role) String() string {
	if r == RoleResponder {
		return "responder"
	}
	return "requester"
}

// MarshalText makes a Role read as a word in results files.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Endpoint errors. They are preallocated: the hot path returns them without allocating.
var (
	// ErrNoCredit: Submit would exceed the credits the peer granted (or, before the first
	// reply, the single credit RFC 8166 section 3.3.1 allows). Call Progress and retry.
	ErrNoCredit = errors.New("rpcrdma: no credit available")
	// ErrReverseDisabled: reverse-direction calls were submitted on a connection where the
	// peer did not offer to take them (RFC 8167 section 6), or before its first forward call
	// proved its receives are posted.
	ErrReverseDisabled = errors.New("rpcrdma: reverse direction not enabled by the peer")
	// ErrTooLarge: the call's payload exceeds Config.MaxPayload, or a forced class cannot
	// carry it (a short call bigger than the inline threshold).
	ErrTooLarge = errors.New("rpcrdma: message too large for the requested class")
	// ErrClassNotApplicable: the forced class needs a DDP-eligible item the procedure has
	// not (a Read chunk for ECHO, a Write chunk for SINK).
	ErrClassNotApplicable = errors.New("rpcrdma: message class not applicable to this procedure")
	// ErrBadProc: the procedure is not in the program's table (Config.Codec).
	ErrBadProc = errors.New("rpcrdma: unknown procedure")
	// ErrVersionRejected: the peer answered RDMA_ERROR ERR_VERS.
	ErrVersionRejected error = &kindError{"rpcrdma: peer rejected the RPC-over-RDMA version (ERR_VERS)", "err_vers"}
	// ErrChunkRejected: the peer answered RDMA_ERROR ERR_CHUNK: it could not parse the
	// chunk lists, or the reply did not fit the reply resources the call provided.
	ErrChunkRejected error = &kindError{"rpcrdma: peer answered ERR_CHUNK (bad chunks or reply too large for the reply resources)", "err_chunk"}
	// ErrBadReply: a reply could not be decoded or does not match its call.
	ErrBadReply error = &kindError{"rpcrdma: malformed reply", "bad_reply"}
	// ErrRPCRejected: the RPC reply was not an accepted SUCCESS.
	ErrRPCRejected error = &kindError{"rpcrdma: RPC not accepted with SUCCESS", "rpc_rejected"}
	// ErrVerify: payload verification failed: the data received is not the pattern sent.
	ErrVerify error = rpcproto.ErrVerify
	// ErrSourceTooBig: the responder refused a SOURCE larger than its MaxPayload.
	ErrSourceTooBig error = benchprog.ErrSourceTooBig
	// ErrCreditOverrun: the peer sent more calls than the credits granted to it.
	ErrCreditOverrun = errors.New("rpcrdma: peer exceeded its credits")
	// ErrClosed: the endpoint was closed.
	ErrClosed = errors.New("rpcrdma: endpoint closed")
)

// ConnError ends every RPC outstanding on a connection that broke: Op names what failed
// ("completion RECV", "post send", ...) and Err is the cause (a datapath.StatusError, a
// provider error, ErrCreditOverrun). errors.Is(err, datapath.ErrBroken) holds.
type ConnError struct {
	Op  string
	Err error
	// peer names the other end ("server", "client") for a peer that closed the connection.
	peer string
	// qp, for a break the provider saw (a flushed completion, a refused post), is the queue pair whose Err may learn
	// the cause only later (verbs: the CM's DISCONNECTED event can follow the flushes).
	qp datapath.Conn
}

// cause is Err, or the queue pair's later word that the peer closed the connection.
func (e *ConnError) cause() error {
	if e.qp != nil {
		var de *datapath.DisconnectError
		if qerr := e.qp.Err(); errors.As(qerr, &de) {
			return qerr
		}
	}
	return e.Err
}

func (e *ConnError) Error() string {
	var de *datapath.DisconnectError
	if e.peer != "" && errors.As(e.cause(), &de) {
		// The peer closed it: say so, with its reason where the provider carried one.
		if de.Reason != "" {
			return "rpcrdma: the " + e.peer + " closed the connection: " + de.Reason
		}
		return "rpcrdma: the " + e.peer + " closed the connection"
	}
	return "rpcrdma: connection broken: " + e.Op + ": " + e.Err.Error()
}
func (e *ConnError) Unwrap() []error { return []error{datapath.ErrBroken, e.cause()} }

// Kind names the failure in results files' per-kind error counts.
func (e *ConnError) Kind() string { return "broken" }

// kindError is a sentinel RPC failure that names its kind for results files' per-kind error
// counts ("verify", "err_chunk", ...), so that no table elsewhere has to map errors to kinds.
type kindError struct{ msg, kind string }

func (e *kindError) Error() string { return e.msg }

// Kind is the failure's name in results files.
func (e *kindError) Kind() string { return e.kind }

// SetupError is a failed connection setup step.
type SetupError struct {
	Op  string
	Err error
}

func (e *SetupError) Error() string { return "rpcrdma: " + e.Op + ": " + e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// Params are what connection setup negotiated, for the results file.
type Params struct {
	Role Role `json:"role"`
	// Local is the RFC 8797 message this side sent (meaningless when LocalSent is false);
	// Peer is the peer's, or wire.DefaultPrivateData when PeerSent is false.
	Local     wire.PrivateData `json:"local"`
	Peer      wire.PrivateData `json:"peer"`
	LocalSent bool             `json:"local_sent"`
	PeerSent  bool             `json:"peer_sent"`
	// Inline holds the effective thresholds (RFC 8797 section 4.2): SendSize for messages
	// this side sends, RecvSize for messages it receives, and whether remote invalidation
	// is in effect.
	Inline wire.Inline `json:"inline"`
	// ResponderRead: both ends enabled responder-provided Read chunks.
	ResponderRead bool `json:"responder_read"`
	// Reverse: both ends enabled the reverse direction.
	Reverse bool `json:"reverse"`
	// Memory is this side's memory mode.
	Memory MemoryMode `json:"memory"`
	// Credits is the credit value this side requests for its calls (requester: forward;
	// responder: reverse, 0 if disabled); Grant the most it grants for the peer's calls.
	Credits int `json:"credits"`
	Grant   int `json:"grant"`
}

// Conn is one RPC-over-RDMA endpoint on one connection.
//
// Threading: a Conn belongs to one goroutine (its poller). Submit, Progress and the Stats
// read after the run are never called concurrently; nothing inside takes a lock or
// allocates per RPC.
type Conn struct {
	cfg    Config
	params Params
	qp     datapath.Conn
	cq     datapath.CQ
	pd     datapath.PD // the connection's own (see allocPD), or its poller's (share)
	ownPD  bool
	maxMW  int // the device's memory windows (0: none)
	// replyWindows: replies in responder-provided Read chunks are exposed through windows.
	replyWindows bool
	region       *mempool.Region

	sendPool, recvPool, outPool, inPool *mempool.Pool
	// sinks are the buffers a context pulls into or builds a long reply in: the
	// connection's own, or shared by the connections of its poller (Serve).
	sinks *sinks

	// Receives: at least recvTarget are kept posted, refilled up to recvMax once fewer
	// remain (see recvBatch); held ones are being processed or viewed. The target follows
	// the credits granted (setRecvTarget): recvBase for replies to this side's calls, plus
	// recvPerGrant per credit granted to the peer; recvCap is the receive queue's depth.
	recvTarget, recvMax, recvPosted int
	recvBase, recvPerGrant, recvCap int
	recvWRs                         []datapath.RecvWR
	recvSGEs                        []datapath.SGE

	// Send queue batch: WRs and the SGEs they point into, posted by flush.
	sendWRs  []datapath.SendWR
	sendSGEs []datapath.SGE

	wcs []datapath.Completion
	// hdr is the scratch an incoming message is decoded into. A pointer, because take
	// swaps it with a context's own header: swapping two pointers is a fraction of
	// swapping two Header values with their four slices (-32 instructions per RPC measured).
	hdr *wire.Header

	cl client
	sv server

	// stats are the connection's counters, owned by the poller goroutine (plain fields: no
	// atomics on the hot path); Stats returns a copy.
	stats Stats

	qpn uint32
	// now is when the batch of completions being handled was polled (batchNow, monoNow's
	// nanoseconds), valid while nowRead: the sink and pull time stamps read the clock at most
	// once per batch, and a batch that takes no sink buffer and pulls nothing reads none.
	now           int64
	nowRead       bool
	maxInlineData int // the queue pair's effective MaxInlineData (a Send's bytes copied into its WQE), not RFC 8166's inline threshold
	sharedCQ      bool
	err           error
	closed        bool
	// closeReason is what Close tells the peer when the connection ends without a fault
	// (Mux.Close: MuxConfig.CloseReason).
	closeReason string

	// Owned by the Mux serving the connection: it is in the Mux's dirty list; it completed
	// work since the last idle sweep; sweeps it stayed idle.
	muxDirty, muxActive bool
	muxIdleSweeps       int
}

// wr ids: kind in the top byte, an index below.
const (
	kindRecv      = iota + 1 // index: region buffer index of the receive buffer
	kindCallSend             // index: slot
	kindDoneSend             // index: slot
	kindInv                  // index: slot (last LOCAL_INV of an RPC)
	kindReplySend            // index: ctx
	kindCtxRead              // index: ctx (last READ pulling a chunk)
	kindCtxInv               // index: ctx (LOCAL_INV of a responder Read chunk window)
	kindErrSend              // index: region buffer index of the send buffer
	kindUnsignaled
)

// kindOps name the work request kinds in a *ConnError.
var kindOps = [...]string{
	kindRecv:       "receive",
	kindCallSend:   "call Send",
	kindDoneSend:   "RDMA_DONE Send",
	kindInv:        "LOCAL_INV",
	kindReplySend:  "reply Send",
	kindCtxRead:    "RDMA READ",
	kindCtxInv:     "LOCAL_INV of a Read chunk window",
	kindErrSend:    "RDMA_ERROR Send",
	kindUnsignaled: "unsignalled work request",
}

// wrID packs what a completion is for into its work request id: the kind in bits 40..47,
// the slot index below. Ids stay under datapath.MaxWRID (the verbs provider keeps the top
// bits for itself).
func wrID(kind int, idx uint32) uint64 { return uint64(kind)<<wrKindShift | uint64(idx) }

const wrKindShift = 40

// headroom is reserved before the payload in slot and sink buffers: room to encode the RPC
// header and the argument or result prefix in place, right before the payload, so that the
// whole RPC message is contiguous in registered memory with no copy.
const headroom = 1024

// maxArgsPrefix is the room kept for the arguments before a call's payload, and for a whole
// call without one: an NFSv4.1 COMPOUND (SEQUENCE, PUTFH of a 128-byte handle, an OPEN
// with its owner and name and a CLOSE) runs to a few hundred bytes. The call header gets the
// rest of headroom.
const maxArgsPrefix = headroom - 160

// tailroom is kept after the payload in slot and sink buffers: its XDR pad and the
// arguments that follow it (an NFSv4.1 WRITE's GETATTR).
const tailroom = 64

// maxSlots bounds slots and contexts: their index must fit the XID's low 16 bits.
const maxSlots = 1 << 15

// Params returns what connection setup negotiated.
func (c *Conn) Params() Params { return c.params }

// Err is nil while the connection works and the *ConnError once it broke.
func (c *Conn) Err() error { return c.err }

// Close disconnects and releases the endpoint. Outstanding RPCs are not reported.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	if c.err == nil {
		c.err = ErrClosed
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	c.cl.closeMWs()
	c.sv.closeMWs()
	if c.qp != nil {
		keep(c.closeQP())
	}
	c.sv.returnSinks()
	if c.cq != nil && !c.sharedCQ {
		keep(c.cq.Close())
	}
	if c.region != nil {
		// Buffers still out (held by flushed work) are expected here; only the unmap and
		// deregistration failures matter.
		if err := c.region.Close(); err != nil {
			var leak *mempool.LeakError
			if !errors.As(err, &leak) {
				keep(err)
			}
		}
	}
	if c.pd != nil && c.ownPD {
		keep(c.pd.Close())
	}
	return first
}

// closeQP closes the queue pair and, where the provider can (datapath.Aborter) and the
// connection still works, tells the peer why: the cause when this side broke the connection
// above the wire (a credit violation, a failed LOCAL_INV), the idle timeout, or closeReason.
func (c *Conn) closeQP() error {
	a, ok := c.qp.(datapath.Aborter)
	if !ok || c.qp.Err() != nil {
		return c.qp.Close()
	}
	reason := c.closeReason
	if c.err != ErrClosed {
		reason = c.err.Error()
	}
	if reason == "" {
		return c.qp.Close()
	}
	return a.Abort(reason)
}

// Progress polls the connection's completion queue, handles every completion in place
// (decoding headers, starting RDMA Reads and Writes, serving calls, sending replies), posts
// receives and sends in batches, and copies the RPCs that finished into done. It returns how
// many Results it wrote, and the *ConnError once the connection broke (the RPCs that were
// outstanding then are returned as Results carrying that error first).
//
// Result.Data views registered memory that stays valid until the caller's next call into
// this Conn. With a shared CQ (Config.CQ) use Handle, Idle and Results instead.
func (c *Conn) Progress(done []Result) (int, error) {
	if c.closed {
		return 0, ErrClosed
	}
	if c.sharedCQ {
		return 0, errSharedCQ
	}
	for range 4 {
		if c.err != nil {
			break
		}
		n, err := c.cq.Poll(c.wcs)
		if err != nil {
			c.fail("poll CQ", err)
			break
		}
		c.nowRead = false
		for i := range c.wcs[:n] {
			c.handle(&c.wcs[i])
		}
		if n < len(c.wcs) {
			break
		}
	}
	c.Idle()
	return c.Results(done)
}

var errSharedCQ = errors.New("rpcrdma: Progress on a connection with a shared CQ: use Handle, Idle and Results")

// Handle processes completions polled by someone else (a datapath.Poller), skipping those
// of other queue pairs, then posts what they caused, like Idle. Together with Idle it
// implements datapath.Handler; it returns the *ConnError once the connection broke.
func (c *Conn) Handle(wcs []datapath.Completion) error {
	c.nowRead = false
	for i := range wcs {
		if c.err != nil {
			break
		}
		if wcs[i].QPN == c.qpn {
			c.handle(&wcs[i])
		}
	}
	return c.Idle()
}

// Idle expires responder-provided Read chunks whose RDMA_DONE is overdue, fails the
// connection when an RDMA Read is overdue (ReadTimeout), and posts the queued receives and
// sends. It returns the *ConnError once the connection broke.
func (c *Conn) Idle() error {
	if c.err == nil && c.sv.pendingDone+len(c.sv.pulls) > 0 {
		now := time.Now()
		c.sv.expireDone(now)
		c.sv.expirePulls(now)
	}
	if c.err == nil {
		if err := c.flush(); err != nil { // which replenishes first
			c.fail("post", err)
		}
	}
	return c.err
}

// Results copies finished RPCs into done and returns how many, with the *ConnError once
// the connection broke and every failed RPC was returned. Their Data stays valid until the
// caller's next call into this Conn.
func (c *Conn) Results(done []Result) (int, error) {
	n := c.cl.emit(done)
	if c.err != nil && c.cl.readyLen() == 0 {
		return n, c.err
	}
	return n, nil
}

// Stats returns a copy of the connection's counters. Like every method but the hand-over to a
// Mux, call it from the goroutine that owns the connection, or after its poller stopped.
func (c *Conn) Stats() Stats { return c.stats }

// RegisteredBytes is the size of the memory registered for the connection (see
// TRANSPORT.md, Memory, for the formula): what a device that pins registered memory
// commits for it, and the most it commits on one that does not.
func (c *Conn) RegisteredBytes() int {
	if c.region == nil {
		return 0
	}
	return c.region.Info().Size
}

// RemoteAddr is the peer's address ("host:port"), "" before the connection exists.
func (c *Conn) RemoteAddr() string {
	if c.qp == nil {
		return ""
	}
	return c.qp.RemoteAddr()
}

// busy says whether RPCs are outstanding either way: a connection waiting for its peer is
// not idle.
func (c *Conn) busy() bool { return c.cl.outstanding > 0 || c.sv.serving > 0 }

// QPN is the connection's queue pair number, which its completions carry.
func (c *Conn) QPN() uint32 { return c.qpn }

// CQ is the completion queue the connection's work completes on.
func (c *Conn) CQ() datapath.CQ { return c.cq }

func (c *Conn) handle(wc *datapath.Completion) {
	kind, idx := int(wc.ID>>wrKindShift), uint32(wc.ID&(1<<wrKindShift-1))
	if wc.Status != datapath.StatusSuccess {
		// The completion's Op is not meaningful on failure; the id says what it was.
		op := "completion"
		if kind < len(kindOps) {
			op = kindOps[kind]
		}
		err := wc.Status.Err()
		if wc.Status == datapath.StatusFlushed && c.qp != nil {
			// A flush says only that the connection broke first; the queue pair knows
			// why (the peer disconnected, a transport error), possibly only later.
			if qerr := c.qp.Err(); qerr != nil {
				err = qerr
			}
			c.fail(op, err)
			return
		}
		c.fail(op, err)
		return
	}
	switch kind {
	case kindRecv:
		c.recvPosted--
		c.stats.Recv.add(int(wc.ByteLen))
		c.onRecv(c.region.Buf(idx), wc)
	case kindCallSend:
		c.cl.onSendDone(idx)
	case kindDoneSend:
		c.cl.onDoneSent(idx)
	case kindInv:
		c.cl.onInvDone(idx)
	case kindReplySend:
		c.sv.onReplySent(idx)
	case kindCtxRead:
		c.sv.onReadDone(idx)
	case kindCtxInv:
		c.sv.onInvDone(idx)
	case kindErrSend:
		c.sendPool.Put(c.region.Buf(idx))
	}
}

// onRecv routes one received message: RDMA_DONE and calls to the serving side, replies and
// RDMA_ERROR to the calling side. A message whose direction is not known from its header
// (RDMA_NOMSG with a Position Zero Read chunk: a long call, or a reply in a
// responder-provided Read chunk) is pulled first and routed by its msg_type (RFC 8167
// section 4.1).
func (c *Conn) onRecv(buf *mempool.Buf, wc *datapath.Completion) {
	b := buf.Bytes()[:wc.ByteLen]
	h := c.hdr
	msg, err := h.Decode(b, &c.cfg.Limits)
	if err != nil {
		// A reply to one of our calls fails that RPC; anything else is answered as a
		// call with RDMA_ERROR (RFC 8166 section 4.5).
		if !c.cl.onBadReply(buf, wc, b, err) {
			c.sv.onBadHeader(buf, err)
		}
		return
	}
	switch h.Proc {
	case wire.ProcDone:
		c.sv.onDone(h.XID, wc)
		c.recvPool.Put(buf)
		return
	case wire.ProcError:
		c.cl.onReply(buf, wc, nil)
		return
	case wire.ProcMsg:
		if len(msg) < 8 {
			if !c.cl.onBadReply(buf, wc, b, wire.ErrTruncated) {
				c.sv.onBadHeader(buf, wire.ErrTruncated)
			}
			return
		}
		if be32(msg[4:]) == 0 { // msg_type CALL
			c.sv.onCall(buf, msg)
			return
		}
		c.cl.onReply(buf, wc, msg)
		return
	}
	// RDMA_NOMSG.
	if len(h.ReadList) > 0 && h.ReadList[0].Position == 0 {
		c.sv.onPositionZero(buf, wc)
		return
	}
	if len(h.ReadList) > 0 {
		// Read chunks at other positions need an inline message to insert into.
		c.sv.onBadHeader(buf, wire.ErrNoMsgRead)
		return
	}
	c.cl.onReply(buf, wc, nil)
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// recvBatch is how many receives beyond recvTarget are posted when refilling, as Linux's
// xprtrdma does (RPCRDMA_MAX_RECV_BATCH, 7, in rpcrdma_post_recvs): refilling only once
// fewer than recvTarget remain posts eight receives per PostRecv instead of one, and
// PostRecv costs a provider call (a doorbell on hardware) whatever its length.
const recvBatch = 7

// setRecvTarget sets the receives kept posted for granted credits: RFC 8166 section 3.3
// requires a receive for every credit granted, so a grant grows only together with the
// receives behind it (flush posts them before the reply that carries the grant), and a
// connection whose peer asks for few credits keeps few receives, and so little memory.
func (c *Conn) setRecvTarget(granted uint32) {
	c.recvTarget = max(1, c.recvBase+c.recvPerGrant*int(granted))
	c.recvMax = max(c.recvTarget, min(c.recvTarget+recvBatch, c.recvCap))
}

// replenish queues receives once fewer than recvTarget are posted, up to recvMax. flush
// calls it and posts them before any send, so every reply granting credit finds recvTarget
// posted.
func (c *Conn) replenish() {
	if c.recvPosted+len(c.recvWRs) >= c.recvTarget {
		return
	}
	for c.recvPosted+len(c.recvWRs) < c.recvMax {
		buf := c.recvPool.Get()
		if buf == nil {
			c.fail("replenish receives", ErrCreditOverrun)
			return
		}
		// recvPosted+len(recvWRs) < recvMax <= recvBufs = cap(recvWRs): i is in range.
		i := len(c.recvWRs)
		c.recvSGEs[i] = buf.SGE(c.cfg.RecvSize)
		c.recvWRs = c.recvWRs[:i+1]
		c.recvWRs[i].ID = wrID(kindRecv, buf.Index())
	}
}

// queue appends a copy of the send-queue work request wr, its SGL copied into the batch's
// SGE arena. wr is taken by pointer (and not kept) because a SendWR is a dozen words: by
// value it was copied once into the argument and once more into the batch.
func (c *Conn) queue(wr *datapath.SendWR, sgl ...datapath.SGE) {
	if len(c.sendWRs) == cap(c.sendWRs) || len(c.sendSGEs)+len(sgl) > cap(c.sendSGEs) {
		if err := c.flush(); err != nil {
			c.fail("post", err)
			return
		}
	}
	// The SGEs (one or two) are copied element by element in the loop that sums their
	// lengths, into arena room the check above guaranteed: append(c.sendSGEs, sgl...)
	// called memmove and the growth path for them.
	start, end := len(c.sendSGEs), len(c.sendSGEs)+len(sgl)
	arena := c.sendSGEs[start:end:end]
	var n int
	for k := range arena {
		arena[k] = sgl[k]
		n += int(sgl[k].Length)
	}
	c.sendSGEs = c.sendSGEs[:end]
	wr.SGL = arena
	switch wr.Op {
	case datapath.OpSend:
		c.stats.Send.add(n)
		if n <= c.maxInlineData {
			wr.Flags |= datapath.FlagInline
		}
	case datapath.OpSendInv:
		c.stats.SendInv.add(n)
		if n <= c.maxInlineData {
			wr.Flags |= datapath.FlagInline
		}
	case datapath.OpWrite:
		c.stats.Write.add(n)
	case datapath.OpRead:
		c.stats.Read.add(n)
	case datapath.OpBindMW:
		c.stats.Binds++
	case datapath.OpLocalInv:
		c.stats.LocalInvs++
	}
	// Room is guaranteed by the check above: no growth path.
	k := len(c.sendWRs)
	c.sendWRs = c.sendWRs[:k+1]
	c.sendWRs[k] = *wr
}

// queueSend queues the Send of a message without chunks, the common case: its transport
// header hdr and RPC message msg, written straight into the batch without queue's copies of
// a SendWR and its SGL.
func (c *Conn) queueSend(id uint64, flags datapath.SendFlags, hdr, msg datapath.SGE) {
	if len(c.sendWRs) == cap(c.sendWRs) || len(c.sendSGEs)+2 > cap(c.sendSGEs) {
		if err := c.flush(); err != nil {
			c.fail("post", err)
			return
		}
	}
	start := len(c.sendSGEs)
	c.sendSGEs = c.sendSGEs[:start+2]
	arena := c.sendSGEs[start : start+2 : start+2]
	arena[0], arena[1] = hdr, msg
	n := int(hdr.Length) + int(msg.Length)
	c.stats.Send.add(n)
	if n <= c.maxInlineData {
		flags |= datapath.FlagInline
	}
	k := len(c.sendWRs)
	c.sendWRs = c.sendWRs[:k+1]
	// Field by field: a composite literal is built aside and then copied.
	w := &c.sendWRs[k]
	w.ID, w.Op, w.Flags, w.SGL = id, datapath.OpSend, flags, arena
	w.RemoteAddr, w.RKey, w.InvRKey, w.MW, w.BindAccess = 0, 0, 0, nil, 0
}

// flush posts the queued receives, then the queued sends: receives first, so that every
// receive our replies promise (their credit grant) is posted before the reply leaves. It
// tops the receives up itself, because not only Idle flushes: queue does when the batch is
// full, and a batch of Reply-chunk Writes fills it long before Idle runs (RFC 8166 section
// 3.3, RFC 8167 section 4.3.2: a grant must be backed by posted receives when it is sent).
func (c *Conn) flush() error {
	c.replenish()
	if len(c.recvWRs) > 0 {
		n, err := c.qp.PostRecv(c.recvWRs)
		c.recvPosted += n
		c.recvWRs = c.recvWRs[:0]
		if err != nil {
			return err
		}
	}
	if len(c.sendWRs) > 0 {
		_, err := c.qp.PostSend(c.sendWRs)
		// No clear(c.sendWRs) before truncating: all the posted entries can reference are
		// the SGE arena and the slots' and contexts' windows, which live as long as the
		// Conn, and queue overwrites every field of an entry it reuses. Clearing cost a
		// memclr with write barriers on every flush (~120 instructions per RPC).
		c.sendWRs = c.sendWRs[:0]
		c.sendSGEs = c.sendSGEs[:0]
		if err != nil {
			return err
		}
		c.sv.posted = c.sv.seq
	}
	return nil
}

// fail breaks the endpoint: every outstanding RPC ends with a *ConnError.
func (c *Conn) fail(op string, err error) {
	if c.err != nil {
		return
	}
	peer := "server"
	if c.params.Role == RoleResponder {
		peer = "client"
	}
	ce := &ConnError{Op: op, Err: err, peer: peer}
	if errors.Is(err, datapath.ErrBroken) || errors.Is(err, datapath.StatusFlushed.Err()) {
		// The provider saw the break (a flush, a post refused) perhaps before it learned
		// the cause: the queue pair may name the peer's close later.
		ce.qp = c.qp
	}
	c.err = ce
	var de *datapath.DisconnectError
	if errors.As(err, &de) || errors.Is(err, datapath.StatusFlushed.Err()) {
		// The peer closed the connection (a flush before any failure of ours is its
		// effect): the posted unsignalled reply Sends not yet known complete were sent, as
		// far as can be told (a flushed one looks the same).
		c.sv.sentAll()
	}
	c.stats.Broken = true
	c.cl.failAll(c.err)
	c.sendWRs = c.sendWRs[:0]
	c.sendSGEs = c.sendSGEs[:0]
	c.recvWRs = c.recvWRs[:0]
}

// batchNow is when the batch of completions being handled was polled, in monoNow's
// nanoseconds: the clock read at its first use in the batch. The monotonic clock alone (one
// read, where time.Now reads the wall clock too) and integer stamps keep it cheap per call.
func (c *Conn) batchNow() int64 {
	if !c.nowRead {
		c.now, c.nowRead = monoNow(), true
	}
	return c.now
}

// nanotime seeds XIDs and payload patterns at setup.
func nanotime() int64 { return time.Now().UnixNano() }
