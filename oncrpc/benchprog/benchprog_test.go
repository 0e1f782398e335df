package benchprog

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

type codec interface {
	Encode([]byte) (int, error)
	Decode([]byte) (int, error)
}

func TestExactBytes(t *testing.T) {
	tests := []struct {
		name     string
		v, fresh codec
		want     string
	}{
		{"echo odd", &Echo{Data: []byte("abcde")}, &Echo{}, "00000005 61626364 65000000"},
		{"echo empty", &Echo{}, &Echo{}, "00000000"},
		{"sink args", &SinkArgs{Seed: 0x0102030405060708, Verify: true, Data: []byte("xyz")}, &SinkArgs{},
			"01020304 05060708 00000001 00000003 78797a00"},
		{"sink res bad", &SinkRes{Count: 3, Check: CheckBad, BadOffset: 2}, &SinkRes{}, "00000003 00000002 00000002"},
		{"source args", &SourceArgs{Seed: 1, Size: 4096, Fill: true}, &SourceArgs{}, "00000000 00000001 00001000 00000001"},
		{"source res", &SourceRes{Data: []byte{0xaa, 0xbb}}, &SourceRes{}, "00000000 00000002 aabb0000"},
		{"source res toobig", &SourceRes{Stat: SourceTooBig}, &SourceRes{}, "00000001 00000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := testutil.Unhex(t, tt.want)
			buf := bytes.Repeat([]byte{0xee}, 64)
			n, err := tt.v.Encode(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:n], want) {
				t.Fatalf("encode\n got %x\nwant %x", buf[:n], want)
			}
			if _, err := tt.v.Encode(buf[:n-1]); !errors.Is(err, oncrpc.ErrShortBuffer) {
				t.Errorf("encode into %d bytes: %v", n-1, err)
			}
			m, err := tt.fresh.Decode(append(want, 1, 2, 3, 4))
			if err != nil || m != n {
				t.Fatalf("decode: %d, %v", m, err)
			}
			out := make([]byte, n)
			if _, err := tt.fresh.Encode(out); err != nil || !bytes.Equal(out, want) {
				t.Fatalf("decoded value re-encodes to %x, %v", out, err)
			}
			for i := range n {
				if _, err := tt.fresh.Decode(want[:i]); !errors.Is(err, oncrpc.ErrTruncated) {
					t.Fatalf("prefix %d: %v", i, err)
				}
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name  string
		v     codec
		in    string
		kind  error
		field string
	}{
		{"echo too long", &Echo{}, "40000001", oncrpc.ErrTooLong, "echo opaque"},
		{"sink verify 2", &SinkArgs{}, "00000000 00000000 00000002 00000000", oncrpc.ErrBadEnum, "sink_args.verify"},
		{"sink data too long", &SinkArgs{}, "00000000 00000000 00000000 ffffffff", oncrpc.ErrTooLong, "sink_args.data"},
		{"sink data short", &SinkArgs{}, "00000000 00000000 00000000 00000005 01020304 05", oncrpc.ErrTruncated, "sink_args"},
		{"sink res check 3", &SinkRes{}, "00000000 00000003 00000000", oncrpc.ErrBadEnum, "sink_res.check"},
		{"source fill 7", &SourceArgs{}, "00000000 00000000 00000000 00000007", oncrpc.ErrBadEnum, "source_args.fill"},
		{"source stat 2", &SourceRes{}, "00000002 00000000", oncrpc.ErrBadEnum, "source_res.stat"},
		{"source data too long", &SourceRes{}, "00000000 40000001", oncrpc.ErrTooLong, "source_res.data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.v.Decode(testutil.Unhex(t, tt.in))
			var e *oncrpc.XDRError
			if !errors.Is(err, tt.kind) || !errors.As(err, &e) || e.Field != tt.field {
				t.Fatalf("err = %v, want %v on %q", err, tt.kind, tt.field)
			}
		})
	}
}

