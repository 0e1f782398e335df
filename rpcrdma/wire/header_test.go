package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
)

// knfsdNullReply is the Linux kernel NFS server's reply to an RDMA_MSG NFSv3 NULL call with
// XID 0x12345678, recorded in the VM (testdata/knfsd/README.md).
var knfsdNullReply = hex.EncodeToString(knfsdBytes("null-reply.hex"))

func TestDecodeKnfsdReply(t *testing.T) {
	b := testutil.Unhex(t, knfsdNullReply)
	if len(b) != 52 {
		t.Fatalf("test vector is %d bytes, want 52", len(b))
	}
	var h Header
	payload, err := h.Decode(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Header{XID: 0x12345678, Vers: 1, Credit: 64, Proc: ProcMsg}
	if h.XID != want.XID || h.Vers != want.Vers || h.Credit != want.Credit || h.Proc != want.Proc {
		t.Errorf("fixed fields = %#x %d %d %v, want %#x 1 64 RDMA_MSG", h.XID, h.Vers, h.Credit, h.Proc, want.XID)
	}
	if len(h.ReadList) != 0 || len(h.WriteList) != 0 || len(h.WriteCounts) != 0 || h.HasReply {
		t.Errorf("chunk lists not empty: %+v", h)
	}
	if !bytes.Equal(payload, b[28:]) || len(payload) != 24 {
		t.Errorf("payload = %x, want the 24 RPC reply bytes %x", payload, b[28:])
	}
	// The payload is a window on the receive buffer, not a copy.
	if &payload[0] != &b[28] {
		t.Error("payload does not alias the input buffer")
	}
	// Re-encoding the decoded header gives the kernel's bytes back.
	out := make([]byte, 64)
	n, err := h.Encode(out)
	if err != nil || n != 28 || !bytes.Equal(out[:n], b[:28]) {
		t.Errorf("Encode = %d, %v, %x; want 28 bytes %x", n, err, out[:n], b[:28])
	}
}

var seg1 = Segment{Handle: 0x11223344, Length: 0x1000, Offset: 0x0102030405060708}
var seg2 = Segment{Handle: 0xaabbccdd, Length: 0x2000, Offset: 0xfffffffffffff000}

// encodeCases are headers with their exact XDR encoding, written out field by field from
// RFC 8166 section 4.
var encodeCases = []struct {
	name string
	h    Header
	hex  string
}{
	{"msg empty", Header{XID: 1, Vers: 1, Credit: 32, Proc: ProcMsg},
		"00000001 00000001 00000020 00000000 00000000 00000000 00000000"},
	{"read list one chunk of two segments at 8",
		Header{XID: 2, Vers: 1, Credit: 1, Proc: ProcMsg, ReadList: []ReadSegment{{8, seg1}, {8, seg2}}},
		"00000002 00000001 00000001 00000000" +
			"00000001 00000008 11223344 00001000 0102030405060708" +
			"00000001 00000008 aabbccdd 00002000 fffffffffffff000" +
			"00000000 00000000 00000000"},
	{"nomsg position zero read chunk",
		Header{XID: 3, Vers: 1, Credit: 128, Proc: ProcNoMsg, ReadList: []ReadSegment{{0, seg1}}},
		"00000003 00000001 00000080 00000001" +
			"00000001 00000000 11223344 00001000 0102030405060708 00000000" +
			"00000000 00000000"},
	{"write list two chunks, second empty",
		Header{XID: 4, Vers: 1, Credit: 2, Proc: ProcMsg, WriteList: []Segment{seg1, seg2}, WriteCounts: []int{2, 0}},
		"00000004 00000001 00000002 00000000 00000000" +
			"00000001 00000002 11223344 00001000 0102030405060708 aabbccdd 00002000 fffffffffffff000" +
			"00000001 00000000" +
			"00000000 00000000"},
	{"reply chunk",
		Header{XID: 5, Vers: 1, Credit: 2, Proc: ProcNoMsg, HasReply: true, Reply: []Segment{seg2}},
		"00000005 00000001 00000002 00000001 00000000 00000000" +
			"00000001 00000001 aabbccdd 00002000 fffffffffffff000"},
	{"empty reply chunk",
		Header{XID: 6, Vers: 1, Credit: 2, Proc: ProcMsg, HasReply: true},
		"00000006 00000001 00000002 00000000 00000000 00000000 00000001 00000000"},
	{"all three",
		Header{XID: 7, Vers: 1, Credit: 3, Proc: ProcMsg, ReadList: []ReadSegment{{100, seg1}},
			WriteList: []Segment{seg2}, WriteCounts: []int{1}, HasReply: true, Reply: []Segment{seg1}},
		"00000007 00000001 00000003 00000000" +
			"00000001 00000064 11223344 00001000 0102030405060708 00000000" +
			"00000001 00000001 aabbccdd 00002000 fffffffffffff000 00000000" +
			"00000001 00000001 11223344 00001000 0102030405060708"},
	{"done", Header{XID: 8, Vers: 1, Credit: 1, Proc: ProcDone},
		"00000008 00000001 00000001 00000003"},
	{"error vers", Header{XID: 9, Vers: 1, Credit: 0, Proc: ProcError, Err: ErrCodeVers, VersLow: 1, VersHigh: 1},
		"00000009 00000001 00000000 00000004 00000001 00000001 00000001"},
	{"error chunk", Header{XID: 10, Vers: 1, Credit: 5, Proc: ProcError, Err: ErrCodeChunk},
		"0000000a 00000001 00000005 00000004 00000002"},
}

func TestEncodeExact(t *testing.T) {
	for _, c := range encodeCases {
		t.Run(c.name, func(t *testing.T) {
			want := testutil.Unhex(t, c.hex)
			if got := c.h.EncodedSize(); got != len(want) {
				t.Errorf("EncodedSize = %d, want %d", got, len(want))
			}
			buf := make([]byte, len(want)+7)
			n, err := c.h.Encode(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:n], want) {
				t.Errorf("Encode =\n%x\nwant\n%x", buf[:n], want)
			}
			if _, err := c.h.Encode(buf[:len(want)-1]); err != ErrShortBuffer {
				t.Errorf("Encode into %d bytes: err = %v, want ErrShortBuffer", len(want)-1, err)
			}

			// Decode the exact bytes followed by a payload.
			in := append(append([]byte{}, want...), "payload"...)
			var h Header
			p, err := h.Decode(in, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(p) != "payload" {
				t.Errorf("payload = %q", p)
			}
			if !equalHeaders(&h, &c.h) {
				t.Errorf("Decode = %+v, want %+v", h, c.h)
			}
		})
	}
}

// equalHeaders compares the wire-visible content of two headers: nil and empty slices are
// the same, and Reply segments count only when HasReply.
func equalHeaders(a, b *Header) bool {
	if a.XID != b.XID || a.Vers != b.Vers || a.Credit != b.Credit || a.Proc != b.Proc {
		return false
	}
	switch a.Proc {
	case ProcError:
		return a.Err == b.Err && (a.Err != ErrCodeVers || a.VersLow == b.VersLow && a.VersHigh == b.VersHigh)
	case ProcDone:
		return true
	}
	if len(a.ReadList) != len(b.ReadList) || len(a.WriteList) != len(b.WriteList) ||
		len(a.WriteCounts) != len(b.WriteCounts) || a.HasReply != b.HasReply {
		return false
	}
	for i := range a.ReadList {
		if a.ReadList[i] != b.ReadList[i] {
			return false
		}
	}
	for i := range a.WriteList {
		if a.WriteList[i] != b.WriteList[i] {
			return false
		}
	}
	for i := range a.WriteCounts {
		if a.WriteCounts[i] != b.WriteCounts[i] {
			return false
		}
	}
	if a.HasReply {
		if len(a.Reply) != len(b.Reply) {
			return false
		}
		for i := range a.Reply {
			if a.Reply[i] != b.Reply[i] {
				return false
			}
		}
	}
	return true
}

func randSegment(r *rand.Rand) Segment {
	return Segment{Handle: r.Uint32(), Length: r.Uint32N(1 << 24), Offset: r.Uint64()}
}

// randHeader builds a valid RDMA_MSG/RDMA_NOMSG header with the chunk lists selected by the
// bits of mask (1 = Read list, 2 = Write list, 4 = Reply chunk), random in everything else.
func randHeader(r *rand.Rand, mask int) Header {
	h := Header{XID: r.Uint32(), Vers: Version, Credit: r.Uint32(), Proc: ProcMsg}
	if r.IntN(2) == 1 {
		h.Proc = ProcNoMsg
	}
	if mask&1 != 0 {
		for range 1 + r.IntN(8) { // chunks
			pos := r.Uint32() &^ 3
			for range 1 + r.IntN(4) { // segments of this chunk
				h.ReadList = append(h.ReadList, ReadSegment{pos, randSegment(r)})
			}
		}
	}
	if mask&2 != 0 {
		for range 1 + r.IntN(5) {
			segs := make([]Segment, r.IntN(5)) // zero-segment chunks too
			for i := range segs {
				segs[i] = randSegment(r)
			}
			h.AddWriteChunk(segs...)
		}
	}
	if mask&4 != 0 {
		segs := make([]Segment, r.IntN(6))
		for i := range segs {
			segs[i] = randSegment(r)
		}
		h.SetReply(segs...)
	}
	if h.Proc == ProcNoMsg && mask == 0 {
		h.Proc = ProcMsg // RDMA_NOMSG needs a chunk
	}
	return h
}

func TestRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var dec Header // reused across iterations, as a receiver does
	buf := make([]byte, 4096)
	for iter := range 2000 {
		mask := iter % 8 // every combination of Read list, Write list, Reply chunk
		h := randHeader(r, mask)
		n, err := h.Encode(buf)
		if err != nil {
			t.Fatalf("mask %d: Encode: %v", mask, err)
		}
		if n != h.EncodedSize() || n != h.Layout().Size() {
			t.Fatalf("mask %d: wrote %d, EncodedSize %d, Layout.Size %d", mask, n, h.EncodedSize(), h.Layout().Size())
		}
		segs := len(h.ReadList) + len(h.Reply)
		if h.HasReply && len(h.Reply) == 0 {
			segs++ // so does an empty Reply chunk
		}
		for _, c := range h.WriteCounts {
			segs += max(c, 1) // an empty Write chunk counts as one segment
		}
		if n > MaxHeaderSize(segs) {
			t.Fatalf("mask %d: %d bytes exceed MaxHeaderSize(%d) = %d", mask, n, segs, MaxHeaderSize(segs))
		}
		tail := r.IntN(40)
		p, err := dec.Decode(buf[:n+tail], nil)
		if err != nil {
			t.Fatalf("mask %d: Decode: %v\n%+v", mask, err, h)
		}
		if len(p) != tail {
			t.Fatalf("mask %d: payload %d bytes, want %d", mask, len(p), tail)
		}
		if !equalHeaders(&dec, &h) {
			t.Fatalf("mask %d: round trip\n got %+v\nwant %+v", mask, dec, h)
		}
		for i := range h.WriteCounts {
			if !reflect.DeepEqual(dec.WriteChunk(i), h.WriteChunk(i)) && len(h.WriteChunk(i)) > 0 {
				t.Fatalf("WriteChunk(%d) differs", i)
			}
		}
	}
}

