package workloads

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

func TestPlanOrderAndPoints(t *testing.T) {
	s := Sweep{Thresholds: []int{1024, 4096}, Sizes: []int{64, 8192}, Depths: []int{1, 8}, Proc: "source", Base: Config{Prog: benchprog.Prog}}
	pts, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 8 {
		t.Fatalf("%d points, want 2×2×2", len(pts))
	}
	want := [][3]int{
		{1024, 1, 64}, {1024, 1, 8192}, {1024, 8, 64}, {1024, 8, 8192},
		{4096, 1, 64}, {4096, 1, 8192}, {4096, 8, 64}, {4096, 8, 8192},
	}
	for i, p := range pts {
		if p.Index != i || [3]int{p.Threshold, p.Depth, p.Size} != want[i] {
			t.Errorf("point %d = %d %d/%d/%d, want %v", i, p.Index, p.Threshold, p.Depth, p.Size, want[i])
		}
		w := p.Workload
		if w.Depth != p.Depth || !reflect.DeepEqual(w.Mix, []MixEntry{{Proc: "source", Weight: 1, Size: Fixed(p.Size)}}) {
			t.Errorf("point %d workload %+v", i, w)
		}
		if time.Duration(w.Duration) != DefaultPointDuration || time.Duration(w.Warmup) != DefaultPointWarmup {
			t.Errorf("point %d runs %v after %v", i, w.Duration, w.Warmup)
		}
	}
}

func TestZeroSweepIsTheIssueGrid(t *testing.T) {
	pts, err := Sweep{Base: Config{Prog: benchprog.Prog}}.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 4*8 || pts[0].Workload.Mix[0].Proc != "echo" || pts[0].Size != 64 || pts[len(pts)-1].Size != 1<<20 ||
		pts[0].Threshold != 1024 || pts[len(pts)-1].Threshold != 64<<10 || pts[0].Depth != DefaultDepth {
		t.Fatalf("zero sweep: %d points, first %+v", len(pts), pts[0])
	}
}

func TestPlanRejects(t *testing.T) {
	for _, s := range []Sweep{
		{Thresholds: []int{512}, Base: Config{Prog: benchprog.Prog}},
		{Thresholds: []int{1500}, Base: Config{Prog: benchprog.Prog}},
		{Depths: []int{0}, Base: Config{Prog: benchprog.Prog}},
		{Sizes: []int{-1}, Base: Config{Prog: benchprog.Prog}},
		{Base: Config{Prog: benchprog.Prog, Rate: -1}},
		{}, // no program
		{Base: Config{Program: 100003, Version: 3}}, // no procedure with a payload to sweep
	} {
		if _, err := s.Plan(); err == nil {
			t.Errorf("%+v planned", s)
		}
	}
}

func TestSwitches(t *testing.T) {
	obs := func(th, size int, counts ...uint64) Observed {
		o := Observed{Point: Point{Threshold: th, Size: size, Depth: 1}}
		copy(o.Classes[1:], counts)
		return o
	}
	got := Switches([]Observed{
		obs(1024, 64, 10), obs(1024, 1024, 2, 0, 9), obs(1024, 4096, 0, 0, 10),
		obs(4096, 64, 10), obs(4096, 1024, 10), obs(4096, 16384, 0, 10), obs(4096, 65536), // no RPCs: skipped
		obs(4096, 262144, 0, 1, 7),
	})
	want := []Switch{
		{Threshold: 1024, Depth: 1, From: rpcproto.Short, To: rpcproto.Long, Below: 64, At: 1024},
		{Threshold: 4096, Depth: 1, From: rpcproto.Short, To: rpcproto.Chunked, Below: 1024, At: 16384},
		{Threshold: 4096, Depth: 1, From: rpcproto.Chunked, To: rpcproto.Long, Below: 16384, At: 262144},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestSweepOverMixes(t *testing.T) {
	user, err := ParseMix("echo/128:3,sink/32k,null", benchprog.Prog)
	if err != nil {
		t.Fatal(err)
	}
	s := Sweep{Thresholds: []int{1024, 4096}, Depths: []int{1, 8}, Mixes: [][]MixEntry{nfsLike(t), user}, Sizes: []int{64, 128}, Base: Config{Prog: benchprog.Prog}}
	pts, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2*2*2 {
		t.Fatalf("%d points, want thresholds × depths × mixes (sizes unused)", len(pts))
	}
	for i, p := range pts {
		wantMix := []string{"nfs-like", "echo_128:3+sink_32k+null"}[i%2]
		if p.Mix != wantMix || p.Size != 0 || p.Threshold != []int{1024, 4096}[i/4] || p.Depth != []int{1, 8}[i/2%2] || p.Workload.Depth != p.Depth {
			t.Errorf("point %d: %+v", i, p)
		}
		if MixName(p.Workload.Mix, benchprog.Prog) != p.Mix {
			t.Errorf("point %d: workload mix is %q", i, MixName(p.Workload.Mix, benchprog.Prog))
		}
	}
	// An entry without a size takes the base size, and the name says which.
	s = Sweep{Thresholds: []int{4096}, Mixes: [][]MixEntry{{{Proc: "echo"}}}, Base: Config{Prog: benchprog.Prog, Size: Fixed(2048)}}
	if pts, err := s.Plan(); err != nil || pts[0].Mix != "echo_2k" {
		t.Fatalf("%v %+v", err, pts)
	}
	s.Mixes = [][]MixEntry{{{Proc: "null", Size: Fixed(8)}}}
	if _, err := s.Plan(); err == nil || !strings.Contains(err.Error(), "mix 1") {
		t.Fatalf("bad mix: %v", err)
	}
}

func TestMixName(t *testing.T) {
	n, _ := Config{Prog: benchprog.Prog}.Normalized()
	if got := MixName(n.Mix, benchprog.Prog); got != "nfs-like" {
		t.Errorf("default mix %q", got)
	}
	for _, spec := range []string{"echo/128:3,sink/32k", "source:2", "null,echo"} {
		m, err := ParseMix(spec, benchprog.Prog)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Config{Prog: benchprog.Prog, Mix: m, Size: Sizes{Dist: "list", Values: []int{64, 4096}}}.Normalized()
		if err != nil {
			t.Fatal(err)
		}
		name := MixName(c.Mix, benchprog.Prog)
		if strings.ContainsAny(name, "/,= ") || name == "nfs-like" {
			t.Errorf("%s: name %q", spec, name)
		}
	}
	a, _ := ParseMix("echo/128:40,sink/4k", benchprog.Prog)
	b, _ := ParseMix("echo/128:40,sink/8k", benchprog.Prog)
	if MixName(a, benchprog.Prog) == MixName(b, benchprog.Prog) {
		t.Errorf("different mixes share the name %q", MixName(a, benchprog.Prog))
	}
}
