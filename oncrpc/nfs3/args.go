package nfs3

import "github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"

// checkFH returns the encoded size of fh, or ErrTooLong.
func checkFH(fh FH) (int, error) {
	if len(fh) > MaxFH {
		return 0, errFHLong
	}
	return fh.size(), nil
}

// GetattrArgs are GETATTR3args.
type GetattrArgs struct {
	FH FH
}

// Size is the encoded size.
func (a *GetattrArgs) Size() int { return a.FH.size() }

// Encode writes a into b and returns its length. Errors: ErrTooLong, ErrShortBuffer.
func (a *GetattrArgs) Encode(b []byte) (int, error) {
	n, err := checkFH(a.FH)
	if err != nil {
		return 0, err
	}
	if len(b) < n {
		return 0, procErrs.Of(ProcGetattr).argsShort
	}
	return oncrpc.PutVarOpaque(b, 0, a.FH), nil
}

// LookupArgs are LOOKUP3args (diropargs3): a name in a directory.
type LookupArgs struct {
	Dir  FH
	Name []byte // at most MaxName bytes
}

// Size is the encoded size.
func (a *LookupArgs) Size() int { return a.Dir.size() + 4 + pad4(len(a.Name)) }

// Encode writes a into b and returns its length. Errors: ErrTooLong, ErrShortBuffer.
func (a *LookupArgs) Encode(b []byte) (int, error) {
	if _, err := checkFH(a.Dir); err != nil {
		return 0, err
	}
	if len(a.Name) > MaxName {
		return 0, errNameLong
	}
	if len(b) < a.Size() {
		return 0, procErrs.Of(ProcLookup).argsShort
	}
	return oncrpc.PutVarOpaque(b, oncrpc.PutVarOpaque(b, 0, a.Dir), a.Name), nil
}

// ReadArgs are READ3args.
type ReadArgs struct {
	FH     FH
	Offset uint64
	Count  uint32
}

// Size is the encoded size.
func (a *ReadArgs) Size() int { return a.FH.size() + 12 }

// Encode writes a into b and returns its length. Errors: ErrTooLong, ErrShortBuffer.
func (a *ReadArgs) Encode(b []byte) (int, error) {
	n, err := checkFH(a.FH)
	if err != nil {
		return 0, err
	}
	if len(b) < n+12 {
		return 0, procErrs.Of(ProcRead).argsShort
	}
	off := oncrpc.PutVarOpaque(b, 0, a.FH)
	put64(b, off, a.Offset)
	put32(b, off+8, a.Count)
	return off + 12, nil
}

// WriteArgs are WRITE3args. Data is DDP-eligible: the Linux client sends it in a Read chunk
// when the call does not fit inline.
type WriteArgs struct {
	FH     FH
	Offset uint64
	Count  uint32 // must equal len(Data); RFC 1813 sends both, the Linux server rejects a mismatch
	Stable StableHow
	Data   []byte
}

// ReducedSize is the encoded size with Data moved to a chunk, which is also Data's position
// in the body: everything up to and including Data's length word.
func (a *WriteArgs) ReducedSize() int { return a.FH.size() + 20 }

// Size is the encoded size with Data inline.
func (a *WriteArgs) Size() int { return a.ReducedSize() + pad4(len(a.Data)) }

var (
	errWriteLong  = oncrpc.NewXDRError("WRITE3args.data", oncrpc.ErrTooLong)
	errWriteCount = oncrpc.NewXDRError("WRITE3args.count", ErrCount)
)

func (a *WriteArgs) check(b []byte, need int) error {
	if len(a.FH) > MaxFH {
		return errFHLong
	}
	if len(a.Data) > MaxData {
		return errWriteLong
	}
	if a.Count != uint32(len(a.Data)) {
		return errWriteCount
	}
	if a.Stable > FileSync {
		return errStableEnum
	}
	if len(b) < need {
		return procErrs.Of(ProcWrite).argsShort
	}
	return nil
}

// putHead writes everything before Data's length word and returns the length word's offset.
func (a *WriteArgs) putHead(b []byte) int {
	off := oncrpc.PutVarOpaque(b, 0, a.FH)
	put64(b, off, a.Offset)
	put32(b, off+8, a.Count)
	put32(b, off+12, uint32(a.Stable))
	return off + 16
}

// Encode writes a into b with Data inline and returns its length. To build the payload in
// place, fill b[ReducedSize():][:n] first and set Data to that sub-slice: it is not copied.
// Errors: ErrTooLong, ErrCount, ErrBadEnum (Stable), ErrShortBuffer.
func (a *WriteArgs) Encode(b []byte) (int, error) {
	if err := a.check(b, a.Size()); err != nil {
		return 0, err
	}
	return oncrpc.PutVarOpaque(b, a.putHead(b), a.Data), nil
}

