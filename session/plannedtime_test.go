package session

import (
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// A point's planned time is its warm-up and duration; one that ends on a count has none.
func TestPlannedTime(t *testing.T) {
	pt := func(d, w time.Duration) workloads.Point {
		return workloads.Point{Workload: workloads.Config{Prog: benchprog.Prog, Duration: workloads.Duration(d), Warmup: workloads.Duration(w)}}
	}
	if got := PlannedTime([]workloads.Point{pt(time.Second, time.Second), pt(2*time.Second, -1)}); got != 2*time.Second {
		t.Errorf("got %v, want the mean of 2s and 2s", got)
	}
	if got := PlannedTime([]workloads.Point{pt(time.Second, 0), pt(0, 0)}); got != 0 {
		t.Errorf("with a point ending on a count: got %v, want 0", got)
	}
}
