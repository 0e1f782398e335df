package workloads_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads/workloadstest"
)

// A closed-loop driver over an in-memory client that answers every RPC in 10 µs, on a
// simulated clock: 4 RPCs in flight for 1 ms of measurement make 400 RPCs.
func ExampleDriver() {
	cfg, err := workloads.Config{Prog: benchprog.Prog,
		Mix:      workloads.Only("source", workloads.Fixed(32<<10)),
		Depth:    4,
		Duration: workloads.Duration(time.Millisecond),
		Warmup:   workloads.NoWarmup,
	}.Normalized()
	if err != nil {
		panic(err)
	}
	client := workloadstest.New(cfg.Depth)
	client.Clock = new(workloadstest.Clock)
	client.Latency, client.Tick = 10*time.Microsecond, time.Microsecond

	d, err := workloads.NewDriver(cfg, 0, client, workloads.Discard, nil)
	if err != nil {
		panic(err)
	}
	d.Clock = client.Clock.Now
	st, err := d.Run(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Completed, "RPCs,", st.Classes[rpcproto.Chunked], "chunked, in", st.Elapsed())
	// Output: 400 RPCs, 400 chunked, in 1ms
}
