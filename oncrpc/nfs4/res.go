package nfs4

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
)

// The failures of COMPOUND4res as a whole: truncated, too many results, a result after a
// failed one, results the caller did not decode.
var (
	errResTrunc     = oncrpc.NewXDRError("COMPOUND4res", oncrpc.ErrTruncated)
	errResCount     = oncrpc.NewXDRError("COMPOUND4res.resarray", oncrpc.ErrTooLong)
	errResAfterFail = oncrpc.NewXDRError("COMPOUND4res.resarray: result after a failed op", ErrOp)
	errResLeft      = oncrpc.NewXDRError("COMPOUND4res.resarray: results left undecoded", ErrOp)
)

// CompoundRes decodes a COMPOUND4res: Decode (or DecodeReduced) reads the status, the tag and
// the result count, then the caller calls one method per operation in the order of its call
// and stops at the first result whose Status is not OK (RFC 8881 section 2.10.6: the array
// ends with the first failure), then Done. A result naming another operation than the one
// asked for, a result after a failed one, or a missing result is ErrOp, named after the
// operation. The first failure is sticky.
type CompoundRes struct {
	Status Status // the status of the last result (or of the COMPOUND, if it has none)
	Tag    []byte
	N      int // results in the array

	d       decoder
	i       int
	reduced bool   // READ data come from chunk
	chunk   []byte // the Write chunk of a reduced reply
}

// Decode reads the header of b, a COMPOUND4res body with every item inline.
func (r *CompoundRes) Decode(b []byte) error {
	err := r.DecodeReduced(b, nil)
	r.reduced = false
	return err
}

// DecodeReduced reads the header of b, a COMPOUND4res whose READ data came in a Write chunk:
// the Read method takes the data from chunk (the bytes the responder wrote).
func (r *CompoundRes) DecodeReduced(b, chunk []byte) error {
	*r = CompoundRes{d: newDecoder(b, errResTrunc), reduced: true, chunk: chunk}
	r.Status = Status(r.d.Uint32())
	r.Tag = r.d.Opaque(MaxTag, errTagLong)
	r.N = r.d.Length(MaxOps, errResCount)
	return r.err()
}

func (r *CompoundRes) err() error {
	if r.d.Err != nil {
		return r.d.Err
	}
	return nil
}

// begin checks that the next result is op's; the op's result decoder follows.
func (r *CompoundRes) begin(op uint32) bool {
	if r.d.Err != nil {
		return false
	}
	e := opErrs(op)
	if r.i >= r.N {
		r.d.Fail(e.missing)
		return false
	}
	r.d.Trunc = e.trunc
	if got := r.d.Uint32(); r.d.Err == nil && got != op {
		r.d.Fail(e.resop)
	}
	r.i++
	return r.d.Err == nil
}

// end checks that a failed result is the last.
func (r *CompoundRes) end(s Status) error {
	if s != OK && r.i != r.N {
		r.d.Fail(errResAfterFail)
	}
	return r.err()
}

// Op decodes the result of an operation whose result is its status alone (PUTFH, PUTROOTFH,
// LOOKUP, RECLAIM_COMPLETE, DESTROY_SESSION, DESTROY_CLIENTID).
func (r *CompoundRes) Op(op uint32) (Status, error) {
	var s Status
	if r.begin(op) {
		s = Status(r.d.Uint32())
	}
	return s, r.end(s)
}

// DelegReturn decodes a DELEGRETURN result (its status alone).
func (r *CompoundRes) DelegReturn() (Status, error) { return r.Op(OpDelegReturn) }

// Done checks that every result was decoded and returns the offset after the body.
func (r *CompoundRes) Done() (int, error) {
	if r.d.Err == nil && r.i != r.N {
		r.d.Fail(errResLeft)
	}
	return r.d.Done()
}

