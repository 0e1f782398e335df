package nfsbase

import (
	"encoding/binary"
	"errors"
	"testing"

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

// testEntry decodes a value-follows word and a uint32.
type testEntry struct{ v uint32 }

func (e *testEntry) DecodeNext(raw []byte) ([]byte, bool) {
	if len(raw) < 8 || binary.BigEndian.Uint32(raw) != 1 {
		return nil, false
	}
	e.v = binary.BigEndian.Uint32(raw[4:])
	return raw[8:], true
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
	bad := NewList[testEntry](raw[:6], 2)
	var e testEntry
	if bad.Next(&e) || bad.Len() != 0 {
		t.Fatal("an entry that does not decode was walked")
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
