package nfs4

import "github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"

// CBCompound decodes a CB_COMPOUND4args, the server's call on the backchannel: Decode reads
// the header, Next each operation in turn. An operation this package does not decode ends the
// walk after Next returned it (its arguments have no known length): the reply answers it
// NFS4ERR_NOTSUPP (a defined callback) or NFS4ERR_OP_ILLEGAL as CB_ILLEGAL (RFC 8881 section
// 20.13) and stops there, as a failed operation ends every COMPOUND.
type CBCompound struct {
	Tag           []byte
	MinorVersion  uint32 // the reply is NFS4ERR_MINOR_VERS_MISMATCH unless 1
	CallbackIdent uint32 // unused in NFSv4.1
	N             int    // operations in the array

	d       decoder
	i       int
	stopped bool
}

// CBOp is one callback operation: Op as received, and the arguments of the decoded ones.
type CBOp struct {
	Op       uint32
	Sequence CBSequenceArgs // CB_SEQUENCE
	Recall   CBRecallArgs   // CB_RECALL
}

// Decoded reports whether o's arguments were decoded (CB_SEQUENCE, CB_RECALL).
func (o *CBOp) Decoded() bool { return o.Op == CBOpSequence || o.Op == CBOpRecall }

// Illegal reports whether o.Op is no callback operation at all: the answer is CB_ILLEGAL
// with NFS4ERR_OP_ILLEGAL rather than NFS4ERR_NOTSUPP.
func (o *CBOp) Illegal() bool { return o.Op < CBOpGetattr || o.Op > CBOpLast }

// CBSequenceArgs are CB_SEQUENCE4args. The referring call lists are checked and counted.
type CBSequenceArgs struct {
	SessionID      SessionID
	SequenceID     uint32
	SlotID         uint32
	HighestSlotID  uint32
	CacheThis      bool
	ReferringLists int
}

// CBRecallArgs are CB_RECALL4args: return the delegation Stateid on FH.
type CBRecallArgs struct {
	Stateid  Stateid
	Truncate bool
	FH       FH
}

// The failures of CB_COMPOUND4args as a whole.
var (
	errCBTrunc = oncrpc.NewXDRError("CB_COMPOUND4args", oncrpc.ErrTruncated)
	errCBCount = oncrpc.NewXDRError("CB_COMPOUND4args.argarray", oncrpc.ErrTooLong)
)

// Decode reads the header of b, a CB_COMPOUND4args body.
func (c *CBCompound) Decode(b []byte) error {
	*c = CBCompound{d: newDecoder(b, errCBTrunc)}
	c.Tag = c.d.Opaque(MaxTag, errTagLong)
	c.MinorVersion = c.d.Uint32()
	c.CallbackIdent = c.d.Uint32()
	c.N = c.d.Length(MaxOps, errCBCount)
	if c.d.Err != nil {
		return c.d.Err
	}
	return nil
}

// The failures of CB_RECALL4args.
var (
	errCBRecTrunc  = oncrpc.NewXDRError("CB_RECALL4args", oncrpc.ErrTruncated)
	errCBTruncBool = oncrpc.NewXDRError("CB_RECALL4args.truncate", oncrpc.ErrBadEnum)
)

// Next decodes the next operation into o and reports whether there was one. After false,
// Err says whether the walk ended on malformed XDR.
func (c *CBCompound) Next(o *CBOp) bool {
	if c.d.Err != nil || c.stopped || c.i == c.N {
		return false
	}
	c.d.Trunc = errCBTrunc
	o.Op = c.d.Uint32()
	switch o.Op {
	case CBOpSequence:
		c.d.Trunc = errCBSeqTrunc
		c.d.cbSequence(&o.Sequence)
	case CBOpRecall:
		c.d.Trunc = errCBRecTrunc
		c.d.stateid(&o.Recall.Stateid)
		o.Recall.Truncate = c.d.Bool(errCBTruncBool)
		o.Recall.FH = c.d.fh()
	default:
		c.stopped = true
	}
	c.i++
	return c.d.Err == nil
}

// The failures of CB_SEQUENCE4args.
var (
	errCBSeqTrunc  = oncrpc.NewXDRError("CB_SEQUENCE4args", oncrpc.ErrTruncated)
	errCBCacheBool = oncrpc.NewXDRError("CB_SEQUENCE4args.csa_cachethis", oncrpc.ErrBadEnum)
	errCBRefLong   = oncrpc.NewXDRError("CB_SEQUENCE4args.csa_referring_call_lists", oncrpc.ErrTooLong)
)