// Sequence decodes a SEQUENCE result into s.
func (r *CompoundRes) Sequence(s *SequenceRes) error {
	if r.begin(OpSequence) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// ExchangeID decodes an EXCHANGE_ID result into s.
func (r *CompoundRes) ExchangeID(s *ExchangeIDRes) error {
	if r.begin(OpExchangeID) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// CreateSession decodes a CREATE_SESSION result into s.
func (r *CompoundRes) CreateSession(s *CreateSessionRes) error {
	if r.begin(OpCreateSession) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// GetFH decodes a GETFH result into s.
func (r *CompoundRes) GetFH(s *GetFHRes) error {
	if r.begin(OpGetFH) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// Getattr decodes a GETATTR result into s.
func (r *CompoundRes) Getattr(s *GetattrRes) error {
	if r.begin(OpGetattr) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// Open decodes an OPEN result into s.
func (r *CompoundRes) Open(s *OpenRes) error {
	if r.begin(OpOpen) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// Close decodes a CLOSE result into s.
func (r *CompoundRes) Close(s *CloseRes) error {
	if r.begin(OpClose) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// Read decodes a READ result into s: its data inline after Decode, from the chunk after
// DecodeReduced.
func (r *CompoundRes) Read(s *ReadRes) error {
	if r.begin(OpRead) {
		if r.reduced {
			s.decodeReduced(&r.d, r.chunk)
			r.chunk = nil // one Write chunk, for the first READ
		} else {
			s.decode(&r.d)
		}
	}
	return r.end(s.Status)
}

// Write decodes a WRITE result into s.
func (r *CompoundRes) Write(s *WriteRes) error {
	if r.begin(OpWrite) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// Commit decodes a COMMIT result into s.
func (r *CompoundRes) Commit(s *CommitRes) error {
	if r.begin(OpCommit) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// Readdir decodes a READDIR result into s.
func (r *CompoundRes) Readdir(s *ReaddirRes) error {
	if r.begin(OpReaddir) {
		s.decode(&r.d)
	}
	return r.end(s.Status)
}

// SequenceRes is SEQUENCE4res.
type SequenceRes struct {
	Status              Status
	SessionID           SessionID
	SequenceID          uint32
	SlotID              uint32
	HighestSlotID       uint32
	TargetHighestSlotID uint32
	StatusFlags         uint32 // SEQ4_STATUS_*: the server's news (callback path down, ...)
}

// SEQUENCE4resok status flags (RFC 8881 section 18.46.3).
const (
	SeqStatusCBPathDown              uint32 = 0x1
	SeqStatusCBGSSContextsExpiring   uint32 = 0x2
	SeqStatusCBGSSContextsExpired    uint32 = 0x4
	SeqStatusExpiredAllStateRevoked  uint32 = 0x8
	SeqStatusExpiredSomeStateRevoked uint32 = 0x10
	SeqStatusAdminStateRevoked       uint32 = 0x20
	SeqStatusRecallableStateRevoked  uint32 = 0x40
	SeqStatusLeaseMoved              uint32 = 0x80
	SeqStatusRestartReclaimNeeded    uint32 = 0x100
	SeqStatusCBPathDownSession       uint32 = 0x200
	SeqStatusBackchannelFault        uint32 = 0x400
)

func (s *SequenceRes) decode(d *decoder) {
	*s = SequenceRes{Status: Status(d.Uint32())}
	if s.Status != OK {
		return
	}
	d.sessionID(&s.SessionID)
	s.SequenceID = d.Uint32()
	s.SlotID = d.Uint32()
	s.HighestSlotID = d.Uint32()
	s.TargetHighestSlotID = d.Uint32()
	s.StatusFlags = d.Uint32()
}

// Decode decodes b, a SEQUENCE4res, into s.
func (s *SequenceRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpSequence).trunc)
	s.decode(&d)
	return d.Done()
}

// State protection of EXCHANGE_ID (state_protect_how4).
const (
	SP4None     uint32 = 0
	SP4MachCred uint32 = 1
	SP4SSV      uint32 = 2
)

// ExchangeIDRes is EXCHANGE_ID4res. The state protection details are checked and skipped.
type ExchangeIDRes struct {
	Status        Status
	ClientID      uint64
	SequenceID    uint32
	Flags         uint32
	StateProtect  uint32 // SP4_NONE, SP4_MACH_CRED or SP4_SSV
	ServerMinorID uint64
	ServerMajorID []byte
	ServerScope   []byte
	HasImpl       bool
	Impl          ImplID
}

var (
	errSP4Enum   = oncrpc.NewXDRError("EXCHANGE_ID4resok.eir_state_protect", oncrpc.ErrBadEnum)
	errImplCount = oncrpc.NewXDRError("EXCHANGE_ID4resok.eir_server_impl_id", oncrpc.ErrTooLong)
	errSSVLong   = oncrpc.NewXDRError("ssv_prot_info4.spi_handles", oncrpc.ErrTooLong)
)

func (s *ExchangeIDRes) decode(d *decoder) {
	*s = ExchangeIDRes{Status: Status(d.Uint32())}
	if s.Status != OK {
		return
	}
	s.ClientID = d.Uint64()
	s.SequenceID = d.Uint32()
	s.Flags = d.Uint32()
	s.StateProtect = d.Uint32()
	switch s.StateProtect {
	case SP4None:
	case SP4MachCred:
		d.skipBitmap() // spo_must_enforce
		d.skipBitmap() // spo_must_allow
	case SP4SSV:
		d.skipBitmap()
		d.skipBitmap()
		d.Take(16) // hash alg, encr alg, ssv len, window
		for range d.Length(MaxOps, errSSVLong) {
			d.Opaque(MaxOpaque, errSSVLong)
		}
	default:
		d.Fail(errSP4Enum)
	}
	s.ServerMinorID = d.Uint64()
	s.ServerMajorID = d.Opaque(MaxOpaque, errOpaqueLong)
	s.ServerScope = d.Opaque(MaxOpaque, errOpaqueLong)
	if d.Length(1, errImplCount) == 1 {
		s.HasImpl = true
		s.Impl.Domain = d.Opaque(MaxOpaque, errImplLong)
		s.Impl.Name = d.Opaque(MaxOpaque, errImplLong)
		s.Impl.Date = d.time()
	}
}

// Decode decodes b, an EXCHANGE_ID4res, into s.
func (s *ExchangeIDRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpExchangeID).trunc)
	s.decode(&d)
	return d.Done()
}

// CreateSessionRes is CREATE_SESSION4res: the session and the channel attributes the server
// granted.
type CreateSessionRes struct {
	Status    Status
	SessionID SessionID
	Sequence  uint32
	Flags     uint32
	Fore      ChannelAttrs
	Back      ChannelAttrs
}

func (d *decoder) channelAttrs(a *ChannelAttrs) {
	*a = ChannelAttrs{
		HeaderPadSize: d.Uint32(), MaxRequestSize: d.Uint32(), MaxResponseSize: d.Uint32(),
		MaxResponseSizeCached: d.Uint32(), MaxOperations: d.Uint32(), MaxRequests: d.Uint32(),
	}
	if d.Length(1, errRdmaIrdLong) == 1 {
		a.HasRdmaIRD, a.RdmaIRD = true, d.Uint32()
	}
}

func (s *CreateSessionRes) decode(d *decoder) {
	*s = CreateSessionRes{Status: Status(d.Uint32())}
	if s.Status != OK {
		return
	}
	d.sessionID(&s.SessionID)
	s.Sequence = d.Uint32()
	s.Flags = d.Uint32()
	d.channelAttrs(&s.Fore)
	d.channelAttrs(&s.Back)
}

// Decode decodes b, a CREATE_SESSION4res, into s.
func (s *CreateSessionRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpCreateSession).trunc)
	s.decode(&d)
	return d.Done()
}

// GetFHRes is GETFH4res.
type GetFHRes struct {
	Status Status
	FH     FH
}

func (s *GetFHRes) decode(d *decoder) {
	*s = GetFHRes{Status: Status(d.Uint32())}
	if s.Status == OK {
		s.FH = d.fh()
	}
}

// Decode decodes b, a GETFH4res, into s.
func (s *GetFHRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpGetFH).trunc)
	s.decode(&d)
	return d.Done()
}

// GetattrRes is GETATTR4res.
type GetattrRes struct {
	Status Status
	Attr   Fattr
}

func (s *GetattrRes) decode(d *decoder) {
	s.Status = Status(d.Uint32())
	s.Attr = Fattr{}
	if s.Status == OK {
		d.fattr(&s.Attr)
	}
}

// Decode decodes b, a GETATTR4res, into s.
func (s *GetattrRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpGetattr).trunc)
	s.decode(&d)
	return d.Done()
}

