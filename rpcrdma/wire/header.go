package wire

import (
	"encoding/binary"
	"errors"
)

// Version is the only RPC-over-RDMA version this program speaks (RFC 8166).
const Version = 1

// Proc is an rdma_proc value: the message type of a transport header (RFC 8166 section 4.2.4).
type Proc uint32

const (
	// ProcMsg (RDMA_MSG): chunk lists, then the RPC message inline in the same Send.
	ProcMsg Proc = 0
	// ProcNoMsg (RDMA_NOMSG): chunk lists only; the RPC message travels in a Position Zero
	// Read chunk or in the Reply chunk.
	ProcNoMsg Proc = 1
	// ProcMsgP (RDMA_MSGP): deprecated by RFC 8166 section 4.6.1; known, never sent, and
	// rejected on receipt with ErrProc.
	ProcMsgP Proc = 2
	// ProcDone (RDMA_DONE): header only. RFC 8166 deprecates it; the responder-provided Read
	// chunk draft (draft-cel-nfsv4-rpcrdma-reliable-reply) revives it as the requester's pull
	// completion notification, carrying the XID of the RDMA_NOMSG reply whose Read chunk the
	// responder may now invalidate.
	ProcDone Proc = 3
	// ProcError (RDMA_ERROR): an rdma_err code, and for ERR_VERS the supported versions.
	ProcError Proc = 4
)

func (p Proc) String() string {
	switch p {
	case ProcMsg:
		return "RDMA_MSG"
	case ProcNoMsg:
		return "RDMA_NOMSG"
	case ProcMsgP:
		return "RDMA_MSGP"
	case ProcDone:
		return "RDMA_DONE"
	case ProcError:
		return "RDMA_ERROR"
	}
	return "RDMA_UNKNOWN"
}

// Segment is an RDMA segment (RFC 8166 section 3.4.3): a registered memory region named by
// its steering tag (Handle, an rkey), a byte Length and the Offset of its first byte.
type Segment struct {
	Handle uint32
	Length uint32
	Offset uint64
}

// ReadSegment is one entry of the Read list. Segments with the same Position form one Read
// chunk, whose data the responder inserts into the Payload stream at byte Position, in list
// order (RFC 8166 section 3.4.5). Position zero means the chunk carries the whole RPC message.
type ReadSegment struct {
	Position uint32
	Segment
}

// Header is an RPC-over-RDMA version 1 transport header.
//
// It is meant to be reused: Decode refills it in place and keeps the capacity of its slices,
// so once they have grown to the largest lists a connection sees, decoding allocates nothing.
// A Header belongs to one goroutine.
//
// The Write list is stored flat: WriteList holds the segments of every Write chunk in list
// order and WriteCounts[i] is the number of segments of chunk i, so len(WriteCounts) is the
// number of Write chunks (a chunk may have zero segments).
type Header struct {
	XID    uint32 // rdma_xid: the XID of the RPC message this header goes with
	Vers   uint32 // rdma_vers: Version for everything rpcrdma sends
	Credit uint32 // rdma_credit: credits requested (call) or granted (reply)
	Proc   Proc   // rdma_proc

	// RDMA_MSG and RDMA_NOMSG only.
	ReadList    []ReadSegment
	WriteList   []Segment
	WriteCounts []int
	HasReply    bool      // a Reply chunk is present (it may have zero segments)
	Reply       []Segment // the Reply chunk's segments; ignored unless HasReply

	// RDMA_ERROR only.
	Err      ErrCode
	VersLow  uint32 // ERR_VERS: lowest version the sender supports
	VersHigh uint32 // ERR_VERS: highest version the sender supports

	// fixed is how many bytes of the fixed fields the last Decode read (0, 4, 8 or 16);
	// ErrorReply needs it to know whether the XID may be trusted.
	fixed int
}

// XDR sizes of the pieces of a header, in bytes.
const (
	// FixedSize is the size of the fixed fields: rdma_xid, rdma_vers, rdma_credit, rdma_proc.
	FixedSize     = 16
	segmentSize   = 16 // handle, length, offset
	readEntrySize = 4 + 4 + segmentSize
	word          = 4

	// MinHeaderSize is the size of an RDMA_MSG or RDMA_NOMSG header with three empty chunk
	// lists: what every inline message spends on transport header at least.
	MinHeaderSize = FixedSize + 3*word
	// DoneSize is the size of an RDMA_DONE message.
	DoneSize = FixedSize
)

