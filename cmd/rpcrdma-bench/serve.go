package main

import (
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/session"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// openServer is the server command's responder, listening as f says.
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
			return nil, err
		}
		cfg.Poller.Pin, cfg.CPUs = true, picker
	}
	r, err := session.Listen(session.ResponderConfig{Provider: p, Device: f.Device, Listen: f.Listen, Serve: cfg, Once: f.Once})
	if err != nil {
		return nil, err // not a nil *Responder in a non-nil server
	}
	return r, nil
}
