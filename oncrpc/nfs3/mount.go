package nfs3

import (
	"strconv"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// The MOUNT program, version 3 (RFC 1813 appendix I).
const (
	MountProgram uint32 = 100005
	MountVersion uint32 = 3
)

// MOUNT version 3 procedure numbers.
const (
	MountProcNull    uint32 = 0
	MountProcMnt     uint32 = 1
	MountProcDump    uint32 = 2
	MountProcUmnt    uint32 = 3
	MountProcUmntAll uint32 = 4
	MountProcExport  uint32 = 5
)

// MountStat is mountstat3. As with Status, any value decodes. A MountStat is also an error,
// so that Mount can return the server's refusal as one the caller tests with errors.As.
type MountStat uint32

// mountstat3 values.
const (
	MountOK             MountStat = 0
	MountErrPerm        MountStat = 1
	MountErrNoEnt       MountStat = 2
	MountErrIO          MountStat = 5
	MountErrAcces       MountStat = 13
	MountErrNotDir      MountStat = 20
	MountErrInval       MountStat = 22
	MountErrNameTooLong MountStat = 63
	MountErrNotSupp     MountStat = 10004
	MountErrServerFault MountStat = 10006
)

func (s MountStat) String() string {
	switch s {
	case MountOK:
		return "MNT3_OK"
	case MountErrPerm:
		return "MNT3ERR_PERM"
	case MountErrNoEnt:
		return "MNT3ERR_NOENT"
	case MountErrIO:
		return "MNT3ERR_IO"
	case MountErrAcces:
		return "MNT3ERR_ACCES"
	case MountErrNotDir:
		return "MNT3ERR_NOTDIR"
	case MountErrInval:
		return "MNT3ERR_INVAL"
	case MountErrNameTooLong:
		return "MNT3ERR_NAMETOOLONG"
	case MountErrNotSupp:
		return "MNT3ERR_NOTSUPP"
	case MountErrServerFault:
		return "MNT3ERR_SERVERFAULT"
	}
	return "MNT3ERR(" + strconv.FormatUint(uint64(s), 10) + ")"
}

func (s MountStat) Error() string { return s.String() }

// MountArgs are the argument of MNT and UMNT: dirpath, the exported path.
type MountArgs struct {
	Path string // at most MaxPath bytes
}

// Size is the encoded size.
func (a *MountArgs) Size() int { return 4 + pad4(len(a.Path)) }

var (
	errPathLong   = oncrpc.NewXDRError("dirpath", oncrpc.ErrTooLong)
	errMountShort = oncrpc.NewXDRError("dirpath", oncrpc.ErrShortBuffer)
)

// Encode writes a into b and returns its length. Errors: ErrTooLong, ErrShortBuffer.
func (a *MountArgs) Encode(b []byte) (int, error) {
	if len(a.Path) > MaxPath {
		return 0, errPathLong
	}
	if len(b) < a.Size() {
		return 0, errMountShort
	}
	put32(b, 0, uint32(len(a.Path)))
	n := copy(b[4:], a.Path)
	end := 4 + pad4(n)
	clear(b[4+n : end])
	return end, nil
}

// MountRes is mountres3, MNT's result. On failure (void arm) FH is nil and AuthFlavors 0.
type MountRes struct {
	Status      MountStat
	FH          FH  // the export's root file handle (fhandle3)
	AuthFlavors int // number of flavors in auth_flavors; see AuthFlavor
	flavors     []byte
}

// AuthFlavor is the i-th flavor the server accepts for the export (0 <= i < AuthFlavors),
// in the server's order of preference.
func (r *MountRes) AuthFlavor(i int) oncrpc.Flavor { return oncrpc.Flavor(get32(r.flavors, 4*i)) }

var (
	errMountTrunc     = oncrpc.NewXDRError("mountres3", oncrpc.ErrTruncated)
	errMountFHLong    = oncrpc.NewXDRError("fhandle3", oncrpc.ErrTooLong)
	errMountFlavsLong = oncrpc.NewXDRError("mountres3_ok.auth_flavors", oncrpc.ErrTooLong)
)

// Decode decodes b into r, with the conventions of the NFS result decoders. The flavor list
// has no bound in RFC 1813 beyond the bytes that hold it.
func (r *MountRes) Decode(b []byte) (int, error) {
	d := decoder{oncrpc.Decoder{B: b, Trunc: errMountTrunc}}
	r.Status = MountStat(d.Uint32())
	r.FH, r.AuthFlavors, r.flavors = nil, 0, nil
	if r.Status == MountOK {
		r.FH = d.Opaque(MaxFH, errMountFHLong)
		n := d.Length(MaxData/4, errMountFlavsLong)
		if p, ok := d.Take(4 * n); ok {
			r.AuthFlavors, r.flavors = n, p
		}
	}
	return d.Done()
}
