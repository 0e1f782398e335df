package oncrpc

import (
	"bytes"
	"errors"
	"testing"
)

// Each fuzz target checks: no panic; an error is one of ours; a successful decode re-encodes
// to the same bytes except XDR pad content (which decoders ignore, see doc.go), and the
// re-encoding decodes to the same value.

// zeroPad clears the XDR pad after an opaque of n bytes whose data starts at off.
func zeroPad(b []byte, off, n int) { clear(b[off+n : off+pad4(n)]) }

func checkErr(t *testing.T, err error) {
	t.Helper()
	var e *XDRError
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not *XDRError", err)
	}
}

func FuzzCall(f *testing.F) {
	f.Add([]byte("\x12\x34\x56\x78\x00\x00\x00\x00\x00\x00\x00\x02\x00\x01\x86\xa3\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var c Call
		n, err := c.Decode(in)
		if err != nil {
			checkErr(t, err)
			return
		}
		if n > len(in) || n != c.Size() {
			t.Fatalf("offset %d, Size %d, input %d", n, c.Size(), len(in))
		}
		out := make([]byte, n)
		m, err := c.Encode(out)
		if err != nil || m != n {
			t.Fatalf("re-encode: %d, %v", m, err)
		}
		want := bytes.Clone(in[:n])
		zeroPad(want, 32, len(c.Cred.Body))
		zeroPad(want, 24+c.Cred.Size()+8, len(c.Verf.Body))
		if !bytes.Equal(out, want) {
			t.Fatalf("re-encoding differs beyond pad bytes:\n%x\n%x", out, want)
		}
		var d Call
		if k, err := d.Decode(out); err != nil || k != n || !callEqual(c, d) {
			t.Fatalf("re-decode %+v vs %+v: %d, %v", d, c, k, err)
		}
	})
}

func FuzzReply(f *testing.F) {
	f.Add([]byte("\x12\x34\x56\x78\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var r Reply
		n, err := r.Decode(in)
		if err != nil {
			checkErr(t, err)
			return
		}
		if n > len(in) || n != r.Size() {
			t.Fatalf("offset %d, Size %d, input %d", n, r.Size(), len(in))
		}
		out := make([]byte, n)
		m, err := r.Encode(out)
		if err != nil || m != n {
			t.Fatalf("re-encode: %d, %v", m, err)
		}
		var d Reply
		if k, err := d.Decode(out); err != nil || k != n || !replyEqual(r, d) {
			t.Fatalf("re-decode %+v vs %+v: %d, %v", d, r, k, err)
		}
		want := bytes.Clone(in[:n])
		if r.Stat == Accepted {
			zeroPad(want, 20, len(r.Verf.Body))
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("re-encoding differs beyond pad bytes:\n%x\n%x", out, want)
		}
	})
}

func FuzzSysCred(f *testing.F) {
	f.Add([]byte("\x01\x02\x03\x04\x00\x00\x00\x05abcde\x00\x00\x00\x00\x00\x03\xe8\x00\x00\x00\x64\x00\x00\x00\x02\x00\x00\x00\x64\x00\x00\x00\x0a"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var c SysCred
		if err := DecodeSysCred(in, &c); err != nil {
			checkErr(t, err)
			return
		}
		if c.Size() > len(in) {
			t.Fatalf("Size %d > input %d", c.Size(), len(in))
		}
		out := make([]byte, c.Size())
		if c.Size() <= MaxAuthBody {
			if _, err := c.Encode(out); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			want := bytes.Clone(in[:len(out)])
			zeroPad(want, 8, len(c.MachineName))
			if !bytes.Equal(out, want) {
				t.Fatalf("re-encoding differs beyond pad bytes:\n%x\n%x", out, want)
			}
			var d SysCred
			if err := DecodeSysCred(out, &d); err != nil || d.Stamp != c.Stamp ||
				!bytes.Equal(d.MachineName, c.MachineName) || d.Gids != c.Gids || d.NGids != c.NGids {
				t.Fatalf("re-decode %+v vs %+v: %v", d, c, err)
			}
		}
	})
}
