package rpcrdma

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// ServeConfig configures Serve. The zero value serves with one hybrid poller and the
// defaults below.
type ServeConfig struct {
	// Endpoint configures every accepted connection (its CQ field is ignored: connections
	// share their poller's CQ).
	Endpoint Config
	// Pollers is how many pollers serve the connections (default 1). Each owns one CQ shared
	// by its connections; a new connection goes to the poller with the fewest.
	Pollers int
	// Poller configures each poller. Its Poll policy's zero value is busy polling; a server
	// that should use no CPU while idle sets PollEvent or PollHybrid (the CLI's default).
	// With Pin set, poller i is pinned to CPUs.Next() (or Poller.CPU when CPUs is nil).
	Poller datapath.PollerConfig
	CPUs   *datapath.CPUPicker
	// MaxConnections bounds the connections served at once (default
	// DefaultMaxConnections); a request beyond it is rejected with a reason the requester's
	// Dial reports (see RejectReasonError). It also sizes the pollers' CQs.
	MaxConnections int
	// IdleTimeout closes a connection that did nothing for this long (0: never).
	IdleTimeout time.Duration
	// SinkBuffers bounds the shared part of each poller's sink pool: the buffers of
	// Endpoint.MaxPayload (plus headroom) that the calls in flight on its connections pull
	// Read chunks into and build long replies in (default: what one connection at the full
	// grant can use at once, SinkBuffersFor). Each connection also keeps one in reserve, so
	// the pool grows to SinkBuffers + connections as calls need buffers; a call that may take
	// none waits for one (TRANSPORT.md, Memory). Used where the device has memory windows
	// (see Serve).
	SinkBuffers int
	// Done, if set, is called once per connection when it ends, with the connection (its
	// Stats final) and the reason: nil when Serve's context ended, the *ConnError when
	// the peer went away or the connection failed, ErrIdleTimeout. A connection request
	// that was refused (*RefusedError) or could not be set up is reported with a nil Conn.
	// Done runs on the connection's poller thread (or, for requests, the accepting
	// goroutine), concurrently for different pollers: it must not block for long.
	Done func(c *Conn, err error)
	// PollerDone, if set, is called once per poller when it stops, with its index and final
	// counters (its CQ's turnaround probe included, when it was on). It runs on the
	// poller's goroutine, concurrently for different pollers.
	PollerDone func(poller int, st datapath.PollerStats)
}

// DefaultMaxConnections is ServeConfig.MaxConnections's default.
const DefaultMaxConnections = 128

// RefusedError is a connection request Serve rejected without setting it up.
type RefusedError struct {
	Remote string
	Reason string
}

func (e *RefusedError) Error() string {
	return "rpcrdma: refused connection from " + e.Remote + ": " + e.Reason
}

