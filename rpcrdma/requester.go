package rpcrdma

import (
	"encoding/binary"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/mempool"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// Call is one RPC to send: a procedure of the program Config.Codec speaks.
type Call struct {
	// Proc is the procedure's index in the program's table (rpcproto.Program.Procs).
	Proc int
	// Size is the payload in bytes (rpcproto.Procedure.Payload says which messages carry
	// it), at most Config.MaxPayload. Ignored for a procedure without payload.
	Size int
	// Class forces a message class (see rpcproto.Class); rpcproto.ClassAuto chooses as RFC 8166
	// section 3.5 and the Linux client do, a reply that would need a Reply chunk coming in a
	// responder-provided Read chunk instead when both ends negotiated them.
	Class rpcproto.Class
	// Kind, when Class is rpcproto.ClassAuto, forces a kind instead (a workload's --class):
	// the procedure's class of that kind (rpcproto.Procedure.Force), a long reply in a
	// responder-provided Read chunk when both ends negotiated them.
	Kind rpcproto.Kind
	// Tag is returned in the Result, for the caller's bookkeeping.
	Tag uint64
}

// Result is a finished RPC.
type Result struct {
	Tag uint64
	// Err is nil on success; otherwise one of the Err* sentinels of this package, or the
	// *ConnError that ended the connection.
	Err error
	// CallClass and ReplyClass are how the call and its reply travelled (ReplyClass as it
	// actually came back, which may differ from what the call offered: a responder may
	// answer inline although a Reply chunk was provided, and with rpcproto.ClassResponderRead a
	// reply that fits comes inline).
	CallClass, ReplyClass rpcproto.Class
	// Data is the reply's payload (ECHO and SOURCE), in registered memory that stays valid
	// until the caller's next call into the Conn (the buffer is free for reuse from then on:
	// nothing can write it before the caller submits or progresses again).
	Data []byte
}

// Slot states.
const (
	slotFree = iota
	slotBusy
	slotReady // finished, waiting in the ready queue for Progress to return it
	slotDead  // ended by a broken connection: its buffers may still be named by flushed work
)

// What a busy slot still waits for.
const (
	waitSend  = 1 << iota // the call's Send completion
	waitReply             // the reply
	waitDone              // the RDMA_DONE Send completion
	waitInv               // the LOCAL_INV completion
)

// slot is one call in flight. Its buffers are fixed: send holds the transport header, out
// the RPC call (header, arguments and payload contiguous, the payload at headroom), in the
// Write or Reply chunk the responder fills.
type slot struct {
	state, waits          uint8
	callClass, replyClass rpcproto.Class
	remoteInv             bool
	xid                   uint32
	gen                   uint16
	invKey                uint32
	offered               uint32 // the Reply chunk's length, when the call offered one
	call                  Call
	seed                  uint64
	send, out, in         *mempool.Buf
	recv                  *mempool.Buf // receive buffer of an inline reply, held for Data
	ctx                   int32        // context holding a pulled responder-provided reply, or -1
	err                   error
	data                  []byte
	mw                    [2]datapath.MW // call chunk, reply chunk (MemoryWindows)
	mwKey                 [2]uint32
	mwUsed                [2]bool
	pending               bool // a Conversation encoded the call and is not yet told how it ended
	noResults             bool // the procedure has no results and the codec keeps no state: an empty body needs no DecodeResults
}

// msgSizes are what rpcproto.Codec.Sizes returns, kept; known: kept at all.
type msgSizes struct {
	args, prefix, results int
	known                 bool
}

// client is the side of a Conn that sends calls: forward for a requester, reverse (RFC
// 8167) for a responder, with its own credit accounting (RFC 8167 section 4.1).
type client struct {
	c           *Conn
	procs       []rpcproto.Procedure // the codec's program's, read once: Submit's table
	sgl         [3]datapath.SGE      // the Send's SGL that marshal builds for post (a scratch: no copies of it)
	unsized     []msgSizes           // a plain codec's Sizes of each procedure without payload, by index
	slots       []slot
	free        []int32
	ready       []int32
	readyHead   int
	enabled     bool // calls may be sent
	canEnable   bool // becomes enabled at the peer's first call (responder)
	max         uint32
	credits     uint32
	limit       int // LimitCalls
	outstanding int
	base        uint32 // XID whitening
	// Call Sends are signalled every sigEvery; unsig counts those since the last.
	sigEvery, unsig int
	seedBase        uint64
	hdr             *wire.Header
	codec           rpcproto.Codec
	conv            rpcproto.Conversation // codec as one, told of the calls that end unanswered
	rpc             oncrpc.Call
	// callSize is the RPC call header's size; callHdr, when the credential is not
	// AUTH_NONE, the header encoded once (XID and procedure set per call).
	callSize int
	callHdr  []byte
	rep      oncrpc.Reply
}

func (cl *client) init(c *Conn, n, credits int, dev datapath.PD) error {
	cl.c = c
	cl.max = uint32(credits)
	cl.limit = credits
	cl.credits = 1 // RFC 8166 section 3.3.1: one credit until the first reply grants more
	cl.sigEvery = signalEvery(credits)
	cl.hdr = newHeader(c.cfg.Limits)
	cl.codec = c.cfg.Codec
	cl.conv, _ = cl.codec.(rpcproto.Conversation)
	prog := cl.codec.Program()
	cl.procs = prog.Procs
	if cl.conv == nil {
		// A plain codec's sizes of a procedure without payload never change: asked once.
		cl.unsized = make([]msgSizes, len(prog.Procs))
		for i := range prog.Procs {
			if !prog.Procs[i].Sized() {
				a, p, r := cl.codec.Sizes(i, 0)
				cl.unsized[i] = msgSizes{args: a, prefix: p, results: r, known: true}
			}
		}
	}
	cl.rpc = oncrpc.Call{Prog: prog.Number, Vers: prog.Version, Cred: c.cfg.Cred}
	cl.callSize = callHeaderSize
	if c.cfg.Cred.Flavor != oncrpc.FlavorNone || len(c.cfg.Cred.Body) > 0 {
		cl.callSize = cl.rpc.Size() // within headroom-maxArgsPrefix: Config.validate
		cl.callHdr = make([]byte, cl.callSize)
		if _, err := cl.rpc.Encode(cl.callHdr); err != nil {
			return &ConfigError{Field: "Cred", Reason: err.Error()}
		}
	}
	cl.base = uint32(nanotime()) &^ 0xffff
	cl.seedBase = uint64(nanotime()) << 20
	if credits == 0 {
		return nil
	}
	if c.params.Role == RoleRequester {
		cl.enabled = true
	} else {
		cl.canEnable = c.params.Reverse
	}
	cl.slots = make([]slot, n)
	cl.free = make([]int32, 0, n)
	cl.ready = make([]int32, 0, n)
	for i := n - 1; i >= 0; i-- {
		s := &cl.slots[i]
		s.send = c.sendPool.Get()
		s.out = c.outPool.Get()
		s.in = c.inPool.Get()
		s.ctx = -1
		if c.cfg.Memory == MemoryWindows {
			for k := range s.mw {
				mw, err := dev.AllocMW()
				if err != nil {
					return &SetupError{"allocate memory window", err}
				}
				s.mw[k] = mw
			}
		}
		cl.free = append(cl.free, int32(i))
	}
	return nil
}

func (cl *client) closeMWs() {
	for i := range cl.slots {
		for _, mw := range cl.slots[i].mw {
			if mw != nil {
				mw.Close()
			}
		}
	}
}

// Sizes of the RPC headers this endpoint sends: AUTH_NONE credential and verifier
// (constants, checked against oncrpc by TestRPCMsgMatchesCodec).
const (
	callHeaderSize  = noneCallSize
	replyHeaderSize = noneReplySize
)

// Submit sends one call. It never blocks: ErrNoCredit means the granted credits (or the
// slots) are in use, and Progress must run first. On success the RPC's Result comes out of
// a later Progress call. Errors other than ErrNoCredit are final for this call and leave
// the connection as it was.
func (c *Conn) Submit(call Call) error {
	cl := &c.cl
	if c.err != nil {
		return c.err
	}
	if !cl.enabled {
		return ErrReverseDisabled
	}
	if cl.outstanding >= int(cl.credits) || cl.outstanding >= cl.limit || len(cl.free) == 0 {
		return ErrNoCredit
	}
	procs := cl.procs
	if call.Proc < 0 || call.Proc >= len(procs) {
		return ErrBadProc
	}
	p := &procs[call.Proc]
	size := call.Size
	if !p.Sized() {
		size = 0
	}
	if size < 0 || size > c.cfg.MaxPayload {
		return ErrTooLarge
	}
	// The RPC message sizes: arguments after the call header, largest possible results.
	var args, prefix, results int
	if call.Proc < len(cl.unsized) && cl.unsized[call.Proc].known {
		u := &cl.unsized[call.Proc]
		args, prefix, results = u.args, u.prefix, u.results
	} else {
		args, prefix, results = cl.codec.Sizes(call.Proc, size)
	}
	if prefix > maxArgsPrefix || args-prefix > c.cfg.MaxPayload+tailroom {
		return ErrTooLarge
	}
	callDDP, replyDDP := p.DDP&rpcproto.InCall != 0, p.DDP&rpcproto.InReply != 0
	msgLen := cl.callSize + args
	replyLen := replyHeaderSize + results
	cc, rc := rpcproto.ClassShort, rpcproto.ClassShort
	force := call.Class
	if force == rpcproto.ClassAuto && call.Kind != rpcproto.Auto {
		if force = p.Force(call.Kind); force == rpcproto.ClassReplyChunk && c.params.ResponderRead {
			force = rpcproto.ClassResponderRead
		}
	}
	if force != rpcproto.ClassAuto || !inlineBoth(msgLen, replyLen, c.params.Inline.SendSize, c.params.Inline.RecvSize, c.cfg.InlineRule) {
		var err error
		cc, rc, err = chooseClasses(classQuery{force: force, msgLen: msgLen, replyLen: replyLen,
			callDDP: callDDP, replyDDP: replyDDP, sendT: c.params.Inline.SendSize, recvT: c.params.Inline.RecvSize,
			responderRead: c.params.ResponderRead, rule: c.cfg.InlineRule})
		if err != nil {
			return err
		}
	}

	i := cl.free[len(cl.free)-1]
	cl.free = cl.free[:len(cl.free)-1]
	s := &cl.slots[i]
	s.gen++
	s.xid = cl.base ^ (uint32(s.gen)<<16 | uint32(i))
	s.call, s.callClass, s.replyClass = call, cc, rc
	s.seed = cl.seedBase + uint64(s.xid)
	s.err, s.data, s.remoteInv = nil, nil, false
	s.noResults = results == 0 && cl.conv == nil
	if cc == rpcproto.ClassShort && rc == rpcproto.ClassShort {
		// Most calls carry no chunks either way: marshalled and posted right here, without
		// marshal's class switches, the SGL scratch and queue's copies.
		msgOff := cl.encode(s, p, size, prefix, args)
		wire.PutNoChunks(s.send.Bytes(), s.xid, wire.Version, cl.max, wire.ProcMsg)
		c.queueSend(wrID(kindCallSend, uint32(i)), cl.signal(s), s.send.SGE(wire.MinHeaderSize), s.out.Sub(msgOff, msgLen))
		return cl.posted(s)
	}
	return cl.post(i, s, cl.marshal(s, p, size, prefix, args, msgLen, replyLen))
}

// LimitCalls bounds the calls this side has outstanding at once to n (at least 1) below its
// credits: an upper layer's own bound, such as the slots of an NFSv4.1 session.
func (c *Conn) LimitCalls(n int) { c.cl.limit = max(1, min(n, int(c.cl.max))) }

// Outstanding is the calls this side has sent whose replies have not come (nor the
// connection broken).
func (c *Conn) Outstanding() int { return c.cl.outstanding }

// marshal encodes the call of slot s, which carries chunks (Submit posts the others itself),
// in place (the RPC message contiguous in its out buffer, the transport header in its send
// buffer), exposes its chunks to the peer, and builds the Send's SGL in cl.sgl, returning its
// length: the transport header, then the RPC message (or, with a Read chunk, the part of it
// that stays inline).
func (cl *client) marshal(s *slot, p *rpcproto.Procedure, size, prefix, args, msgLen, replyLen int) (nsge int) {
	c := cl.c
	sgl := &cl.sgl
	cc, rc := s.callClass, s.replyClass

	// The RPC call, contiguous in out: header and argument prefix right before the payload
	// at headroom, zero pad after it, then any arguments that follow the payload.
	body := headroom - prefix
	msgOff := cl.encode(s, p, size, prefix, args)

	h := cl.hdr
	h.Reset()
	h.XID, h.Vers, h.Credit, h.Proc = s.xid, wire.Version, cl.max, wire.ProcMsg
	nsge = 1
	switch cc {
	case rpcproto.ClassShort:
		sgl[1] = s.out.Sub(msgOff, msgLen)
		nsge = 2
	case rpcproto.ClassReadChunk:
		// RFC 8166 section 3.4.5: the payload leaves the stream and its pad with it; the
		// chunk's position is where it would have started, and what follows the pad (an
		// NFSv4.1 WRITE's GETATTR) stays inline right after the prefix.
		sgl[1] = s.out.Sub(msgOff, headroom-msgOff)
		nsge = 2
		if end := headroom + (size+3)&^3; body+args > end {
			sgl[2] = s.out.Sub(end, body+args-end)
			nsge = 3
		}
		key := cl.expose(s, 0, s.out.Sub(headroom, size), datapath.AccessRemoteRead)
		h.ReadList = append(h.ReadList, wire.ReadSegment{Position: uint32(headroom - msgOff),
			Segment: wire.Segment{Handle: key, Length: uint32(size), Offset: s.out.Addr() + headroom}})
		c.stats.PeerRead.add(size)
	case rpcproto.ClassPosZeroRead:
		h.Proc = wire.ProcNoMsg
		key := cl.expose(s, 0, s.out.Sub(msgOff, msgLen), datapath.AccessRemoteRead)
		h.ReadList = append(h.ReadList, wire.ReadSegment{Position: 0,
			Segment: wire.Segment{Handle: key, Length: uint32(msgLen), Offset: s.out.Addr() + uint64(msgOff)}})
		c.stats.PeerRead.add(msgLen)
	}
	switch rc {
	case rpcproto.ClassWriteChunk:
		if c.cfg.Verify {
			poison(s.in.Bytes()[:size])
		}
		key := cl.expose(s, 1, s.in.Sub(0, size), datapath.AccessRemoteWrite|datapath.AccessLocalWrite)
		h.WriteList = append(h.WriteList, wire.Segment{Handle: key, Length: uint32(size), Offset: s.in.Addr()})
		h.WriteCounts = append(h.WriteCounts, 1)
	case rpcproto.ClassReplyChunk:
		if c.cfg.Verify {
			poison(s.in.Bytes()[:replyLen])
		}
		key := cl.expose(s, 1, s.in.Sub(0, replyLen), datapath.AccessRemoteWrite|datapath.AccessLocalWrite)
		h.HasReply = true
		h.Reply = append(h.Reply, wire.Segment{Handle: key, Length: uint32(replyLen), Offset: s.in.Addr()})
		s.offered = uint32(replyLen)
	}
	hl, _ := h.Encode(s.send.Bytes())
	sgl[0] = s.send.SGE(hl)
	return nsge
}

// encode writes the RPC call of slot s into its out buffer (header and argument prefix
// right before the payload at headroom) and returns where the message starts.
func (cl *client) encode(s *slot, p *rpcproto.Procedure, size, prefix, args int) (msgOff int) {
	ob := s.out.Bytes()
	body := headroom - prefix
	if args > 0 || cl.conv != nil { // no arguments, a plain codec: nothing to encode (rpcproto.Codec)
		cl.codec.EncodeArgs(ob[body:body+args], s.call.Proc, size, cl.index(s), s.seed, cl.c.cfg.Verify)
	}
	s.pending = cl.conv != nil
	msgOff = body - cl.callSize
	cl.rpc.XID, cl.rpc.Proc = s.xid, p.Number
	if cl.callHdr == nil {
		putCall(ob[msgOff:], &cl.rpc)
	} else {
		// A credential other than AUTH_NONE: the header encoded once, its XID and
		// procedure set per call.
		copy(ob[msgOff:], cl.callHdr)
		binary.BigEndian.PutUint32(ob[msgOff:], s.xid)
		binary.BigEndian.PutUint32(ob[msgOff+20:], p.Number)
	}
	return msgOff
}

// poison fills a chunk a reply must overwrite, so that data an earlier call left there (the
// same file offset's, for NFS READ) cannot pass verification for a reply never written.
// Doubling copies keep it at memmove speed.
func poison(b []byte) {
	if len(b) == 0 {
		return
	}
	b[0] = 0xa5
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// post queues call i's Send and posts it: the reply proves the Send done, so the call waits
// for its completion only when the Send is signalled, every sigEvery calls, to retire the
// send queue's entries.
func (cl *client) post(i int32, s *slot, nsge int) error {
	wr := datapath.SendWR{ID: wrID(kindCallSend, uint32(i)), Op: datapath.OpSend, Flags: cl.signal(s)}
	cl.c.queue(&wr, cl.sgl[:nsge]...)
	return cl.posted(s)
}

// signal marks slot s busy and returns its Send's flags: signalled every sigEvery calls.
func (cl *client) signal(s *slot) datapath.SendFlags {
	s.state, s.waits = slotBusy, waitReply
	if cl.unsig+1 >= cl.sigEvery {
		cl.unsig = 0
		s.waits |= waitSend
		return datapath.FlagSignaled
	}
	cl.unsig++
	return 0
}

// posted counts the call of slot s, queued, as outstanding and posts it.
func (cl *client) posted(s *slot) error {
	c := cl.c
	cl.outstanding++
	c.stats.MaxOutstanding = max(c.stats.MaxOutstanding, cl.outstanding)
	c.stats.Calls.add(s.callClass)
	if err := c.flush(); err != nil {
		c.fail("post send", err)
		return c.err
	}
	return nil
}

// expose returns the key under which the peer may access sge: the region's key, or in
// MemoryWindows mode a freshly bound window's. The bind is queued before the Send that
// names the key, and the send queue executes in order.
func (cl *client) expose(s *slot, k int, sge datapath.SGE, acc datapath.Access) uint32 {
	c := cl.c
	if c.cfg.Memory != MemoryWindows {
		return c.region.MR().RKey()
	}
	if sge.Length == 0 {
		// A zero-length type 2 window bind is invalid (InfiniBand spec; rxe rejects it and
		// breaks the connection). The window covers the byte at the chunk's address, inside
		// the slot's registered buffer; the segment still tells the peer 0 bytes.
		sge.Length = 1
	}
	mw := s.mw[k]
	key := datapath.NextRKey(mw.RKey())
	c.queue(&datapath.SendWR{ID: wrID(kindUnsignaled, 0), Op: datapath.OpBindMW, MW: mw, RKey: key, BindAccess: acc}, sge)
	s.mwKey[k], s.mwUsed[k] = key, true
	return key
}

// index is slot s's index, which its XID carries.
func (cl *client) index(s *slot) int { return int((s.xid ^ cl.base) & 0xffff) }

// lookup finds the busy slot waiting for the reply to xid.
func (cl *client) lookup(xid uint32) *slot {
	i := int((xid ^ cl.base) & 0xffff)
	if i >= len(cl.slots) {
		return nil
	}
	s := &cl.slots[i]
	if s.state != slotBusy || s.xid != xid || s.waits&waitReply == 0 {
		return nil
	}
	return s
}

func (cl *client) grant(credit uint32) {
	// RFC 8166 section 3.3.1: a grant is never 0; a requester that gets 0 keeps one credit
	// so that it cannot deadlock, as Linux does.
	credit = min(max(credit, 1), cl.max)
	cl.credits = credit
	st := &cl.c.stats
	st.Credit = credit
	st.MaxCredit = max(st.MaxCredit, credit)
}

func (cl *client) onSendDone(i uint32) {
	s := &cl.slots[i]
	if s.state != slotBusy {
		return
	}
	s.waits &^= waitSend
	cl.maybeFinish(s, i)
}

// onReply handles a reply that arrived inline (RDMA_MSG, msg is the RPC reply), in the
// Reply chunk (RDMA_NOMSG) or as RDMA_ERROR. c.hdr holds its decoded transport header.
func (cl *client) onReply(buf *mempool.Buf, wc *datapath.Completion, msg []byte) {
	c := cl.c
	h := c.hdr
	s := cl.lookup(h.XID)
	if s == nil {
		c.stats.StrayReplies++
		c.recvPool.Put(buf)
		return
	}
	i := uint32((h.XID ^ cl.base) & 0xffff)
	s.waits &^= waitReply
	cl.outstanding--
	cl.grant(h.Credit)
	cl.noteInvalidated(s, wc)
	switch h.Proc {
	case wire.ProcError:
		c.stats.ErrorsReceived++
		s.err = ErrChunkRejected
		if h.Err == wire.ErrCodeVers {
			s.err = ErrVersionRejected
		}
		c.recvPool.Put(buf)
	case wire.ProcMsg:
		s.recv = buf
		var chunk []byte
		used := false
		// As Linux's rpcrdma_decode_msg: an RDMA_MSG reply never carries a Read list, nor
		// a Reply chunk that was written to.
		if len(h.ReadList) > 0 {
			s.err = errReplyReadList
			break
		}
		if h.HasReply {
			var n uint64
			for _, seg := range h.Reply {
				n += uint64(seg.Length)
			}
			if n > 0 {
				s.err = errReplyMsgReplyChunk
				break
			}
		}
		if len(h.WriteCounts) > 0 {
			if s.replyClass != rpcproto.ClassWriteChunk {
				s.err = errReplyWriteList
				break
			}
			var n uint64
			for _, seg := range h.WriteChunk(0) {
				n += uint64(seg.Length)
			}
			if n > uint64(s.call.Size) {
				s.err = errReplyWriteLen
				break
			}
			for _, seg := range h.WriteChunk(0) {
				if seg.Length > 0 {
					c.stats.PeerWrite.add(int(seg.Length))
				}
			}
			// A Write chunk returned empty for a non-empty result was too small: the
			// responder sent the result inline instead (draft-cel-nfsv4-rpcrdma-reliable-reply
			// section 4.1.1). For an empty result both encodings are the same bytes.
			used = n > 0 || s.call.Size == 0
			chunk = s.in.Bytes()[:n]
		}
		cl.parse(s, msg, chunk, used)
		s.replyClass = rpcproto.ClassShort
		if used {
			s.replyClass = rpcproto.ClassWriteChunk
		}
		c.stats.RepliesReceived.add(s.replyClass)
	default: // RDMA_NOMSG: the reply is in our Reply chunk
		c.recvPool.Put(buf)
		if !h.HasReply || s.replyClass != rpcproto.ClassReplyChunk {
			s.err = errReplyReplyChunk
			break
		}
		var n uint64
		for _, seg := range h.Reply {
			n += uint64(seg.Length)
		}
		if n > uint64(s.offered) {
			s.err = errReplyReplyLen
			break
		}
		for _, seg := range h.Reply {
			if seg.Length > 0 {
				c.stats.PeerWrite.add(int(seg.Length))
			}
		}
		cl.parse(s, s.in.Bytes()[:n], nil, false)
		c.stats.RepliesReceived.add(rpcproto.ClassReplyChunk)
	}
	cl.unanswered(s)
	cl.invalidate(s, i)
	cl.maybeFinish(s, i)
}

// unanswered tells a Conversation of the call of slot s, whose reply is in or which failed,
// if DecodeResults did not see it (rpcproto.Conversation's slot contract).
func (cl *client) unanswered(s *slot) {
	if s.pending {
		cl.tellUnanswered(s)
	}
}

func (cl *client) tellUnanswered(s *slot) {
	s.pending = false
	cl.conv.Unanswered(s.call.Proc, cl.index(s))
}

// ReplyError is ErrBadReply with what was wrong with the reply: errors.Is(err, ErrBadReply)
// holds, and Err, when set, is the cause (a *wire.HeaderError from decoding its header). It is
// built only on that failure path.
type ReplyError struct {
	What string
	Err  error
}

func (e *ReplyError) Error() string {
	s := "rpcrdma: malformed reply: " + e.What
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ReplyError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrBadReply}
	}
	return []error{ErrBadReply, e.Err}
}

