// Package xdrtest holds the checks the fuzz targets of the oncrpc programs share.
package xdrtest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// Decodable is a program's result type: Decode fills it from an XDR body and returns the
// bytes consumed.
type Decodable interface {
	Decode([]byte) (int, error)
}

// Seed adds to f, as seeds, the input (hex) of every vector of vs whose value has v's type,
// whole and cut in half, then the extra inputs (hex) and an empty one. pair gives a vector's
// input and a value of the type it decodes into.
func Seed[E any](f *testing.F, vs []E, pair func(E) (string, Decodable), v Decodable, extra ...string) {
	for _, e := range vs {
		if in, ev := pair(e); reflect.TypeOf(ev) == reflect.TypeOf(v) {
			b := testutil.Unhex(f, in)
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	for _, s := range extra {
		f.Add(testutil.Unhex(f, s))
	}
	f.Add([]byte{})
}

// FuzzVector is FuzzDecode with the input of the first vector of vs of T's type as the valid
// one (pair as for Seed).
func FuzzVector[T any, P interface {
	*T
	Decodable
}, E any](t *testing.T, vs []E, pair func(E) (string, Decodable), in []byte) (P, bool) {
	t.Helper()
	var valid []byte
	for _, e := range vs {
		if hex, ev := pair(e); reflect.TypeOf(ev) == reflect.TypeOf(P(nil)) {
			valid = testutil.Unhex(t, hex)
			break
		}
	}
	return FuzzDecode[T, P](t, in, valid)
}

// IsXDRError fails t unless err is an *oncrpc.XDRError.
func IsXDRError(t *testing.T, err error) {
	t.Helper()
	var e *oncrpc.XDRError
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not *oncrpc.XDRError", err)
	}
}

// FuzzDecode decodes in with a fresh value of T and checks the properties every decoder has:
// no panic, errors are *oncrpc.XDRError, the offset lies within in and is a multiple of 4, the
// decoded prefix decodes the same into a value left dirty by decoding valid (a good input of
// T), and that prefix less one byte is truncated. It returns the value and whether in decoded.
func FuzzDecode[T any, P interface {
	*T
	Decodable
}](t *testing.T, in, valid []byte) (P, bool) {
	t.Helper()
	v := P(new(T))
	n, err := v.Decode(in)
	if err != nil {
		IsXDRError(t, err)
		return v, false
	}
	if n < 0 || n > len(in) || n%4 != 0 {
		t.Fatalf("offset %d, input %d", n, len(in))
	}
	dirty := P(new(T))
	if _, err := dirty.Decode(valid); err != nil {
		t.Fatal(err)
	}
	if m, err := dirty.Decode(in[:n]); err != nil || m != n || !reflect.DeepEqual(dirty, v) {
		t.Fatalf("re-decode of the prefix into a used value: %d %v\n%+v\n%+v", m, err, dirty, v)
	}
	if n > 0 {
		if _, err := dirty.Decode(in[:n-1]); !errors.Is(err, oncrpc.ErrTruncated) {
			t.Fatalf("prefix %d: %v", n-1, err)
		}
	}
	return v, true
}
