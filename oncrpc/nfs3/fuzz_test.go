package nfs3

import (
	"errors"
	"reflect"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/xdrtest"
)

// seed adds the result vectors of v's type as seeds, and some malformed neighbours.
func seed(f *testing.F, v decodable, extra ...string) {
	xdrtest.Seed(f, resVectors, resVector.pair, v, extra...)
}

// fuzzDecode runs xdrtest.FuzzDecode with the first result vector of T's type to dirty the
// value.
func fuzzDecode[T any, P interface {
	*T
	decodable
}](t *testing.T, in []byte) (P, bool) {
	return xdrtest.FuzzVector[T, P](t, resVectors, resVector.pair, in)
}

func FuzzGetattrRes(f *testing.F) {
	seed(f, &GetattrRes{})
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecode[GetattrRes](t, in) })
}

func FuzzLookupRes(f *testing.F) {
	seed(f, &LookupRes{}, "00000000 00000041", "00000002 00000002")
	f.Fuzz(func(t *testing.T, in []byte) {
		if r, ok := fuzzDecode[LookupRes](t, in); ok && len(r.FH) > MaxFH {
			t.Fatalf("fh of %d bytes", len(r.FH))
		}
	})
}

// FuzzReadRes also checks the reduced form: DDPData locates the data, and DecodeReduced of the
// body before it with the data as chunk gives the same result.
func FuzzReadRes(f *testing.F) {
	seed(f, &ReadRes{}, "00000000 00000000 00000005 00000000 00000004 01020304")
	f.Fuzz(func(t *testing.T, in []byte) {
		r, ok := fuzzDecode[ReadRes](t, in)
		off, n, err := DDPData(ProcRead, true, in)
		if !ok {
			return
		}
		if r.Status != OK {
			if !errors.Is(err, ErrNoDDP) {
				t.Fatalf("DDPData of a failed READ: %v", err)
			}
			return
		}
		if err != nil || off > len(in) || n != len(r.Data) || int(r.Count) != n {
			t.Fatalf("DDPData %d %d %v, decoded %d bytes", off, n, err, len(r.Data))
		}
		var d ReadRes
		k, err := d.DecodeReduced(in[:off], in[off:off+n])
		if err != nil || k != off || !reflect.DeepEqual(&d, r) {
			t.Fatalf("DecodeReduced %d %v\n%+v\n%+v", k, err, d, r)
		}
	})
}

func FuzzWriteRes(f *testing.F) {
	seed(f, &WriteRes{}, "00000000 00000000 00000000 00000005 00000003 00000000 00000000")
	f.Fuzz(func(t *testing.T, in []byte) {
		if r, ok := fuzzDecode[WriteRes](t, in); ok && r.Committed > FileSync {
			t.Fatalf("committed %d", r.Committed)
		}
	})
}

func FuzzCommitRes(f *testing.F) {
	seed(f, &CommitRes{})
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecode[CommitRes](t, in) })
}

// FuzzReaddirplusRes also walks the entries: exactly Len of them, each within the limits.
func FuzzReaddirplusRes(f *testing.F) {
	seed(f, &ReaddirplusRes{}, readdirplusHex, "00000000 00000000 00000000 00000000 00000002")
	f.Fuzz(func(t *testing.T, in []byte) {
		r, ok := fuzzDecode[ReaddirplusRes](t, in)
		if !ok {
			return
		}
		it := r.Entries
		var e Entry
		n := 0
		for it.Next(&e) {
			if len(e.Name) > MaxName || len(e.FH) > MaxFH || (!e.HasFH && e.FH != nil) {
				t.Fatalf("entry %d: %+v", n, e)
			}
			n++
		}
		if n != r.Entries.Len() {
			t.Fatalf("%d entries, Len %d", n, r.Entries.Len())
		}
	})
}

func FuzzMountRes(f *testing.F) {
	seed(f, &MountRes{}, "00000000 00000000 40000000")
	f.Fuzz(func(t *testing.T, in []byte) {
		r, ok := fuzzDecode[MountRes](t, in)
		if !ok {
			return
		}
		for i := range r.AuthFlavors { // every flavor lies within the input
			_ = r.AuthFlavor(i)
		}
	})
}

// FuzzWriteArgsDDP locates the data of arbitrary WRITE call bodies: never a panic, and the
// item always lies within the body or just past a reduced one.
func FuzzWriteArgsDDP(f *testing.F) {
	f.Add(testutil.Unhex(f, "00000004 aabbccdd 00000000 00002000 00000005 00000002 00000005 68656c6c 6f000000"))
	f.Add(testutil.Unhex(f, "00000004 aabbccdd 00000000 00002000 00000005 00000002 00000005"))
	f.Fuzz(func(t *testing.T, in []byte) {
		off, n, err := DDPData(ProcWrite, false, in)
		if err != nil {
			var e *oncrpc.XDRError
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not *oncrpc.XDRError", err)
			}
			return
		}
		if off > len(in) || off%4 != 0 || n > MaxData {
			t.Fatalf("off %d n %d of %d bytes", off, n, len(in))
		}
	})
}