// The reply failures that need no cause: preallocated, as the hot path allocates nothing.
var (
	errReplyWriteList  = &ReplyError{What: "Write list returned for a call that offered no Write chunk"}
	errReplyWriteLen   = &ReplyError{What: "Write chunk length returned exceeds the call's"}
	errReplyReplyChunk = &ReplyError{What: "RDMA_NOMSG without the Reply chunk the call offered"}
	errReplyReplyLen   = &ReplyError{What: "Reply chunk length returned exceeds the length the call offered"}
	errReplyRPC        = &ReplyError{What: "RPC reply header undecodable or its XID not the call's"}

	errReplyReadList      = &ReplyError{What: "RDMA_MSG reply with a Read list"}
	errReplyMsgReplyChunk = &ReplyError{What: "RDMA_MSG reply with a Reply chunk written to"}
	errReplyUnpullable    = &ReplyError{What: "Position Zero Read chunk cannot be pulled"}
	errReplyNotNegotiated = &ReplyError{What: "reply in a responder-provided Read chunk, which this connection did not negotiate"}
)

// noteInvalidated records the key the reply's receive invalidated (Send With Invalidate),
// before any path ends the RPC: invalidate skips that key, whose LOCAL_INV would fail on the
// dead window and break the connection.
func (cl *client) noteInvalidated(s *slot, wc *datapath.Completion) {
	if wc.Invalidated {
		s.remoteInv, s.invKey = true, wc.InvRKey
		cl.c.stats.RemoteInvalidated++
	}
}

