package nfs4

import "github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"

// The failures of COMPOUND4args as a whole: a buffer too small, an operation before Start or
// after Finish, too many operations.
var (
	errShort   = oncrpc.NewXDRError("COMPOUND4args", oncrpc.ErrShortBuffer)
	errState   = oncrpc.NewXDRError("COMPOUND4args", ErrState)
	errOpsLong = oncrpc.NewXDRError("COMPOUND4args.argarray", oncrpc.ErrTooLong)
)

// Compound encodes a COMPOUND4args in place into a caller's buffer: Start, one method per
// operation in order, Finish. The first failure (a buffer too small, an item too long) is
// sticky: later methods do nothing and Finish returns it. A Compound is reused by calling
// Start again; nothing allocates.
type Compound struct {
	b        []byte
	off      int
	countOff int // offset of the argarray's count word, patched by Finish
	nops     uint32
	err      *oncrpc.XDRError
	started  bool
	ddpOff   int // WRITE data's position in the body (after its length word), -1: none
	ddpLen   int
}

// Start begins a COMPOUND4args with minorversion 1 in b. tag is echoed by the server (it
// may be empty; at most MaxTag bytes).
func (c *Compound) Start(b []byte, tag []byte) {
	*c = Compound{b: b, ddpOff: -1}
	if len(tag) > MaxTag {
		c.err = errTagLong
		return
	}
	if len(b) < opaqueSize(len(tag))+8 {
		c.err = errShort
		return
	}
	off := oncrpc.PutVarOpaque(b, 0, tag)
	put32(b, off, MinorVersion)
	c.countOff = off + 4
	c.off = off + 8
	c.started = true
}

// op reserves an operation of need bytes after its opnum and returns the offset of its
// arguments.
func (c *Compound) op(op uint32, need int) (int, bool) {
	switch {
	case c.err != nil:
		return 0, false
	case !c.started:
		c.err = errState
	case c.nops == MaxOps:
		c.err = errOpsLong
	case len(c.b)-c.off < 4+need:
		c.err = errShort
	}
	if c.err != nil {
		return 0, false
	}
	put32(c.b, c.off, op)
	off := c.off + 4
	c.off = off + need
	c.nops++
	return off, true
}

// Finish writes the operation count and returns the body's length, or the first error.
func (c *Compound) Finish() (int, error) {
	if c.err == nil && !c.started {
		c.err = errState
	}
	if c.err != nil {
		return 0, c.err
	}
	put32(c.b, c.countOff, c.nops)
	c.started = false
	return c.off, nil
}

// Ops is the number of operations encoded so far.
func (c *Compound) Ops() int { return int(c.nops) }

// DDP returns the position of the data of a WRITE encoded with WriteReduced (the offset just
// after its length word, which is where RFC 8166 places the Read chunk) and its length; ok
// is false if the COMPOUND has none.
func (c *Compound) DDP() (off, n int, ok bool) {
	if c.ddpOff < 0 {
		return 0, 0, false
	}
	return c.ddpOff, c.ddpLen, true
}

// SequenceArgs are SEQUENCE4args.
type SequenceArgs struct {
	SessionID     SessionID
	SequenceID    uint32
	SlotID        uint32
	HighestSlotID uint32
	CacheThis     bool
}

// Sequence encodes SEQUENCE, the first operation of every COMPOUND in a session.
func (c *Compound) Sequence(a *SequenceArgs) {
	off, ok := c.op(OpSequence, 32)
	if !ok {
		return
	}
	copy(c.b[off:], a.SessionID[:])
	put32(c.b, off+16, a.SequenceID)
	put32(c.b, off+20, a.SlotID)
	put32(c.b, off+24, a.HighestSlotID)
	putBool(c.b, off+28, a.CacheThis)
}

// PutRootFH encodes PUTROOTFH.
func (c *Compound) PutRootFH() { c.op(OpPutRootFH, 0) }

// GetFH encodes GETFH.
func (c *Compound) GetFH() { c.op(OpGetFH, 0) }

// PutFH encodes PUTFH.
func (c *Compound) PutFH(fh FH) {
	if len(fh) > MaxFH && c.err == nil {
		c.err = errFHLong
	}
	if off, ok := c.op(OpPutFH, opaqueSize(len(fh))); ok {
		oncrpc.PutVarOpaque(c.b, off, fh)
	}
}

// Lookup encodes LOOKUP of name in the current directory.
func (c *Compound) Lookup(name []byte) {
	if len(name) > MaxName && c.err == nil {
		c.err = errNameLong
	}
	if off, ok := c.op(OpLookup, opaqueSize(len(name))); ok {
		oncrpc.PutVarOpaque(c.b, off, name)
	}
}