// Reset empties h for reuse, keeping the capacity of its slices.
func (h *Header) Reset() {
	// Field by field rather than *h = Header{...}: assigning the whole struct rewrites the
	// slice pointers through write barriers, which showed up at 5-8% of the per-RPC profile.
	h.XID, h.Vers, h.Credit, h.Proc = 0, 0, 0, 0
	h.ReadList = h.ReadList[:0]
	h.WriteList = h.WriteList[:0]
	h.WriteCounts = h.WriteCounts[:0]
	h.HasReply = false
	h.Reply = h.Reply[:0]
	h.Err, h.VersLow, h.VersHigh = 0, 0, 0
	h.fixed = 0
}

// FixedDecoded is how many bytes of the fixed fields the last Decode read: 0, 4 (XID), 8
// (and Vers) or 16 (all four). After a failed Decode it says which fields may be trusted.
func (h *Header) FixedDecoded() int { return h.fixed }

// AddWriteChunk appends a Write chunk made of segs to the Write list.
func (h *Header) AddWriteChunk(segs ...Segment) {
	h.WriteList = append(h.WriteList, segs...)
	h.WriteCounts = append(h.WriteCounts, len(segs))
}

// SetReply makes segs the Reply chunk.
func (h *Header) SetReply(segs ...Segment) {
	h.HasReply = true
	h.Reply = append(h.Reply[:0], segs...)
}

// WriteChunk returns the segments of Write chunk i (a sub-slice of WriteList, not a copy).
// It panics if i is out of range or WriteCounts does not match WriteList, like an index
// expression; decoded headers always match.
func (h *Header) WriteChunk(i int) []Segment {
	start := 0
	for _, n := range h.WriteCounts[:i] {
		start += n
	}
	return h.WriteList[start : start+h.WriteCounts[i]]
}

// ReadChunk returns the run of Read list entries that starts at index start and shares its
// Position, and the index just past it; iterate with
//
//	for i := 0; i < len(h.ReadList); {
//		var c []ReadSegment
//		c, i = h.ReadChunk(i)
//		... c[0].Position, c ...
//	}
//
// RFC 8166 lets the segments of one chunk be scattered through the list; senders (Linux and
// the rpcrdma engine) keep them adjacent, and a receiver that wants to accept scattered
// chunks can merge runs with equal positions.
func (h *Header) ReadChunk(start int) (chunk []ReadSegment, next int) {
	next = start + 1
	for next < len(h.ReadList) && h.ReadList[next].Position == h.ReadList[start].Position {
		next++
	}
	return h.ReadList[start:next], next
}

// Layout describes the chunk lists of an RDMA_MSG or RDMA_NOMSG header by their counts
// only, for sizing a header before its segments are known.
type Layout struct {
	ReadSegments  int  // entries in the Read list
	WriteChunks   int  // chunks in the Write list
	WriteSegments int  // segments in all Write chunks together
	Reply         bool // a Reply chunk is present
	ReplySegments int  // segments in the Reply chunk
}

// Size is the exact encoded size of an RDMA_MSG or RDMA_NOMSG header with this layout.
func (l Layout) Size() int {
	n := MinHeaderSize + l.ReadSegments*readEntrySize +
		l.WriteChunks*(2*word) + l.WriteSegments*segmentSize
	if l.Reply {
		n += word + l.ReplySegments*segmentSize
	}
	return n
}

// MaxHeaderSize is the largest RDMA_MSG or RDMA_NOMSG header whose chunk lists hold at most
// segs segments in all, however they are spread over the Read list, Write chunks and the
// Reply chunk, counting an empty Write or Reply chunk as one segment. Each Read list entry
// costs 24 bytes, so does a one-segment (or empty) Write chunk, and every other segment at
// most 20, so the bound is MinHeaderSize + 24*segs.
//
// It is the worst-case bound a requester that does not know its header's exact size can
// use for the decisions of RFC 8166 section 3.5 (the reasoning of Linux's
// rpcrdma_max_call_header_size and rpcrdma_max_reply_header_size). The rpcrdma
// requester does not call it: it knows its chunks before it decides, and uses the exact
// Layout.Size instead, so a message that fits to the byte goes inline.
func MaxHeaderSize(segs int) int {
	return MinHeaderSize + segs*readEntrySize
}

// ErrorSize is the encoded size of an RDMA_ERROR message with this code.
func ErrorSize(code ErrCode) int {
	if code == ErrCodeVers {
		return FixedSize + 3*word
	}
	return FixedSize + word
}

