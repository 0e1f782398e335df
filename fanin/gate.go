package fanin

import (
	"fmt"
	"io"
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
	// offset is rank 0's wall clock minus this rank's (link.clockOffset).
	offset int64
	mu     sync.Mutex
	next   int
	starts []time.Time
}

// vote votes for the next point and returns the verdict (nil: start), once the point's
// start instant has come, recording this rank's wall clock then.
func (g *gate) vote(cause error) error {
	g.mu.Lock()
	k := g.next
	g.next++
	g.mu.Unlock()
	at, err := g.l.vote(k, cause)
	if err == nil {
		time.Sleep(time.Until(time.Unix(0, at-g.offset)))
	}
	now := time.Now().UTC()
	g.mu.Lock()
	g.starts = append(g.starts, now)
	g.mu.Unlock()
	return err
}

// Starts are the wall clocks read as each point's verdict arrived.
func (g *gate) Starts() []time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Time(nil), g.starts...)
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
		c.g.vote(err)
		return nil, nil, err
	}
	w, err := pt.Workload.Normalized()
	if err != nil {
		c.g.vote(err)
		return nil, nil, err
	}
	var (
		mu       sync.Mutex
		arrived  int
		first    error
		verdict  error
		decided  = make(chan struct{})
		pollers  = w.Pollers
		voteOnce sync.Once
	)
	gated := func(poller, conns int) (workloads.Client, error) {
		cl, err := open(poller, conns)
		mu.Lock()
		arrived++
		if err != nil && first == nil {
			first = err
		}
		last, firstIn := arrived == pollers, arrived == 1
		mu.Unlock()
		vote := func(cause error) {
			voteOnce.Do(func() {
				verdict = c.g.vote(cause)
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