// onBadReply handles a message whose transport header did not decode (err) or whose RPC
// message is too short to hold a msg_type: if its XID names an outstanding call of ours, it
// is taken as that call's reply and the RPC fails at once (RFC 8166 section 4.5.2), and
// nothing is sent back: an RDMA_ERROR would carry an XID of our direction to a peer whose
// own XIDs are a separate space (it could end one of its reverse calls). It reports whether
// it took the message. XIDs are whitened per connection, so a peer's reverse call that
// failed to decode and happens to carry the XID of an outstanding call of ours is the one
// case taken wrongly; the peer's call then waits for its own timeout.
func (cl *client) onBadReply(buf *mempool.Buf, wc *datapath.Completion, b []byte, err error) bool {
	c := cl.c
	h := c.hdr
	if h.FixedDecoded() < 8 {
		return false // not even an XID
	}
	s := cl.lookup(h.XID)
	if s == nil {
		return false
	}
	i := uint32((h.XID ^ cl.base) & 0xffff)
	s.waits &^= waitReply
	cl.outstanding--
	cl.noteInvalidated(s, wc) // its credit value is ignored: RFC 8167 section 4.1
	if h.Vers != wire.Version && h.Proc == wire.ProcError && len(b) >= wire.FixedSize+4 && wire.ErrCode(be32(b[wire.FixedSize:])) == wire.ErrCodeVers {
		// The peer's ERR_VERS echoes the version of a call we sent in another one (only
		// tests make this side do that); the words read sit where every version has them.
		c.stats.ErrorsReceived++
		s.err = ErrVersionRejected
	} else {
		s.err = &ReplyError{What: "transport header", Err: err}
	}
	c.recvPool.Put(buf)
	cl.unanswered(s)
	cl.invalidate(s, i)
	cl.maybeFinish(s, i)
	return true
}

