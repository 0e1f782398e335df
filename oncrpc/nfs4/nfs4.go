package nfs4

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
)

// The NFS program (RFC 8881 section 16.1) and its one procedure besides NULL.
const (
	Program        uint32 = 100003
	Version        uint32 = 4
	MinorVersion   uint32 = 1
	ProcNull       uint32 = 0
	ProcCompound   uint32 = 1
	CBProcNull     uint32 = 0 // CB_NULL of the client's callback program (cb_program)
	CBProcCompound uint32 = 1 // CB_COMPOUND
)

// Operation numbers, nfs_opnum4 (RFC 8881 section 16.2.2), for the operations encoded here
// and a few a result array may name.
const (
	OpAccess          uint32 = 3
	OpClose           uint32 = 4
	OpCommit          uint32 = 5
	OpDelegReturn     uint32 = 8
	OpGetattr         uint32 = 9
	OpGetFH           uint32 = 10
	OpLookup          uint32 = 15
	OpOpen            uint32 = 18
	OpPutFH           uint32 = 22
	OpPutRootFH       uint32 = 24
	OpRead            uint32 = 25
	OpReaddir         uint32 = 26
	OpWrite           uint32 = 38
	OpExchangeID      uint32 = 42
	OpCreateSession   uint32 = 43
	OpDestroySession  uint32 = 44
	OpSequence        uint32 = 53
	OpDestroyClientID uint32 = 57
	OpReclaimComplete uint32 = 58
	OpIllegal         uint32 = 10044
)

// Callback operation numbers, nfs_cb_opnum4 (RFC 8881 section 20).
const (
	CBOpGetattr  uint32 = 3
	CBOpRecall   uint32 = 4
	CBOpSequence uint32 = 11
	// CBOpLast is the highest defined callback operation (CB_NOTIFY_DEVICEID); numbers from
	// CBOpGetattr to it are answered NFS4ERR_NOTSUPP unless implemented here.
	CBOpLast    uint32 = 14
	CBOpIllegal uint32 = 10044
)

// Protocol limits: NFS4_FHSIZE, NFS4_SESSIONID_SIZE, NFS4_VERIFIER_SIZE, NFS4_OTHER_SIZE;
// NFS4_OPAQUE_LIMIT bounds owners, ids and scopes. MaxName, MaxTag, MaxOps, MaxAttrWords and
// MaxData are this package's bounds on items RFC 8881 leaves unbounded, so that a hostile
// length word cannot name a huge buffer (MaxName is Linux's NFS4_MAXNAMLEN).
const (
	MaxFH        = 128
	SessionIDLen = 16
	VerfSize     = 8
	OtherSize    = 12
	MaxOpaque    = 1024
	MaxName      = 255
	MaxTag       = 1024
	MaxOps       = 1024
	MaxAttrWords = 8
	MaxData      = 1 << 30
)

var (
	// ErrProc, ErrNoDDP and ErrChunk are oncrpc's kinds, shared by every program.
	ErrProc, ErrNoDDP, ErrChunk = oncrpc.ErrProc, oncrpc.ErrNoDDP, oncrpc.ErrChunk
	// ErrOp: a result names another operation than the one expected at its place, a result
	// follows a failed one, or the array ends before the operation asked for.
	ErrOp = errors.New("result does not match the operation")
	// ErrAttr: an attribute list holds an attribute this package does not decode, or its
	// length disagrees with the attributes its bitmap names.
	ErrAttr = errors.New("attribute not decodable")
	// ErrState: the encoder was used out of order (an operation before Start or after an
	// error, Finish twice).
	ErrState = errors.New("compound not started")
)

// FH is nfs_fh4, an opaque file handle of at most MaxFH bytes. After a decode it is a
// sub-slice of the decoded buffer.
type FH []byte

// SessionID is sessionid4.
type SessionID [SessionIDLen]byte

// Verifier is verifier4 (write verifier, cookie verifier, co_verifier).
type Verifier [VerfSize]byte

// Stateid is stateid4.
type Stateid struct {
	Seqid uint32
	Other [OtherSize]byte
}

// Time is nfstime4.
type Time struct {
	Seconds  int64
	Nseconds uint32
}

var errStableEnum = oncrpc.NewXDRError("stable_how4", oncrpc.ErrBadEnum)

// StableHow is stable_how4.
type StableHow uint32

const (
	Unstable StableHow = 0 // UNSTABLE4
	DataSync StableHow = 1 // DATA_SYNC4
	FileSync StableHow = 2 // FILE_SYNC4
)

var stableNames = [...]string{"UNSTABLE4", "DATA_SYNC4", "FILE_SYNC4"}