func (d *decoder) cbSequence(a *CBSequenceArgs) {
	d.sessionID(&a.SessionID)
	a.SequenceID = d.Uint32()
	a.SlotID = d.Uint32()
	a.HighestSlotID = d.Uint32()
	a.CacheThis = d.Bool(errCBCacheBool)
	a.ReferringLists = d.Length(MaxOps, errCBRefLong)
	for range a.ReferringLists {
		d.Take(SessionIDLen)
		d.Take(8 * d.Length(MaxOps, errCBRefLong)) // referring_call4: sequenceid, slotid
	}
}

// Err is the decode error that ended the walk, if any.
func (c *CBCompound) Err() error {
	if c.d.Err != nil {
		return c.d.Err
	}
	return nil
}

// CBSequenceRes is CB_SEQUENCE4resok.
type CBSequenceRes struct {
	SessionID           SessionID
	SequenceID          uint32
	SlotID              uint32
	HighestSlotID       uint32
	TargetHighestSlotID uint32
}

// CBReply encodes a CB_COMPOUND4res in place: Start, one method per result, Finish. The
// COMPOUND's status is that of its last result. The first failure is sticky.
type CBReply struct {
	b        []byte
	off      int
	countOff int
	n        uint32
	last     Status
	err      *oncrpc.XDRError
	started  bool
}

// The failures of CB_COMPOUND4res: a buffer too small, a result before Start or after
// Finish, too many results.
var (
	errCBResShort   = oncrpc.NewXDRError("CB_COMPOUND4res", oncrpc.ErrShortBuffer)
	errCBResState   = oncrpc.NewXDRError("CB_COMPOUND4res", ErrState)
	errCBResOpsLong = oncrpc.NewXDRError("CB_COMPOUND4res.resarray", oncrpc.ErrTooLong)
)

// Start begins a CB_COMPOUND4res in b echoing tag.
func (r *CBReply) Start(b []byte, tag []byte) {
	*r = CBReply{b: b}
	if len(tag) > MaxTag {
		r.err = errTagLong
		return
	}
	if len(b) < 4+opaqueSize(len(tag))+4 {
		r.err = errCBResShort
		return
	}
	off := oncrpc.PutVarOpaque(b, 4, tag)
	r.countOff, r.off, r.started = off, off+4, true
}

func (r *CBReply) op(op uint32, s Status, need int) (int, bool) {
	switch {
	case r.err != nil:
		return 0, false
	case !r.started:
		r.err = errCBResState
	case r.n == MaxOps:
		r.err = errCBResOpsLong
	case len(r.b)-r.off < 8+need:
		r.err = errCBResShort
	}
	if r.err != nil {
		return 0, false
	}
	put32(r.b, r.off, op)
	put32(r.b, r.off+4, uint32(s))
	off := r.off + 8
	r.off = off + need
	r.n++
	r.last = s
	return off, true
}

// Sequence encodes a CB_SEQUENCE result: res when s is OK, else the status alone.
func (r *CBReply) Sequence(s Status, res *CBSequenceRes) {
	need := 0
	if s == OK {
		need = 32
	}
	off, ok := r.op(CBOpSequence, s, need)
	if !ok || s != OK {
		return
	}
	copy(r.b[off:], res.SessionID[:])
	put32(r.b, off+16, res.SequenceID)
	put32(r.b, off+20, res.SlotID)
	put32(r.b, off+24, res.HighestSlotID)
	put32(r.b, off+28, res.TargetHighestSlotID)
}

// Recall encodes a CB_RECALL result.
func (r *CBReply) Recall(s Status) { r.op(CBOpRecall, s, 0) }

// Result encodes the result of operation op that is its status alone.
func (r *CBReply) Result(op uint32, s Status) { r.op(op, s, 0) }

// Unsupported encodes the result of an operation Next returned but did not decode:
// NFS4ERR_NOTSUPP under its number, or CB_ILLEGAL with NFS4ERR_OP_ILLEGAL.
func (r *CBReply) Unsupported(o *CBOp) {
	if o.Illegal() {
		r.op(CBOpIllegal, ErrOpIllegal, 0)
		return
	}
	r.op(o.Op, ErrNotSupp, 0)
}

// Finish writes the status and the result count and returns the body's length. With no
// result, status is the COMPOUND's status (NFS4ERR_MINOR_VERS_MISMATCH refuses a whole
// COMPOUND); otherwise it is ignored for the last result's.
func (r *CBReply) Finish(status Status) (int, error) {
	if r.err == nil && !r.started {
		r.err = errCBResState
	}
	if r.err != nil {
		return 0, r.err
	}
	if r.n > 0 {
		status = r.last
	}
	put32(r.b, 0, uint32(status))
	put32(r.b, r.countOff, r.n)
	r.started = false
	return r.off, nil
}
