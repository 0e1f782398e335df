// Command netrpc is the baseline the soft provider between processes is compared with: Go's
// own net/rpc over loopback TCP, a NULL-like method, a client keeping depth calls
// outstanding. scripts/baseline.sh runs it next to rpcrdma-bench server/client.
//
//	netrpc -serve 127.0.0.1:20050 &
//	netrpc -addr 127.0.0.1:20050 -depth 32 -duration 2s
//
// prints
//
//	NETRPC depth=32 calls=.. p50_us=.. rpc_per_s=..
//
// The round trip is the full one (call sent to reply received), as rpcrdma-bench's.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/rpc"
	"os"
	"slices"
	"sync"
	"time"
)

// Bench is the RPC service: Null does nothing, as the benchmark program's NULL.
type Bench struct{}

// Null takes and returns nothing of interest.
func (Bench) Null(_ int, _ *int) error { return nil }

func main() {
	serve := flag.String("serve", "", "serve on this address instead of calling")
	addr := flag.String("addr", "127.0.0.1:20050", "the server's address")
	depth := flag.Int("depth", 1, "calls kept outstanding")
	duration := flag.Duration("duration", 2*time.Second, "measured time")
	warmup := flag.Duration("warmup", 300*time.Millisecond, "discarded warm-up")
	flag.Parse()
	var err error
	if *serve != "" {
		err = serveOn(*serve)
	} else {
		err = call(*addr, *depth, *warmup, *duration)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netrpc:", err)
		os.Exit(1)
	}
}

func serveOn(addr string) error {
	s := rpc.NewServer()
	if err := s.Register(Bench{}); err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.Accept(l)
	return nil
}

func call(addr string, depth int, warmup, duration time.Duration) error {
	if depth < 1 {
		return errors.New("-depth must be at least 1")
	}
	c, err := rpc.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now().Add(warmup)
	end := start.Add(duration)
	var (
		mu   sync.Mutex
		rtts []time.Duration
		wg   sync.WaitGroup
		ferr error
	)
	for range depth {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 1<<16)
			var reply int
			for {
				t := time.Now()
				if !t.Before(end) {
					break
				}
				if err := c.Call("Bench.Null", 0, &reply); err != nil {
					mu.Lock()
					ferr = err
					mu.Unlock()
					return
				}
				if t.After(start) {
					mine = append(mine, time.Since(t))
				}
			}
			mu.Lock()
			rtts = append(rtts, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if ferr != nil {
		return ferr
	}
	if len(rtts) == 0 {
		return errors.New("no call completed in the measured time")
	}
	slices.Sort(rtts)
	fmt.Printf("NETRPC depth=%d calls=%d p50_us=%.1f rpc_per_s=%.0f\n", depth, len(rtts),
		float64(rtts[len(rtts)/2].Nanoseconds())/1e3, float64(len(rtts))/duration.Seconds())
	return nil
}