// onUnpullable fails the outstanding call xid, if there is one, whose reply came by wc as
// RDMA_NOMSG with a Position Zero Read chunk this side does not pull, with why: segments not
// all at position zero, a message larger than a buffer or shorter than an RPC header, or
// responder-provided Read chunks not negotiated. RDMA_DONE still goes out (a plain Send),
// as the draft's section 4.1.3 asks of a requester that terminates an RPC whose reply it
// will not pull, so the responder releases the chunk now. The message's direction is not
// known, so its credit value is ignored (RFC 8167 section 4.1).
func (cl *client) onUnpullable(xid uint32, wc *datapath.Completion, why *ReplyError) bool {
	s := cl.lookup(xid)
	if s == nil {
		return false
	}
	i := uint32((xid ^ cl.base) & 0xffff)
	s.waits &^= waitReply
	cl.outstanding--
	cl.noteInvalidated(s, wc)
	s.err = why
	s.replyClass = rpcproto.ClassResponderRead
	cl.unanswered(s)
	cl.sendDone(s, xid, 0, false)
	cl.invalidate(s, i)
	cl.maybeFinish(s, i)
	return true
}

// onPulledReply handles a reply the serving side pulled from a responder-provided Position
// Zero Read chunk into context ctx's buffer: msg is the RPC reply. It sends RDMA_DONE.
func (cl *client) onPulledReply(ctx int32, xid uint32, msg []byte) bool {
	c := cl.c
	if !c.params.ResponderRead {
		// Not negotiated: the RPC fails, and the pull completion notification is still owed
		// (draft section 4.1.3).
		x := &c.sv.ctxs[ctx]
		wc := datapath.Completion{Invalidated: x.invalidated, InvRKey: x.invKey}
		if !cl.onUnpullable(xid, &wc, errReplyNotNegotiated) {
			c.stats.StrayReplies++
			cl.sendDone(nil, xid, 0, false)
		}
		return false
	}
	s := cl.lookup(xid)
	key, inv := cl.doneKey(c.sv.ctxs[ctx].hdr.ReadList)
	if s == nil {
		c.stats.StrayReplies++
		cl.sendDone(nil, xid, key, inv)
		return false
	}
	i := uint32((xid ^ cl.base) & 0xffff)
	s.waits &^= waitReply
	cl.outstanding--
	x := &c.sv.ctxs[ctx]
	cl.grant(x.credit)
	if x.invalidated {
		s.remoteInv, s.invKey = true, x.invKey
		c.stats.RemoteInvalidated++
	}
	s.ctx = ctx
	s.replyClass = rpcproto.ClassResponderRead
	cl.parse(s, msg, nil, false)
	cl.unanswered(s)
	c.stats.RepliesReceived.add(rpcproto.ClassResponderRead)
	cl.sendDone(s, xid, key, inv)
	cl.invalidate(s, i)
	cl.maybeFinish(s, i)
	return true
}