// ChangeInfo is change_info4.
type ChangeInfo struct {
	Atomic        bool
	Before, After uint64
}

// Delegation types (open_delegation_type4) and the OPEN result flags.
const (
	DelegNone    uint32 = 0
	DelegRead    uint32 = 1
	DelegWrite   uint32 = 2
	DelegNoneExt uint32 = 3

	// why_no_delegation4 of a NONE_EXT delegation: the two reasons followed by a bool.
	WhyContention uint32 = 1 // WND4_CONTENTION
	WhyResource   uint32 = 2 // WND4_RESOURCE

	OpenResultConfirm       uint32 = 0x2 // OPEN4_RESULT_CONFIRM (not in NFSv4.1)
	OpenResultLockType      uint32 = 0x4
	OpenResultMayNotifyLock uint32 = 0x20
)

// OpenRes is OPEN4res. Of the delegation it keeps the type, the stateid and the recall flag
// (of a NONE_EXT, the reason in WhyNoDeleg); its permissions and space limit are checked
// and skipped.
type OpenRes struct {
	Status       Status
	Stateid      Stateid
	Cinfo        ChangeInfo
	RFlags       uint32
	AttrSet      Bitmap
	DelegType    uint32
	DelegStateid Stateid
	DelegRecall  bool
	WhyNoDeleg   uint32
}