// Getattr encodes GETATTR of the attributes in m.
func (c *Compound) Getattr(m Bitmap) {
	if off, ok := c.op(OpGetattr, m.size()); ok {
		m.put(c.b, off)
	}
}

// Share access and deny bits, and the delegation wants of OPEN (RFC 8881 section 18.16).
const (
	ShareAccessRead        uint32 = 1
	ShareAccessWrite       uint32 = 2
	ShareAccessBoth        uint32 = 3
	ShareAccessWantReadDel uint32 = 0x100 // OPEN4_SHARE_ACCESS_WANT_READ_DELEG
	ShareAccessWantNoDeleg uint32 = 0x400 // OPEN4_SHARE_ACCESS_WANT_NO_DELEG
	ShareDenyNone          uint32 = 0
	ShareDenyRead          uint32 = 1
	ShareDenyWrite         uint32 = 2
	ShareDenyBoth          uint32 = 3
)

// OpenArgs are OPEN4args with claim CLAIM_NULL (a name in the current directory): openhow
// OPEN4_NOCREATE, or with Create OPEN4_CREATE UNCHECKED4 setting the mode of a new file.
type OpenArgs struct {
	Seqid       uint32 // 0 in NFSv4.1 (the session orders requests)
	ShareAccess uint32
	ShareDeny   uint32
	ClientID    uint64 // open_owner4: the clientid of EXCHANGE_ID and an owner name
	Owner       []byte
	Create      bool
	Mode        uint32 // with Create: the new file's mode
	Name        []byte
}

var errOwnerLong = oncrpc.NewXDRError("open_owner4.owner", oncrpc.ErrTooLong)

// Open encodes OPEN.
func (c *Compound) Open(a *OpenArgs) {
	switch {
	case c.err != nil:
	case len(a.Owner) > MaxOpaque:
		c.err = errOwnerLong
	case len(a.Name) > MaxName:
		c.err = errNameLong
	}
	need := 20 + opaqueSize(len(a.Owner)) + 4 + 4 + opaqueSize(len(a.Name))
	if a.Create {
		need += 4 + 12 + 8 // createmode, bitmap4 {0, mode}, attrlist4 <mode>
	}
	off, ok := c.op(OpOpen, need)
	if !ok {
		return
	}
	b := c.b
	put32(b, off, a.Seqid)
	put32(b, off+4, a.ShareAccess)
	put32(b, off+8, a.ShareDeny)
	put64(b, off+12, a.ClientID)
	off = oncrpc.PutVarOpaque(b, off+20, a.Owner)
	if a.Create {
		put32(b, off, 1)    // OPEN4_CREATE
		put32(b, off+4, 0)  // UNCHECKED4
		put32(b, off+8, 2)  // bitmap4: two words
		put32(b, off+12, 0) //
		put32(b, off+16, 1<<(AttrMode-32))
		put32(b, off+20, 4) // attrlist4: mode4
		put32(b, off+24, a.Mode)
		off += 28
	} else {
		put32(b, off, 0) // OPEN4_NOCREATE
		off += 4
	}
	put32(b, off, 0) // CLAIM_NULL
	oncrpc.PutVarOpaque(b, off+4, a.Name)
}

// Close encodes CLOSE of the open s (seqid 0, as NFSv4.1 asks).
func (c *Compound) Close(s *Stateid) {
	if off, ok := c.op(OpClose, 20); ok {
		put32(c.b, off, 0)
		putStateid(c.b, off+4, s)
	}
}

// ReadArgs are READ4args.
type ReadArgs struct {
	Stateid Stateid
	Offset  uint64
	Count   uint32
}

// DelegReturn encodes DELEGRETURN of the delegation s on the current file.
func (c *Compound) DelegReturn(s *Stateid) {
	if off, ok := c.op(OpDelegReturn, 16); ok {
		putStateid(c.b, off, s)
	}
}

// Read encodes READ.
func (c *Compound) Read(a *ReadArgs) {
	if off, ok := c.op(OpRead, 28); ok {
		off = putStateid(c.b, off, &a.Stateid)
		put64(c.b, off, a.Offset)
		put32(c.b, off+8, a.Count)
	}
}

// WriteArgs are WRITE4args. Data is DDP-eligible: the Linux client sends it in a Read chunk
// when the call does not fit inline (WriteReduced).
type WriteArgs struct {
	Stateid Stateid
	Offset  uint64
	Stable  StableHow
	Data    []byte
}

var errWriteLong = oncrpc.NewXDRError("WRITE4args.data", oncrpc.ErrTooLong)

func (c *Compound) writeHead(a *WriteArgs, need int) (int, bool) {
	switch {
	case c.err != nil:
	case a.Stable > FileSync:
		c.err = errStableEnum
	case len(a.Data) > MaxData:
		c.err = errWriteLong
	}
	off, ok := c.op(OpWrite, need)
	if !ok {
		return 0, false
	}
	off = putStateid(c.b, off, &a.Stateid)
	put64(c.b, off, a.Offset)
	put32(c.b, off+8, uint32(a.Stable))
	return off + 12, true
}

