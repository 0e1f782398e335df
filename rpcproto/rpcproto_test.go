package rpcproto_test

import (
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

func TestClassKind(t *testing.T) {
	want := map[rpcproto.Class]rpcproto.Kind{
		rpcproto.ClassAuto:          rpcproto.Auto,
		rpcproto.ClassShort:         rpcproto.Short,
		rpcproto.ClassReadChunk:     rpcproto.Chunked,
		rpcproto.ClassWriteChunk:    rpcproto.Chunked,
		rpcproto.ClassPosZeroRead:   rpcproto.Long,
		rpcproto.ClassReplyChunk:    rpcproto.Long,
		rpcproto.ClassResponderRead: rpcproto.Long,
	}
	for c := range rpcproto.Class(rpcproto.NumClasses) {
		if got := c.Kind(); got != want[c] {
			t.Errorf("%v.Kind() = %v, want %v", c, got, want[c])
		}
	}
	if k := rpcproto.Class(99).Kind(); k != rpcproto.Auto {
		t.Errorf("invalid class has kind %v", k)
	}
}

func TestKindText(t *testing.T) {
	for k := range rpcproto.Kind(rpcproto.NumKinds) {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back rpcproto.Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("%v round-trips to %v, %v", k, back, err)
		}
	}
	if _, err := rpcproto.ParseKind("medium"); err == nil || !strings.Contains(err.Error(), `"medium"`) {
		t.Errorf("ParseKind(medium) = %v", err)
	}
	if _, err := rpcproto.Kind(9).MarshalText(); err == nil {
		t.Error("kind 9 marshals")
	}
	if rpcproto.Long <= rpcproto.Chunked || rpcproto.Chunked <= rpcproto.Short || rpcproto.Short <= rpcproto.Auto {
		t.Error("kinds are not ordered lightest first")
	}
}

// TestForce: a forced kind becomes the class of the message that carries the procedure's
// payload, decided from the table alone.
func TestForce(t *testing.T) {
	p := benchprog.Prog.Procs
	for _, tc := range []struct {
		proc int
		k    rpcproto.Kind
		want rpcproto.Class
	}{
		{benchprog.ProcNull, rpcproto.Auto, rpcproto.ClassAuto},
		{benchprog.ProcNull, rpcproto.Short, rpcproto.ClassShort},
		{benchprog.ProcNull, rpcproto.Chunked, rpcproto.ClassAuto}, // no DDP item
		{benchprog.ProcEcho, rpcproto.Long, rpcproto.ClassPosZeroRead},
		{benchprog.ProcEcho, rpcproto.Chunked, rpcproto.ClassAuto},
		{benchprog.ProcSink, rpcproto.Chunked, rpcproto.ClassReadChunk},
		{benchprog.ProcSink, rpcproto.Long, rpcproto.ClassPosZeroRead},
		{benchprog.ProcSource, rpcproto.Chunked, rpcproto.ClassWriteChunk},
		{benchprog.ProcSource, rpcproto.Long, rpcproto.ClassReplyChunk},
	} {
		if got := p[tc.proc].Force(tc.k); got != tc.want {
			t.Errorf("%s forced %v = %v, want %v", p[tc.proc].Name, tc.k, got, tc.want)
		}
	}
}

func TestProgramLookupAndSizes(t *testing.T) {
	for i, p := range benchprog.Prog.Procs {
		if uint32(i) != p.Number {
			t.Errorf("bench procedure %s at index %d has number %d", p.Name, i, p.Number)
		}
		j, err := benchprog.Prog.Lookup(strings.ToUpper(p.Name))
		if err != nil || j != i {
			t.Errorf("Lookup(%s) = %d, %v", p.Name, j, err)
		}
	}
	if _, err := benchprog.Prog.Lookup("read"); err == nil || !strings.Contains(err.Error(), "null, echo, sink, source") {
		t.Errorf("Lookup(read) = %v", err)
	}
	echo := benchprog.Prog.Procs[benchprog.ProcEcho]
	if c, r := echo.Sizes(100); c != 100 || r != 100 {
		t.Errorf("echo sizes %d/%d", c, r)
	}
	src := benchprog.Prog.Procs[benchprog.ProcSource]
	if c, r := src.Sizes(100); c != 0 || r != 100 {
		t.Errorf("source sizes %d/%d", c, r)
	}
	if len(benchprog.Prog.Procs) > rpcproto.MaxProcs {
		t.Error("table over MaxProcs")
	}
}

func TestNullProgram(t *testing.T) {
	p := rpcproto.NullProgram(100003, 3)
	if p.Name != "100003:3" || len(p.Procs) != 1 || p.Procs[0].Sized() {
		t.Fatalf("%+v", p)
	}
	c := rpcproto.NullCodec{P: p}
	if a, pre, r := c.Sizes(0, 4096); a != 0 || pre != 0 || r != 0 {
		t.Errorf("sizes %d %d %d", a, pre, r)
	}
	if d, err := c.DecodeResults(0, 0, []byte{1, 2, 3}, nil, 0, 0, true); d != nil || err != nil {
		t.Errorf("DecodeResults = %v, %v", d, err)
	}
}

func TestErrorKind(t *testing.T) {
	var k interface{ Kind() string } = rpcproto.ErrVerify
	if k.Kind() != "verify" || rpcproto.ErrVerify.Error() == "" {
		t.Errorf("%q %q", k.Kind(), rpcproto.ErrVerify.Error())
	}
}
