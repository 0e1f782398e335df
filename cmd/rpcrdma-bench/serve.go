package main

import (
	"context"
	"errors"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/session"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// engineServer is the server command's responder.
type engineServer struct {
	dev  datapath.Device
	l    datapath.Listener
	cfg  rpcrdma.ServeConfig
	once bool
}

func openServer(f *serverFlags) (server, error) {
	p, err := lookupProvider(f.Provider)
	if err != nil {
		return nil, err
	}
	if p, err = f.Slowdown.provider(p); err != nil {
		return nil, err
	}
	if f.Turnarounds {
		p = withTurnarounds(p)
	}
	polls := make([]datapath.Poll, f.Pollers)
	for i := range polls {
		polls[i] = f.Poll
	}
	sizeRuntime(f.Provider, polls)
	dev, err := p.Open(f.Device)
	if err != nil {
		return nil, err
	}
	l, err := dev.Listen(f.Listen)
	if err != nil {
		dev.Close()
		return nil, err
	}
	th := f.Threshold
	cfg := rpcrdma.ServeConfig{Endpoint: rpcrdma.Config{SendSize: th, RecvSize: th, Credits: f.Credits,
		MaxPayload: session.PayloadSize(f.MaxPayload), Verify: f.Verify},
		// An idle event or hybrid poller wakes every EventTimeout to notice a stop and idle
		// connections: 100 ms keeps an idle server's CPU near zero.
		Pollers: f.Pollers, Poller: datapath.PollerConfig{Poll: f.Poll, EventTimeout: 100 * time.Millisecond},
		MaxConnections: f.MaxConnections, IdleTimeout: f.IdleTimeout, SinkBuffers: f.SinkBuffers, Done: f.connDone,
		PollerDone: f.pollerDone}
	if th == 0 {
		cfg.Endpoint.SendSize, cfg.Endpoint.RecvSize = rpcrdma.DefaultInline, rpcrdma.DefaultInline
	}
	f.Transport.Apply(&cfg.Endpoint)
	if len(f.CPUs) > 0 {
		picker, err := datapath.NewCPUPicker(f.CPUs...)
		if err != nil {
			l.Close()
			dev.Close()
			return nil, err
		}
		cfg.Poller.Pin, cfg.CPUs = true, picker
	}
	return &engineServer{dev: dev, l: l, cfg: cfg, once: f.Once}, nil
}

func (s *engineServer) Addr() string { return s.l.Addr() }

// Serve serves until ctx is done or, with once, until the first connection ends.
func (s *engineServer) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := s.cfg
	cfg.Done = func(c *rpcrdma.Conn, err error) {
		// One line per refused, failed (memory registration under RLIMIT_MEMLOCK, ...: the
		// client gets the cause in the reject), broken or timed-out connection, with its cause.
		if s.cfg.Done != nil {
			s.cfg.Done(c, err)
		}
		if c != nil && s.once {
			cancel()
		}
	}
	return rpcrdma.Serve(ctx, s.dev, s.l, cfg)
}

func (s *engineServer) Close() error {
	return errors.Join(s.l.Close(), s.dev.Close())
}