// doneKey returns the key an RDMA_DONE for the pulled Read chunk list invalidates by Send
// With Invalidate (the draft's section 4.1.4 SHOULD when both ends set the R bit): with
// Config.DoneInvalidate and both R bits, the responder's key when every segment carries that
// one key (the draft: present only the key the responder provided); otherwise none. Only
// forward RDMA_DONE, as only forward replies use Send With Invalidate (see invalidateKey).
func (cl *client) doneKey(list []wire.ReadSegment) (uint32, bool) {
	c := cl.c
	if !c.cfg.DoneInvalidate || !c.params.Inline.RemoteInvalidate || c.params.Role != RoleRequester || len(list) == 0 {
		return 0, false
	}
	key := list[0].Handle
	for _, r := range list[1:] {
		if r.Handle != key {
			return 0, false
		}
	}
	return key, true
}

// sendDone sends RDMA_DONE for xid: the pull completion notification of the draft's
// section 4.1.3, also owed for replies whose XID is unknown; with inv, by Send With
// Invalidate of key.
func (cl *client) sendDone(s *slot, xid, key uint32, inv bool) {
	c := cl.c
	var buf *mempool.Buf
	id := uint64(0)
	if s != nil {
		buf = s.send
		id = wrID(kindDoneSend, uint32((xid^cl.base)&0xffff))
		s.waits |= waitDone
	} else {
		buf = c.sendPool.Get()
		if buf == nil {
			return
		}
		id = wrID(kindErrSend, buf.Index())
	}
	h := cl.hdr
	h.Reset()
	h.XID, h.Vers, h.Credit, h.Proc = xid, wire.Version, cl.max, wire.ProcDone
	n, _ := h.Encode(buf.Bytes())
	wr := datapath.SendWR{ID: id, Op: datapath.OpSend, Flags: datapath.FlagSignaled}
	if inv {
		wr.Op, wr.InvRKey = datapath.OpSendInv, key
	}
	c.queue(&wr, buf.SGE(n))
	c.stats.DoneSent++
}