func TestMaxHeaderSizeIsTight(t *testing.T) {
	// The bound is met with equality by all-Read and by one-segment Write chunks.
	for segs := range 20 {
		read := Layout{ReadSegments: segs}.Size()
		write := Layout{WriteChunks: segs, WriteSegments: segs}.Size()
		if read != MaxHeaderSize(segs) || write != MaxHeaderSize(segs) {
			t.Errorf("segs %d: read %d write %d max %d", segs, read, write, MaxHeaderSize(segs))
		}
		// Any other mix of the same number of segments is no larger.
		for rd := 0; rd <= segs; rd++ {
			for rp := 0; rd+rp <= segs; rp++ {
				w := segs - rd - rp
				for wc := 0; wc <= w; wc++ {
					if wc == 0 && w > 0 {
						continue
					}
					l := Layout{ReadSegments: rd, WriteChunks: wc, WriteSegments: w, Reply: rp > 0, ReplySegments: rp}
					if l.Size() > MaxHeaderSize(segs) {
						t.Fatalf("%+v: %d > %d", l, l.Size(), MaxHeaderSize(segs))
					}
				}
			}
		}
	}
}

func TestReadChunk(t *testing.T) {
	h := Header{ReadList: []ReadSegment{{0, seg1}, {0, seg2}, {16, seg1}, {32, seg2}, {32, seg1}}}
	var got [][]ReadSegment
	for i := 0; i < len(h.ReadList); {
		var c []ReadSegment
		c, i = h.ReadChunk(i)
		got = append(got, c)
	}
	if len(got) != 3 || len(got[0]) != 2 || len(got[1]) != 1 || len(got[2]) != 2 || got[2][0].Position != 32 {
		t.Errorf("chunks = %+v", got)
	}
}