var errCinfoBool = oncrpc.NewXDRError("change_info4.atomic", oncrpc.ErrBadEnum)

// The failures of open_delegation4, then of the items of its arms.
var (
	errDelegEnum  = oncrpc.NewXDRError("open_delegation4.delegation_type", oncrpc.ErrBadEnum)
	errRecallBool = oncrpc.NewXDRError("open_delegation4.recall", oncrpc.ErrBadEnum)
)

var (
	errLimitEnum = oncrpc.NewXDRError("nfs_space_limit4.limitby", oncrpc.ErrBadEnum)
	errWhoLong   = oncrpc.NewXDRError("nfsace4.who", oncrpc.ErrTooLong)
	errPushBool  = oncrpc.NewXDRError("open_none_delegation4", oncrpc.ErrBadEnum)
)

func (s *OpenRes) decode(d *decoder) {
	*s = OpenRes{Status: Status(d.Uint32())}
	if s.Status != OK {
		return
	}
	d.stateid(&s.Stateid)
	s.Cinfo = ChangeInfo{Atomic: d.Bool(errCinfoBool), Before: d.Uint64(), After: d.Uint64()}
	s.RFlags = d.Uint32()
	d.bitmap(&s.AttrSet)
	s.DelegType = d.Uint32()
	switch s.DelegType {
	case DelegNone:
	case DelegRead, DelegWrite:
		d.stateid(&s.DelegStateid)
		s.DelegRecall = d.Bool(errRecallBool)
		if s.DelegType == DelegWrite {
			switch d.Uint32() {
			case 1: // NFS_LIMIT_SIZE: filesize
				d.Take(8)
			case 2: // NFS_LIMIT_BLOCKS: num_blocks, bytes_per_block
				d.Take(8)
			default:
				d.Fail(errLimitEnum)
			}
		}
		d.Take(12) // nfsace4 type, flag, access_mask
		d.Opaque(MaxOpaque, errWhoLong)
	case DelegNoneExt:
		s.WhyNoDeleg = d.Uint32()
		if s.WhyNoDeleg == WhyContention || s.WhyNoDeleg == WhyResource {
			d.Bool(errPushBool) // server_will_push_deleg, server_will_signal_avail
		}
	default:
		d.Fail(errDelegEnum)
	}
}