func (cl *client) onDoneSent(i uint32) {
	s := &cl.slots[i]
	if s.state != slotBusy {
		return
	}
	s.waits &^= waitDone
	cl.maybeFinish(s, i)
}

// parse decodes the RPC reply msg of slot s; chunk is the Write chunk data when used.
func (cl *client) parse(s *slot, msg, chunk []byte, writeChunk bool) {
	if s.err != nil {
		return
	}
	r := &cl.rep
	off, err := decodeReply(msg, r)
	if err != nil || r.XID != s.xid {
		s.err = errReplyRPC
		return
	}
	if r.Stat != oncrpc.Accepted || r.Accept != oncrpc.Success {
		s.err = ErrRPCRejected
		return
	}
	if !writeChunk {
		chunk = nil
	} else if chunk == nil {
		chunk = noData
	}
	if s.noResults && off == len(msg) && chunk == nil {
		return // nothing to check (rpcproto.Codec)
	}
	s.pending = false
	data, err := cl.codec.DecodeResults(s.call.Proc, cl.index(s), msg[off:], chunk, s.call.Size, s.seed, cl.c.cfg.Verify)
	if err != nil {
		if _, ok := err.(interface{ Kind() string }); ok {
			s.err = err // the program's own failure (a status, a verification)
		} else {
			// Malformed results: rare, so the cause may cost an allocation.
			s.err = &ReplyError{What: "results: " + err.Error()}
		}
		return
	}
	s.data = data
}

