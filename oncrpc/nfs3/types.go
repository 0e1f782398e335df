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

// decoder walks an XDR stream with a sticky error: after the first failure every read returns
// zero values and the error stays the first one, so a result decoder reads its fields in wire
// order and checks the error once at the end. Truncation anywhere in a result is reported as
// that result's error (trunc); invalid items name themselves.
type decoder struct {
	b     []byte
	off   int
	err   *oncrpc.XDRError
	trunc *oncrpc.XDRError
}

func (d *decoder) fail(e *oncrpc.XDRError) {
	if d.err == nil {
		d.err = e
	}
}

// take consumes n bytes.
func (d *decoder) take(n int) ([]byte, bool) {
	if d.err != nil {
		return nil, false
	}
	if n > len(d.b)-d.off {
		d.fail(d.trunc)
		return nil, false
	}
	p := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return p, true
}

func (d *decoder) u32() uint32 {
	p, ok := d.take(4)
	if !ok {
		return 0
	}
	return get32(p, 0)
}

func (d *decoder) u64() uint64 {
	p, ok := d.take(8)
	if !ok {
		return 0
	}
	return get64(p, 0)
}

// bool decodes an XDR bool; only 0 and 1 are legal (RFC 4506 section 4.4), anything else is
// bad.
func (d *decoder) bool(bad *oncrpc.XDRError) bool {
	p, ok := d.take(4)
	if !ok {
		return false
	}
	switch get32(p, 0) {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail(bad)
	return false
}

// verf decodes a cookieverf3 or writeverf3.
func (d *decoder) verf(v *[VerfSize]byte) {
	if p, ok := d.take(VerfSize); ok {
		copy(v[:], p)
	}
}

// length decodes the length word of an opaque, which may be at most max.
func (d *decoder) length(max uint32, long *oncrpc.XDRError) int {
	n := d.u32()
	if n > max {
		d.fail(long)
		return 0
	}
	return int(n)
}

// bytes consumes the body of an opaque of n bytes and its pad and returns the body.
func (d *decoder) bytes(n int) []byte {
	p, ok := d.take(pad4(n))
	if !ok {
		return nil
	}
	return p[:n:n]
}

// opaque decodes a variable-length opaque of at most max bytes.
func (d *decoder) opaque(max uint32, long *oncrpc.XDRError) []byte {
	return d.bytes(d.length(max, long))
}

func (d *decoder) fh() FH { return d.opaque(MaxFH, errFHLong) }

func (d *decoder) postOpAttr(a *PostOpAttr) {
	a.Follows = d.bool(errPostOpBool)
	a.Attr = Fattr3{}
	if !a.Follows {
		return
	}
	if p, ok := d.take(fattr3Size); ok {
		a.Attr.decode(p)
	}
}

func (d *decoder) wccData(w *WccData) {
	w.Before = PreOpAttr{Follows: d.bool(errPreOpBool)}
	if w.Before.Follows {
		if p, ok := d.take(24); ok {
			w.Before.Size = get64(p, 0)
			w.Before.Mtime = Time{get32(p, 8), get32(p, 12)}
			w.Before.Ctime = Time{get32(p, 16), get32(p, 20)}
		}
	}
	d.postOpAttr(&w.After)
}

// done returns the offset consumed, or the first error.
func (d *decoder) done() (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	return d.off, nil
}
