package results

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

var t0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

// echo64 is an inline ECHO point.
var echo64 = Params{Procedure: "ECHO", Class: "auto", CallBytes: 64, ReplyBytes: 64, InlineThreshold: 4096, Depth: 1, Connections: 1}

func TestSupports(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		p    float64
		want bool
	}{
		{19, 50, false}, {20, 50, true},
		{99, 90, false}, {100, 90, true},
		{999, 99, false}, {1000, 99, true},
		{1000, 99.9, false}, {9999, 99.9, false}, {10000, 99.9, true}, {100000, 99.9, true},
		{99999, 99.99, false}, {100000, 99.99, true},
		{1 << 40, 0, false}, {1 << 40, 100, false}, {1 << 40, -1, false},
	} {
		if got := Supports(c.n, c.p); got != c.want {
			t.Errorf("Supports(%d, %v) = %v, want %v", c.n, c.p, got, c.want)
		}
	}
}

func summarizeN(t *testing.T, n int) Point {
	t.Helper()
	r := NewRecorder()
	rng := rand.New(rand.NewPCG(1, 2))
	for range n {
		r.Record(rpcproto.Short, rpcproto.Short, 1000+rng.Int64N(9000), 8)
	}
	p, err := Summarize(Params{Class: "auto"}, t0, t0.Add(1e9), r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPercentileRule(t *testing.T) {
	p := summarizeN(t, 1000)
	if p.RTT.P99 == nil || p.RTT.P999 != nil || p.RTT.P9999 != nil {
		t.Errorf("n=1000: p99 %v p99.9 %v p99.99 %v; want p99 present, p99.9 and p99.99 absent", p.RTT.P99, p.RTT.P999, p.RTT.P9999)
	}
	p = summarizeN(t, 100000)
	if p.RTT.P999 == nil || p.RTT.P9999 == nil {
		t.Errorf("n=100000: p99.9 %v p99.99 %v; want both present", p.RTT.P999, p.RTT.P9999)
	}
	if *p.RTT.P50 > *p.RTT.P90 || *p.RTT.P90 > *p.RTT.P99 || *p.RTT.P99 > *p.RTT.P999 {
		t.Errorf("percentiles not monotone: %+v", p.RTT)
	}
	// Uniform on [1000, 10000): p50 ~ 5500, p90 ~ 9100.
	if d := *p.RTT.P50 - 5500; d < -100 || d > 100 {
		t.Errorf("p50 = %d, want ~5500", *p.RTT.P50)
	}
	if d := *p.RTT.P90 - 9100; d < -100 || d > 100 {
		t.Errorf("p90 = %d, want ~9100", *p.RTT.P90)
	}
	p = summarizeN(t, 1)
	if p.RTT.Stdev != nil || p.RTT.P50 != nil || p.RTT.Min == nil || *p.RTT.Min != *p.RTT.Max {
		t.Errorf("n=1: %+v, want min = max, no stdev, no percentiles", p.RTT)
	}
	p = summarizeN(t, 0)
	if p.RTT != (Summary{}) {
		t.Errorf("n=0: %+v, want all null", p.RTT)
	}
}

func TestMomentsExact(t *testing.T) {
	for _, c := range []struct {
		vals        []int64
		mean, stdev int64
	}{
		{[]int64{1000, 2000, 3000}, 2000, 1000},
		{[]int64{5, 5, 5, 5}, 5, 0},
		// Sub-microsecond spread that integer-µs deviations (perftest) would report as 0.
		{[]int64{1000, 1400, 1000, 1400}, 1200, 231},
	} {
		var m moments
		for _, v := range c.vals {
			m.add(v)
		}
		s := m.summary()
		if *s.Mean != c.mean || *s.Stdev != c.stdev {
			t.Errorf("%v: mean %d stdev %d, want %d %d", c.vals, *s.Mean, *s.Stdev, c.mean, c.stdev)
		}
	}
	// Near 100 s the squares pass 2^64 and a float64 sum of squares loses everything:
	// 100 values 1e11-k*1000 have stdev 1000*sqrt(100*101/12) = 29011.49.
	var m moments
	for k := range int64(100) {
		m.add(HistogramHighest - k*1000)
	}
	if s := m.summary(); *s.Stdev != 29011 || *s.Mean != HistogramHighest-49500 {
		t.Errorf("near 100 s: mean %d stdev %d, want %d 29011", *s.Mean, *s.Stdev, int64(HistogramHighest-49500))
	}
}

func TestMergeEqualsSingle(t *testing.T) {
	one := NewRecorder()
	many := []*Recorder{NewRecorder(), NewRecorder(), NewRecorder()}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 50000 {
		call, reply := rpcproto.Kinds[rng.IntN(3)], rpcproto.Kinds[rng.IntN(3)]
		v := rng.Int64N(1e7)
		if i%1000 == 0 {
			v = -5 // clamped
		}
		n := rng.IntN(10000)
		w := many[i%3]
		for _, r := range []*Recorder{one, w} {
			r.Record(call, reply, v, n)
		}
		if i%5000 == 0 {
			err := fmt.Errorf("err %d", i)
			one.Fail("checksum", err)
			w.Fail("checksum", err)
		}
	}
	a, err := Summarize(echo64, t0, t0.Add(1e9), one)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Summarize(echo64, t0, t0.Add(1e9), many...)
	if err != nil {
		t.Fatal(err)
	}
	// Messages are kept per recorder then concatenated, so only their count may differ.
	if len(a.Errors) != len(b.Errors) {
		t.Fatalf("errors %+v vs %+v", a.Errors, b.Errors)
	}
	for i := range a.Errors {
		if a.Errors[i].Kind != b.Errors[i].Kind || a.Errors[i].Count != b.Errors[i].Count {
			t.Errorf("errors[%d]: %+v vs %+v", i, a.Errors[i], b.Errors[i])
		}
		a.Errors[i].Messages, b.Errors[i].Messages = nil, nil
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("merged summary differs from single recorder:\n%+v\n%+v", a, b)
	}
	if a.Errors[0].Kind != "checksum" || a.Errors[1].Kind != "rtt_out_of_range" || a.Errors[1].Count != 50 {
		t.Errorf("errors = %+v, want checksum then 50 rtt_out_of_range", a.Errors)
	}
}

func TestClassAttribution(t *testing.T) {
	r := NewRecorder()
	r.Record(rpcproto.Short, rpcproto.Long, 5000, 100)
	r.Record(rpcproto.Short, rpcproto.Short, 1000, 10)
	r.Record(rpcproto.Chunked, rpcproto.Short, 3000, 10)
	p, err := Summarize(Params{Class: "auto"}, t0, t0.Add(1e6), r)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]uint64{ // calls, replies, rtt count
		"short":   {2, 2, 1},
		"chunked": {1, 0, 1},
		"long":    {0, 1, 1},
	}
	if len(p.Classes) != 3 {
		t.Fatalf("classes = %+v", p.Classes)
	}
	for _, c := range p.Classes {
		w := want[c.Class]
		if c.Calls != w[0] || c.Replies != w[1] || c.RTT.Count != w[2] {
			t.Errorf("%s: calls %d replies %d count %d, want %v", c.Class, c.Calls, c.Replies, c.RTT.Count, w)
		}
	}
	if *p.Classes[2].RTT.Max != 5000 {
		t.Errorf("long class max = %d, want 5000", *p.Classes[2].RTT.Max)
	}
	// 3 RPCs, 120 payload bytes in 1 ms.
	if p.Throughput.RPCPerSec != 3000 || p.Throughput.PayloadGbps != 120*8/1e6 {
		t.Errorf("throughput = %+v", p.Throughput)
	}
}

func TestFail(t *testing.T) {
	r := NewRecorder()
	for i := range 5 {
		r.Fail("timeout", fmt.Errorf("t%d", i))
	}
	r.Fail("remote_access", nil)
	if _, _, n := r.Totals(); n != 6 {
		t.Errorf("Totals errs = %d, want 6", n)
	}
	if got := r.errs[0]; got.Count != 5 || !reflect.DeepEqual(got.Messages, []string{"t0", "t1", "t2"}) {
		t.Errorf("timeout = %+v", got)
	}
	if got := r.errs[1]; got.Count != 1 || len(got.Messages) != 0 {
		t.Errorf("remote_access = %+v", got)
	}
	r.Reset()
	if rpcs, pl, n := r.Totals(); rpcs+pl+n != 0 || len(r.errs) != 0 {
		t.Error("Reset left counts")
	}
}

func TestSummarizeNoRecorders(t *testing.T) {
	if _, err := Summarize(Params{}, t0, t0); !errors.Is(err, ErrNoRecorders) {
		t.Errorf("err = %v", err)
	}
}

func TestRecordNoAllocs(t *testing.T) {
	r := NewRecorder()
	r.SetProcedures([]string{"read", "write"})
	var v int64
	allocs := testing.AllocsPerRun(1000, func() {
		v += 997
		r.Record(rpcproto.Short, rpcproto.Chunked, v%5e6, 4096)
		r.Record(rpcproto.Long, rpcproto.Long, -1, 0)
		r.Record(rpcproto.Long, rpcproto.Long, 1<<62, 0)
		r.RecordProc(1, v%5e6)
		r.FailProc(0)
		r.Totals()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per recording, want 0", allocs)
	}
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	v := int64(1)
	for b.Loop() {
		v = v*6364136223846793005 + 1
		r.Record(rpcproto.Short, rpcproto.Short, 1000+(v>>40)&0xffff, 64)
	}
}

func BenchmarkSummarize(b *testing.B) {
	recs := []*Recorder{NewRecorder(), NewRecorder()}
	for i := range 100000 {
		recs[i%2].Record(rpcproto.Short, rpcproto.Short, int64(1000+i%5000), 64)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Summarize(echo64, t0, t0.Add(1e9), recs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordNarrow records RTTs spread over 1 µs, as a steady closed-loop point sees
// them: the histogram cells in use stay in cache.
func BenchmarkRecordNarrow(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	v := int64(1)
	for b.Loop() {
		v = v*6364136223846793005 + 1
		r.Record(rpcproto.Short, rpcproto.Short, 2000+(v>>40)&0x3ff, 64)
	}
}

// A mix's RPCs are broken down by procedure when the recorders are told the procedures:
// counts and errors per procedure add up to the point's, across merged recorders.
func TestProcedures(t *testing.T) {
	names := []string{"read", "write"}
	recs := []*Recorder{NewRecorder(), NewRecorder()}
	for i, r := range recs {
		r.SetProcedures(names)
		for j := range 100 {
			p := (i + j) % 2
			r.Record(rpcproto.Short, rpcproto.Short, int64(1000*(p+1)), 8)
			r.RecordProc(p, int64(1000*(p+1)))
		}
		r.Fail("nfs3err_io", nil)
		r.FailProc(1)
	}
	p, err := Summarize(Params{Procedure: "MIX:x"}, time.Unix(0, 0), time.Unix(1, 0), recs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Procedures) != 2 || p.Procedures[0].Procedure != "read" || p.Procedures[0].RTT.Count != 100 ||
		p.Procedures[1].RTT.Count != 100 || p.Procedures[1].Errors != 2 || *p.Procedures[0].RTT.P50 >= *p.Procedures[1].RTT.P50 {
		t.Fatalf("procedures %+v", p.Procedures)
	}
	var b strings.Builder
	if err := WriteText(&b, &Run{Points: []Point{p}}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ +READ +mixed +mixed .* all +100 `).MatchString(b.String()) || !regexp.MustCompile(`(?m)^ +WRITE .* 2 *$`).MatchString(b.String()) {
		t.Errorf("table:\n%s", b.String())
	}
	// One procedure: no breakdown.
	one := NewRecorder()
	one.SetProcedures(names[:1])
	one.Record(rpcproto.Short, rpcproto.Short, 1000, 8)
	one.RecordProc(0, 1000)
	if p, _ := Summarize(Params{}, time.Unix(0, 0), time.Unix(1, 0), one); p.Procedures != nil {
		t.Errorf("one procedure broken down: %+v", p.Procedures)
	}
	// Recorders that disagree on the procedures do not merge.
	other := NewRecorder()
	other.SetProcedures([]string{"getattr", "write"})
	if _, err := Summarize(Params{}, time.Unix(0, 0), time.Unix(1, 0), recs[0], other); err == nil {
		t.Error("merged recorders of different procedures")
	}
}