// noData stands for a Write chunk that delivered nothing: a codec tells a reply whose DDP
// item came in a chunk by a non-nil chunk.
var noData = []byte{}

// invalidate ends the exposure of the slot's windows: those the responder did not
// invalidate with Send With Invalidate get a LOCAL_INV, and the RPC finishes only when the
// last one completes, without blocking anything meanwhile. That is what Linux's reply path
// does with frwr_unmap_async (the RPC completes from the LOCAL_INV completion handler);
// frwr_unmap_sync, which waits in place, is only for RPCs that end without a reply.
func (cl *client) invalidate(s *slot, i uint32) {
	if !s.mwUsed[0] && !s.mwUsed[1] {
		// No window exposed: always so in MemoryPreregistered mode and for short RPCs.
		// The two loops below cost ~60 instructions per RPC even with nothing to do.
		return
	}
	c := cl.c
	last := -1
	for k := range s.mwUsed {
		if s.mwUsed[k] && !(s.remoteInv && s.invKey == s.mwKey[k]) {
			last = k
		}
	}
	for k := range s.mwUsed {
		if !s.mwUsed[k] {
			continue
		}
		s.mwUsed[k] = false
		if s.remoteInv && s.invKey == s.mwKey[k] {
			continue
		}
		wr := datapath.SendWR{ID: wrID(kindUnsignaled, 0), Op: datapath.OpLocalInv, InvRKey: s.mwKey[k]}
		if k == last {
			wr.ID, wr.Flags = wrID(kindInv, i), datapath.FlagSignaled
			s.waits |= waitInv
		}
		c.queue(&wr)
	}
}

func (cl *client) onInvDone(i uint32) {
	s := &cl.slots[i]
	if s.state != slotBusy {
		return
	}
	s.waits &^= waitInv
	cl.maybeFinish(s, i)
}

func (cl *client) maybeFinish(s *slot, i uint32) {
	if s.waits != 0 {
		return
	}
	s.state = slotReady
	cl.ready = append(cl.ready, int32(i))
}

func (cl *client) readyLen() int { return len(cl.ready) - cl.readyHead }

// emit moves finished RPCs into done.
func (cl *client) emit(done []Result) int {
	c := cl.c
	n := 0
	for n < len(done) && cl.readyHead < len(cl.ready) {
		i := cl.ready[cl.readyHead]
		cl.readyHead++
		s := &cl.slots[i]
		done[n] = Result{Tag: s.call.Tag, Err: s.err, CallClass: s.callClass, ReplyClass: s.replyClass, Data: s.data}
		n++
		if s.err != nil {
			c.stats.Failed++
		} else {
			c.stats.Completed++
		}
		cl.release(i)
	}
	if cl.readyHead == len(cl.ready) {
		cl.ready, cl.readyHead = cl.ready[:0], 0
	}
	return n
}