// Decode decodes b, an OPEN4res, into s.
func (s *OpenRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpOpen).trunc)
	s.decode(&d)
	return d.Done()
}

// CloseRes is CLOSE4res.
type CloseRes struct {
	Status  Status
	Stateid Stateid
}

func (s *CloseRes) decode(d *decoder) {
	*s = CloseRes{Status: Status(d.Uint32())}
	if s.Status == OK {
		d.stateid(&s.Stateid)
	}
}

// Decode decodes b, a CLOSE4res, into s.
func (s *CloseRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpClose).trunc)
	s.decode(&d)
	return d.Done()
}

// ReadRes is READ4res. Data is DDP-eligible: the Linux client has the server write it into a
// Write chunk, and the result then ends with Data's length word (DecodeReduced).
type ReadRes struct {
	Status Status
	EOF    bool
	Data   []byte
}

var (
	errReadEOF   = oncrpc.NewXDRError("READ4resok.eof", oncrpc.ErrBadEnum)
	errReadLong  = oncrpc.NewXDRError("READ4resok.data", oncrpc.ErrTooLong)
	errReadChunk = oncrpc.NewXDRError("READ4resok.data", ErrChunk)
)

// prefix decodes up to Data's length word and returns the length (0 on failure).
func (s *ReadRes) prefix(d *decoder) int {
	*s = ReadRes{Status: Status(d.Uint32())}
	if s.Status != OK {
		return 0
	}
	s.EOF = d.Bool(errReadEOF)
	return d.Length(MaxData, errReadLong)
}

func (s *ReadRes) decode(d *decoder) {
	n := s.prefix(d)
	if s.Status == OK {
		s.Data = d.Bytes(n)
	}
}

// decodeReduced takes the data from chunk; a failed READ has no data, so its chunk must be
// empty.
func (s *ReadRes) decodeReduced(d *decoder, chunk []byte) {
	n := s.prefix(d)
	if data := d.Chunk(chunk, n, errReadChunk); s.Status == OK {
		s.Data = data
	}
}

// Decode decodes b, a READ4res with its data inline, into s; s.Data is a sub-slice of b.
func (s *ReadRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpRead).trunc)
	s.decode(&d)
	return d.Done()
}

// DecodeReduced decodes b, a READ4res whose data came in a Write chunk, taking the data from
// chunk (ErrChunk if its length does not match the length word).
func (s *ReadRes) DecodeReduced(b, chunk []byte) (int, error) {
	d := newDecoder(b, opErrs(OpRead).trunc)
	s.decodeReduced(&d, chunk)
	return d.Done()
}

// WriteRes is WRITE4res.
type WriteRes struct {
	Status    Status
	Count     uint32
	Committed StableHow
	Verf      Verifier // changes when the server loses uncommitted data
}

func (s *WriteRes) decode(d *decoder) {
	*s = WriteRes{Status: Status(d.Uint32())}
	if s.Status != OK {
		return
	}
	s.Count = d.Uint32()
	s.Committed = StableHow(d.Enum(uint32(FileSync), errStableEnum))
	d.verf(&s.Verf)
}

// Decode decodes b, a WRITE4res, into s.
func (s *WriteRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpWrite).trunc)
	s.decode(&d)
	return d.Done()
}

// CommitRes is COMMIT4res.
type CommitRes struct {
	Status Status
	Verf   Verifier
}

func (s *CommitRes) decode(d *decoder) {
	*s = CommitRes{Status: Status(d.Uint32())}
	if s.Status == OK {
		d.verf(&s.Verf)
	}
}

