package nfs3

import "github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"

// FH is nfs_fh3, an opaque file handle of at most MaxFH bytes. After a decode it is a
// sub-slice of the decoded buffer.
type FH []byte

// size is the encoded size: length word, handle, pad.
func (fh FH) size() int { return 4 + pad4(len(fh)) }

// FileType is ftype3. Like the Linux client (which maps an unknown type to NF3NON rather than
// failing the RPC), decoders accept any value.
type FileType uint32

const (
	TypeReg  FileType = 1 // NF3REG
	TypeDir  FileType = 2 // NF3DIR
	TypeBlk  FileType = 3 // NF3BLK
	TypeChr  FileType = 4 // NF3CHR
	TypeLnk  FileType = 5 // NF3LNK
	TypeSock FileType = 6 // NF3SOCK
	TypeFIFO FileType = 7 // NF3FIFO
)

var typeNames = [...]string{"ftype3(invalid)", "NF3REG", "NF3DIR", "NF3BLK", "NF3CHR", "NF3LNK", "NF3SOCK", "NF3FIFO"}

func (t FileType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return typeNames[0]
}

// Time is nfstime3.
type Time struct {
	Seconds, Nseconds uint32
}

// Fattr3 is fattr3, a file's attributes.
type Fattr3 struct {
	Type         FileType
	Mode         uint32 // mode3: permission bits, without the file type
	Nlink        uint32
	UID, GID     uint32
	Size, Used   uint64
	Rdev         [2]uint32 // specdata3: major, minor of a device file
	FSID, FileID uint64
	Atime, Mtime Time
	Ctime        Time
}

// fattr3Size is the encoded size of every fattr3.
const fattr3Size = 84

func (a *Fattr3) decode(p []byte) {
	a.Type = FileType(get32(p, 0))
	a.Mode = get32(p, 4)
	a.Nlink = get32(p, 8)
	a.UID = get32(p, 12)
	a.GID = get32(p, 16)
	a.Size = get64(p, 20)
	a.Used = get64(p, 28)
	a.Rdev = [2]uint32{get32(p, 36), get32(p, 40)}
	a.FSID = get64(p, 44)
	a.FileID = get64(p, 52)
	a.Atime = Time{get32(p, 60), get32(p, 64)}
	a.Mtime = Time{get32(p, 68), get32(p, 72)}
	a.Ctime = Time{get32(p, 76), get32(p, 80)}
}

// PostOpAttr is post_op_attr: attributes the server may omit. Attr is zero unless Follows.
type PostOpAttr struct {
	Follows bool
	Attr    Fattr3
}

// PreOpAttr is pre_op_attr, the wcc_attr subset of the attributes before an operation. The
// other fields are zero unless Follows.
type PreOpAttr struct {
	Follows bool
	Size    uint64
	Mtime   Time
	Ctime   Time
}

// WccData is wcc_data, the weak cache consistency data of a modifying operation.
type WccData struct {
	Before PreOpAttr
	After  PostOpAttr
}

// decoder adds nfs3's items to oncrpc's sticky-error decoder: a result decoder reads its
// fields in wire order and checks the error once at the end; truncation anywhere in a result
// is reported as that result's error (Trunc); invalid items name themselves.
type decoder struct{ oncrpc.Decoder }

// resDecoder decodes b, procedure proc's results: truncation is PROC3res's.
func resDecoder(b []byte, proc uint32) decoder {
	return decoder{oncrpc.Decoder{B: b, Trunc: procErrs.Of(proc).resTrunc}}
}

// verf decodes a cookieverf3 or writeverf3.
func (d *decoder) verf(v *[VerfSize]byte) {
	if p, ok := d.Take(VerfSize); ok {
		copy(v[:], p)
	}
}

// The failures of the variable-length items that several procedures share.
var (
	errFHLong   = oncrpc.NewXDRError("nfs_fh3", oncrpc.ErrTooLong)
	errNameLong = oncrpc.NewXDRError("filename3", oncrpc.ErrTooLong)
)

func (d *decoder) fh() FH { return d.Opaque(MaxFH, errFHLong) }

// The value-follows words of the optional items.
var (
	errPostOpBool   = oncrpc.NewXDRError("post_op_attr.attributes_follow", oncrpc.ErrBadEnum)
	errPreOpBool    = oncrpc.NewXDRError("pre_op_attr.attributes_follow", oncrpc.ErrBadEnum)
	errPostOpFHBool = oncrpc.NewXDRError("post_op_fh3.handle_follows", oncrpc.ErrBadEnum)
)

func (d *decoder) postOpAttr(a *PostOpAttr) {
	a.Follows = d.Bool(errPostOpBool)
	a.Attr = Fattr3{}
	if !a.Follows {
		return
	}
	if p, ok := d.Take(fattr3Size); ok {
		a.Attr.decode(p)
	}
}

func (d *decoder) wccData(w *WccData) {
	w.Before = PreOpAttr{Follows: d.Bool(errPreOpBool)}
	if w.Before.Follows {
		if p, ok := d.Take(24); ok {
			w.Before.Size = get64(p, 0)
			w.Before.Mtime = Time{get32(p, 8), get32(p, 12)}
			w.Before.Ctime = Time{get32(p, 16), get32(p, 20)}
		}
	}
	d.postOpAttr(&w.After)
}
