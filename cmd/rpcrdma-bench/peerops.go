package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// peerStats collects the final Stats of the connections a responder in this process served,
// so that a point can report the RDMA operations of both sides: the responder performs the
// Reads and Writes of the requester's chunks, which the requester never counts.
type peerStats struct {
	mu    sync.Mutex
	cond  *sync.Cond
	stats []rpcrdma.Stats
	taken int // stats before this index belong to earlier points
	who   string
}

func newPeerStats(who string) *peerStats {
	p := &peerStats{who: who}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// done is the responder's rpcrdma.ServeConfig.Done.
func (p *peerStats) done(c *rpcrdma.Conn, err error) {
	if c == nil {
		logSetupError(p.who, err)
		return
	}
	p.mu.Lock()
	p.stats = append(p.stats, c.Stats())
	p.mu.Unlock()
	p.cond.Broadcast()
}

// setupLog is where a responder reports the connections it could not set up; tests replace
// it.
var setupLog io.Writer = os.Stderr

// logSetupError reports a connection the responder who could not set up: the requester sees
// only a refused or failed connection, so the cause must be told on the responder's side.
func logSetupError(who string, err error) {
	if err != nil {
		fmt.Fprintf(setupLog, "rpcrdma-bench %s: a connection could not be set up: %v\n", who, err)
	}
}

// peerWait bounds the wait for the responder's side of a point's connections to end after
// the requester closed them: the responder notices the disconnect on its next poll.
const peerWait = 2 * time.Second

// take returns the Ops of the next n connections the responder finished, waiting up to wait
// for them; nil if they did not all finish in time (a partial count would mislead).
func (p *peerStats) take(n int, wait time.Duration) *results.Ops {
	deadline := time.Now().Add(wait)
	t := time.AfterFunc(wait, p.cond.Broadcast)
	defer t.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.stats)-p.taken < n && time.Now().Before(deadline) {
		p.cond.Wait()
	}
	if len(p.stats)-p.taken < n {
		// Let the late ones count toward no point rather than the next one.
		p.taken = len(p.stats)
		return nil
	}
	var ops results.Ops
	for _, s := range p.stats[p.taken : p.taken+n] {
		addStatsOps(&ops, &s)
	}
	p.taken += n
	return &ops
}

// addStatsOps adds one connection's operation counts to ops: what it posted, and the
// invalidations (a Send With Invalidate it received spared it a LOCAL_INV: CONFIG.md).
func addStatsOps(ops *results.Ops, s *rpcrdma.Stats) {
	addOp(&ops.Send, s.Send)
	addOp(&ops.Write, s.Write)
	addOp(&ops.Read, s.Read)
	addOp(&ops.Recv, s.Recv)
	addOp(&ops.SendInv, s.SendInv)
	ops.LocalInv.Count += s.LocalInvs
	ops.BindMW.Count += s.Binds
}