// Serve accepts connections on l and serves the benchmark program on each, on a fixed set of
// pollers (poll → handle → post, see datapath.Poller) that share their CQs among the
// connections dealt to them, until ctx is done.
//
// Where the device has memory windows, the connections of a poller also share a protection
// domain and a sink pool (ServeConfig.SinkBuffers), so that a connection registers only its
// send and receive buffers; everything a connection exposes to its peer then goes through
// type 2 windows bound to its queue pair, so no key works on another connection. Without
// windows, each connection has its own protection domain and sink buffers. It returns when ctx is done and every poller
// stopped, with nil, or with the error that stopped it (accept, a poller's CQ).
func Serve(ctx context.Context, dev datapath.Device, l datapath.Listener, cfg ServeConfig) error {
	if cfg.Pollers <= 0 {
		cfg.Pollers = 1
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	ecfg := cfg.Endpoint.withDefaults()
	if err := ecfg.validate(); err != nil {
		return err
	}
	// Every poller's CQ holds the completions its share of MaxConnections can have
	// outstanding at once (all of them, when a connection's work is flushed), so that no
	// connection can overrun a CQ other connections depend on.
	perConn := cqNeed(dev, ecfg, ecfg.ReverseCredits, ecfg.Credits)
	share := (cfg.MaxConnections + cfg.Pollers - 1) / cfg.Pollers
	depth := perConn * share
	if max := dev.Info().MaxCQE; max > 0 && depth > max {
		depth = max
	}

	if cfg.SinkBuffers <= 0 {
		cfg.SinkBuffers = SinkBuffersFor(ecfg)
	}
	srv := &serveState{cfg: cfg, ecfg: ecfg, dev: dev}
	srvCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := range cfg.Pollers {
		cq, err := dev.NewCQ(depth)
		if err != nil {
			srv.stop()
			return &SetupError{fmt.Sprintf("create CQ of %d entries for poller %d", depth, i), err}
		}
		pc := cfg.Poller
		if pc.Pin && cfg.CPUs != nil {
			pc.CPU = cfg.CPUs.Next()
		}
		sp := &servePoller{
			mux:  NewMux(cq, MuxConfig{IdleTimeout: cfg.IdleTimeout, Done: cfg.Done, CloseReason: "server shutting down"}),
			p:    datapath.NewPoller(pc),
			room: depth,
			per:  perConn,
		}
		if dev.Info().MaxMW > 0 {
			sh, err := newShare(dev, ecfg, cfg.SinkBuffers)
			if err != nil {
				cq.Close()
				srv.stop()
				return &SetupError{fmt.Sprintf("poller %d", i), err}
			}
			sp.mux.share = sh
		}
		srv.pollers = append(srv.pollers, sp)
		srv.wg.Add(1)
		go func() {
			defer srv.wg.Done()
			err := sp.p.Run(cq, sp.mux)
			if cfg.PollerDone != nil {
				cfg.PollerDone(i, sp.p.Stats())
			}
			sp.mux.Close()
			cq.Close()
			if err != nil {
				srv.setErr(&SetupError{fmt.Sprintf("poller %d", i), err})
				cancel()
			}
		}()
	}
	acceptErr := srv.accept(srvCtx, l)
	srv.stop()
	if acceptErr != nil {
		return acceptErr
	}
	return srv.err
}

type serveState struct {
	cfg     ServeConfig
	ecfg    Config
	dev     datapath.Device
	pollers []*servePoller
	wg      sync.WaitGroup
	mu      sync.Mutex
	err     error
}

type servePoller struct {
	mux  *Mux
	p    *datapath.Poller
	room int // CQ entries
	per  int // CQ entries one connection may need
}

func (s *serveState) setErr(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *serveState) stop() {
	for _, sp := range s.pollers {
		sp.p.Stop()
	}
	s.wg.Wait()
	for _, sp := range s.pollers {
		if sp.mux.share != nil {
			if err := sp.mux.share.close(); err != nil {
				s.setErr(&SetupError{"release a poller's memory", err})
			}
		}
	}
}

// share is what the connections Serve deals to one poller have in common.
type share struct {
	pd    datapath.PD
	sinks *sinks
}

func newShare(dev datapath.Device, cfg Config, bufs int) (*share, error) {
	pd, err := dev.AllocPD()
	if err != nil {
		return nil, &SetupError{"allocate protection domain", err}
	}
	// Local access only: the responder's RDMA Reads land here, and a reply it exposes is
	// reached through a window bound over it.
	s := newSinks(pd, datapath.AccessLocalWrite|datapath.AccessMWBind, headroom+cfg.MaxPayload+tailroom, bufs)
	return &share{pd: pd, sinks: s}, nil
}

func (sh *share) close() error {
	err := sh.sinks.close()
	if perr := sh.pd.Close(); err == nil {
		err = perr
	}
	return err
}

// SinkBuffersFor is ServeConfig.SinkBuffers's default for connections configured by cfg:
// the contexts one connection at the full grant has (TRANSPORT.md, Memory).
func SinkBuffersFor(cfg Config) int {
	cfg = cfg.withDefaults()
	return plan(cfg, cfg.ReverseCredits, cfg.Credits, cfg.ResponderRead).ctxs
}

func (s *serveState) accept(ctx context.Context, l datapath.Listener) error {
	for {
		req, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return &SetupError{"accept", err}
		}
		s.serve(req)
	}
}

// serve sets up one connection request on the least loaded poller, or refuses it.
func (s *serveState) serve(req datapath.ConnRequest) {
	report := func(err error) {
		if s.cfg.Done != nil {
			s.cfg.Done(nil, err)
		}
	}
	load := 0
	var best *servePoller
	for _, sp := range s.pollers {
		n := sp.mux.Load()
		load += n
		if (n+1)*sp.per <= sp.room && (best == nil || n < best.mux.Load()) {
			best = sp
		}
	}
	if load >= s.cfg.MaxConnections || best == nil {
		reason := fmt.Sprintf("server full: %d connections (--max-connections)", load)
		req.Reject(wire.EncodeRejectReason(reason))
		report(&RefusedError{Remote: req.RemoteAddr(), Reason: reason})
		return
	}
	if _, err := AcceptOn(s.dev, req, s.ecfg, best.mux); err != nil {
		report(fmt.Errorf("connection from %s: %w", req.RemoteAddr(), err))
	}
}

// AcceptOn sets up a responder endpoint for a pending connection request on m's CQ and hands
// it to m's poller. The returned Conn belongs to that poller: use it only from there.
func AcceptOn(dev datapath.Device, req datapath.ConnRequest, cfg Config, m *Mux) (*Conn, error) {
	cfg.CQ = m.cq
	c, err := acceptRequest(dev, req, cfg, m)
	if err != nil {
		return nil, err
	}
	m.hand(c)
	m.mu.Unlock() // taken by acceptRequest when it posted the receives
	return c, nil
}
