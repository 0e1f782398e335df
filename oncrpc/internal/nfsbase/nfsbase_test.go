package nfsbase

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

type testStatus uint32

func (s testStatus) String() string { return StatusName(testNames, "T", s) }

var testNames = map[testStatus]string{0: "T_OK", 2: "T_NOENT", 7: "T_LATER"}

// Failures are made once per procedure and status, named by both; a status without a name
// is the other failure, and later's statuses are Later errors.
func TestFailures(t *testing.T) {
	prog := Program("t", 1, 1, "readdir", [PDir + 1]uint32{}, nil)
	other := rpcproto.NewResultError("t_other", "T: other")
	f := NewFailures(prog, testNames, "T", func(s testStatus) bool { return s == 7 }, other)
	var re *rpcproto.ResultError
	if err := f.Of(PRead, 2); !errors.As(err, &re) || re.Kind() != "t_noent" || err.Error() != "T READ: T_NOENT" || re.Later() {
		t.Fatalf("READ NOENT: %v", err)
	}
	if err := f.Of(PCommit, 7); !errors.As(err, &re) || !re.Later() {
		t.Fatalf("COMMIT LATER: %v", err)
	}
	if f.Of(PRead, 2) != f.Of(PRead, 2) || f.Of(PRead, 99) != other || testStatus(99).String() != "T(99)" {
		t.Fatal("failures not made once, or an unnamed status not the other")
	}
}

// testEntry is a uint32.
type testEntry struct{ v uint32 }

func (e *testEntry) Decode(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, errors.New("truncated")
	}
	e.v = binary.BigEndian.Uint32(b)
	return 4, nil
}

// A list walks its entries once per copy, and stops at one that does not decode.
func TestList(t *testing.T) {
	raw := []byte{0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0}
	l := NewList[testEntry](raw, 2)
	for range 2 {
		it := l
		var got []uint32
		var e testEntry
		for it.Next(&e) {
			got = append(got, e.v)
		}
		if len(got) != 2 || got[0] != 5 || got[1] != 6 || it.Len() != 0 || l.Len() != 2 {
			t.Fatalf("walked %v, left %d", got, it.Len())
		}
	}
	var e testEntry
	for _, b := range [][]byte{raw[:6], raw[:2], raw[16:]} {
		bad := NewList[testEntry](b, 2)
		if bad.Next(&e) || bad.Len() != 0 {
			t.Fatalf("an entry that does not decode was walked: % x", b)
		}
	}
}

// DecodeList counts the entries up to the FALSE, stops at the first failure (a bad
// value-follows word, or an entry's own error) and then gives no list.
func TestDecodeList(t *testing.T) {
	follows := oncrpc.NewXDRError("entry.nextentry", oncrpc.ErrBadEnum)
	trunc := oncrpc.NewXDRError("res", oncrpc.ErrTruncated)
	check := func(b []byte) (int, error) {
		var e testEntry
		n, err := e.Decode(b)
		if err != nil {
			return 0, trunc
		}
		return n, nil
	}
	raw := []byte{0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 9}
	d := oncrpc.Decoder{B: raw, Trunc: trunc}
	l := DecodeList[testEntry](&d, follows, check)
	var e testEntry
	if d.Err != nil || d.Off != 20 || l.Len() != 2 || !l.Next(&e) || e.v != 5 {
		t.Fatalf("list of %d, at %d: %v", l.Len(), d.Off, d.Err)
	}
	for _, tt := range []struct {
		in   []byte
		want *oncrpc.XDRError
	}{{raw[:14], trunc}, {[]byte{0, 0, 0, 2}, follows}, {raw[:2], trunc}} {
		d := oncrpc.Decoder{B: tt.in, Trunc: trunc}
		if l := DecodeList[testEntry](&d, follows, check); d.Err != tt.want || l.Len() != 0 {
			t.Fatalf("% x: list of %d, %v", tt.in, l.Len(), d.Err)
		}
	}
}

// The shared statuses are named after each version's prefix, as are its own.
func TestStatusNames(t *testing.T) {
	m := StatusNames("NFS9", map[testStatus]string{7: "LATER", 2: "GONE"})
	for st, want := range map[testStatus]string{0: "NFS9_OK", 1: "NFS9ERR_PERM", 10003: "NFS9ERR_BAD_COOKIE",
		7: "NFS9ERR_LATER", 2: "NFS9ERR_GONE"} {
		if m[st] != want {
			t.Errorf("%d: %q, want %q", st, m[st], want)
		}
	}
}

// A number without a name, or beyond the table, has the other value.
func TestByNumber(t *testing.T) {
	b := NewByNumber(map[uint32]string{1: "ONE", 3: "THREE"}, func(n string) string { return n + "4res" }, "other")
	for n, want := range []string{"other", "ONE4res", "other", "THREE4res", "other"} {
		if got := b.Of(uint32(n)); got != want {
			t.Fatalf("%d: %q, want %q", n, got, want)
		}
	}
	if b.Of(1<<31) != "other" {
		t.Fatal("a number beyond the table")
	}
}

// Reads stay inside the file, block-aligned; writes inside WriteSpan, aligned to their size.
func TestOffsets(t *testing.T) {
	for seed := range uint64(1000) {
		seed <<= 40
		if o := ReadOffset(1<<20, 4096, seed); o%4096 != 0 || o+4096 > 1<<20 {
			t.Fatalf("read offset %d", o)
		}
		if o := WriteOffset(65536, seed); o%65536 != 0 || o+65536 > WriteSpan {
			t.Fatalf("write offset %d", o)
		}
	}
	if ReadOffset(100, 4096, 7) != 0 || WriteOffset(WriteSpan*2, 7) != 0 {
		t.Fatal("an item larger than its file or span is not at offset 0")
	}
}