// Write encodes WRITE with Data inline. To build the payload in place, fill the buffer after
// the length word first and set Data to that sub-slice: it is not copied.
func (c *Compound) Write(a *WriteArgs) {
	if off, ok := c.writeHead(a, 28+opaqueSize(len(a.Data))); ok {
		oncrpc.PutVarOpaque(c.b, off, a.Data)
	}
}

// WriteReduced encodes WRITE without Data, which the caller sends as a Read chunk at the
// position DDP returns (RFC 8166 section 3.4.1: the stream continues after the length word).
func (c *Compound) WriteReduced(a *WriteArgs) {
	if off, ok := c.writeHead(a, 32); ok {
		put32(c.b, off, uint32(len(a.Data)))
		c.ddpOff, c.ddpLen = off+4, len(a.Data)
	}
}

// Commit encodes COMMIT of count bytes from offset (count 0: to the end of file).
func (c *Compound) Commit(offset uint64, count uint32) {
	if off, ok := c.op(OpCommit, 12); ok {
		put64(c.b, off, offset)
		put32(c.b, off+8, count)
	}
}

// ReaddirArgs are READDIR4args. A first call has Cookie 0 and a zero Verf.
type ReaddirArgs struct {
	Cookie   uint64
	Verf     Verifier
	DirCount uint32
	MaxCount uint32
	Attrs    Bitmap
}

// Readdir encodes READDIR.
func (c *Compound) Readdir(a *ReaddirArgs) {
	if off, ok := c.op(OpReaddir, 24+a.Attrs.size()); ok {
		put64(c.b, off, a.Cookie)
		copy(c.b[off+8:], a.Verf[:])
		put32(c.b, off+16, a.DirCount)
		put32(c.b, off+20, a.MaxCount)
		a.Attrs.put(c.b, off+24)
	}
}

// EXCHANGE_ID flags (RFC 8881 section 18.35).
const (
	ExchgIDFlagSuppMovedRefer  uint32 = 0x1
	ExchgIDFlagSuppMovedMigr   uint32 = 0x2
	ExchgIDFlagBindPrincState  uint32 = 0x100
	ExchgIDFlagUseNonPNFS      uint32 = 0x10000
	ExchgIDFlagUsePNFSMDS      uint32 = 0x20000
	ExchgIDFlagUsePNFSDS       uint32 = 0x40000
	ExchgIDFlagUpdConfirmedRec uint32 = 0x40000000
	ExchgIDFlagConfirmedR      uint32 = 0x80000000
)

// ImplID is nfs_impl_id4.
type ImplID struct {
	Domain []byte // utf8str_cis
	Name   []byte // utf8str_cs
	Date   Time
}

// ExchangeIDArgs are EXCHANGE_ID4args with state protection SP4_NONE. The implementation id
// is sent when Impl has a domain or a name, else the optional array is empty.
type ExchangeIDArgs struct {
	Verifier Verifier // co_verifier: changes when the client reboots
	OwnerID  []byte   // co_ownerid
	Flags    uint32
	Impl     ImplID
}

var (
	errOwnerIDLong = oncrpc.NewXDRError("client_owner4.co_ownerid", oncrpc.ErrTooLong)
	errImplLong    = oncrpc.NewXDRError("nfs_impl_id4", oncrpc.ErrTooLong)
)

// ExchangeID encodes EXCHANGE_ID.
func (c *Compound) ExchangeID(a *ExchangeIDArgs) {
	impl := len(a.Impl.Domain) > 0 || len(a.Impl.Name) > 0
	switch {
	case c.err != nil:
	case len(a.OwnerID) > MaxOpaque:
		c.err = errOwnerIDLong
	case len(a.Impl.Domain) > MaxOpaque || len(a.Impl.Name) > MaxOpaque:
		c.err = errImplLong
	}
	need := 8 + opaqueSize(len(a.OwnerID)) + 12
	if impl {
		need += opaqueSize(len(a.Impl.Domain)) + opaqueSize(len(a.Impl.Name)) + 12
	}
	off, ok := c.op(OpExchangeID, need)
	if !ok {
		return
	}
	b := c.b
	copy(b[off:], a.Verifier[:])
	off = oncrpc.PutVarOpaque(b, off+8, a.OwnerID)
	put32(b, off, a.Flags)
	put32(b, off+4, 0) // SP4_NONE
	if !impl {
		put32(b, off+8, 0)
		return
	}
	put32(b, off+8, 1)
	off = oncrpc.PutVarOpaque(b, off+12, a.Impl.Domain)
	off = oncrpc.PutVarOpaque(b, off, a.Impl.Name)
	put64(b, off, uint64(a.Impl.Date.Seconds))
	put32(b, off+8, a.Impl.Date.Nseconds)
}