// EncodedSize is the exact number of bytes Encode writes for h.
func (h *Header) EncodedSize() int {
	switch h.Proc {
	case ProcDone:
		return DoneSize
	case ProcError:
		return ErrorSize(h.Err)
	}
	return h.Layout().Size()
}

// Layout returns the counts of h's chunk lists.
func (h *Header) Layout() Layout {
	return Layout{
		ReadSegments:  len(h.ReadList),
		WriteChunks:   len(h.WriteCounts),
		WriteSegments: len(h.WriteList),
		Reply:         h.HasReply,
		ReplySegments: len(h.Reply),
	}
}

// Encode writes h at the start of b, which the caller owns (typically a registered send
// buffer), and returns the number of bytes written; the RPC message of an RDMA_MSG goes
// right after them. Encode writes fields as given (Vers included) and checks only that the
// header can be represented: ErrEncodeProc, ErrEncodeErrCode, ErrWriteCounts, and
// ErrShortBuffer if b is shorter than EncodedSize. Nothing is written on error.
func (h *Header) Encode(b []byte) (int, error) {
	var n int
	switch h.Proc {
	case ProcMsg, ProcNoMsg:
		if len(h.ReadList)|len(h.WriteList)|len(h.WriteCounts) == 0 && !h.HasReply {
			// No chunks: every short call and reply. Written in one piece with a single
			// bounds check; the general path below costs about twice the instructions.
			if len(b) < MinHeaderSize {
				return 0, ErrShortBuffer
			}
			PutNoChunks(b, h.XID, h.Vers, h.Credit, h.Proc)
			return MinHeaderSize, nil
		}
		total := 0
		for _, c := range h.WriteCounts {
			if c < 0 {
				return 0, ErrWriteCounts
			}
			total += c
		}
		if total != len(h.WriteList) {
			return 0, ErrWriteCounts
		}
		n = h.Layout().Size()
	case ProcDone:
		n = DoneSize
	case ProcError:
		if h.Err != ErrCodeVers && h.Err != ErrCodeChunk {
			return 0, ErrEncodeErrCode
		}
		n = ErrorSize(h.Err)
	default:
		return 0, ErrEncodeProc
	}
	if len(b) < n {
		return 0, ErrShortBuffer
	}
	b = b[:n]
	be := binary.BigEndian
	h.putFixed(b)
	off := FixedSize
	switch h.Proc {
	case ProcDone:
		return off, nil
	case ProcError:
		be.PutUint32(b[off:], uint32(h.Err))
		off += word
		if h.Err == ErrCodeVers {
			be.PutUint32(b[off:], h.VersLow)
			be.PutUint32(b[off+4:], h.VersHigh)
			off += 2 * word
		}
		return off, nil
	}

	// Read list: one optional-data entry per segment (RFC 8166 section 4.3.1).
	for i := range h.ReadList {
		r := &h.ReadList[i]
		be.PutUint32(b[off:], 1)
		be.PutUint32(b[off+4:], r.Position)
		putSegment(b[off+8:], &r.Segment)
		off += readEntrySize
	}
	be.PutUint32(b[off:], 0)
	off += word

	// Write list: one optional-data entry per chunk, each a counted array of segments.
	segs := h.WriteList
	for _, c := range h.WriteCounts {
		be.PutUint32(b[off:], 1)
		be.PutUint32(b[off+4:], uint32(c))
		off += 2 * word
		for i := range segs[:c] {
			putSegment(b[off:], &segs[i])
			off += segmentSize
		}
		segs = segs[c:]
	}
	be.PutUint32(b[off:], 0)
	off += word

	// Reply chunk: optional counted array.
	if !h.HasReply {
		be.PutUint32(b[off:], 0)
		return off + word, nil
	}
	be.PutUint32(b[off:], 1)
	be.PutUint32(b[off+4:], uint32(len(h.Reply)))
	off += 2 * word
	for i := range h.Reply {
		putSegment(b[off:], &h.Reply[i])
		off += segmentSize
	}
	return off, nil
}

// putFixed writes the four fixed fields at the start of b, which holds at least FixedSize
// bytes.
func (h *Header) putFixed(b []byte) {
	_ = b[FixedSize-1]
	be := binary.BigEndian
	be.PutUint32(b[0:], h.XID)
	be.PutUint32(b[4:], h.Vers)
	be.PutUint32(b[8:], h.Credit)
	be.PutUint32(b[12:], uint32(h.Proc))
}

