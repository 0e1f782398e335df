package fanin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// openWait bounds the wait for the last of a rank's pollers to open its connections.
const openWait = 2 * time.Minute

// gate starts each point of a client rank together with the other ranks': the rank votes
// once all its pollers have connected (or one failed), and its pollers start when the
// coordinator's verdict says every rank is ready.
type gate struct {
	l *link
	// clk estimates rank 0's wall clock minus this rank's, made at clkAt (monotonic); each
	// point refines it with one more exchange.
	clk   clock
	clkAt time.Time
	mu    sync.Mutex
	next  int
	// starts and clocks are each point's start (this rank's wall clock as it started) and
	// the clock estimate it started by.
	starts []time.Time
	clocks []clock
}

// vote votes for the next point, of length (drain in it; 0: unknown), and returns the
// verdict (nil: start), once the point's start instant has come, recording this rank's wall
// clock then.
func (g *gate) vote(cause error, length, drain time.Duration) error {
	g.mu.Lock()
	k := g.next
	g.next++
	g.mu.Unlock()
	clk := g.clk
	if cause == nil {
		next, err := g.l.clockOffset(1)
		if err != nil {
			cause = fmt.Errorf("clock offset: %w", err)
		} else {
			now := time.Now()
			clk = refine(g.clk, now.Sub(g.clkAt), next)
			g.clk, g.clkAt = clk, now
		}
	}
	at, lead, err := g.l.vote(k, cause, length, drain)
	if err == nil {
		err = g.l.startWait(at, lead, clk)
	}
	now := g.l.wall().UTC()
	g.mu.Lock()
	g.starts = append(g.starts, now)
	g.clocks = append(g.clocks, clk)
	g.mu.Unlock()
	return err
}

// Starts are the wall clocks read as each point started, and each one's clock estimate.
func (g *gate) Starts() ([]time.Time, []clock) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.starts), slices.Clone(g.clocks)
}

// connector wraps a session.Connector so that each point's pollers pass through the gate.
func (g *gate) connector(c session.Connector) session.Connector {
	return gatedConnector{Connector: c, g: g}
}

type gatedConnector struct {
	session.Connector
	g *gate
}

func (c gatedConnector) Point(pt workloads.Point) (workloads.Opener, func() session.PointReport, error) {
	open, report, err := c.Connector.Point(pt)
	if err != nil {
		// The others are waiting for this rank's vote: tell them why it will not come.
		c.g.vote(err, 0, 0)
		return nil, nil, err
	}
	w, err := pt.Workload.Normalized()
	if err != nil {
		c.g.vote(err, 0, 0)
		return nil, nil, err
	}
	length, drain := pointLength(w)
	var (
		mu       sync.Mutex
		arrived  int
		first    error
		verdict  error
		decided  = make(chan struct{})
		pollers  = w.Pollers
		voteOnce sync.Once
	)
	gated := func(ctx context.Context, poller, conns int) (workloads.Client, error) {
		cl, err := open(ctx, poller, conns)
		mu.Lock()
		arrived++
		if err != nil && first == nil {
			first = err
		}
		last, firstIn := arrived == pollers, arrived == 1
		mu.Unlock()
		vote := func(cause error) {
			voteOnce.Do(func() {
				verdict = c.g.vote(cause, length, drain)
				close(decided)
			})
		}
		if firstIn && !last {
			// A poller that failed before its Open (pinning) never arrives: vote without it
			// rather than keep every rank waiting.
			t := time.AfterFunc(openWait, func() {
				mu.Lock()
				n := arrived
				mu.Unlock()
				vote(fmt.Errorf("only %d of %d pollers opened their connections within %v", n, pollers, openWait))
			})
			defer t.Stop()
		}
		if last {
			mu.Lock()
			cause := first
			mu.Unlock()
			vote(cause)
		}
		<-decided
		if err != nil {
			return nil, err
		}
		if verdict != nil {
			if cl, ok := cl.(io.Closer); ok {
				cl.Close()
			}
			return nil, verdict
		}
		return cl, nil
	}
	return gated, report, nil
}

// pointLength is how long a point of w lasts at most, from its start to the end of its drain,
// and the drain in it: 0 for a point bounded by a count of RPCs only (its length is unknown).
func pointLength(w workloads.Config) (time.Duration, time.Duration) {
	if w.Duration <= 0 {
		return 0, 0
	}
	drain := time.Duration(w.Drain)
	if drain <= 0 {
		drain = workloads.MinDrain
	}
	return max(time.Duration(w.Warmup), 0) + time.Duration(w.Duration) + drain, drain
}