func TestDDPData(t *testing.T) {
	sink := testutil.Unhex(t, "01020304 05060708 00000001 00000003 78797a00")
	off, n, err := DDPData(ProcSink, false, sink)
	if err != nil || off != 16 || n != 3 || string(sink[off:off+n]) != "xyz" {
		t.Fatalf("sink args: %d %d %v", off, n, err)
	}
	// The reduced stream gives the same answer.
	if off, n, err := DDPData(ProcSink, false, sink[:16]); err != nil || off != 16 || n != 3 {
		t.Fatalf("reduced sink args: %d %d %v", off, n, err)
	}
	src := testutil.Unhex(t, "00000000 00000002 aabb0000")
	if off, n, err := DDPData(ProcSource, true, src); err != nil || off != 8 || n != 2 {
		t.Fatalf("source res: %d %d %v", off, n, err)
	}
	for _, c := range []struct {
		proc  uint32
		reply bool
		body  []byte
		kind  error
	}{
		{ProcNull, false, nil, ErrNoDDP},
		{ProcEcho, true, src, ErrNoDDP},
		{ProcSink, true, src, ErrNoDDP},
		{ProcSource, false, src, ErrNoDDP},
		{4, false, src, ErrProc},
		{ProcSink, false, sink[:15], oncrpc.ErrTruncated},
		{ProcSource, true, src[:7], oncrpc.ErrTruncated},
		{ProcSource, true, testutil.Unhex(t, "00000000 7fffffff"), oncrpc.ErrTooLong},
		{ProcSink, false, testutil.Unhex(t, "00000000 00000000 00000000 7fffffff"), oncrpc.ErrTooLong},
	} {
		if _, _, err := DDPData(c.proc, c.reply, c.body); !errors.Is(err, c.kind) {
			t.Errorf("proc %d reply %v: %v, want %v", c.proc, c.reply, err, c.kind)
		}
	}
}

func TestReduced(t *testing.T) {
	data := []byte("hello") // 5 bytes: a Read chunk may carry 5 or 8
	a := SinkArgs{Seed: 9, Verify: true, Data: data}
	buf := make([]byte, 64)
	n, err := a.EncodeReduced(buf)
	if err != nil || n != a.ReducedSize() || n != 16 {
		t.Fatalf("EncodeReduced: %d %v", n, err)
	}
	full := make([]byte, 64)
	m, _ := a.Encode(full)
	off, l, _ := DDPData(ProcSink, false, full[:m])
	// Reduction is exactly "drop data and pad": the reduced body is the full body's prefix.
	if !bytes.Equal(buf[:n], full[:off]) || m != off+8 || l != 5 {
		t.Fatalf("reduced %x vs full %x", buf[:n], full[:m])
	}
	for _, chunk := range [][]byte{[]byte("hello"), []byte("hello\x00\x00\x00")} {
		var d SinkArgs
		k, err := d.DecodeReduced(buf[:n], chunk)
		if err != nil || k != n || string(d.Data) != "hello" || d.Seed != 9 || !d.Verify || &d.Data[0] != &chunk[0] {
			t.Fatalf("DecodeReduced(%q): %+v %d %v", chunk, d, k, err)
		}
	}
	for _, chunk := range [][]byte{[]byte("hell"), []byte("hello\x00\x00\x00\x00"), nil} {
		var d SinkArgs
		if _, err := d.DecodeReduced(buf[:n], chunk); !errors.Is(err, ErrChunk) {
			t.Errorf("chunk %q: %v", chunk, err)
		}
	}

	r := SourceRes{Data: data}
	n, err = r.EncodeReduced(buf)
	if err != nil || n != r.ReducedSize() || n != 8 {
		t.Fatalf("SourceRes.EncodeReduced: %d %v", n, err)
	}
	var d SourceRes
	if k, err := d.DecodeReduced(buf[:n], data); err != nil || k != 8 || string(d.Data) != "hello" {
		t.Fatalf("SourceRes.DecodeReduced: %+v %d %v", d, k, err)
	}
	if _, err := d.DecodeReduced(buf[:n], data[:4]); !errors.Is(err, ErrChunk) {
		t.Errorf("short write chunk: %v", err)
	}
}

