// Package xdrtest holds the checks the fuzz targets of the oncrpc programs share.
package xdrtest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// Decodable is a program's result type: Decode fills it from an XDR body and returns the
// bytes consumed.
type Decodable interface {
	Decode([]byte) (int, error)
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
