package nfs3

import (
	"encoding/binary"
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
)

// The NFS program (RFC 1813 section 3).
const (
	Program uint32 = 100003
	Version uint32 = 3
)

// NFS version 3 procedure numbers (RFC 1813 section 3.3).
const (
	ProcNull        uint32 = 0
	ProcGetattr     uint32 = 1
	ProcSetattr     uint32 = 2
	ProcLookup      uint32 = 3
	ProcAccess      uint32 = 4
	ProcReadlink    uint32 = 5
	ProcRead        uint32 = 6
	ProcWrite       uint32 = 7
	ProcCreate      uint32 = 8
	ProcMkdir       uint32 = 9
	ProcSymlink     uint32 = 10
	ProcMknod       uint32 = 11
	ProcRemove      uint32 = 12
	ProcRmdir       uint32 = 13
	ProcRename      uint32 = 14
	ProcLink        uint32 = 15
	ProcReaddir     uint32 = 16
	ProcReaddirplus uint32 = 17
	ProcFsstat      uint32 = 18
	ProcFsinfo      uint32 = 19
	ProcPathconf    uint32 = 20
	ProcCommit      uint32 = 21
)

// procNames are the procedures this package encodes and decodes, as RFC 1813 names their
// argument and result types (GETATTR3args, GETATTR3res).
var procNames = map[uint32]string{ProcGetattr: "GETATTR", ProcLookup: "LOOKUP", ProcRead: "READ",
	ProcWrite: "WRITE", ProcReaddirplus: "READDIRPLUS", ProcCommit: "COMMIT"}

// procErr holds the failures of a procedure's arguments and results as a whole: the
// arguments too large for the encode buffer or truncated, the results truncated.
type procErr struct{ argsShort, argsTrunc, resTrunc *oncrpc.XDRError }

// procErrs are those of procNames' procedures, the only ones looked up.
var procErrs = nfsbase.NewByNumber(procNames, func(n string) procErr {
	return procErr{
		argsShort: oncrpc.NewXDRError(n+"3args", oncrpc.ErrShortBuffer),
		argsTrunc: oncrpc.NewXDRError(n+"3args", oncrpc.ErrTruncated),
		resTrunc:  oncrpc.NewXDRError(n+"3res", oncrpc.ErrTruncated),
	}
}, procErr{})

// Protocol limits. RFC 1813 bounds only the file handle (NFS3_FHSIZE) and the MOUNT path
// (MNTPATHLEN); the name limit is the one the Linux client enforces on the names it sends and
// receives (NFS3_MAXNAMLEN), and MaxData is this project's bound on every other opaque, as in
// package benchprog: a hostile length word cannot name a multi-gigabyte buffer, and offsets
// stay far from overflow on any platform.
const (
	MaxFH   = 64
	MaxName = 255
	MaxPath = 1024
	MaxData = 1 << 30
)

// VerfSize is the size of cookieverf3 and writeverf3 (NFS3_COOKIEVERFSIZE, NFS3_WRITEVERFSIZE).
const VerfSize = 8

var (
	// ErrProc, ErrNoDDP and ErrChunk are oncrpc's kinds, shared by every program.
	ErrProc, ErrNoDDP, ErrChunk = oncrpc.ErrProc, oncrpc.ErrNoDDP, oncrpc.ErrChunk
	// ErrCount: a count3 disagrees with the length of the opaque it counts (WRITE3args, and
	// READ3resok, which the Linux client rejects with EIO for the same reason).
	ErrCount = errors.New("count does not match the data length")
)

// Status is nfsstat3. Any value decodes: a status is data that the caller counts, and a
// server may return values RFC 1813 does not list (String prints the number).
type Status uint32

// nfsstat3 values (RFC 1813 section 2.6).
const (
	OK             Status = 0
	ErrPerm        Status = 1
	ErrNoEnt       Status = 2
	ErrIO          Status = 5
	ErrNXIO        Status = 6
	ErrAcces       Status = 13
	ErrExist       Status = 17
	ErrXDev        Status = 18
	ErrNoDev       Status = 19
	ErrNotDir      Status = 20
	ErrIsDir       Status = 21
	ErrInval       Status = 22
	ErrFBig        Status = 27
	ErrNoSpc       Status = 28
	ErrROFS        Status = 30
	ErrMLink       Status = 31
	ErrNameTooLong Status = 63
	ErrNotEmpty    Status = 66
	ErrDQuot       Status = 69
	ErrStale       Status = 70
	ErrRemote      Status = 71
	ErrBadHandle   Status = 10001
	ErrNotSync     Status = 10002
	ErrBadCookie   Status = 10003
	ErrNotSupp     Status = 10004
	ErrTooSmall    Status = 10005
	ErrServerFault Status = 10006
	ErrBadType     Status = 10007
	ErrJukebox     Status = 10008
)

var statusNames = nfsbase.StatusNames("NFS3", map[Status]string{
	ErrNXIO: "NXIO", ErrAcces: "ACCES", ErrXDev: "XDEV", ErrNoDev: "NODEV", ErrFBig: "FBIG",
	ErrMLink: "MLINK", ErrNotEmpty: "NOTEMPTY", ErrDQuot: "DQUOT", ErrRemote: "REMOTE",
	ErrNotSync: "NOT_SYNC", ErrBadType: "BADTYPE", ErrJukebox: "JUKEBOX",
})

func (s Status) String() string { return nfsbase.StatusName(statusNames, "NFS3ERR", s) }

// StableHow is stable_how: how far a WRITE must be committed before the reply.
type StableHow uint32

const (
	Unstable StableHow = 0 // UNSTABLE: the server may reply before the data reach stable storage
	DataSync StableHow = 1 // DATA_SYNC: data (and the metadata to retrieve them) are stable
	FileSync StableHow = 2 // FILE_SYNC: data and all metadata are stable
)

var errStableEnum = oncrpc.NewXDRError("stable_how", oncrpc.ErrBadEnum)

func (s StableHow) String() string {
	switch s {
	case Unstable:
		return "UNSTABLE"
	case DataSync:
		return "DATA_SYNC"
	case FileSync:
		return "FILE_SYNC"
	}
	return "stable_how(invalid)"
}

func pad4(n int) int { return (n + 3) &^ 3 }

func get32(b []byte, off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }

func get64(b []byte, off int) uint64 { return binary.BigEndian.Uint64(b[off:]) }

func put32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }

func put64(b []byte, off int, v uint64) { binary.BigEndian.PutUint64(b[off:], v) }