// PutNoChunks writes an RDMA_MSG or RDMA_NOMSG header without chunks, the fixed fields
// and three empty lists, at the start of b, which holds at least MinHeaderSize bytes. It is
// Encode's chunkless case without a Header, for senders that know they have no chunks.
func PutNoChunks(b []byte, xid, vers, credit uint32, proc Proc) {
	_ = b[MinHeaderSize-1]
	be := binary.BigEndian
	be.PutUint32(b[0:], xid)
	be.PutUint32(b[4:], vers)
	be.PutUint32(b[8:], credit)
	be.PutUint32(b[12:], uint32(proc))
	be.PutUint32(b[16:], 0) // Read list
	be.PutUint32(b[20:], 0) // Write list
	be.PutUint32(b[24:], 0) // Reply chunk
}

func putSegment(b []byte, s *Segment) {
	_ = b[segmentSize-1]
	binary.BigEndian.PutUint32(b[0:], s.Handle)
	binary.BigEndian.PutUint32(b[4:], s.Length)
	binary.BigEndian.PutUint64(b[8:], s.Offset)
}

func getSegment(b []byte) Segment {
	_ = b[segmentSize-1]
	return Segment{
		Handle: binary.BigEndian.Uint32(b[0:]),
		Length: binary.BigEndian.Uint32(b[4:]),
		Offset: binary.BigEndian.Uint64(b[8:]),
	}
}

// Limits bounds what Decode accepts from a peer, so that a hostile or broken header cannot
// make a receiver grow its lists without bound. The zero value (or a nil *Limits) means the
// defaults; each zero or negative field takes its default.
type Limits struct {
	// ReadSegments is the most Read list entries accepted. Default 64.
	ReadSegments int
	// WriteChunks is the most Write chunks accepted. Default 16.
	WriteChunks int
	// WriteSegments is the most segments accepted in all Write chunks together. Default 64.
	WriteSegments int
	// ReplySegments is the most segments accepted in the Reply chunk. Default 64.
	ReplySegments int
}

// Default limits: well above what Linux sends (its requests carry at most a few segments per
// chunk, RPCRDMA_MAX_HDR_SEGS = 16 per header) and small enough to keep a reused Header's
// slices to a few KiB.
const (
	DefaultReadSegments  = 64
	DefaultWriteChunks   = 16
	DefaultWriteSegments = 64
	DefaultReplySegments = 64
)

func (l *Limits) resolve() Limits {
	var r Limits
	if l != nil {
		r = *l
	}
	if r.ReadSegments <= 0 {
		r.ReadSegments = DefaultReadSegments
	}
	if r.WriteChunks <= 0 {
		r.WriteChunks = DefaultWriteChunks
	}
	if r.WriteSegments <= 0 {
		r.WriteSegments = DefaultWriteSegments
	}
	if r.ReplySegments <= 0 {
		r.ReplySegments = DefaultReplySegments
	}
	return r
}

