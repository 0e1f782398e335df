package benchprog

import (
	"encoding/binary"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// Sizes of the fixed parts: everything before the DDP-eligible data, including its length word.
const (
	sinkPrefix   = 8 + 4 + 4 // seed, verify, data length
	sourcePrefix = 4 + 4     // stat, data length
)

// Echo is ECHO's argument and, unchanged, its result: an opaque<>.
type Echo struct {
	Data []byte
}

// Size is the encoded size.
func (e *Echo) Size() int { return 4 + pad4(len(e.Data)) }

// Encode writes e into b and returns its length. If Data already lies at b[4:] (filled in
// place), it is not copied.
func (e *Echo) Encode(b []byte) (int, error) {
	if len(e.Data) > MaxData {
		return 0, errEchoLong
	}
	if len(b) < e.Size() {
		return 0, errEchoShort
	}
	put32(b, 0, uint32(len(e.Data)))
	return oncrpc.PutData(b, 4, e.Data), nil
}

// Decode decodes b into e and returns the offset after it; e.Data is a sub-slice of b.
func (e *Echo) Decode(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, errEchoTrunc
	}
	n := get32(b, 0)
	if n > MaxData {
		return 0, errEchoLong
	}
	data, end, ok := getData(b, 0, n)
	if !ok {
		return 0, errEchoTrunc
	}
	e.Data = data
	return end, nil
}

// SinkArgs are SINK's arguments. Data is DDP-eligible.
type SinkArgs struct {
	Seed   uint64 // pattern key for Verify
	Verify bool   // ask the server to check Data against the pattern
	Data   []byte
}

// Size is the encoded size with Data inline.
func (a *SinkArgs) Size() int { return sinkPrefix + pad4(len(a.Data)) }

// ReducedSize is the encoded size with Data moved to a chunk, which is also Data's position
// in the body.
func (a *SinkArgs) ReducedSize() int { return sinkPrefix }

func (a *SinkArgs) putPrefix(b []byte) {
	binary.BigEndian.PutUint64(b, a.Seed)
	putBool(b, 8, a.Verify)
	put32(b, 12, uint32(len(a.Data)))
}

// Encode writes a into b with Data inline and returns its length. To build the payload in
// place, fill b[ReducedSize():][:n] first and set Data to that sub-slice: it is not copied.
func (a *SinkArgs) Encode(b []byte) (int, error) {
	if len(a.Data) > MaxData {
		return 0, errSinkLong
	}
	if len(b) < a.Size() {
		return 0, errSinkShort
	}
	a.putPrefix(b)
	return oncrpc.PutData(b, sinkPrefix, a.Data), nil
}

// EncodeReduced writes a into b without Data (which the caller sends as a Read chunk at
// position ReducedSize() in the body) and returns the reduced length.
func (a *SinkArgs) EncodeReduced(b []byte) (int, error) {
	if len(a.Data) > MaxData {
		return 0, errSinkLong
	}
	if len(b) < sinkPrefix {
		return 0, errSinkShort
	}
	a.putPrefix(b)
	return sinkPrefix, nil
}

func (a *SinkArgs) decodePrefix(b []byte) (uint32, error) {
	if len(b) < sinkPrefix {
		return 0, errSinkTrunc
	}
	v, ok := getBool(b, 8)
	if !ok {
		return 0, errSinkBool
	}
	n := get32(b, 12)
	if n > MaxData {
		return 0, errSinkLong
	}
	a.Seed = binary.BigEndian.Uint64(b)
	a.Verify = v
	return n, nil
}

// Decode decodes b, a body with Data inline, into a and returns the offset after it; a.Data
// is a sub-slice of b.
func (a *SinkArgs) Decode(b []byte) (int, error) {
	n, err := a.decodePrefix(b)
	if err != nil {
		return 0, err
	}
	data, end, ok := getData(b, sinkPrefix-4, n)
	if !ok {
		return 0, errSinkTrunc
	}
	a.Data = data
	return end, nil
}

// DecodeReduced decodes b, a body whose Data was moved to a Read chunk, and takes Data from
// chunk, the bytes the transport read (with or without the XDR pad). a.Data is a sub-slice of
// chunk. Returns the offset after the reduced body.
func (a *SinkArgs) DecodeReduced(b, chunk []byte) (int, error) {
	n, err := a.decodePrefix(b)
	if err != nil {
		return 0, err
	}
	data, ok := oncrpc.ChunkData(chunk, n)
	if !ok {
		return 0, errSinkChunk
	}
	a.Data = data
	return sinkPrefix, nil
}

// CheckStat is check_stat: what the server's pattern check of SINK data found.
type CheckStat uint32

const (
	CheckSkipped CheckStat = 0 // verify was not asked for
	CheckOK      CheckStat = 1
	CheckBad     CheckStat = 2 // BadOffset is the first byte that differs
)

func (s CheckStat) String() string {
	switch s {
	case CheckSkipped:
		return "CHECK_SKIPPED"
	case CheckOK:
		return "CHECK_OK"
	case CheckBad:
		return "CHECK_BAD"
	}
	return "check_stat(invalid)"
}

// SinkRes is SINK's result.
type SinkRes struct {
	Count     uint32 // bytes of data received
	Check     CheckStat
	BadOffset uint32 // with CheckBad: offset in data of the first bad byte; else 0
}

// SinkResSize is the encoded size of every SinkRes.
const SinkResSize = 12

// Encode writes r into b and returns SinkResSize.
func (r *SinkRes) Encode(b []byte) (int, error) {
	if r.Check > CheckBad {
		return 0, errSinkResEnum
	}
	if len(b) < SinkResSize {
		return 0, errSinkResShort
	}
	put32(b, 0, r.Count)
	put32(b, 4, uint32(r.Check))
	put32(b, 8, r.BadOffset)
	return SinkResSize, nil
}

