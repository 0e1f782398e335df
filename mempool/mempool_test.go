//go:build linux

package mempool

import (
	"errors"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

func newRegion(t testing.TB, dev datapath.Device, cfg Config) *Region {
	t.Helper()
	r, err := New(dev, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func onePool(size, count int) Config {
	return Config{Pools: []PoolConfig{{Name: "p", Size: size, Count: count}}}
}

func TestCarvingNoOverlapAligned(t *testing.T) {
	page := os.Getpagesize()
	cfg := Config{Pools: []PoolConfig{
		{Name: "send", Size: 1024, Count: 8},     // default 64-byte alignment
		{Name: "odd", Size: 10, Count: 5},        // stride rounds up to 64
		{Name: "recv", Size: page + 4, Count: 3}, // default page alignment
		{Name: "al256", Size: 100, Count: 7, Align: 256},
		{Name: "payload", Size: 1 << 20, Count: 2}, // chunk-sized
	}}
	r := newRegion(t, nil, cfg)
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	wantAlign := map[string]int{"send": 64, "odd": 64, "recv": page, "al256": 256, "payload": page}
	base := addrOf(r.Bytes())
	if base%uint64(page) != 0 {
		t.Fatalf("region base %#x not page aligned", base)
	}
	type span struct {
		lo, hi uint64
		idx    uint32
	}
	var spans []span
	next := uint32(0)
	for i, p := range r.Pools() {
		pc := cfg.Pools[i]
		if p.Name() != pc.Name || p.Size() != pc.Size || p.Cap() != pc.Count || p.Free() != pc.Count {
			t.Fatalf("pool %d = %s size %d cap %d free %d, want %+v", i, p.Name(), p.Size(), p.Cap(), p.Free(), pc)
		}
		if r.Pool(pc.Name) != p {
			t.Fatalf("Region.Pool(%q) is not pool %d", pc.Name, i)
		}
		if got := r.Info().Pools[i].Align; got != wantAlign[pc.Name] {
			t.Errorf("pool %s align %d, want %d", pc.Name, got, wantAlign[pc.Name])
		}
		for j := 0; j < pc.Count; j++ {
			b := p.Get()
			if b == nil {
				t.Fatalf("pool %s exhausted after %d of %d", pc.Name, j, pc.Count)
			}
			if b.Index() != next {
				t.Fatalf("pool %s buffer %d has index %d, want %d (indexes are dense in config order)", pc.Name, j, b.Index(), next)
			}
			next++
			if r.Buf(b.Index()) != b || p.Buf(b.Index()) != b || b.Pool() != p {
				t.Fatalf("index %d does not map back to its buffer", b.Index())
			}
			if len(b.Bytes()) != pc.Size || cap(b.Bytes()) != pc.Size {
				t.Fatalf("buffer %d len %d cap %d, want %d", b.Index(), len(b.Bytes()), cap(b.Bytes()), pc.Size)
			}
			if a := addrOf(b.Bytes()); a != b.Addr() {
				t.Fatalf("unregistered buffer Addr %#x, want its virtual address %#x", b.Addr(), a)
			}
			if b.Addr()%uint64(wantAlign[pc.Name]) != 0 {
				t.Fatalf("buffer %d at %#x not aligned to %d", b.Index(), b.Addr(), wantAlign[pc.Name])
			}
			if b.Addr() < base || b.Addr()+uint64(pc.Size) > base+uint64(len(r.Bytes())) {
				t.Fatalf("buffer %d [%#x,+%d) outside the region", b.Index(), b.Addr(), pc.Size)
			}
			spans = append(spans, span{b.Addr(), b.Addr() + uint64(pc.Size), b.Index()})
			for k := range b.Bytes() {
				b.Bytes()[k] = byte(b.Index())
			}
		}
		if p.Get() != nil {
			t.Fatalf("pool %s gave more than %d buffers", pc.Name, pc.Count)
		}
	}
	if r.Buf(next) != nil || r.Pools()[0].Buf(next-1) != nil {
		t.Fatal("Buf accepted an index outside the region or pool")
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			t.Fatalf("buffers %d and %d overlap", spans[i-1].idx, spans[i].idx)
		}
	}
	// Writes through one buffer are seen by no other: each still holds its own pattern.
	for _, p := range r.Pools() {
		for i := 0; i < p.Cap(); i++ {
			b := &p.bufs[i]
			for k, v := range b.Bytes() {
				if v != byte(b.Index()) {
					t.Fatalf("buffer %d byte %d = %d, overwritten", b.Index(), k, v)
				}
			}
			if err := p.Put(b); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestSGEClamped(t *testing.T) {
	r := newRegion(t, nil, onePool(100, 1))
	defer r.Close()
	p := r.Pools()[0]
	b := p.Get()
	defer p.Put(b)
	for _, tc := range []struct {
		off, n  int
		wantOff uint64
		wantLen uint32
	}{
		{0, 40, 0, 40},
		{0, 1000, 0, 100},
		{90, 20, 90, 10},
		{-5, 10, 0, 10},
		{150, 10, 100, 0},
		{10, -1, 10, 0},
	} {
		s := b.Sub(tc.off, tc.n)
		if s.Addr != b.Addr()+tc.wantOff || s.Length != tc.wantLen {
			t.Errorf("Sub(%d, %d) = %+v, want addr +%d len %d", tc.off, tc.n, s, tc.wantOff, tc.wantLen)
		}
	}
	if s := b.SGE(64); s.Addr != b.Addr() || s.Length != 64 {
		t.Errorf("SGE(64) = %+v", s)
	}
}

func TestGetPutErrors(t *testing.T) {
	r := newRegion(t, nil, Config{Pools: []PoolConfig{{Name: "a", Size: 64, Count: 3}, {Name: "b", Size: 64, Count: 1}}})
	defer r.Close()
	a, b := r.Pools()[0], r.Pools()[1]
	x, y := a.Get(), a.Get()
	if err := b.Put(x); !errors.Is(err, ErrForeign) {
		t.Fatalf("Put into another pool: %v, want ErrForeign", err)
	}
	if err := a.Put(nil); !errors.Is(err, ErrForeign) {
		t.Fatalf("Put(nil): %v, want ErrForeign", err)
	}
	if err := a.Put(x); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(x); !errors.Is(err, ErrNotOut) {
		t.Fatalf("double Put: %v, want ErrNotOut", err)
	}
	if a.Free() != 2 {
		t.Fatalf("free list holds %d after a rejected double Put, want 2", a.Free())
	}
	if got := a.Get(); got != x {
		t.Fatalf("Get after Put returned %d, want the most recently put %d (LIFO)", got.Index(), x.Index())
	}
	if err := a.Put(x); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(y); err != nil {
		t.Fatal(err)
	}
}

func TestCloseReportsLeaks(t *testing.T) {
	r := newRegion(t, nil, Config{Pools: []PoolConfig{{Name: "send", Size: 64, Count: 4}, {Name: "payload", Size: 8192, Count: 2}}})
	send, payload := r.Pools()[0], r.Pools()[1]
	s0, s1, pl := send.Get(), send.Get(), payload.Get()
	_ = send.Put(s0)
	start := addrOf(r.Bytes())
	if _, ok := smapsOf(t, start); !ok {
		t.Fatal("region not found in /proc/self/smaps")
	}
	err := r.Close()
	var le *LeakError
	if !errors.As(err, &le) {
		t.Fatalf("Close with buffers out: %v, want a *LeakError", err)
	}
	if len(le.Indexes) != 2 || le.Indexes[0] != s1.Index() || le.Indexes[1] != pl.Index() || le.Pools[0] != "send" || le.Pools[1] != "payload" {
		t.Fatalf("leaks %v %v, want [%d %d] [send payload]", le.Indexes, le.Pools, s1.Index(), pl.Index())
	}
	msg := err.Error()
	for _, want := range []string{"2 buffer(s) still out", "send#1", "payload#4"} {
		if !strings.Contains(msg, want) {
			t.Errorf("leak error %q lacks %q", msg, want)
		}
	}
	if _, ok := smapsOf(t, start); ok {
		t.Fatal("region still mapped after Close")
	}
	if send.Get() != nil {
		t.Fatal("Get after Close returned a buffer")
	}
	if err := r.Close(); !errors.Is(err, datapath.ErrClosed) {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
}

func TestCloseCleanReturnsNil(t *testing.T) {
	r := newRegion(t, nil, onePool(64, 2))
	p := r.Pools()[0]
	_ = p.Put(p.Get())
	if err := r.Close(); err != nil {
		t.Fatalf("Close with every buffer returned: %v", err)
	}
}

func TestLeakErrorListIsBounded(t *testing.T) {
	r := newRegion(t, nil, onePool(64, 40))
	p := r.Pools()[0]
	for p.Get() != nil {
	}
	err := r.Close()
	if err == nil || !strings.Contains(err.Error(), "40 buffer(s) still out") || !strings.Contains(err.Error(), "and 24 more") {
		t.Fatalf("Close = %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	page := os.Getpagesize()
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no pools"},
		{onePool(0, 1), "buffer size 0"},
		{onePool(64, 0), "buffer count 0"},
		{Config{Pools: []PoolConfig{{Name: "x", Size: 64, Count: 1, Align: 48}}}, `pool "x": alignment 48`},
		{Config{Pools: []PoolConfig{{Size: 64, Count: 1, Align: 2 * page}}}, `pool "pool0": alignment`},
		{onePool(1<<30, 1<<12), "exceed the region limit"},
	} {
		_, err := New(nil, tc.cfg)
		var e *datapath.OpError
		if !errors.As(err, &e) || e.Op != "mempool: config" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want a config error containing %q", tc.cfg, err, tc.want)
		}
	}
}

func TestGetPutZeroAllocs(t *testing.T) {
	r := newRegion(t, nil, Config{Pools: []PoolConfig{{Size: 2048, Count: 16}, {Size: 1 << 20, Count: 2}}})
	defer r.Close()
	p := r.Pools()[0]
	var sink datapath.SGE
	allocs := testing.AllocsPerRun(1000, func() {
		a, b := p.Get(), p.Get()
		sink = a.SGE(100)
		sink = b.Sub(8, 100)
		_ = p.Put(b)
		_ = p.Put(a)
		_ = p.Put(a) // the error path too
	})
	_ = sink
	if allocs != 0 {
		t.Fatalf("Get/SGE/Put allocate %v times per run", allocs)
	}
}

func BenchmarkGetPut(b *testing.B) {
	r := newRegion(b, nil, onePool(1024, 64))
	defer r.Close()
	p := r.Pools()[0]
	b.ReportAllocs()
	for b.Loop() {
		buf := p.Get()
		if err := p.Put(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetPutBatch takes a credit window's worth of buffers before returning them, as a
// poller does for a batch of requests.
func BenchmarkGetPutBatch(b *testing.B) {
	const window = 32
	r := newRegion(b, nil, onePool(1024, window))
	defer r.Close()
	p := r.Pools()[0]
	var held [window]*Buf
	b.ReportAllocs()
	for b.Loop() {
		for i := range held {
			held[i] = p.Get()
		}
		for _, buf := range held {
			_ = p.Put(buf)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*window), "ns/buf")
}