// Decode decodes b, a COMMIT4res, into s.
func (s *CommitRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpCommit).trunc)
	s.decode(&d)
	return d.Done()
}

// ReaddirRes is READDIR4res. Decode validates every entry; Entries then walks them without
// allocating.
type ReaddirRes struct {
	Status  Status
	Verf    Verifier // cookieverf to pass to the next READDIR
	Entries Entries
	EOF     bool
}

// Entry is entry4. Name and the attributes' strings are sub-slices of the decoded buffer.
type Entry struct {
	Cookie uint64
	Name   []byte
	Attr   Fattr
}

// Entries is the entry list of a READDIR4resok, validated by Decode: iterate with a copy,
// it := res.Entries; for it.Next(&e) { ... }.
type Entries = nfsbase.List[Entry, *Entry]

// Decode decodes b, an entry4 of a list after its value-follows word and up to its
// nextentry, into e and returns its length (nfsbase.Entry).
func (e *Entry) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpReaddir).trunc)
	e.Cookie = d.Uint64()
	e.Name = d.Opaque(MaxName, errNameLong)
	d.fattr(&e.Attr)
	return d.Done()
}

// The value-follows words of the list: nextentry before an entry, then eof after the list.
var (
	errEntryBool  = oncrpc.NewXDRError("entry4.nextentry", oncrpc.ErrBadEnum)
	errDirlistEOF = oncrpc.NewXDRError("dirlist4.eof", oncrpc.ErrBadEnum)
)

func (s *ReaddirRes) decode(d *decoder) {
	*s = ReaddirRes{Status: Status(d.Uint32())}
	if s.Status != OK {
		return
	}
	d.verf(&s.Verf)
	s.Entries = nfsbase.DecodeList[Entry](&d.Decoder, errEntryBool, checkEntry)
	s.EOF = d.Bool(errDirlistEOF)
	if d.Err != nil {
		s.Entries = Entries{}
	}
}

// checkEntry decodes an entry into a scratch Entry, for nfsbase.DecodeList.
func checkEntry(b []byte) (int, error) {
	var e Entry
	return e.Decode(b)
}

// Decode decodes b, a READDIR4res, into s.
func (s *ReaddirRes) Decode(b []byte) (int, error) {
	d := newDecoder(b, opErrs(OpReaddir).trunc)
	s.decode(&d)
	return d.Done()
}

// opErr holds the preallocated errors of one operation's result.
type opErr struct{ trunc, resop, missing *oncrpc.XDRError }

var opNames = map[uint32]string{
	OpAccess: "ACCESS", OpClose: "CLOSE", OpCommit: "COMMIT", OpDelegReturn: "DELEGRETURN",
	OpGetattr: "GETATTR", OpGetFH: "GETFH", OpLookup: "LOOKUP", OpOpen: "OPEN",
	OpPutFH: "PUTFH", OpPutRootFH: "PUTROOTFH", OpRead: "READ", OpReaddir: "READDIR",
	OpWrite: "WRITE", OpExchangeID: "EXCHANGE_ID", OpCreateSession: "CREATE_SESSION",
	OpDestroySession: "DESTROY_SESSION", OpSequence: "SEQUENCE",
	OpDestroyClientID: "DESTROY_CLIENTID", OpReclaimComplete: "RECLAIM_COMPLETE",
}

// newOpErr makes the errors of the result type named n.
func newOpErr(n string) *opErr {
	return &opErr{
		trunc:   oncrpc.NewXDRError(n, oncrpc.ErrTruncated),
		resop:   oncrpc.NewXDRError(n+": resop", ErrOp),
		missing: oncrpc.NewXDRError(n+": missing from COMPOUND4res", ErrOp),
	}
}

// opErrTable has those of each operation this package decodes, OPNAME4res, and of any other
// nfs_resop4.
var opErrTable = nfsbase.NewByNumber(opNames, func(n string) *opErr { return newOpErr(n + "4res") }, newOpErr("nfs_resop4"))

func opErrs(op uint32) *opErr { return opErrTable.Of(op) }
