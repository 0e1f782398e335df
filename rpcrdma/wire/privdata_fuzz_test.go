package wire

import (
	"bytes"
	"testing"
)

// FuzzFindPrivateData searches arbitrary buffers. It must never panic; a result must be
// in range, must be the first valid candidate, and must re-encode to bytes present in the
// input apart from the reserved flag bits, which are zero on send and ignored on receipt.
func FuzzFindPrivateData(f *testing.F) {
	f.Add(knfsdPrivateData)
	padded := make([]byte, 196)
	copy(padded[3:], knfsdPrivateData)
	f.Add(padded)
	f.Add([]byte{0xf6, 0xab, 0x0e, 0x18, 0x02, 0, 0, 0, 0xf6, 0xab, 0x0e, 0x18, 0x01, 0xff, 0xff, 0})
	f.Add([]byte{0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, in []byte) {
		pd, ok := FindPrivateData(in)
		if !ok {
			if pd != DefaultPrivateData {
				t.Fatalf("not found but %+v", pd)
			}
			if i := bytes.Index(in, []byte{0xf6, 0xab, 0x0e, 0x18, 0x01}); i >= 0 && i+8 <= len(in) {
				t.Fatalf("missed a valid message at %d", i)
			}
			return
		}
		if pd.SendSize < MinInline || pd.SendSize > MaxInline || pd.RecvSize < MinInline || pd.RecvSize > MaxInline {
			t.Fatalf("sizes out of range: %+v", pd)
		}
		var b [PrivateDataSize]byte
		if _, err := pd.Encode(b[:]); err != nil {
			t.Fatalf("found %+v does not encode: %v", pd, err)
		}
		// The first format+version match is the one found: a later match cannot fit if the
		// first does not.
		i := bytes.Index(in, b[:5])
		if i < 0 || i+8 > len(in) || in[i+6] != b[6] || in[i+7] != b[7] || in[i+5]&1 != b[5] {
			t.Fatalf("found %+v (%x) is not the first candidate in %x", pd, b, in)
		}
		got, ok := FindPrivateData(b[:])
		if !ok || got != pd {
			t.Fatalf("round trip %+v -> %+v", pd, got)
		}
	})
}
