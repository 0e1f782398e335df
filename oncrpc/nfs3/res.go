package nfs3

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
)

// GetattrRes is GETATTR3res. The failure arm is void.
type GetattrRes struct {
	Status Status
	Attr   Fattr3
}

// Decode decodes b into r.
func (r *GetattrRes) Decode(b []byte) (int, error) {
	d := resDecoder(b, ProcGetattr)
	r.Status = Status(d.Uint32())
	r.Attr = Fattr3{}
	if r.Status == OK {
		if p, ok := d.Take(fattr3Size); ok {
			r.Attr.decode(p)
		}
	}
	return d.Done()
}

// LookupRes is LOOKUP3res. On failure only DirAttr is set (LOOKUP3resfail).
type LookupRes struct {
	Status  Status
	FH      FH
	ObjAttr PostOpAttr
	DirAttr PostOpAttr
}

// Decode decodes b into r.
func (r *LookupRes) Decode(b []byte) (int, error) {
	d := resDecoder(b, ProcLookup)
	r.Status = Status(d.Uint32())
	r.FH = nil
	r.ObjAttr = PostOpAttr{}
	if r.Status == OK {
		r.FH = d.fh()
		d.postOpAttr(&r.ObjAttr)
	}
	d.postOpAttr(&r.DirAttr)
	return d.Done()
}

// ReadRes is READ3res. Data is DDP-eligible: the Linux client has the server write it into a
// Write chunk, and the reply body then ends with Data's length word (DecodeReduced). On
// failure only Attr is set (READ3resfail).
type ReadRes struct {
	Status Status
	Attr   PostOpAttr
	Count  uint32 // equal to len(Data)
	EOF    bool
	Data   []byte
}

var (
	errReadEOF   = oncrpc.NewXDRError("READ3resok.eof", oncrpc.ErrBadEnum)
	errReadCount = oncrpc.NewXDRError("READ3resok.count", ErrCount)
	errReadLong  = oncrpc.NewXDRError("READ3resok.data", oncrpc.ErrTooLong)
)

// decodePrefix decodes everything up to and including Data's length word and returns the
// data length (0 on failure).
func (r *ReadRes) decodePrefix(d *decoder) int {
	r.Status = Status(d.Uint32())
	d.postOpAttr(&r.Attr)
	r.Count, r.EOF, r.Data = 0, false, nil
	if r.Status != OK {
		return 0
	}
	r.Count = d.Uint32()
	r.EOF = d.Bool(errReadEOF)
	n := d.Length(MaxData, errReadLong)
	if d.Err == nil && uint32(n) != r.Count {
		d.Fail(errReadCount)
	}
	return n
}

// Decode decodes b, a result with Data inline, into r; r.Data is a sub-slice of b.
func (r *ReadRes) Decode(b []byte) (int, error) {
	d := resDecoder(b, ProcRead)
	n := r.decodePrefix(&d)
	if r.Status == OK {
		r.Data = d.Bytes(n)
	}
	return d.Done()
}

var errReadChunk = oncrpc.NewXDRError("READ3resok.data", ErrChunk)

// DecodeReduced decodes b, a result whose Data came in a Write chunk, and takes Data from
// chunk, the bytes the responder wrote (the chunk's returned length, with or without the XDR
// pad): ErrChunk if that length does not match count. r.Data is a sub-slice of chunk. A
// failure result has no data, so its chunk must be empty. Returns the offset after the reduced
// body.
func (r *ReadRes) DecodeReduced(b, chunk []byte) (int, error) {
	d := resDecoder(b, ProcRead)
	n := r.decodePrefix(&d)
	if data := d.Chunk(chunk, n, errReadChunk); r.Status == OK {
		r.Data = data
	}
	return d.Done()
}

// WriteRes is WRITE3res. On failure only Wcc is set (WRITE3resfail).
type WriteRes struct {
	Status    Status
	Wcc       WccData
	Count     uint32
	Committed StableHow
	Verf      [VerfSize]byte // writeverf3: changes when the server loses uncommitted data
}

