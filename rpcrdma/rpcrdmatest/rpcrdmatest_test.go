package rpcrdmatest

import (
	"context"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// TestOverSoft runs the checks against this project's responder (Serve) over the soft
// provider, as the VM harness does over verbs.
// hangGuard only catches a hung engine: it is no performance bound, so it stays generous
// enough for a machine oversubscribed by busy pollers (depth 1 then costs a scheduler
// time slice per round trip).
const hangGuard = 2 * time.Minute

func TestOverSoft(t *testing.T) {
	prov := soft.New(soft.Config{})
	cdev, _ := prov.Open("")
	sdev, _ := prov.Open("")
	defer cdev.Close()
	defer sdev.Close()
	l, err := sdev.Listen(soft.InprocPrefix + "0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	defer func() { cancel(); <-served }()
	// The responder offers 64 KiB both ways: each requester's own sizes set the thresholds.
	scfg := rpcrdma.Config{SendSize: 65536, RecvSize: 65536, Credits: 32, MaxPayload: 1 << 18, ResponderRead: true}
	go func() { served <- rpcrdma.Serve(ctx, sdev, l, rpcrdma.ServeConfig{Endpoint: scfg}) }()
	for _, th := range []int{1024, 4096, 65536} {
		cfg := rpcrdma.Config{SendSize: th, RecvSize: th, Credits: 32, MaxPayload: 2*th + 4, Verify: true, ResponderRead: th == 1024}
		c, err := rpcrdma.Dial(context.Background(), cdev, l.Addr(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		bad, err := Check(c, Cases(th, th == 1024), hangGuard)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range bad {
			t.Errorf("threshold %d: %s", th, m)
		}
		// A stream of NULL calls at depth 1 and 32.
		calls := make([]rpcrdma.Call, 2000)
		for _, depth := range []int{1, 32} {
			rs, err := Drive(c, calls, depth, hangGuard)
			if err != nil || len(rs) != len(calls) {
				t.Fatalf("depth %d: %d results, %v", depth, len(rs), err)
			}
			for _, r := range rs {
				if r.Err != nil {
					t.Fatalf("depth %d: %v", depth, r.Err)
				}
			}
		}
		if c.Stats().MaxOutstanding != 32 {
			t.Errorf("max outstanding %d, want 32", c.Stats().MaxOutstanding)
		}
		c.Close()
	}
}
