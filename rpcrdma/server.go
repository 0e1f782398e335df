package rpcrdma

import (
	"context"
	"errors"
	"sync"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// ServeConfig configures Serve.
type ServeConfig struct {
	// Endpoint configures every accepted connection (its CQ field is ignored: each
	// connection gets its own CQ and poller).
	Endpoint Config
	// Poller configures each connection's poller. With Pin set, CPUs come from CPUs (or
	// Poller.CPU when CPUs is nil).
	Poller datapath.PollerConfig
	// CPUs hands out a CPU per connection when Poller.Pin is set.
	CPUs *datapath.CPUPicker
	// Done, if set, is called once per connection after its poller stopped, with the
	// connection (its Stats final) and the reason: nil when Serve's context ended, the
	// *BrokenError when the peer went away or the connection failed. The connection is
	// closed after Done returns. A connection request that could not be set up is reported
	// with a nil Conn and the setup error. Done runs on the connection's poller thread (or,
	// for setup errors, the accepting goroutine), concurrently for different connections.
	Done func(c *Conn, err error)
}

// Serve accepts connections on l and serves the benchmark program on each with its own
// pinned poller (poll → handle → post, see datapath.Poller) until ctx is done. It returns
// when ctx is done and every connection's poller stopped, with nil, or the accept error that
// stopped it.
func Serve(ctx context.Context, dev datapath.Device, l datapath.Listener, cfg ServeConfig) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var pollers []*datapath.Poller
	defer func() {
		mu.Lock()
		for _, p := range pollers {
			p.Stop()
		}
		mu.Unlock()
		wg.Wait()
	}()
	ecfg := cfg.Endpoint
	ecfg.CQ = nil
	for {
		req, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return &SetupError{"accept", err}
		}
		c, err := AcceptRequest(dev, req, ecfg)
		if err != nil {
			if cfg.Done != nil {
				cfg.Done(nil, err)
			}
			continue
		}
		pc := cfg.Poller
		if pc.Pin && cfg.CPUs != nil {
			pc.CPU = cfg.CPUs.Next()
		}
		p := datapath.NewPoller(pc)
		mu.Lock()
		pollers = append(pollers, p)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := p.Run(c.CQ(), c)
			if errors.Is(err, ErrClosed) {
				err = nil
			}
			if cfg.Done != nil {
				cfg.Done(c, err)
			}
			c.Close()
		}()
	}
}

var _ datapath.Handler = (*Conn)(nil)