// Decode decodes b into r.
func (r *WriteRes) Decode(b []byte) (int, error) {
	d := resDecoder(b, ProcWrite)
	r.Status = Status(d.Uint32())
	d.wccData(&r.Wcc)
	r.Count, r.Committed, r.Verf = 0, Unstable, [VerfSize]byte{}
	if r.Status == OK {
		r.Count = d.Uint32()
		// The Linux client fails the RPC on an undefined stable_how, as on any bad enum.
		r.Committed = StableHow(d.Enum(uint32(FileSync), errStableEnum))
		d.verf(&r.Verf)
	}
	return d.Done()
}

// CommitRes is COMMIT3res. On failure only Wcc is set (COMMIT3resfail).
type CommitRes struct {
	Status Status
	Wcc    WccData
	Verf   [VerfSize]byte
}

// Decode decodes b into r.
func (r *CommitRes) Decode(b []byte) (int, error) {
	d := resDecoder(b, ProcCommit)
	r.Status = Status(d.Uint32())
	d.wccData(&r.Wcc)
	r.Verf = [VerfSize]byte{}
	if r.Status == OK {
		d.verf(&r.Verf)
	}
	return d.Done()
}

// ReaddirplusRes is READDIRPLUS3res. On failure only DirAttr is set (READDIRPLUS3resfail).
// Decode validates every entry; Entries then walks them without allocating.
type ReaddirplusRes struct {
	Status  Status
	DirAttr PostOpAttr
	Verf    [VerfSize]byte // cookieverf3 to pass to the next READDIRPLUS
	Entries Entries
	EOF     bool // the list ends the directory
}

// Entry is entryplus3. Name and FH are sub-slices of the decoded buffer.
type Entry struct {
	FileID uint64
	Name   []byte
	Cookie uint64
	Attr   PostOpAttr
	HasFH  bool // post_op_fh3.handle_follows
	FH     FH   // nil unless HasFH
}

// Entries is the entry list of a READDIRPLUS3resok, already validated by Decode: iterate
// with a copy, it := res.Entries; for it.Next(&e) { ... }.
type Entries = nfsbase.List[Entry, *Entry]

// Decode decodes b, an entryplus3 of a list after its value-follows word and up to its
// nextentry, into e and returns its length (nfsbase.Entry).
func (e *Entry) Decode(b []byte) (int, error) {
	d := resDecoder(b, ProcReaddirplus)
	e.FileID = d.Uint64()
	e.Name = d.Opaque(MaxName, errNameLong)
	e.Cookie = d.Uint64()
	d.postOpAttr(&e.Attr)
	e.HasFH = d.Bool(errPostOpFHBool)
	e.FH = nil
	if e.HasFH {
		e.FH = d.fh()
	}
	return d.Done()
}

// The value-follows words of the list: nextentry before an entry, then eof after the list.
var (
	errRdplusFollows = oncrpc.NewXDRError("entryplus3.nextentry", oncrpc.ErrBadEnum)
	errRdplusEOF     = oncrpc.NewXDRError("dirlistplus3.eof", oncrpc.ErrBadEnum)
)

// Decode decodes b into r.
func (r *ReaddirplusRes) Decode(b []byte) (int, error) {
	d := resDecoder(b, ProcReaddirplus)
	r.Status = Status(d.Uint32())
	d.postOpAttr(&r.DirAttr)
	r.Verf, r.Entries, r.EOF = [VerfSize]byte{}, Entries{}, false
	if r.Status != OK {
		return d.Done()
	}
	d.verf(&r.Verf)
	r.Entries = nfsbase.DecodeList[Entry](&d.Decoder, errRdplusFollows, checkEntry)
	r.EOF = d.Bool(errRdplusEOF)
	return d.Done()
}

// checkEntry decodes an entry into a scratch Entry, for nfsbase.DecodeList.
func checkEntry(b []byte) (int, error) {
	var e Entry
	return e.Decode(b)
}
