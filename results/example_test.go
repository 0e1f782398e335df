package results_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// A runner gives each worker a Recorder, records every RPC on the polling path, summarises
// the point at the end, and writes the run atomically.
func Example() {
	params := results.Params{Procedure: "ECHO", Class: "auto", CallBytes: 4096, ReplyBytes: 4096,
		InlineThreshold: 4096, Depth: 1, Connections: 2}
	workers := []*results.Recorder{results.NewRecorder(), results.NewRecorder()}
	start := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

	for i := range 2000 {
		w := workers[i%2] // each worker goroutine owns one recorder
		w.Record(rpcproto.Short, rpcproto.Short, int64(3000+i%500), 2*4096)
	}

	p, err := results.Summarize(params, start, start.Add(10*time.Millisecond), workers...)
	if err != nil {
		panic(err)
	}
	p.Complete = true
	run := &results.Run{Tool: "example", Start: start, End: p.End, Config: []byte(`{}`),
		Environment: results.Environment{Provider: "soft"}, Points: []results.Point{p},
		Status: results.Status{State: results.StateComplete}}

	dir, _ := os.MkdirTemp("", "results")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.json")
	if err := results.WriteFile(path, run); err != nil {
		panic(err)
	}
	back, err := results.ReadFile(path)
	if err != nil {
		panic(err)
	}
	s := back.Points[0].RTT
	fmt.Println("count", s.Count, "p50", *s.P50, "p99", *s.P99, "p99.9 supported:", s.P999 != nil)
	fmt.Printf("%.0f RPC/s, %.2f Gb/s\n", back.Points[0].Throughput.RPCPerSec, back.Points[0].Throughput.PayloadGbps)
	// Output:
	// count 2000 p50 3249 p99 3495 p99.9 supported: false
	// 200000 RPC/s, 13.11 Gb/s
}
