package nfs3

import "github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"

// GetattrRes is GETATTR3res. The failure arm is void.
type GetattrRes struct {
	Status Status
	Attr   Fattr3
}

// Decode decodes b into r.
func (r *GetattrRes) Decode(b []byte) (int, error) {
	d := decoder{b: b, trunc: errGetattrTrunc}
	r.Status = Status(d.u32())
	r.Attr = Fattr3{}
	if r.Status == OK {
		if p, ok := d.take(fattr3Size); ok {
			r.Attr.decode(p)
		}
	}
	return d.done()
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
	d := decoder{b: b, trunc: errLookupTrunc}
	r.Status = Status(d.u32())
	r.FH = nil
	r.ObjAttr = PostOpAttr{}
	if r.Status == OK {
		r.FH = d.fh()
		d.postOpAttr(&r.ObjAttr)
	}
	d.postOpAttr(&r.DirAttr)
	return d.done()
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
	r.Status = Status(d.u32())
	d.postOpAttr(&r.Attr)
	r.Count, r.EOF, r.Data = 0, false, nil
	if r.Status != OK {
		return 0
	}
	r.Count = d.u32()
	r.EOF = d.bool(errReadEOF)
	n := d.length(MaxData, errReadLong)
	if d.err == nil && uint32(n) != r.Count {
		d.fail(errReadCount)
	}
	return n
}

// Decode decodes b, a result with Data inline, into r; r.Data is a sub-slice of b.
func (r *ReadRes) Decode(b []byte) (int, error) {
	d := decoder{b: b, trunc: errReadTrunc}
	n := r.decodePrefix(&d)
	if r.Status == OK {
		r.Data = d.bytes(n)
	}
	return d.done()
}

// DecodeReduced decodes b, a result whose Data came in a Write chunk, and takes Data from
// chunk, the bytes the responder wrote (the chunk's returned length, with or without the XDR
// pad): ErrChunk if that length does not match count. r.Data is a sub-slice of chunk. A
// failure result has no data, so its chunk must be empty. Returns the offset after the reduced
// body.
func (r *ReadRes) DecodeReduced(b, chunk []byte) (int, error) {
	d := decoder{b: b, trunc: errReadTrunc}
	n := r.decodePrefix(&d)
	if d.err == nil {
		data, ok := oncrpc.ChunkData(chunk, uint32(n))
		if !ok {
			d.fail(errReadChunk)
		} else if r.Status == OK {
			r.Data = data
		}
	}
	return d.done()
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
	d := decoder{b: b, trunc: errWriteResTrunc}
	r.Status = Status(d.u32())
	d.wccData(&r.Wcc)
	r.Count, r.Committed, r.Verf = 0, Unstable, [VerfSize]byte{}
	if r.Status == OK {
		r.Count = d.u32()
		// The Linux client fails the RPC on an undefined stable_how, as on any bad enum.
		if s := StableHow(d.u32()); s > FileSync {
			d.fail(errStableEnum)
		} else {
			r.Committed = s
		}
		d.verf(&r.Verf)
	}
	return d.done()
}

// CommitRes is COMMIT3res. On failure only Wcc is set (COMMIT3resfail).
type CommitRes struct {
	Status Status
	Wcc    WccData
	Verf   [VerfSize]byte
}

// Decode decodes b into r.
func (r *CommitRes) Decode(b []byte) (int, error) {
	d := decoder{b: b, trunc: errCommitTrunc}
	r.Status = Status(d.u32())
	d.wccData(&r.Wcc)
	r.Verf = [VerfSize]byte{}
	if r.Status == OK {
		d.verf(&r.Verf)
	}
	return d.done()
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
type Entries struct {
	raw []byte // from the first entry's value_follows word to the list's closing FALSE
	n   int
}

// Len is the number of entries (left to iterate, for a copy being iterated).
func (l *Entries) Len() int { return l.n }

// Next decodes the next entry into e and reports whether there was one.
func (l *Entries) Next(e *Entry) bool {
	if l.n == 0 {
		return false
	}
	d := decoder{b: l.raw, trunc: errRdplusTrunc}
	if !d.bool(errRdplusFollows) {
		return false
	}
	d.entry(e)
	// Decode checked this list: an error here means the value was not made by Decode.
	if d.err != nil {
		l.n = 0
		return false
	}
	l.raw = l.raw[d.off:]
	l.n--
	return true
}

// entry decodes an entryplus3 up to, not including, its nextentry discriminant.
func (d *decoder) entry(e *Entry) {
	e.FileID = d.u64()
	e.Name = d.opaque(MaxName, errNameLong)
	e.Cookie = d.u64()
	d.postOpAttr(&e.Attr)
	e.HasFH = d.bool(errPostOpFHBool)
	e.FH = nil
	if e.HasFH {
		e.FH = d.fh()
	}
}

// Decode decodes b into r.
func (r *ReaddirplusRes) Decode(b []byte) (int, error) {
	d := decoder{b: b, trunc: errRdplusTrunc}
	r.Status = Status(d.u32())
	d.postOpAttr(&r.DirAttr)
	r.Verf, r.Entries, r.EOF = [VerfSize]byte{}, Entries{}, false
	if r.Status != OK {
		return d.done()
	}
	d.verf(&r.Verf)
	start := d.off
	var e Entry
	for d.bool(errRdplusFollows) {
		d.entry(&e)
		r.Entries.n++
	}
	if d.err == nil && r.Entries.n > 0 {
		r.Entries.raw = b[start:d.off]
	}
	r.EOF = d.bool(errRdplusEOF)
	return d.done()
}
