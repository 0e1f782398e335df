package wire

import (
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
)

func BenchmarkHeaderEncode(b *testing.B) {
	h := benchHeader()
	buf := make([]byte, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(h.EncodedSize()))
	for b.Loop() {
		if _, err := h.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeaderDecode(b *testing.B) {
	h := benchHeader()
	buf := make([]byte, 1024)
	n, _ := h.Encode(buf)
	var dec Header
	b.ReportAllocs()
	b.SetBytes(int64(n))
	for b.Loop() {
		if _, err := dec.Decode(buf[:n+64], nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeaderEncodeDecode is one message's worth of codec work: a call header with Read,
// Write and Reply chunks encoded, then decoded into a reused Header.
func BenchmarkHeaderEncodeDecode(b *testing.B) {
	h := benchHeader()
	buf := make([]byte, 1024)
	var dec Header
	b.ReportAllocs()
	for b.Loop() {
		n, err := h.Encode(buf)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := dec.Decode(buf[:n], nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeInline(b *testing.B) {
	in := testutil.Unhex(b, knfsdNullReply)
	var dec Header
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dec.Decode(in, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindPrivateData(b *testing.B) {
	in := make([]byte, 196)
	copy(in[150:], knfsdPrivateData)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := FindPrivateData(in); !ok {
			b.Fatal("not found")
		}
	}
}