// Decode parses the transport header at the start of b (a received buffer the caller owns)
// into h, reusing h's slices, and returns the bytes that follow the header as a sub-slice of
// b: the RPC message of an RDMA_MSG, and normally nothing for the other types. The payload
// aliases b, so it is valid for as long as the caller keeps b (typically until the receive
// buffer is reposted). lim may be nil for the defaults.
//
// Decode never reads outside b and never panics. On error, the returned error is one of the
// preallocated *HeaderError sentinels and only the fixed fields read so far are meaningful:
// XID after 4 bytes, Vers after 8, Credit and Proc after 16. In particular a version other
// than 1 yields ErrVersion with XID set, before anything else is looked at, so that a
// responder can answer ERR_VERS; see ErrorReply.
//
// RDMA_DONE is accepted (see ProcDone). An rpcrdma.Conn never answers one: an RDMA_DONE that names no
// reply waiting for it is dropped (rpcrdma.Stats.DoneStray), negotiated or not, as the draft's
// section 4.1.3 asks and as svcrdma drops every RDMA_DONE.
func (h *Header) Decode(b []byte, lim *Limits) (payload []byte, err error) {
	be := binary.BigEndian
	if len(b) >= MinHeaderSize && be.Uint32(b[4:]) == Version && be.Uint32(b[12:]) == uint32(ProcMsg) &&
		be.Uint32(b[16:])|be.Uint32(b[20:])|be.Uint32(b[24:]) == 0 {
		// Version 1 RDMA_MSG with three empty lists: every short call and reply. Decided
		// from five words and filled in one pass, without resolving the limits or walking
		// the lists, which cost about as much again as the rest of Decode. Any other
		// header takes the full path, which also rejects bad discriminators.
		h.Reset()
		h.XID, h.Vers, h.Credit, h.Proc = be.Uint32(b), Version, be.Uint32(b[8:]), ProcMsg
		h.fixed = FixedSize
		return b[MinHeaderSize:], nil
	}
	h.Reset()
	if len(b) < word {
		return nil, ErrTruncated
	}
	h.XID = be.Uint32(b)
	h.fixed = word
	if len(b) < 2*word {
		return nil, ErrTruncated
	}
	h.Vers = be.Uint32(b[4:])
	h.fixed = 2 * word
	// The version decides the layout of everything after it (RFC 8166 section 4.5.1).
	if h.Vers != Version {
		// Credit and procedure sit where version 1 has them in every version, and
		// RDMA_ERROR is 4 in all: ErrorReply needs the procedure so as not to answer an
		// RDMA_ERROR that carries another version (RFC 8166 section 4.5 makes an
		// RDMA_ERROR echo the failing request's version, so two endpoints would otherwise
		// trade ERR_VERS forever). h.fixed stays at the two words that were validated.
		if len(b) >= FixedSize {
			h.Credit = be.Uint32(b[8:])
			h.Proc = Proc(be.Uint32(b[12:]))
		}
		return nil, ErrVersion
	}
	if len(b) < FixedSize {
		return nil, ErrTruncated
	}
	h.Credit = be.Uint32(b[8:])
	h.Proc = Proc(be.Uint32(b[12:]))
	h.fixed = FixedSize

	off := FixedSize
	switch h.Proc {
	case ProcMsg, ProcNoMsg:
		off, err = h.decodeChunks(b, lim.resolve())
		if err != nil {
			return nil, err
		}
		if h.Proc == ProcNoMsg && len(h.ReadList) == 0 && len(h.WriteCounts) == 0 && !h.HasReply {
			return nil, ErrNoChunks
		}
	case ProcDone:
	case ProcError:
		if len(b) < off+word {
			return nil, ErrTruncated
		}
		h.Err = ErrCode(be.Uint32(b[off:]))
		off += word
		switch h.Err {
		case ErrCodeVers:
			if len(b) < off+2*word {
				return nil, ErrTruncated
			}
			h.VersLow = be.Uint32(b[off:])
			h.VersHigh = be.Uint32(b[off+4:])
			off += 2 * word
		case ErrCodeChunk:
		default:
			return nil, ErrErrCode
		}
	default:
		return nil, ErrProc
	}
	return b[off:], nil
}

// decodeChunks parses the three chunk lists starting after the fixed fields and returns the
// offset just past them.
func (h *Header) decodeChunks(b []byte, lim Limits) (int, error) {
	be := binary.BigEndian
	off := FixedSize
	var err error

	// Read list.
	for {
		var more bool
		if more, off, err = present(b, off); err != nil {
			return 0, err
		}
		if !more {
			break
		}
		if len(h.ReadList) == lim.ReadSegments {
			return 0, ErrTooManySegments
		}
		if len(b)-off < readEntrySize-word {
			return 0, ErrTruncated
		}
		pos := be.Uint32(b[off:])
		if pos%4 != 0 {
			return 0, ErrPosition
		}
		h.ReadList = append(h.ReadList, ReadSegment{Position: pos, Segment: getSegment(b[off+4:])})
		off += readEntrySize - word
	}
	if !readChunksFit(h.ReadList) {
		return 0, ErrChunkLength
	}

	// Write list.
	for {
		var more bool
		if more, off, err = present(b, off); err != nil {
			return 0, err
		}
		if !more {
			break
		}
		if len(h.WriteCounts) == lim.WriteChunks {
			return 0, ErrTooManyChunks
		}
		start := len(h.WriteList)
		h.WriteList, off, err = decodeArray(b, off, h.WriteList, lim.WriteSegments-start)
		if err != nil {
			return 0, err
		}
		h.WriteCounts = append(h.WriteCounts, len(h.WriteList)-start)
	}

	// Reply chunk.
	if h.HasReply, off, err = present(b, off); err != nil {
		return 0, err
	}
	if h.HasReply {
		if h.Reply, off, err = decodeArray(b, off, h.Reply, lim.ReplySegments); err != nil {
			return 0, err
		}
	}
	return off, nil
}

