package nfs4

import "github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"

// Attribute numbers (RFC 8881 section 5.6 and 5.7), those Fattr decodes. Attribute n is bit
// n%32 of word n/32 of a bitmap4.
const (
	AttrSupportedAttrs = 0
	AttrType           = 1
	AttrChange         = 3
	AttrSize           = 4
	AttrFSID           = 8
	AttrFileID         = 20
	AttrMode           = 33
	AttrNumLinks       = 35
	AttrOwner          = 36
	AttrOwnerGroup     = 37
	AttrRawDev         = 41
	AttrSpaceUsed      = 45
	AttrTimeAccess     = 47
	AttrTimeMetadata   = 52
	AttrTimeModify     = 53
)

// Bitmap is a bitmap4 of up to three words (attributes 0 to 95). It encodes with as many words
// as its highest non-zero word needs; a decoded bitmap keeps its first three words.
type Bitmap [3]uint32

// NewBitmap returns the bitmap of the given attribute numbers (each below 96).
func NewBitmap(attrs ...int) Bitmap {
	var m Bitmap
	for _, a := range attrs {
		m[a/32] |= 1 << (a % 32)
	}
	return m
}

// Has reports whether attribute a is set.
func (m *Bitmap) Has(a int) bool { return a >= 0 && a < 96 && m[a/32]&(1<<(a%32)) != 0 }

func (m *Bitmap) words() int {
	n := len(m)
	for n > 0 && m[n-1] == 0 {
		n--
	}
	return n
}

func (m *Bitmap) size() int { return 4 + 4*m.words() }

func (m *Bitmap) put(b []byte, off int) int {
	n := m.words()
	put32(b, off, uint32(n))
	for i := range n {
		put32(b, off+4+4*i, m[i])
	}
	return off + 4 + 4*n
}

var errBitmapLong = oncrpc.NewXDRError("bitmap4", oncrpc.ErrTooLong)

func (d *decoder) bitmap(m *Bitmap) {
	*m = Bitmap{}
	n := d.Length(MaxAttrWords, errBitmapLong)
	for i := range n {
		w := d.Uint32()
		if i < len(m) {
			m[i] = w
		}
	}
}

// StatAttrs is the attribute set of a stat(2), the set the Linux client asks GETATTR for
// (nfs4_fattr_bitmap): type, change, size, fsid, fileid, mode, numlinks, owner, owner_group,
// rawdev, space_used, time_access, time_metadata, time_modify.
var StatAttrs = NewBitmap(AttrType, AttrChange, AttrSize, AttrFSID, AttrFileID, AttrMode,
	AttrNumLinks, AttrOwner, AttrOwnerGroup, AttrRawDev, AttrSpaceUsed, AttrTimeAccess,
	AttrTimeMetadata, AttrTimeModify)

// knownAttrs is the set of attributes Fattr decodes; an attribute list naming another cannot
// be walked, since fattr4 gives no attribute's length.
var knownAttrs = NewBitmap(AttrSupportedAttrs, AttrType, AttrChange, AttrSize, AttrFSID,
	AttrFileID, AttrMode, AttrNumLinks, AttrOwner, AttrOwnerGroup, AttrRawDev, AttrSpaceUsed,
	AttrTimeAccess, AttrTimeMetadata, AttrTimeModify)

// FileType is nfs_ftype4. Any value decodes.
type FileType uint32

const (
	TypeReg FileType = 1 // NF4REG
	TypeDir FileType = 2 // NF4DIR
	TypeLnk FileType = 5 // NF4LNK
)

// Fattr is an fattr4 restricted to the attributes StatAttrs and supported_attrs name. Mask
// says which are present; the others are zero. Owner and OwnerGroup are sub-slices of the
// decoded buffer.
type Fattr struct {
	Mask           Bitmap
	SupportedAttrs Bitmap
	Type           FileType
	Change         uint64
	Size           uint64
	FSID           [2]uint64 // major, minor
	FileID         uint64
	Mode           uint32
	NumLinks       uint32
	Owner          []byte
	OwnerGroup     []byte
	RawDev         [2]uint32 // specdata4: major, minor
	SpaceUsed      uint64
	Atime          Time
	Ctime          Time // time_metadata
	Mtime          Time // time_modify
}

// MaxAttrList bounds an attrlist4 (this package's limit, well above the attributes decoded).
const MaxAttrList = 1 << 16

var (
	errAttrListLong = oncrpc.NewXDRError("fattr4.attr_vals", oncrpc.ErrTooLong)
	errAttrTrunc    = oncrpc.NewXDRError("fattr4.attr_vals", oncrpc.ErrTruncated)
	errAttrUnknown  = oncrpc.NewXDRError("fattr4.attrmask", ErrAttr)
	errAttrLen      = oncrpc.NewXDRError("fattr4.attr_vals: length", ErrAttr)
)

// fattr decodes an fattr4 into a.
func (d *decoder) fattr(a *Fattr) {
	*a = Fattr{}
	var mask [MaxAttrWords]uint32
	n := d.Length(MaxAttrWords, errBitmapLong)
	for i := range n {
		mask[i] = d.Uint32()
	}
	list := d.Opaque(MaxAttrList, errAttrListLong)
	if d.Err != nil {
		return
	}
	for i := range n {
		if i >= len(a.Mask) && mask[i] != 0 || i < len(a.Mask) && mask[i]&^knownAttrs[i] != 0 {
			d.Fail(errAttrUnknown)
			return
		}
	}
	copy(a.Mask[:], mask[:])
	v := newDecoder(list, errAttrTrunc)
	for at := 0; at < 96; at++ {
		if !a.Mask.Has(at) {
			continue
		}
		switch at {
		case AttrSupportedAttrs:
			v.bitmap(&a.SupportedAttrs)
		case AttrType:
			a.Type = FileType(v.Uint32())
		case AttrChange:
			a.Change = v.Uint64()
		case AttrSize:
			a.Size = v.Uint64()
		case AttrFSID:
			a.FSID = [2]uint64{v.Uint64(), v.Uint64()}
		case AttrFileID:
			a.FileID = v.Uint64()
		case AttrMode:
			a.Mode = v.Uint32()
		case AttrNumLinks:
			a.NumLinks = v.Uint32()
		case AttrOwner:
			a.Owner = v.Opaque(MaxOpaque, errOpaqueLong)
		case AttrOwnerGroup:
			a.OwnerGroup = v.Opaque(MaxOpaque, errOpaqueLong)
		case AttrRawDev:
			a.RawDev = [2]uint32{v.Uint32(), v.Uint32()}
		case AttrSpaceUsed:
			a.SpaceUsed = v.Uint64()
		case AttrTimeAccess:
			a.Atime = v.time()
		case AttrTimeMetadata:
			a.Ctime = v.time()
		case AttrTimeModify:
			a.Mtime = v.time()
		}
	}
	if v.Err == nil && v.Off != len(list) {
		v.Fail(errAttrLen)
	}
	if v.Err != nil {
		d.Fail(v.Err)
		a.Owner, a.OwnerGroup = nil, nil
	}
}
