package rpcrdma_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// A responder served by Serve on its own poller, and a requester driven by this goroutine:
// submit while credits allow, progress, collect results.
func Example() {
	dev, _ := soft.New(soft.Config{}).Open("")
	defer dev.Close()
	l, _ := dev.Listen(soft.InprocPrefix + "0")
	defer l.Close()
	cfg := rpcrdma.Config{SendSize: 4096, RecvSize: 4096, Credits: 16, MaxPayload: 64 << 10, Verify: true}

	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- rpcrdma.Serve(ctx, dev, l, rpcrdma.ServeConfig{Endpoint: cfg}) }()
	defer func() { stop(); <-served }()

	c, err := rpcrdma.Dial(context.Background(), dev, l.Addr(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := []rpcrdma.Call{
		{Proc: benchprog.ProcNull},
		{Proc: benchprog.ProcEcho, Size: 1000},
		{Proc: benchprog.ProcSink, Size: 50000},
		{Proc: benchprog.ProcSource, Size: 50000},
		{Proc: benchprog.ProcEcho, Size: 20000},
	}
	results := make([]rpcrdma.Result, 8)
	for i, call := range calls {
		call.Tag = uint64(i)
		for {
			err := c.Submit(call)
			if err == nil {
				break
			}
			if !errors.Is(err, rpcrdma.ErrNoCredit) {
				fmt.Println(err)
				return
			}
			c.Progress(results)
		}
		for {
			n, err := c.Progress(results)
			if err != nil {
				fmt.Println(err)
				return
			}
			if n == 1 {
				r := results[0]
				fmt.Printf("call %d: %s/%s, %d bytes back, err %v\n", r.Tag, r.CallClass, r.ReplyClass, len(r.Data), r.Err)
				break
			}
		}
	}
	p := c.Params()
	fmt.Printf("thresholds %d/%d, credit %d\n", p.Inline.SendSize, p.Inline.RecvSize, c.Stats().Credit)
	c.Close()
	// Output:
	// call 0: short/short, 0 bytes back, err <nil>
	// call 1: short/short, 1000 bytes back, err <nil>
	// call 2: read-chunk/short, 0 bytes back, err <nil>
	// call 3: short/write-chunk, 50000 bytes back, err <nil>
	// call 4: pos0-read/reply-chunk, 20000 bytes back, err <nil>
	// thresholds 4096/4096, credit 16
}
