package engine

import (
	"io"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// With the requester's pollers pinned, the responder in this process is pinned too, to the
// CPU of the list after theirs: one side pinned alone is placed anew beside the other in
// every process.
func TestEngineResponderPinnedAfterRequester(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skipf("no CPU affinity here: %v", err)
	}
	var cpus []int
	for i := 0; i < 1024 && len(cpus) < 2; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	c, err := workloads.Config{Prog: benchprog.Prog, Depth: 1, Count: 50, Warmup: workloads.NoWarmup, CPUs: cpus}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	pt := workloads.Point{Threshold: 4096, Depth: 1, Workload: c}
	var got []datapath.PollerStats
	cfg := EngineConfig{Provider: soft.New(soft.Config{}), Log: io.Discard,
		ResponderDone: func(_ int, st datapath.PollerStats) { got = append(got, st) }}
	conn, err := openLocal(cfg, []workloads.Point{pt})
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if want := cpus[1%len(cpus)]; len(got) != 1 || got[0].CPU != want {
		t.Fatalf("responder's pollers %+v, want one pinned to CPU %d (the requester's: %v)", got, want, cpus[:1])
	}
}