// release makes a slot free again once its Result was returned.
func (cl *client) release(i int32) {
	c := cl.c
	s := &cl.slots[i]
	if s.recv != nil {
		c.recvPool.Put(s.recv)
		s.recv = nil
	}
	if s.ctx >= 0 {
		c.sv.release(s.ctx)
		s.ctx = -1
	}
	s.data = nil
	if c.err != nil {
		// Buffers may still be named by flushed work requests; the slot is never reused.
		s.state = slotDead
		return
	}
	s.state = slotFree
	cl.free = append(cl.free, i)
}

// failAll ends every busy RPC with err.
func (cl *client) failAll(err error) {
	for i := range cl.slots {
		s := &cl.slots[i]
		if s.state != slotBusy {
			continue
		}
		if s.waits&waitReply != 0 {
			cl.outstanding--
		}
		cl.unanswered(s)
		s.err, s.waits, s.state = err, 0, slotReady
		cl.ready = append(cl.ready, int32(i))
	}
}

// classQuery is what decides how one call and its reply travel.
type classQuery struct {
	force rpcproto.Class // Call.Class: rpcproto.ClassAuto, or the class to use
	// msgLen is the RPC call message's length, replyLen the largest RPC reply's.
	msgLen, replyLen int
	// callDDP and replyDDP: the arguments, or the results, have a DDP-eligible item.
	callDDP, replyDDP bool
	// sendT and recvT are the negotiated inline thresholds for this side's Sends and
	// receives (RFC 8797 section 4.2).
	sendT, recvT int
	// responderRead: responder-provided Read chunks were negotiated.
	responderRead bool
	// rule is how much header room an unforced inline message must leave.
	rule InlineRule
}

// inlineBoth is chooseClasses' answer for an unforced call whose message and largest reply
// both fit inline with a header that carries no chunks: short both ways, decided without
// building a query, the common case of small RPCs.
func inlineBoth(msgLen, replyLen, sendT, recvT int, rule InlineRule) bool {
	return rule != InlineLinux && wire.MinHeaderSize+msgLen <= sendT && wire.MinHeaderSize+replyLen <= recvT
}

// chooseClasses decides the classes of a call and its reply, as RFC 8166 section 3.5 and
// Linux's rpcrdma_marshal_req do, and returns the layout of the reply resources the call
// header carries. The reply comes first, because its chunks are in the call's header and so
// decide that header's exact size: inline if the largest reply fits the receive threshold,
// else a Write chunk when the results have a DDP-eligible item, else a responder-provided
// Read chunk when both ends negotiated them, else a Reply chunk. Then the
// call: inline if its exact header and message fit the send threshold, else a Read chunk
// when the arguments have a DDP-eligible item, else a Position Zero Read chunk. InlineLinux
// replaces each exact header by Linux's worst case (linuxMaxCallHeader, linuxMaxReplyHeader)
// for both unforced decisions. A forced
// class that cannot carry the message is ErrTooLarge (a short call over the threshold) or
// ErrClassNotApplicable (a chunk for an item the procedure has not). It is a pure function
// of q, on the hot path: it allocates nothing.
func chooseClasses(q classQuery) (cc, rc rpcproto.Class, err error) {
	var lay wire.Layout // the reply resources in the call's header
	switch q.force {
	case rpcproto.ClassShort:
		rc = rpcproto.ClassShort
	case rpcproto.ClassWriteChunk:
		if !q.replyDDP {
			return 0, 0, ErrClassNotApplicable
		}
		rc = rpcproto.ClassWriteChunk
	case rpcproto.ClassReplyChunk:
		rc = rpcproto.ClassReplyChunk
	case rpcproto.ClassResponderRead:
		if !q.responderRead {
			return 0, 0, ErrClassNotApplicable
		}
		rc = rpcproto.ClassResponderRead
	default:
		replyHdr := wire.MinHeaderSize
		if q.rule == InlineLinux {
			replyHdr = linuxMaxReplyHeader
		}
		switch {
		case replyHdr+q.replyLen <= q.recvT:
			rc = rpcproto.ClassShort
		case q.replyDDP:
			rc = rpcproto.ClassWriteChunk
		case q.responderRead:
			// No reply resources: the reply comes in a responder-provided Read chunk (the
			// reliable-reply draft), which costs the requester no registered Reply chunk.
			rc = rpcproto.ClassResponderRead
		default:
			rc = rpcproto.ClassReplyChunk
		}
	}
	switch rc {
	case rpcproto.ClassWriteChunk:
		lay.WriteChunks, lay.WriteSegments = 1, 1
	case rpcproto.ClassReplyChunk:
		lay.Reply, lay.ReplySegments = true, 1
	}
	switch q.force {
	case rpcproto.ClassShort:
		if lay.Size()+q.msgLen > q.sendT {
			return 0, 0, ErrTooLarge
		}
		cc = rpcproto.ClassShort
	case rpcproto.ClassReadChunk:
		if !q.callDDP {
			return 0, 0, ErrClassNotApplicable
		}
		cc = rpcproto.ClassReadChunk
	case rpcproto.ClassPosZeroRead:
		cc = rpcproto.ClassPosZeroRead
	default:
		callHdr := lay.Size()
		if q.rule == InlineLinux {
			callHdr = linuxMaxCallHeader
		}
		switch {
		case callHdr+q.msgLen <= q.sendT:
			cc = rpcproto.ClassShort
		case q.callDDP:
			cc = rpcproto.ClassReadChunk
		default:
			cc = rpcproto.ClassPosZeroRead
		}
	}
	return cc, rc, nil
}
