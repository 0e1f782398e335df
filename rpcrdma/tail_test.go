package rpcrdma

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// tailProg's one procedure carries a DDP-eligible payload in its call that other arguments
// follow, as NFSv4.1's WRITE is followed by GETATTR in its COMPOUND.
var tailProg = &rpcproto.Program{Name: "tail", Number: 0x20000099, Version: 1, Procs: []rpcproto.Procedure{
	{Name: "put", Number: 1, Payload: rpcproto.InCall, DDP: rpcproto.InCall},
}}

// tailCodec lays "PREFIX__", the payload's length, the payload, its pad, then "SUFFIX!!".
type tailCodec struct{ rpcproto.NullCodec }

func (tailCodec) Sizes(proc, size int) (int, int, int) { return 12 + (size+3)&^3 + 8, 12, 0 }
func (tailCodec) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {
	copy(b, "PREFIX__")
	b[8], b[9], b[10], b[11] = byte(size>>24), byte(size>>16), byte(size>>8), byte(size)
	end := 12 + (size+3)&^3
	clear(b[12+size : end])
	copy(b[end:], "SUFFIX!!")
}

// TestReadChunkKeepsTheTail: a call whose payload goes in a Read chunk keeps what follows the
// payload inline, right after what precedes it, without the payload's XDR pad (RFC 8166
// section 3.4.5); the chunk's position is the payload's offset in the whole message.
func TestReadChunkKeepsTheTail(t *testing.T) {
	rc := testCfg(4096)
	rc.Codec = tailCodec{rpcproto.NullCodec{P: tailProg}}
	p := newPair(t, rc, testCfg(4096))
	var inline, hdr []byte
	faults(p.req).callSent = func(s *slot, sgl []datapath.SGE) {
		hdr = append([]byte{}, s.send.Bytes()[:sgl[0].Length]...)
		inline = inline[:0]
		for _, g := range sgl[1:] {
			off := int(g.Addr - s.out.Addr())
			inline = append(inline, s.out.Bytes()[off:off+int(g.Length)]...)
		}
	}
	const size = 5001
	p.call(p.req, Call{Proc: 0, Size: size, Class: rpcproto.ClassReadChunk}) // the benchmark responder refuses it
	if hdr == nil {
		t.Fatal("no call sent")
	}
	h := newHeader(wire.Limits{ReadSegments: 4, WriteChunks: 2, WriteSegments: 4, ReplySegments: 4})
	if _, err := h.Decode(hdr, &DefaultEndpointLimits); err != nil {
		t.Fatal(err)
	}
	callHdr := len(inline) - 12 - 8
	if len(h.ReadList) != 1 || h.ReadList[0].Position != uint32(callHdr+12) || h.ReadList[0].Length != size {
		t.Fatalf("read list %+v, want one segment of %d bytes at %d", h.ReadList, size, callHdr+12)
	}
	if !bytes.HasSuffix(inline, []byte("PREFIX__\x00\x00\x13\x89SUFFIX!!")) {
		t.Errorf("inline part ends %q, want the prefix then the suffix", inline[max(0, len(inline)-20):])
	}
}

// longTail's arguments after the payload exceed the room kept for them.
type longTail struct{ tailCodec }

func (longTail) Sizes(proc, size int) (int, int, int) { return 12 + (size+3)&^3 + 4096, 12, 0 }

// TestTailTooLong: arguments after the payload beyond the room kept for them are refused
// with ErrTooLarge, not written past the buffer.
func TestTailTooLong(t *testing.T) {
	rc := testCfg(4096)
	rc.Codec = longTail{tailCodec{rpcproto.NullCodec{P: tailProg}}}
	p := newPair(t, rc, testCfg(4096))
	if err := p.req.Submit(Call{Proc: 0, Size: rc.MaxPayload}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Submit: %v, want ErrTooLarge", err)
	}
}
