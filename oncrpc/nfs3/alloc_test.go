package nfs3

import (
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
)

func TestZeroAllocs(t *testing.T) {
	buf := make([]byte, 8192)
	payload := make([]byte, 4096)
	fh := make(FH, 32)
	readRes := testutil.Unhex(t, "00000000 "+postOpYes+"00001000 00000000 00001000")
	readRes = append(readRes, payload...)
	writeRes := testutil.Unhex(t, "00000000 "+preOpYes+postOpYes+"00001000 00000000 01020304 05060708")
	getattrRes := testutil.Unhex(t, "00000000 "+fattrHex)
	rdplus := testutil.Unhex(t, readdirplusHex)
	var (
		ga GetattrArgs
		ra ReadArgs
		wa WriteArgs
		gr GetattrRes
		rr ReadRes
		wr WriteRes
		dr ReaddirplusRes
		e  Entry
	)
	a := testing.AllocsPerRun(200, func() {
		ga.FH = fh
		if _, err := ga.Encode(buf); err != nil {
			panic(err)
		}
		ra = ReadArgs{FH: fh, Offset: 4096, Count: 4096}
		if _, err := ra.Encode(buf); err != nil {
			panic(err)
		}
		wa = WriteArgs{FH: fh, Count: 4096, Stable: FileSync, Data: payload}
		if _, err := wa.Encode(buf); err != nil {
			panic(err)
		}
		n, err := wa.EncodeReduced(buf)
		if err != nil {
			panic(err)
		}
		if _, _, err := DDPData(ProcWrite, false, buf[:n]); err != nil {
			panic(err)
		}
		if _, err := gr.Decode(getattrRes); err != nil {
			panic(err)
		}
		if _, err := rr.Decode(readRes); err != nil {
			panic(err)
		}
		off, l, err := DDPData(ProcRead, true, readRes)
		if err != nil {
			panic(err)
		}
		if _, err := rr.DecodeReduced(readRes[:off], readRes[off:off+l]); err != nil {
			panic(err)
		}
		if _, err := wr.Decode(writeRes); err != nil {
			panic(err)
		}
		if _, err := rr.Decode(readRes[:30]); err == nil {
			panic("truncated READ3res accepted")
		}
		if _, err := dr.Decode(rdplus); err != nil {
			panic(err)
		}
		for it := dr.Entries; it.Next(&e); {
		}
	})
	if a != 0 {
		t.Errorf("%v allocs per run", a)
	}
}

func BenchmarkCodec(b *testing.B) {
	buf := make([]byte, 256)
	readRes := testutil.Unhex(b, "00000000 "+postOpYes+"00100000 00000000 00100000")
	chunk := make([]byte, 1<<20)
	b.Run("ReadArgs+ReadResReduced", func(b *testing.B) {
		a := ReadArgs{FH: make(FH, 32), Count: 1 << 20}
		var r ReadRes
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Encode(buf); err != nil {
				b.Fatal(err)
			}
			if _, err := r.DecodeReduced(readRes, chunk); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WriteArgsReduced", func(b *testing.B) {
		a := WriteArgs{FH: make(FH, 32), Count: 1 << 20, Data: chunk}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.EncodeReduced(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
