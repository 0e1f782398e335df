package rpcrdma

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// TestServe runs the responder side on Serve's pollers (other goroutines, as in a real
// server) and two requesters in this goroutine, with every class and verification on.
func TestServe(t *testing.T) {
	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	l, err := dev.Listen(soft.InprocPrefix + "0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var served []uint64
	cfg := testCfg(4096)
	cfg.ResponderRead = true
	serveErr := make(chan error, 1)
	go func() {
		serveErr <- Serve(ctx, dev, l, ServeConfig{
			Endpoint: cfg,
			Poller:   datapath.PollerConfig{Mode: datapath.PollEvent, EventTimeout: time.Millisecond},
			Done: func(c *Conn, err error) {
				mu.Lock()
				defer mu.Unlock()
				if c != nil {
					served = append(served, c.Stats.Served)
				}
			},
		})
	}()
	var reqs []*Conn
	for range 2 {
		c, err := Dial(context.Background(), dev, l.Addr(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, c)
	}
	calls := []Call{
		{Proc: benchprog.ProcNull},
		{Proc: benchprog.ProcEcho, Size: 100},
		{Proc: benchprog.ProcEcho, Size: 20000},
		{Proc: benchprog.ProcSink, Size: 20000},
		{Proc: benchprog.ProcSource, Size: 20000},
		{Proc: benchprog.ProcSource, Size: 20000, Class: ClassReplyChunk},
		{Proc: benchprog.ProcSource, Size: 20000, Class: ClassResponderRead},
		{Proc: benchprog.ProcSink, Size: 3, Class: ClassPosZeroRead},
	}
	const rounds = 50
	var done [16]Result
	deadline := time.Now().Add(10 * time.Second)
	for k, c := range reqs {
		sent, got := 0, 0
		for got < rounds*len(calls) {
			if time.Now().After(deadline) {
				t.Fatalf("requester %d: %d of %d done", k, got, rounds*len(calls))
			}
			for sent < rounds*len(calls) {
				if err := c.Submit(calls[sent%len(calls)]); errors.Is(err, ErrNoCredit) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				sent++
			}
			n, err := c.Progress(done[:])
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range done[:n] {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			got += n
		}
	}
	for _, c := range reqs {
		c.Close()
	}
	// The responders see their connections break and report them.
	for {
		mu.Lock()
		n := len(served)
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-serveErr; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(served) != 2 || served[0] != rounds*uint64(len(calls)) || served[1] != served[0] {
		t.Fatalf("served %v, want 2 × %d", served, rounds*len(calls))
	}
}