// EncodeReduced writes a into b without Data, which the caller sends as a Read chunk at
// position ReducedSize() in the body, and returns the reduced length (ReducedSize()).
func (a *WriteArgs) EncodeReduced(b []byte) (int, error) {
	if err := a.check(b, a.ReducedSize()); err != nil {
		return 0, err
	}
	off := a.putHead(b)
	put32(b, off, uint32(len(a.Data)))
	return off + 4, nil
}

// CommitArgs are COMMIT3args: commit Count bytes from Offset (Count 0: to the end of file).
type CommitArgs struct {
	FH     FH
	Offset uint64
	Count  uint32
}

// Size is the encoded size.
func (a *CommitArgs) Size() int { return a.FH.size() + 12 }

// Encode writes a into b and returns its length. Errors: ErrTooLong, ErrShortBuffer.
func (a *CommitArgs) Encode(b []byte) (int, error) {
	n, err := checkFH(a.FH)
	if err != nil {
		return 0, err
	}
	if len(b) < n+12 {
		return 0, procErrs.Of(ProcCommit).argsShort
	}
	off := oncrpc.PutVarOpaque(b, 0, a.FH)
	put64(b, off, a.Offset)
	put32(b, off+8, a.Count)
	return off + 12, nil
}

// ReaddirplusArgs are READDIRPLUS3args. A first call has Cookie 0 and a zero Verf; later ones
// pass the last entry's cookie and the verifier of the previous reply.
type ReaddirplusArgs struct {
	Dir      FH
	Cookie   uint64
	Verf     [VerfSize]byte
	DirCount uint32 // bytes of directory information (fileid, name, cookie) wanted
	MaxCount uint32 // bytes of the whole READDIRPLUS3resok wanted
}

// Size is the encoded size.
func (a *ReaddirplusArgs) Size() int { return a.Dir.size() + 8 + VerfSize + 8 }

// Encode writes a into b and returns its length. Errors: ErrTooLong, ErrShortBuffer.
func (a *ReaddirplusArgs) Encode(b []byte) (int, error) {
	if _, err := checkFH(a.Dir); err != nil {
		return 0, err
	}
	if len(b) < a.Size() {
		return 0, procErrs.Of(ProcReaddirplus).argsShort
	}
	off := oncrpc.PutVarOpaque(b, 0, a.Dir)
	put64(b, off, a.Cookie)
	copy(b[off+8:], a.Verf[:])
	put32(b, off+16, a.DirCount)
	put32(b, off+20, a.MaxCount)
	return off + 24, nil
}

// What DDPData says of a procedure with no codec here, or with no DDP-eligible item.
var (
	errProc  = oncrpc.NewXDRError("procedure", ErrProc)
	errNoDDP = oncrpc.NewXDRError("procedure", ErrNoDDP)
)

// DDPData locates the DDP-eligible data item of procedure proc's arguments (reply false) or
// results (reply true) in body, an encoded argument or result body, either whole or reduced
// (the item and its pad removed, "Reducing an XDR Stream", RFC 8166 section 3.4.1). It returns
// the item's position relative to the start of body (a multiple of 4, just after its length
// word) and its length in bytes, without pad.
//
// The items are those the Linux client moves by chunk: the data of a WRITE call (Read chunk)
// and of a READ reply (Write chunk). Both are last in their body, so the reduced stream is
// body[:off]. A READ reply whose status is not NFS3_OK has no data item. Large READDIR,
// READDIRPLUS and READLINK replies go whole in a Reply chunk, and every other call and reply
// inline: for those the answer is ErrNoDDP. Errors: ErrProc, ErrNoDDP, or the body type's
// truncated and too-long errors if body ends before the length word.
func DDPData(proc uint32, reply bool, body []byte) (off, n int, err error) {
	var d decoder
	switch {
	case proc > ProcCommit:
		return 0, 0, errProc
	case proc == ProcRead && reply:
		d = resDecoder(body, ProcRead)
		if Status(d.Uint32()) != OK && d.Err == nil {
			return 0, 0, errNoDDP
		}
		var attr PostOpAttr
		d.postOpAttr(&attr)
		d.Take(8) // count, eof
		n = d.Length(MaxData, errReadLong)
	case proc == ProcWrite && !reply:
		d = decoder{oncrpc.Decoder{B: body, Trunc: procErrs.Of(ProcWrite).argsTrunc}}
		d.fh()
		d.Take(16) // offset, count, stable
		n = d.Length(MaxData, errWriteLong)
	default:
		return 0, 0, errNoDDP
	}
	if off, err = d.Done(); err != nil {
		return 0, 0, err
	}
	return off, n, nil
}
