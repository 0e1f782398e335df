package benchprog

import (
	"fmt"
	"testing"
)

func TestZeroAllocs(t *testing.T) {
	buf := make([]byte, 8192)
	payload := make([]byte, 4096)
	var (
		sa, sd SinkArgs
		sr     SinkRes
		oa     SourceArgs
		or, od SourceRes
		e      Echo
	)
	sa.Data = payload
	or.Data = payload
	a := testing.AllocsPerRun(200, func() {
		sa.Seed++
		Fill(payload, sa.Seed, 0)
		n, _ := sa.Encode(buf)
		if _, err := sd.Decode(buf[:n]); err != nil || Verify(sd.Data, sa.Seed, 0) != -1 {
			panic("sink args")
		}
		n, _ = sa.EncodeReduced(buf)
		if _, err := sd.DecodeReduced(buf[:n], payload); err != nil {
			panic(err)
		}
		n, _ = sr.Encode(buf)
		if _, err := sr.Decode(buf[:n]); err != nil {
			panic(err)
		}
		n, _ = oa.Encode(buf)
		if _, err := oa.Decode(buf[:n]); err != nil {
			panic(err)
		}
		n, _ = or.Encode(buf)
		if _, err := od.Decode(buf[:n]); err != nil {
			panic(err)
		}
		if _, _, err := DDPData(ProcSource, true, buf[:n]); err != nil {
			panic(err)
		}
		e.Data = payload
		n, _ = e.Encode(buf)
		if _, err := e.Decode(buf[:n]); err != nil {
			panic(err)
		}
		if _, err := e.Decode(buf[:3]); err == nil {
			panic("short echo accepted")
		}
	})
	if a != 0 {
		t.Errorf("%v allocs per run", a)
	}
}

func BenchmarkPattern(b *testing.B) {
	for _, size := range []int{64, 4096, 1 << 20} {
		buf := make([]byte, size)
		b.Run(fmt.Sprintf("Fill/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				Fill(buf, 7, 0)
			}
		})
		b.Run(fmt.Sprintf("Verify/%d", size), func(b *testing.B) {
			Fill(buf, 7, 0)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if Verify(buf, 7, 0) != -1 {
					b.Fatal("bad pattern")
				}
			}
		})
	}
}

func BenchmarkCodec(b *testing.B) {
	buf := make([]byte, 64)
	b.Run("SinkArgsReduced", func(b *testing.B) {
		a := SinkArgs{Seed: 1, Verify: true, Data: make([]byte, 1<<20)}
		var d SinkArgs
		b.ReportAllocs()
		for b.Loop() {
			n, _ := a.EncodeReduced(buf)
			if _, err := d.DecodeReduced(buf[:n], a.Data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SourceArgs", func(b *testing.B) {
		a := SourceArgs{Seed: 1, Size: 1 << 20, Fill: true}
		b.ReportAllocs()
		for b.Loop() {
			n, _ := a.Encode(buf)
			if _, err := a.Decode(buf[:n]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
