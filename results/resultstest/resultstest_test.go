package resultstest

import (
	"encoding/json"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

func TestDeterministic(t *testing.T) {
	s := Sweep{Seed: 3, Thresholds: []int{1024, 4096}, Sizes: []int{64, 8192}, Intervals: 3, FailSizes: []int{64}}
	a, _ := json.Marshal(s.Run(t))
	b, _ := json.Marshal(s.Run(t))
	if string(a) != string(b) {
		t.Fatal("the same sweep built two different runs")
	}
	s.Seed = 4
	if c, _ := json.Marshal(s.Run(t)); string(c) == string(a) {
		t.Fatal("another seed built the same run")
	}
}

func TestShape(t *testing.T) {
	r := Sweep{Seed: 1, Sizes: []int{64, 8192}, RPCs: 500, Workers: 2, Intervals: 4, FailSizes: []int{8192}}.Run(t)
	if len(r.Points) != 2 {
		t.Fatalf("%d points, want 2", len(r.Points))
	}
	for i, p := range r.Points {
		if p.Throughput.RPCs != 500 {
			t.Errorf("point %d: %d RPCs, want 500", i, p.Throughput.RPCs)
		}
		var rpcs, bytes uint64
		var errs int
		for _, iv := range p.Intervals {
			rpcs, bytes, errs = rpcs+iv.RPCs, bytes+iv.PayloadBytes, errs+int(iv.Errors)
		}
		if rpcs != p.Throughput.RPCs || bytes != p.Throughput.PayloadBytes {
			t.Errorf("point %d: intervals add up to %d RPCs %d B, want %d %d", i, rpcs, bytes, p.Throughput.RPCs, p.Throughput.PayloadBytes)
		}
		if want := i; errs != want {
			t.Errorf("point %d: %d interval errors, want %d", i, errs, want)
		}
	}
	if c := Class(8192, 4096); c != rpcproto.Chunked || r.Points[1].Classes[0].Class != "chunked" {
		t.Errorf("8 KiB at a 4 KiB threshold: %v, point classes %+v", c, r.Points[1].Classes)
	}
	if got := r.Points[0].Negotiated.Local.Hex; got != "f6ab0e1801010303" {
		t.Errorf("private data %s, want f6ab0e1801010303 (4 KiB both ways, RFC 8797)", got)
	}
}
