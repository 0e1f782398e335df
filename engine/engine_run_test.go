package engine

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// runOnSoft runs pts on the transport engine over soft, its responder in this process, and
// returns the results file it wrote.
func runOnSoft(t *testing.T, pts []workloads.Point) *results.Run {
	t.Helper()
	return runOnSoftWith(t, nil, pts)
}

// runOnSoftWith is runOnSoft with the calls marshalled by codec (nil: the workload's).
func runOnSoftWith(t *testing.T, codec rpcproto.Codec, pts []workloads.Point) *results.Run {
	t.Helper()
	conn, err := Engine(EngineConfig{Provider: soft.New(soft.Config{}), Log: io.Discard, Codec: codec}, pts)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out := filepath.Join(t.TempDir(), "run.json")
	o, err := session.Run(context.Background(), session.Config{Command: "test", Points: pts, RunConfig: map[string]string{}, Provider: "soft",
		Connector: conn, Out: out, Log: io.Discard})
	if err != nil || o.Run.Status.State != results.StateComplete {
		t.Fatalf("run: %v, status %+v", err, o.Run.Status)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The default workload on the real engine over soft: every message class is used, and the
// file holds what the connection negotiated and the RDMA operations it posted.
func TestEngineRunUsesEveryClass(t *testing.T) {
	c, err := workloads.Config{Prog: benchprog.Prog, Count: 3000, Warmup: workloads.NoWarmup, Depth: 4}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	r := runOnSoft(t, []workloads.Point{{Threshold: 4096, Depth: 4, Workload: c}})
	p := r.Points[0]
	used := map[string]uint64{}
	for _, c := range p.Classes {
		used[c.Class] = c.Calls + c.Replies
	}
	if used["short"] == 0 || used["chunked"] == 0 || used["long"] == 0 || p.Throughput.RPCs != 3000 {
		t.Fatalf("classes %v, %d RPCs", used, p.Throughput.RPCs)
	}
	n := p.Negotiated
	if n == nil || n.Role != "requester" || n.InlineSendBytes != 4096 || n.Peer == nil || !n.Peer.Valid || p.Ops.Send.Count == 0 {
		t.Fatalf("negotiated %+v, ops %+v", n, p.Ops)
	}
}

// A sweep of ECHO over thresholds 1k..64k and sizes 64 B..1 MiB changes class exactly where
// the negotiated thresholds put it: a size T/4 goes inline under threshold T, a size T with
// its headers does not (ECHO data is not DDP-eligible, so it goes long).
func TestEngineSweepSwitchesAtThresholds(t *testing.T) {
	ths := []int{1 << 10, 4 << 10, 16 << 10, 64 << 10}
	s := workloads.Sweep{Thresholds: ths, Sizes: []int{64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20},
		Depths: []int{2}, Proc: "echo", Base: workloads.Config{Prog: benchprog.Prog, Count: 20, Warmup: workloads.NoWarmup}}
	pts, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	r := runOnSoft(t, pts)
	got := session.Switches(r)
	if len(got) != 4 {
		t.Fatalf("switches %+v, want one per threshold", got)
	}
	for i, th := range ths {
		want := workloads.Switch{Threshold: th, Depth: 2, From: rpcproto.Short, To: rpcproto.Long, Below: th / 4, At: th}
		if got[i] != want {
			t.Errorf("switch %d = %+v, want %+v", i, got[i], want)
		}
	}
	for _, p := range r.Points {
		if p.Negotiated == nil || p.Negotiated.InlineSendBytes != p.Params.InlineThreshold {
			t.Fatalf("point %+v negotiated %+v", p.Params, p.Negotiated)
		}
	}
}
