package wire

import (
	"bytes"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
)

// FuzzHeaderDecode feeds arbitrary bytes to Decode. Decode must not panic or read out of
// bounds (the race-free slice bounds checks catch that); when it succeeds, the payload must be
// the tail of the input, re-encoding must reproduce the header bytes exactly (XDR has one
// encoding per value), and decoding those bytes again must give the same header.
func FuzzHeaderDecode(f *testing.F) {
	for _, c := range encodeCases {
		f.Add(testutil.Unhex(f, c.hex))
	}
	f.Add(testutil.Unhex(f, knfsdNullReply))
	f.Add(words(1, 2, 3, 4))
	f.Add(words(1, 1, 1, 1, 0, 0, 0))

	lim := &Limits{ReadSegments: 16, WriteChunks: 4, WriteSegments: 16, ReplySegments: 16}
	var h, h2 Header
	out := make([]byte, MaxHeaderSize(64))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := h.Decode(in, lim)
		if err != nil {
			if p != nil {
				t.Fatalf("payload with error %v", err)
			}
			var r Header
			if h.ErrorReply(err, 1, &r) {
				if _, err := r.Encode(out); err != nil {
					t.Fatalf("error reply does not encode: %v", err)
				}
			}
			return
		}
		hdrLen := len(in) - len(p)
		if hdrLen < 0 || !bytes.Equal(in[hdrLen:], p) {
			t.Fatal("payload is not the tail of the input")
		}
		if hdrLen != h.EncodedSize() {
			t.Fatalf("consumed %d bytes, EncodedSize %d", hdrLen, h.EncodedSize())
		}
		n, err := h.Encode(out)
		if err != nil {
			t.Fatalf("decoded header does not encode: %v", err)
		}
		if !bytes.Equal(out[:n], in[:hdrLen]) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", in[:hdrLen], out[:n])
		}
		p2, err := h2.Decode(out[:n], lim)
		if err != nil || len(p2) != 0 || !equalHeaders(&h, &h2) {
			t.Fatalf("decode of re-encoding: %v, %d payload bytes, %+v vs %+v", err, len(p2), h2, h)
		}
	})
}