func TestInPlace(t *testing.T) {
	buf := bytes.Repeat([]byte{0xee}, 64)
	var a SinkArgs
	a.Seed = 42
	a.Data = buf[a.ReducedSize():][:13]
	Fill(a.Data, a.Seed, 0)
	n, err := a.Encode(buf)
	if err != nil || n != 16+16 {
		t.Fatal(n, err)
	}
	if !bytes.Equal(buf[29:32], []byte{0, 0, 0}) {
		t.Errorf("pad not zeroed: %x", buf[29:32])
	}
	var d SinkArgs
	if _, err := d.Decode(buf[:n]); err != nil || Verify(d.Data, 42, 0) != -1 || len(d.Data) != 13 {
		t.Fatalf("in-place payload: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	payload := make([]byte, 3000)
	buf := make([]byte, 4096)
	for range 1000 {
		data := payload[:r.IntN(len(payload))]
		seed := r.Uint64()
		Fill(data, seed, 0)
		vals := []struct{ v, d codec }{
			{&Echo{Data: data}, &Echo{}},
			{&SinkArgs{Seed: seed, Verify: r.IntN(2) == 1, Data: data}, &SinkArgs{}},
			{&SinkRes{Count: r.Uint32(), Check: CheckStat(r.IntN(3)), BadOffset: r.Uint32()}, &SinkRes{}},
			{&SourceArgs{Seed: seed, Size: r.Uint32(), Fill: r.IntN(2) == 1}, &SourceArgs{}},
			{&SourceRes{Stat: SourceStat(r.IntN(2)), Data: data}, &SourceRes{}},
		}
		for _, c := range vals {
			n, err := c.v.Encode(buf)
			if err != nil || n%4 != 0 {
				t.Fatalf("%T encode: %d %v", c.v, n, err)
			}
			if m, err := c.d.Decode(buf[:n]); err != nil || m != n {
				t.Fatalf("%T decode: %d %v", c.d, m, err)
			}
			if !equal(c.v, c.d) {
				t.Fatalf("round trip %+v -> %+v", c.v, c.d)
			}
			if s, ok := c.v.(interface{ Size() int }); ok && s.Size() != n {
				t.Fatalf("%T Size %d, encoded %d", c.v, s.Size(), n)
			}
		}
		if SourceResSize(len(data)) != (&SourceRes{Data: data}).Size() {
			t.Fatal("SourceResSize")
		}
	}
}

func equal(a, b codec) bool {
	switch x := a.(type) {
	case *Echo:
		return bytes.Equal(x.Data, b.(*Echo).Data)
	case *SinkArgs:
		y := b.(*SinkArgs)
		return x.Seed == y.Seed && x.Verify == y.Verify && bytes.Equal(x.Data, y.Data)
	case *SinkRes:
		return *x == *b.(*SinkRes)
	case *SourceArgs:
		return *x == *b.(*SourceArgs)
	case *SourceRes:
		y := b.(*SourceRes)
		return x.Stat == y.Stat && bytes.Equal(x.Data, y.Data)
	}
	return false
}

func TestPatternVector(t *testing.T) {
	// Computed independently (Python) from the rule in pattern.go, so a C peer can match it.
	for _, c := range []struct {
		seed uint64
		want string
	}{
		{0, "afcd1d7b39a820e2c44968faf2215880d9c5b279"},
		{0x12345678, "6f6b90d139dcf13884e7da50f35529d7996325d0"},
	} {
		b := make([]byte, 20)
		Fill(b, c.seed, 0)
		if got := hex.EncodeToString(b); got != c.want {
			t.Errorf("seed %#x: %s, want %s", c.seed, got, c.want)
		}
	}
}

func TestPattern(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	whole := make([]byte, 1000)
	for range 300 {
		seed := r.Uint64()
		Fill(whole, seed, 0)
		// Filling any piece at its offset reproduces the same bytes.
		lo := r.IntN(len(whole))
		hi := lo + r.IntN(len(whole)-lo+1)
		piece := make([]byte, hi-lo)
		Fill(piece, seed, uint64(lo))
		if !bytes.Equal(piece, whole[lo:hi]) {
			t.Fatalf("Fill(off %d) differs from the whole", lo)
		}
		if bad := Verify(whole[lo:hi], seed, uint64(lo)); bad != -1 {
			t.Fatalf("Verify of a good piece at %d: %d", lo, bad)
		}
		// A single flipped bit anywhere is found at its exact index.
		if hi > lo {
			i := r.IntN(hi - lo)
			piece[i] ^= 1 << r.IntN(8)
			if bad := Verify(piece, seed, uint64(lo)); bad != i {
				t.Fatalf("flip at %d (off %d, len %d) reported at %d", i, lo, len(piece), bad)
			}
		}
	}
	Fill(whole, 1, 0)
	if bad := Verify(whole[8:], 1, 0); bad != 0 {
		t.Errorf("data shifted by a word: %d", bad)
	}
	if bad := Verify(whole[1:], 1, 1); bad != -1 {
		t.Errorf("unaligned good piece: %d", bad)
	}
	if bad := Verify(whole, 2, 0); bad != 0 {
		t.Errorf("other seed: %d", bad)
	}
	if bad := Verify(make([]byte, 64), 0, 0); bad != 0 {
		t.Errorf("zeroed buffer: %d", bad)
	}
	// The 32-byte fast loop hands over to the word loop: a bad byte late in a block.
	Fill(whole, 3, 0)
	whole[32+27] ^= 0x80
	if bad := Verify(whole, 3, 0); bad != 59 {
		t.Errorf("bad byte in second block: %d", bad)
	}
}

func TestEnumStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{CheckBad.String(), "CHECK_BAD"}, {CheckStat(3).String(), "check_stat(invalid)"},
		{SourceTooBig.String(), "SOURCE_TOOBIG"}, {SourceStat(2).String(), "source_stat(invalid)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
