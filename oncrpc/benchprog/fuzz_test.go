package benchprog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

func checkErr(t *testing.T, err error) {
	t.Helper()
	var e *oncrpc.XDRError
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not *oncrpc.XDRError", err)
	}
}

// zeroPadAt returns in[:n] with the pad of the opaque whose length word is at lenOff zeroed:
// what a re-encoding must reproduce.
func zeroPadAt(in []byte, n, lenOff, dataLen int) []byte {
	w := bytes.Clone(in[:n])
	clear(w[lenOff+4+dataLen : lenOff+4+pad4(dataLen)])
	return w
}

// roundTrip decodes in with v; on success re-encodes and checks the bytes (pads zeroed) and
// the re-decoded value.
func roundTrip(t *testing.T, v, fresh codec, in []byte, padLenOff int, dataLen func() int) {
	n, err := v.Decode(in)
	if err != nil {
		checkErr(t, err)
		return
	}
	if n > len(in) || n%4 != 0 {
		t.Fatalf("offset %d, input %d", n, len(in))
	}
	out := make([]byte, n)
	if m, err := v.Encode(out); err != nil || m != n {
		t.Fatalf("re-encode %d, %v", m, err)
	}
	want := bytes.Clone(in[:n])
	if padLenOff >= 0 {
		want = zeroPadAt(in, n, padLenOff, dataLen())
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("re-encoding differs beyond pad bytes:\n%x\n%x", out, want)
	}
	if m, err := fresh.Decode(out); err != nil || m != n || !equal(v, fresh) {
		t.Fatalf("re-decode %+v vs %+v: %v", fresh, v, err)
	}
}

// FuzzArgs decodes in as the arguments of procedure proc (mod 4), whole and, where there is a
// DDP-eligible item, reduced with the rest of the input as the chunk.
func FuzzArgs(f *testing.F) {
	f.Fuzz(func(t *testing.T, proc uint8, in []byte) {
		p := uint32(proc % 4)
		switch p {
		case ProcNull:
			if _, _, err := DDPData(p, false, in); !errors.Is(err, ErrNoDDP) {
				t.Fatal(err)
			}
		case ProcEcho:
			var e Echo
			roundTrip(t, &e, &Echo{}, in, 0, func() int { return len(e.Data) })
		case ProcSink:
			var a SinkArgs
			roundTrip(t, &a, &SinkArgs{}, in, 12, func() int { return len(a.Data) })
			off, n, err := DDPData(p, false, in)
			if err != nil {
				checkErr(t, err)
				return
			}
			var r SinkArgs
			k, err := r.DecodeReduced(in[:off], in[off:])
			if err != nil {
				checkErr(t, err)
				return
			}
			if k != off || len(r.Data) != n {
				t.Fatalf("DecodeReduced %d/%d vs DDPData %d/%d", k, len(r.Data), off, n)
			}
		case ProcSource:
			var a SourceArgs
			roundTrip(t, &a, &SourceArgs{}, in, -1, nil)
		}
	})
}

// FuzzRes is FuzzArgs for results.
func FuzzRes(f *testing.F) {
	f.Fuzz(func(t *testing.T, proc uint8, in []byte) {
		p := uint32(proc % 4)
		switch p {
		case ProcNull:
			if _, _, err := DDPData(p, true, in); !errors.Is(err, ErrNoDDP) {
				t.Fatal(err)
			}
		case ProcEcho:
			var e Echo
			roundTrip(t, &e, &Echo{}, in, 0, func() int { return len(e.Data) })
		case ProcSink:
			var r SinkRes
			roundTrip(t, &r, &SinkRes{}, in, -1, nil)
		case ProcSource:
			var r SourceRes
			roundTrip(t, &r, &SourceRes{}, in, 4, func() int { return len(r.Data) })
			off, n, err := DDPData(p, true, in)
			if err != nil {
				checkErr(t, err)
				return
			}
			var d SourceRes
			k, err := d.DecodeReduced(in[:off], in[off:])
			if err != nil {
				checkErr(t, err)
				return
			}
			if k != off || len(d.Data) != n {
				t.Fatalf("DecodeReduced %d/%d vs DDPData %d/%d", k, len(d.Data), off, n)
			}
		}
	})
}