// Decode decodes b into r and returns SinkResSize.
func (r *SinkRes) Decode(b []byte) (int, error) {
	if len(b) < SinkResSize {
		return 0, errSinkResTrunc
	}
	c := CheckStat(get32(b, 4))
	if c > CheckBad {
		return 0, errSinkResEnum
	}
	r.Count = get32(b, 0)
	r.Check = c
	r.BadOffset = get32(b, 8)
	return SinkResSize, nil
}

// SourceArgs are SOURCE's arguments.
type SourceArgs struct {
	Seed uint64 // pattern key for Fill
	Size uint32 // bytes of data wanted in the result
	Fill bool   // ask the server to write the pattern (else the content is unspecified)
}

// SourceArgsSize is the encoded size of every SourceArgs.
const SourceArgsSize = 16

// Encode writes a into b and returns SourceArgsSize.
func (a *SourceArgs) Encode(b []byte) (int, error) {
	if len(b) < SourceArgsSize {
		return 0, errSrcShort
	}
	binary.BigEndian.PutUint64(b, a.Seed)
	put32(b, 8, a.Size)
	putBool(b, 12, a.Fill)
	return SourceArgsSize, nil
}

// Decode decodes b into a and returns SourceArgsSize. Size is not limited here: a server
// answers a Size above its own limit with SourceTooBig.
func (a *SourceArgs) Decode(b []byte) (int, error) {
	if len(b) < SourceArgsSize {
		return 0, errSrcTrunc
	}
	f, ok := getBool(b, 12)
	if !ok {
		return 0, errSrcBool
	}
	a.Seed = binary.BigEndian.Uint64(b)
	a.Size = get32(b, 8)
	a.Fill = f
	return SourceArgsSize, nil
}

// SourceStat is source_stat.
type SourceStat uint32

const (
	SourceOK     SourceStat = 0
	SourceTooBig SourceStat = 1 // the size asked for exceeds the server's limit; data is empty
)

func (s SourceStat) String() string {
	switch s {
	case SourceOK:
		return "SOURCE_OK"
	case SourceTooBig:
		return "SOURCE_TOOBIG"
	}
	return "source_stat(invalid)"
}

// SourceRes is SOURCE's result. Data is DDP-eligible.
type SourceRes struct {
	Stat SourceStat
	Data []byte
}

// SourceResSize is the encoded size of a SOURCE result carrying n bytes inline: what a
// requester compares with its receive threshold to choose inline, Write chunk or Reply chunk.
func SourceResSize(n int) int { return sourcePrefix + pad4(n) }

// Size is the encoded size with Data inline.
func (r *SourceRes) Size() int { return SourceResSize(len(r.Data)) }

// ReducedSize is the encoded size with Data moved to a Write chunk, which is also Data's
// position in the body.
func (r *SourceRes) ReducedSize() int { return sourcePrefix }

func (r *SourceRes) check(b []byte, need int) error {
	if r.Stat > SourceTooBig {
		return errSrcResEnum
	}
	if len(r.Data) > MaxData {
		return errSrcResLong
	}
	if len(b) < need {
		return errSrcResShort
	}
	return nil
}

// Encode writes r into b with Data inline and returns its length. To build the payload in
// place, fill b[ReducedSize():][:n] first and set Data to that sub-slice: it is not copied.
func (r *SourceRes) Encode(b []byte) (int, error) {
	if err := r.check(b, r.Size()); err != nil {
		return 0, err
	}
	put32(b, 0, uint32(r.Stat))
	put32(b, 4, uint32(len(r.Data)))
	return oncrpc.PutData(b, sourcePrefix, r.Data), nil
}

// EncodeReduced writes r into b without Data (which the responder has written, or will write,
// into the requester's Write chunk) and returns the reduced length.
func (r *SourceRes) EncodeReduced(b []byte) (int, error) {
	if err := r.check(b, sourcePrefix); err != nil {
		return 0, err
	}
	put32(b, 0, uint32(r.Stat))
	put32(b, 4, uint32(len(r.Data)))
	return sourcePrefix, nil
}

func (r *SourceRes) decodePrefix(b []byte) (uint32, error) {
	if len(b) < sourcePrefix {
		return 0, errSrcResTrunc
	}
	s := SourceStat(get32(b, 0))
	if s > SourceTooBig {
		return 0, errSrcResEnum
	}
	n := get32(b, 4)
	if n > MaxData {
		return 0, errSrcResLong
	}
	r.Stat = s
	return n, nil
}

// Decode decodes b, a body with Data inline, into r and returns the offset after it; r.Data
// is a sub-slice of b.
func (r *SourceRes) Decode(b []byte) (int, error) {
	n, err := r.decodePrefix(b)
	if err != nil {
		return 0, err
	}
	data, end, ok := getData(b, sourcePrefix-4, n)
	if !ok {
		return 0, errSrcResTrunc
	}
	r.Data = data
	return end, nil
}

// DecodeReduced decodes b, a body whose Data came in a Write chunk, and takes Data from
// chunk, the bytes the responder wrote (the chunk's returned length). r.Data is a sub-slice of
// chunk. Returns the offset after the reduced body.
func (r *SourceRes) DecodeReduced(b, chunk []byte) (int, error) {
	n, err := r.decodePrefix(b)
	if err != nil {
		return 0, err
	}
	data, ok := oncrpc.ChunkData(chunk, n)
	if !ok {
		return 0, errSrcResChunk
	}
	r.Data = data
	return sourcePrefix, nil
}
