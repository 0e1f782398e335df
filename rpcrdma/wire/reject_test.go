package wire

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

func TestRejectReasonBytes(t *testing.T) {
	got := EncodeRejectReason("server full")
	want := []byte{0x72, 0x72, 0x62, 0x21, 1, 0, 11, 's', 'e', 'r', 'v', 'e', 'r', ' ', 'f', 'u', 'l', 'l'}
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeRejectReason = %x, want %x", got, want)
	}
	// As received: padded (RDMA-CM over RoCE: to 148 bytes), or after another layer's bytes.
	for _, b := range [][]byte{want, append(bytes.Clone(want), make([]byte, 148-len(want))...),
		append([]byte{0, 0, 0, 0, 0, 0, 0, 8}, want...)} {
		if r, ok := DecodeRejectReason(b); !ok || r.Text != "server full" || r.Cut {
			t.Errorf("DecodeRejectReason(%x) = %+v, %v", b, r, ok)
		}
	}
}

// A reason longer than fits is cut at a character boundary, flagged, and still fits IB's
// REJ private data.
func TestRejectReasonCut(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes, two per character
	b := EncodeRejectReason(long)
	if len(b) > datapath.MaxRejectPrivateData || b[5] != 1 || b[6] != 140 {
		t.Fatalf("%d bytes, flags %d, length %d: want at most %d bytes, flags 1, length 140",
			len(b), b[5], b[6], datapath.MaxRejectPrivateData)
	}
	r, ok := DecodeRejectReason(b)
	if !ok || !r.Cut || r.Text != strings.Repeat("é", 70) {
		t.Fatalf("decoded %+v, %v", r, ok)
	}
	exact := strings.Repeat("x", MaxRejectReason)
	if b := EncodeRejectReason(exact); len(b) != datapath.MaxRejectPrivateData || b[5] != 0 {
		t.Fatalf("a reason of exactly %d bytes: %d bytes, flags %d", MaxRejectReason, len(b), b[5])
	}
}

// Foreign or hostile bytes are never taken for a reason, and a reason's text reaches the
// terminal printable.
func TestRejectReasonForeign(t *testing.T) {
	var rfc8797 [PrivateDataSize]byte
	PrivateData{SendSize: 4096, RecvSize: 4096}.Encode(rfc8797[:])
	for _, b := range [][]byte{
		nil,
		make([]byte, 148),                      // a REJ with no private data, as RoCE pads it
		[]byte("rrb!server full"),              // no version and length
		{'r', 'r', 'b', '!', 2, 0, 1, 'x'},     // version 2
		{'r', 'r', 'b', '!', 1, 0, 5, 'a'},     // length past the end
		{'r', 'r', 'b', '!', 1, 0, 142},        // length over the limit
		append(rfc8797[:], make([]byte, 8)...), // a peer's RFC 8797 message
	} {
		if r, ok := DecodeRejectReason(b); ok {
			t.Errorf("DecodeRejectReason(%x) = %+v, want none", b, r)
		}
	}
	hostile := []byte{'r', 'r', 'b', '!', 1, 0, 8, 0x1b, '[', '2', 'J', 0xff, 'o', 'k', '\n'}
	if r, ok := DecodeRejectReason(hostile); !ok || r.Text != "?[2J?ok?" {
		t.Errorf("control characters and invalid UTF-8: %+v, %v; want \"?[2J?ok?\"", r, ok)
	}
}

func FuzzDecodeRejectReason(f *testing.F) {
	f.Add(EncodeRejectReason("server full: 2 connections (--max-connections)"))
	f.Add(EncodeRejectReason(strings.Repeat("é", 100)))
	f.Add([]byte{'r', 'r', 'b', '!', 1, 0, 8, 0x1b, '[', '2', 'J', 0xff, 'o', 'k', '\n'})
	f.Add(make([]byte, 148))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := DecodeRejectReason(b)
		if !ok {
			return
		}
		if !utf8.ValidString(r.Text) || strings.ContainsFunc(r.Text, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
			t.Fatalf("%x decoded to %q, not printable text", b, r.Text)
		}
		// Printable text is never longer than the bytes it came from, so it encodes whole.
		again, ok := DecodeRejectReason(EncodeRejectReason(r.Text))
		if !ok || again.Text != r.Text || again.Cut {
			t.Fatalf("%q re-encoded decodes to %+v, %v", r.Text, again, ok)
		}
	})
}