func (s StableHow) String() string {
	if int(s) < len(stableNames) {
		return stableNames[s]
	}
	return "stable_how4(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// Status is nfsstat4. Any value decodes: a status is data that the caller counts.
type Status uint32

// nfsstat4 values (RFC 8881 section 15.1), those a benchmark client meets, in the order of
// that section's table: by name.
const (
	OK                   Status = 0
	ErrAccess            Status = 13
	ErrBadHandle         Status = 10001
	ErrBadSession        Status = 10052
	ErrBadSlot           Status = 10053
	ErrBadXDR            Status = 10036
	ErrBadCookie         Status = 10003
	ErrBadHighSlot       Status = 10077
	ErrBadSeqid          Status = 10026
	ErrBadStateid        Status = 10025
	ErrClidInUse         Status = 10017
	ErrCompleteAlready   Status = 10054
	ErrDeadSession       Status = 10078
	ErrDelay             Status = 10008
	ErrDenied            Status = 10010
	ErrExist             Status = 17
	ErrExpired           Status = 10011
	ErrGrace             Status = 10013
	ErrInval             Status = 22
	ErrIO                Status = 5
	ErrIsDir             Status = 21
	ErrMinorVersMismatch Status = 10021
	ErrNameTooLong       Status = 63
	ErrNoEnt             Status = 2
	ErrNoFileHandle      Status = 10020
	ErrNoSpc             Status = 28
	ErrNotDir            Status = 20
	ErrNotSupp           Status = 10004
	ErrOldStateid        Status = 10024
	ErrOpIllegal         Status = 10044
	ErrOpNotInSession    Status = 10071
	ErrPerm              Status = 1
	ErrRepTooBig         Status = 10066
	ErrRepTooBigToCache  Status = 10067
	ErrReqTooBig         Status = 10065
	ErrResource          Status = 10018
	ErrRetryUncachedRep  Status = 10068
	ErrROFS              Status = 30
	ErrSequencePos       Status = 10064
	ErrSeqFalseRetry     Status = 10076
	ErrSeqMisordered     Status = 10063
	ErrServerFault       Status = 10006
	ErrShareDenied       Status = 10015
	ErrStale             Status = 70
	ErrStaleClientID     Status = 10022
	ErrTooSmall          Status = 10005
	ErrTooManyOps        Status = 10070
)

func (s Status) String() string { return nfsbase.StatusName(statusNames, "NFS4ERR", s) }

var statusNames = nfsbase.StatusNames("NFS4", map[Status]string{
	ErrAccess: "ACCESS", ErrBadSession: "BADSESSION", ErrBadSlot: "BADSLOT", ErrBadXDR: "BADXDR",
	ErrBadHighSlot: "BAD_HIGH_SLOT", ErrBadSeqid: "BAD_SEQID", ErrBadStateid: "BAD_STATEID",
	ErrClidInUse: "CLID_INUSE", ErrCompleteAlready: "COMPLETE_ALREADY",
	ErrDeadSession: "DEADSESSION", ErrDelay: "DELAY", ErrDenied: "DENIED", ErrExpired: "EXPIRED",
	ErrGrace: "GRACE", ErrMinorVersMismatch: "MINOR_VERS_MISMATCH",
	ErrNoFileHandle: "NOFILEHANDLE", ErrOldStateid: "OLD_STATEID", ErrOpIllegal: "OP_ILLEGAL",
	ErrOpNotInSession: "OP_NOT_IN_SESSION", ErrRepTooBig: "REP_TOO_BIG",
	ErrRepTooBigToCache: "REP_TOO_BIG_TO_CACHE", ErrReqTooBig: "REQ_TOO_BIG",
	ErrResource: "RESOURCE", ErrRetryUncachedRep: "RETRY_UNCACHED_REP",
	ErrSequencePos: "SEQUENCE_POS", ErrSeqFalseRetry: "SEQ_FALSE_RETRY",
	ErrSeqMisordered: "SEQ_MISORDERED", ErrShareDenied: "SHARE_DENIED",
	ErrStaleClientID: "STALE_CLIENTID", ErrTooManyOps: "TOO_MANY_OPS",
})

func pad4(n int) int { return (n + 3) &^ 3 }

func put32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }

func put64(b []byte, off int, v uint64) { binary.BigEndian.PutUint64(b[off:], v) }

func opaqueSize(n int) int { return 4 + pad4(n) }

func putStateid(b []byte, off int, s *Stateid) int {
	put32(b, off, s.Seqid)
	copy(b[off+4:], s.Other[:])
	return off + 16
}

func putBool(b []byte, off int, v bool) int {
	var w uint32
	if v {
		w = 1
	}
	put32(b, off, w)
	return off + 4
}

// decoder adds nfs4's items to oncrpc's sticky-error decoder.
type decoder struct{ oncrpc.Decoder }

func newDecoder(b []byte, trunc *oncrpc.XDRError) decoder {
	return decoder{oncrpc.Decoder{B: b, Trunc: trunc}}
}

func (d *decoder) fh() FH { return d.Opaque(MaxFH, errFHLong) }

func (d *decoder) stateid(s *Stateid) {
	s.Seqid = d.Uint32()
	if p, ok := d.Take(OtherSize); ok {
		copy(s.Other[:], p)
	} else {
		s.Other = [OtherSize]byte{}
	}
}

func (d *decoder) verf(v *Verifier) {
	*v = Verifier{}
	if p, ok := d.Take(VerfSize); ok {
		copy(v[:], p)
	}
}

func (d *decoder) sessionID(s *SessionID) {
	*s = SessionID{}
	if p, ok := d.Take(SessionIDLen); ok {
		copy(s[:], p)
	}
}

func (d *decoder) time() Time { return Time{int64(d.Uint64()), d.Uint32()} }

// skipBitmap consumes a bitmap4 without keeping it.
func (d *decoder) skipBitmap() {
	d.Take(4 * d.Length(MaxAttrWords, errBitmapLong))
}

// The variable-length items that operations' arguments and results share, too long.
var (
	errFHLong     = oncrpc.NewXDRError("nfs_fh4", oncrpc.ErrTooLong)
	errNameLong   = oncrpc.NewXDRError("component4", oncrpc.ErrTooLong)
	errTagLong    = oncrpc.NewXDRError("utf8str_cs tag", oncrpc.ErrTooLong)
	errOpaqueLong = oncrpc.NewXDRError("opaque<NFS4_OPAQUE_LIMIT>", oncrpc.ErrTooLong)
)