// present reads the XDR optional-data discriminator at b[off:] (RFC 4506 section 4.19) that
// precedes each chunk list entry and the reply chunk: 1, an item follows; 0, none does.
func present(b []byte, off int) (bool, int, error) {
	if len(b)-off < word {
		return false, off, ErrTruncated
	}
	switch binary.BigEndian.Uint32(b[off:]) {
	case 0:
		return false, off + word, nil
	case 1:
		return true, off + word, nil
	}
	return false, off, ErrDiscriminator
}

// decodeArray appends the counted array of segments at b[off:] to segs, accepting at most
// room segments, and checks that their lengths add up to a valid chunk length.
func decodeArray(b []byte, off int, segs []Segment, room int) ([]Segment, int, error) {
	if len(b)-off < word {
		return segs, 0, ErrTruncated
	}
	n := binary.BigEndian.Uint32(b[off:])
	off += word
	// Compare in uint64 so that a count near 2^32 cannot wrap the multiplication.
	if uint64(n)*segmentSize > uint64(len(b)-off) {
		return segs, 0, ErrTruncated
	}
	if uint64(n) > uint64(max(room, 0)) {
		return segs, 0, ErrTooManySegments
	}
	var sum uint64
	for range n {
		s := getSegment(b[off:])
		sum += uint64(s.Length)
		segs = append(segs, s)
		off += segmentSize
	}
	if sum > 1<<32-1 {
		return segs, 0, ErrChunkLength
	}
	return segs, off, nil
}

// readChunksFit reports whether every Read chunk (all segments sharing a position, wherever
// they sit in the list) has a total length that fits in uint32. The quadratic scan is bounded
// by Limits.ReadSegments and is linear when chunks are adjacent, as senders make them.
func readChunksFit(list []ReadSegment) bool {
	for i := 0; i < len(list); {
		pos := list[i].Position
		var sum uint64
		j := i
		for j < len(list) && list[j].Position == pos {
			sum += uint64(list[j].Length)
			j++
		}
		// Later runs with the same position belong to this chunk too.
		for k := j; k < len(list); k++ {
			if list[k].Position == pos {
				sum += uint64(list[k].Length)
			}
		}
		if sum > 1<<32-1 {
			return false
		}
		i = j
	}
	return true
}

// ErrorReply fills r with the RDMA_ERROR message a responder sends when Decode of a call
// failed with err (RFC 8166 section 4.5): ERR_VERS with versions 1..1 for ErrVersion,
// ERR_CHUNK for any other decode error, the call's XID, the call's rdma_vers (section 4.5
// requires the failing request's version; Linux's svc_rdma_send_error_msg copies it), and
// credit as the granted credits. It returns false when no reply may be sent: err is not a
// decode error, the XID (for ERR_VERS) or the fixed fields (otherwise) could not be read,
// or the message was itself an RDMA_ERROR, of any version, which is dropped to avoid an
// error loop. h must be the header that failed to decode. r keeps its slice capacity; it
// may not be h.
func (h *Header) ErrorReply(err error, credit uint32, r *Header) bool {
	e, ok := err.(*HeaderError)
	if !ok {
		e = asHeaderError(err)
	}
	if e == nil || e.code == 0 {
		return false
	}
	if e.code == ErrCodeVers {
		if h.fixed < 2*word || h.Proc == ProcError {
			return false
		}
	} else if h.fixed < FixedSize || h.Proc == ProcError {
		return false
	}
	r.Reset()
	r.XID = h.XID
	r.Vers = h.Vers
	r.Credit = credit
	r.Proc = ProcError
	r.Err = e.code
	if e.code == ErrCodeVers {
		r.VersLow, r.VersHigh = Version, Version
	}
	return true
}

// asHeaderError unwraps err to a *HeaderError, or returns nil. It is separate from
// ErrorReply because errors.As makes its target escape, which would cost an allocation on
// the common path where err is a sentinel as Decode returned it.
func asHeaderError(err error) *HeaderError {
	var e *HeaderError
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// EncodeError writes the RDMA_ERROR message answering the call with this xid, granting
// credit credits, at the start of b and returns its length: ERR_CHUNK, or ERR_VERS
// advertising version 1 as both the lowest and the highest supported (RFC 8166 section
// 4.5.1). It is Header.Encode for a header built by ErrorReply, without needing the Header.
func EncodeError(b []byte, xid, credit uint32, code ErrCode) (int, error) {
	h := Header{XID: xid, Vers: Version, Credit: credit, Proc: ProcError, Err: code}
	if code == ErrCodeVers {
		h.VersLow, h.VersHigh = Version, Version
	}
	return h.Encode(b)
}