// put32 appends big-endian words.
func words(ws ...uint32) []byte {
	b := make([]byte, 0, 4*len(ws))
	for _, w := range ws {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

func TestDecodeErrors(t *testing.T) {
	fixed := func(proc uint32) []uint32 { return []uint32{0xabcd, 1, 8, proc} }
	cat := func(parts ...[]uint32) []byte {
		var all []uint32
		for _, p := range parts {
			all = append(all, p...)
		}
		return words(all...)
	}
	seg := []uint32{1, 100, 0, 0}
	many := func(n int, entry []uint32) []uint32 {
		var out []uint32
		for range n {
			out = append(out, entry...)
		}
		return out
	}
	cases := []struct {
		name string
		in   []byte
		lim  *Limits
		want error
		code ErrCode
	}{
		{"empty", nil, nil, ErrTruncated, ErrCodeChunk},
		{"3 bytes", []byte{1, 2, 3}, nil, ErrTruncated, ErrCodeChunk},
		{"xid only", words(0xabcd), nil, ErrTruncated, ErrCodeChunk},
		{"version 2, short", words(0xabcd, 2), nil, ErrVersion, ErrCodeVers},
		{"version 0", cat(fixed(0)[:1], []uint32{0, 8, 0, 0, 0, 0}), nil, ErrVersion, ErrCodeVers},
		{"fixed truncated", words(0xabcd, 1, 8), nil, ErrTruncated, ErrCodeChunk},
		{"no read list", cat(fixed(0)), nil, ErrTruncated, ErrCodeChunk},
		{"msgp", cat(fixed(2), []uint32{0, 0, 0, 0, 0}), nil, ErrProc, ErrCodeChunk},
		{"proc 5", cat(fixed(5), []uint32{0, 0, 0}), nil, ErrProc, ErrCodeChunk},
		{"proc max", cat(fixed(0xffffffff)), nil, ErrProc, ErrCodeChunk},
		{"read discriminator 2", cat(fixed(0), []uint32{2, 0, 0}), nil, ErrDiscriminator, ErrCodeChunk},
		{"write discriminator 7", cat(fixed(0), []uint32{0, 7, 0}), nil, ErrDiscriminator, ErrCodeChunk},
		{"reply discriminator big", cat(fixed(0), []uint32{0, 0, 0x80000000}), nil, ErrDiscriminator, ErrCodeChunk},
		{"read segment truncated", cat(fixed(0), []uint32{1, 0, 1, 100}), nil, ErrTruncated, ErrCodeChunk},
		{"read position 6", cat(fixed(0), []uint32{1, 6}, seg, []uint32{0, 0, 0}), nil, ErrPosition, ErrCodeChunk},
		{"read list without end", cat(fixed(0), []uint32{1, 8}, seg), nil, ErrTruncated, ErrCodeChunk},
		{"write count overruns", cat(fixed(0), []uint32{0, 1, 3}, seg, seg), nil, ErrTruncated, ErrCodeChunk},
		{"write count huge", cat(fixed(0), []uint32{0, 1, 0xffffffff}, seg), nil, ErrTruncated, ErrCodeChunk},
		{"reply count overruns", cat(fixed(1), []uint32{0, 0, 1, 2}, seg), nil, ErrTruncated, ErrCodeChunk},
		{"reply count missing", cat(fixed(1), []uint32{0, 0, 1}), nil, ErrTruncated, ErrCodeChunk},
		{"write chunk length overflow",
			cat(fixed(0), []uint32{0, 1, 2, 1, 0xffffffff, 0, 0, 2, 1, 0, 0, 0, 0}), nil, ErrChunkLength, ErrCodeChunk},
		{"reply length overflow",
			cat(fixed(1), []uint32{0, 0, 1, 2, 1, 0x80000000, 0, 0, 2, 0x80000000, 0, 0}), nil, ErrChunkLength, ErrCodeChunk},
		{"read chunk length overflow, split chunk",
			cat(fixed(0), []uint32{1, 8, 1, 0xffffffff, 0, 0, 1, 16, 1, 1, 0, 0, 1, 8, 1, 1, 0, 0, 0, 0, 0}), nil, ErrChunkLength, ErrCodeChunk},
		{"too many read segments", cat(fixed(0), many(3, append([]uint32{1, 0}, seg...)), []uint32{0, 0, 0}),
			&Limits{ReadSegments: 2}, ErrTooManySegments, ErrCodeChunk},
		{"too many write segments", cat(fixed(0), []uint32{0, 1, 2}, seg, seg, []uint32{1, 2}, seg, seg, []uint32{0, 0}),
			&Limits{WriteSegments: 3}, ErrTooManySegments, ErrCodeChunk},
		{"too many write chunks", cat(fixed(0), []uint32{0}, many(3, []uint32{1, 0}), []uint32{0, 0}),
			&Limits{WriteChunks: 2}, ErrTooManyChunks, ErrCodeChunk},
		{"too many reply segments", cat(fixed(0), []uint32{0, 0, 1, 2}, seg, seg),
			&Limits{ReplySegments: 1}, ErrTooManySegments, ErrCodeChunk},
		{"default read limit", cat(fixed(0), many(DefaultReadSegments+1, append([]uint32{1, 0}, seg...)), []uint32{0, 0, 0}),
			nil, ErrTooManySegments, ErrCodeChunk},
		{"nomsg without chunks", cat(fixed(1), []uint32{0, 0, 0}), nil, ErrNoChunks, ErrCodeChunk},
		{"error truncated", cat(fixed(4)), nil, ErrTruncated, ErrCodeChunk},
		{"err_vers truncated", cat(fixed(4), []uint32{1, 1}), nil, ErrTruncated, ErrCodeChunk},
		{"unknown rdma_err", cat(fixed(4), []uint32{3}), nil, ErrErrCode, ErrCodeChunk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h Header
			p, err := h.Decode(c.in, c.lim)
			if err != c.want {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if p != nil {
				t.Errorf("payload %x on error", p)
			}
			var he *HeaderError
			if !errors.As(err, &he) || he.Code() != c.code {
				t.Errorf("code = %v, want %v", he.Code(), c.code)
			}
			if len(c.in) >= 4 && h.XID != binary.BigEndian.Uint32(c.in) {
				t.Errorf("XID = %#x not kept on error", h.XID)
			}
		})
	}
}

func TestErrorReply(t *testing.T) {
	var h, r Header
	r.ReadList = make([]ReadSegment, 3) // must be cleared

	// Version 2 call: ERR_VERS 1..1 with the call's XID and version (RFC 8166 section
	// 4.5), even though nothing past rdma_vers was readable.
	_, err := h.Decode(words(0xfeed, 2), nil)
	if !h.ErrorReply(err, 7, &r) {
		t.Fatal("no reply for ErrVersion")
	}
	want := Header{XID: 0xfeed, Vers: 2, Credit: 7, Proc: ProcError, Err: ErrCodeVers, VersLow: 1, VersHigh: 1}
	if !equalHeaders(&r, &want) || len(r.ReadList) != 0 {
		t.Errorf("reply = %+v", r)
	}
	buf := make([]byte, 64)
	n, err := r.Encode(buf)
	if err != nil || !bytes.Equal(buf[:n], words(0xfeed, 2, 7, 4, 1, 1, 1)) {
		t.Errorf("encoded ERR_VERS = %x, %v", buf[:n], err)
	}

	// Bad chunk list: ERR_CHUNK.
	_, err = h.Decode(words(0xbeef, 1, 3, 0, 5), nil)
	if !h.ErrorReply(err, 9, &r) || r.Err != ErrCodeChunk || r.XID != 0xbeef || r.Credit != 9 {
		t.Errorf("ERR_CHUNK reply = %+v", r)
	}
	n, _ = r.Encode(buf)
	if !bytes.Equal(buf[:n], words(0xbeef, 1, 9, 4, 2)) {
		t.Errorf("encoded ERR_CHUNK = %x", buf[:n])
	}

	// EncodeError writes the same bytes without a Header.
	for _, code := range []ErrCode{ErrCodeVers, ErrCodeChunk} {
		_, _ = h.Decode(words(0xbeef, 1, 9, 0, 5), nil)
		r.Reset()
		r.XID, r.Vers, r.Credit, r.Proc, r.Err = 0xbeef, 1, 9, ProcError, code
		if code == ErrCodeVers {
			r.VersLow, r.VersHigh = 1, 1
		}
		n1, _ := r.Encode(buf)
		out := make([]byte, 64)
		n2, err := EncodeError(out, 0xbeef, 9, code)
		if err != nil || !bytes.Equal(out[:n2], buf[:n1]) || n2 != ErrorSize(code) {
			t.Errorf("EncodeError(%v) = %x, %v; want %x", code, out[:n2], err, buf[:n1])
		}
	}
	if _, err := EncodeError(make([]byte, 27), 1, 1, ErrCodeVers); err != ErrShortBuffer {
		t.Errorf("EncodeError into 27 bytes: %v", err)
	}
	if n, _ := EncodeError(make([]byte, 20), 1, 1, ErrCodeChunk); n != 20 {
		t.Errorf("ERR_CHUNK is %d bytes, want 20", n)
	}

	// No reply: unreadable XID/fixed fields, or a malformed RDMA_ERROR (no error loops), or
	// an error that is not a decode error.
	noReply := [][]byte{nil, words(1), words(1, 1, 1), words(1, 1, 1, 4, 9)}
	for _, in := range noReply {
		_, err := h.Decode(in, nil)
		if err == nil || h.ErrorReply(err, 1, &r) {
			t.Errorf("%x: err %v, reply offered", in, err)
		}
	}
	if h.ErrorReply(ErrShortBuffer, 1, &r) || h.ErrorReply(errors.New("x"), 1, &r) {
		t.Error("reply offered for a non-decode error")
	}
}

func TestEncodeErrors(t *testing.T) {
	buf := make([]byte, 256)
	cases := []struct {
		h    Header
		want error
	}{
		{Header{Proc: ProcMsg, WriteList: []Segment{seg1}}, ErrWriteCounts},
		{Header{Proc: ProcMsg, WriteList: []Segment{seg1}, WriteCounts: []int{2}}, ErrWriteCounts},
		{Header{Proc: ProcMsg, WriteList: []Segment{seg1}, WriteCounts: []int{2, -1}}, ErrWriteCounts},
		{Header{Proc: ProcMsgP}, ErrEncodeProc},
		{Header{Proc: 9}, ErrEncodeProc},
		{Header{Proc: ProcError, Err: 3}, ErrEncodeErrCode},
	}
	for _, c := range cases {
		if n, err := c.h.Encode(buf); err != c.want || n != 0 {
			t.Errorf("%+v: Encode = %d, %v; want %v", c.h, n, err, c.want)
		}
	}
}

func TestDecodeReusesWithoutAllocating(t *testing.T) {
	h := benchHeader()
	buf := make([]byte, h.EncodedSize()+100)
	var dec Header
	allocs := testing.AllocsPerRun(100, func() {
		n, err := h.Encode(buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dec.Decode(buf[:n+100], nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Encode+Decode allocated %v times per run, want 0", allocs)
	}
	if !equalHeaders(&dec, &h) {
		t.Errorf("decoded %+v", dec)
	}
	// Errors are preallocated: the failure path does not allocate either.
	bad := words(1, 2, 3, 0) // version 2 RDMA_MSG
	allocs = testing.AllocsPerRun(100, func() {
		if _, err := dec.Decode(bad, nil); err != ErrVersion {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("failed Decode allocated %v times per run, want 0", allocs)
	}
	// Answering it does not allocate either.
	var reply Header
	allocs = testing.AllocsPerRun(100, func() {
		_, err := dec.Decode(bad, nil)
		if !dec.ErrorReply(err, 1, &reply) {
			t.Fatal("no reply")
		}
		if _, err := reply.Encode(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := EncodeError(buf, dec.XID, 1, ErrCodeVers); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("error reply allocated %v times per run, want 0", allocs)
	}
}

// benchHeader is a call carrying all three chunk kinds: two Read chunks, two Write chunks and
// a Reply chunk.
func benchHeader() Header {
	h := Header{XID: 42, Vers: Version, Credit: 128, Proc: ProcMsg,
		ReadList: []ReadSegment{{64, seg1}, {64, seg2}, {256, seg1}}}
	h.AddWriteChunk(seg1, seg2)
	h.AddWriteChunk(seg2)
	h.SetReply(seg1, seg2)
	return h
}

func TestErrorReplyWrapped(t *testing.T) {
	var h, r Header
	_, err := h.Decode(words(7, 1, 1, 0, 9), nil)
	wrapped := fmt.Errorf("recv: %w", err)
	if !errors.Is(wrapped, ErrDiscriminator) || !h.ErrorReply(wrapped, 1, &r) || r.Err != ErrCodeChunk || r.XID != 7 {
		t.Errorf("wrapped %v: reply %+v", wrapped, r)
	}
}
