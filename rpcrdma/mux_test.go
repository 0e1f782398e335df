package rpcrdma

import (
	"context"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// TestMuxZeroAllocs: an RPC whose requester and responder both sit on shared CQs behind
// Muxes (the execution model of Serve and of the measuring commands), and whose ends wait in
// CQ.Wait when idle (event mode), allocates nothing.
func TestMuxZeroAllocs(t *testing.T) {
	dev, l := softListener(t, soft.InprocPrefix+"muxallocs")
	cfg := testCfg(4096)
	scq, _ := dev.NewCQ(4 * CQNeed(dev, cfg))
	ccq, _ := dev.NewCQ(4 * CQNeed(dev, cfg))
	defer scq.Close()
	defer ccq.Close()
	smux, cmux := NewMux(scq, MuxConfig{}), NewMux(ccq, MuxConfig{KeepBroken: true})
	defer smux.Close()
	defer cmux.Close()
	ch := make(chan error, 1)
	go func() {
		req, err := l.Accept(context.Background())
		if err == nil {
			_, err = AcceptOn(dev, req, cfg, smux)
		}
		ch <- err
	}()
	ccfg := cfg
	ccfg.CQ = ccq
	c, err := Dial(context.Background(), dev, l.Addr(), ccfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
	if err := cmux.Attach(c); err != nil {
		t.Fatal(err)
	}
	wcs := make([]datapath.Completion, 32)
	res := make([]Result, 8)
	poll := func(cq datapath.CQ, m *Mux) int {
		n, _ := cq.Poll(wcs)
		if n > 0 {
			m.Handle(wcs[:n])
		} else {
			m.Idle()
		}
		return n
	}
	rpc := func(call Call) {
		for c.Submit(call) != nil {
			poll(scq, smux)
			poll(ccq, cmux)
		}
		for {
			ns, nc := poll(scq, smux), poll(ccq, cmux)
			if k, _ := c.Results(res); k > 0 {
				if res[0].Err != nil {
					t.Fatal(res[0].Err)
				}
				return
			}
			if ns == 0 && nc == 0 {
				// Event mode: block until something completes (it may already have).
				scq.Wait(time.Microsecond)
				ccq.Wait(time.Microsecond)
			}
		}
	}
	for _, call := range []Call{{Proc: benchprog.ProcNull}, {Proc: benchprog.ProcEcho, Size: 8192}, {Proc: benchprog.ProcSource, Size: 8192}} {
		rpc(call)
		if n := testing.AllocsPerRun(200, func() { rpc(call) }); n != 0 {
			t.Errorf("%s %d bytes through Muxes: %v allocs per RPC", procNames[call.Proc], call.Size, n)
		}
	}
}