// CREATE_SESSION flags (RFC 8881 section 18.36).
const (
	CreateSessionFlagPersist      uint32 = 0x1
	CreateSessionFlagConnBackChan uint32 = 0x2
	CreateSessionFlagConnRDMA     uint32 = 0x4
)

// ChannelAttrs are channel_attrs4. ca_rdma_ird is an optional one-element array: present
// when HasRdmaIRD (RFC 8881 section 18.36.3 asks for it on RDMA connections).
type ChannelAttrs struct {
	HeaderPadSize         uint32
	MaxRequestSize        uint32
	MaxResponseSize       uint32
	MaxResponseSizeCached uint32
	MaxOperations         uint32
	MaxRequests           uint32
	HasRdmaIRD            bool
	RdmaIRD               uint32
}

var errRdmaIrdLong = oncrpc.NewXDRError("channel_attrs4.ca_rdma_ird", oncrpc.ErrTooLong)

func (a *ChannelAttrs) size() int {
	if a.HasRdmaIRD {
		return 32
	}
	return 28
}

func (a *ChannelAttrs) put(b []byte, off int) int {
	put32(b, off, a.HeaderPadSize)
	put32(b, off+4, a.MaxRequestSize)
	put32(b, off+8, a.MaxResponseSize)
	put32(b, off+12, a.MaxResponseSizeCached)
	put32(b, off+16, a.MaxOperations)
	put32(b, off+20, a.MaxRequests)
	if !a.HasRdmaIRD {
		put32(b, off+24, 0)
		return off + 28
	}
	put32(b, off+24, 1)
	put32(b, off+28, a.RdmaIRD)
	return off + 32
}

// CreateSessionArgs are CREATE_SESSION4args with one callback security parameter: AUTH_NONE,
// or AUTH_SYS with SysCred.
type CreateSessionArgs struct {
	ClientID  uint64
	Sequence  uint32 // the eir_sequenceid of EXCHANGE_ID
	Flags     uint32
	Fore      ChannelAttrs
	Back      ChannelAttrs
	CBProgram uint32
	SecFlavor oncrpc.Flavor
	SysCred   oncrpc.SysCred
}

// The failures of CREATE_SESSION4args' callback_sec_parms4: a flavor it cannot send, or
// AUTH_SYS parameters beyond their limits.
var (
	errSecFlavor = oncrpc.NewXDRError("callback_sec_parms4.cb_secflavor", oncrpc.ErrBadEnum)
	errSecParms  = oncrpc.NewXDRError("callback_sec_parms4", oncrpc.ErrTooLong)
)

// CreateSession encodes CREATE_SESSION.
func (c *Compound) CreateSession(a *CreateSessionArgs) {
	sec := 0
	switch {
	case c.err != nil:
	case a.SecFlavor == oncrpc.FlavorNone:
	case a.SecFlavor == oncrpc.FlavorSys:
		if a.SysCred.NGids < 0 || a.SysCred.NGids > oncrpc.MaxGids || len(a.SysCred.MachineName) > oncrpc.MaxMachineName {
			c.err = errSecParms
		}
		sec = a.SysCred.Size()
	default:
		c.err = errSecFlavor
	}
	off, ok := c.op(OpCreateSession, 16+a.Fore.size()+a.Back.size()+12+sec)
	if !ok {
		return
	}
	b := c.b
	put64(b, off, a.ClientID)
	put32(b, off+8, a.Sequence)
	put32(b, off+12, a.Flags)
	off = a.Fore.put(b, off+16)
	off = a.Back.put(b, off)
	put32(b, off, a.CBProgram)
	put32(b, off+4, 1) // csa_sec_parms<>: one
	put32(b, off+8, uint32(a.SecFlavor))
	if sec > 0 {
		// Checked above: the length limits hold and b has room.
		_, _ = a.SysCred.Encode(b[off+12:])
	}
}

// ReclaimComplete encodes RECLAIM_COMPLETE (oneFS false: for all file systems).
func (c *Compound) ReclaimComplete(oneFS bool) {
	if off, ok := c.op(OpReclaimComplete, 4); ok {
		putBool(c.b, off, oneFS)
	}
}

// DestroySession encodes DESTROY_SESSION.
func (c *Compound) DestroySession(id *SessionID) {
	if off, ok := c.op(OpDestroySession, 16); ok {
		copy(c.b[off:], id[:])
	}
}

// DestroyClientID encodes DESTROY_CLIENTID.
func (c *Compound) DestroyClientID(id uint64) {
	if off, ok := c.op(OpDestroyClientID, 8); ok {
		put64(c.b, off, id)
	}
}
