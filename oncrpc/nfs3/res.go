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
	d := decoder{oncrpc.Decoder{B: b, Trunc: errGetattrTrunc}}
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
	d := decoder{oncrpc.Decoder{B: b, Trunc: errLookupTrunc}}
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
	d := decoder{oncrpc.Decoder{B: b, Trunc: errReadTrunc}}
	n := r.decodePrefix(&d)
	if r.Status == OK {
		r.Data = d.Bytes(n)
	}
	return d.Done()
}

// DecodeReduced decodes b, a result whose Data came in a Write chunk, and takes Data from
// chunk, the bytes the responder wrote (the chunk's returned length, with or without the XDR
// pad): ErrChunk if that length does not match count. r.Data is a sub-slice of chunk. A
// failure result has no data, so its chunk must be empty. Returns the offset after the reduced
// body.
func (r *ReadRes) DecodeReduced(b, chunk []byte) (int, error) {
	d := decoder{oncrpc.Decoder{B: b, Trunc: errReadTrunc}}
	n := r.decodePrefix(&d)
	if d.Err == nil {
		data, ok := oncrpc.ChunkData(chunk, uint32(n))
		if !ok {
			d.Fail(errReadChunk)
		} else if r.Status == OK {
			r.Data = data
		}
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
	d := decoder{oncrpc.Decoder{B: b, Trunc: errWriteResTrunc}}
	r.Status = Status(d.Uint32())
	d.wccData(&r.Wcc)
	r.Count, r.Committed, r.Verf = 0, Unstable, [VerfSize]byte{}
	if r.Status == OK {
		r.Count = d.Uint32()
		// The Linux client fails the RPC on an undefined stable_how, as on any bad enum.
		if s := StableHow(d.Uint32()); s > FileSync {
			d.Fail(errStableEnum)
		} else {
			r.Committed = s
		}
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
	d := decoder{oncrpc.Decoder{B: b, Trunc: errCommitTrunc}}
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

// DecodeNext decodes into e the entry at the start of raw, of a list Decode checked, and
// returns what follows it (nfsbase.Entry).
func (e *Entry) DecodeNext(raw []byte) ([]byte, bool) {
	d := decoder{oncrpc.Decoder{B: raw, Trunc: errRdplusTrunc}}
	if !d.Bool(errRdplusFollows) {
		return nil, false
	}
	d.entry(e)
	return raw[d.Off:], d.Err == nil
}

// entry decodes an entryplus3 up to, not including, its nextentry discriminant.
func (d *decoder) entry(e *Entry) {
	e.FileID = d.Uint64()
	e.Name = d.Opaque(MaxName, errNameLong)
	e.Cookie = d.Uint64()
	d.postOpAttr(&e.Attr)
	e.HasFH = d.Bool(errPostOpFHBool)
	e.FH = nil
	if e.HasFH {
		e.FH = d.fh()
	}
}

// Decode decodes b into r.
func (r *ReaddirplusRes) Decode(b []byte) (int, error) {
	d := decoder{oncrpc.Decoder{B: b, Trunc: errRdplusTrunc}}
	r.Status = Status(d.Uint32())
	d.postOpAttr(&r.DirAttr)
	r.Verf, r.Entries, r.EOF = [VerfSize]byte{}, Entries{}, false
	if r.Status != OK {
		return d.Done()
	}
	d.verf(&r.Verf)
	start, n := d.Off, 0
	var e Entry
	for d.Bool(errRdplusFollows) {
		d.entry(&e)
		n++
	}
	if d.Err == nil {
		r.Entries = nfsbase.NewList[Entry, *Entry](b[start:d.Off], n)
	}
	r.EOF = d.Bool(errRdplusEOF)
	return d.Done()
}
