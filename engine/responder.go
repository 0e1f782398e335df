package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// ResponderConfig says where a Responder listens and how it serves.
type ResponderConfig struct {
	// Provider and Device are the datapath provider and the device to open ("" its first).
	Provider datapath.Provider
	Device   string
	// Listen is the address to listen on; "" is one for a requester in this process
	// (soft's in-process address, else the device's netdev address, port 0).
	Listen string
	// Serve is how rpcrdma.Serve serves the connections.
	Serve rpcrdma.ServeConfig
	// Once ends Serve when the first connection ends.
	Once bool
}

// Responder is the responder side of the engine, listening: it accepts connections
// (negotiating each one's private data afresh) and serves the benchmark program on its
// pollers.
type Responder struct {
	dev  datapath.Device
	l    datapath.Listener
	cfg  rpcrdma.ServeConfig
	once bool
}

// Listen opens c's device and listens on it.
func Listen(c ResponderConfig) (*Responder, error) {
	dev, err := c.Provider.Open(c.Device)
	if err != nil {
		return nil, err
	}
	addr := c.Listen
	if addr == "" {
		addr = c.Provider.Defaults().LocalAddr
	}
	if addr == "" {
		addr = localAddr(dev.Info())
	}
	l, err := dev.Listen(addr)
	if err != nil {
		dev.Close()
		return nil, err
	}
	return &Responder{dev: dev, l: l, cfg: c.Serve, once: c.Once}, nil
}

// Addr is the address actually listened on.
func (r *Responder) Addr() string { return r.l.Addr() }

// Serve serves until ctx is done (then it closes the connections and returns nil), Once's
// connection ends, or a fatal error.
func (r *Responder) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := r.cfg
	cfg.Done = func(c *rpcrdma.Conn, err error) {
		if r.cfg.Done != nil {
			r.cfg.Done(c, err)
		}
		if c != nil && r.once {
			cancel()
		}
	}
	return rpcrdma.Serve(ctx, r.dev, r.l, cfg)
}

// Close stops listening and closes the device.
func (r *Responder) Close() error {
	return errors.Join(r.l.Close(), r.dev.Close())
}

// ConnEndLine is the line a responder prints when a connection ends or a request fails: one
// per refused, failed, broken, timed-out or peer-closed connection, with its cause. A
// connection the responder closed because it stopped gets none.
func ConnEndLine(c *rpcrdma.Conn, err error) string {
	if err == nil {
		return ""
	}
	if c == nil {
		var refused *rpcrdma.RefusedError
		if errors.As(err, &refused) {
			return fmt.Sprintf("refused connection from %s: %s", refused.Remote, refused.Reason)
		}
		return "failed connection request: " + err.Error()
	}
	return connEnd(c.RemoteAddr(), c.Stats().Served, err)
}

// connEnd is ConnEndLine of the connection from remote that served calls and ended with err.
func connEnd(remote string, served uint64, err error) string {
	var de *datapath.DisconnectError
	switch {
	case errors.Is(err, rpcrdma.ErrIdleTimeout):
		return fmt.Sprintf("closed connection from %s: idle for longer than --idle-timeout (%d calls served)", remote, served)
	case errors.As(err, &de) && de.Reason == "":
		return fmt.Sprintf("connection from %s closed by the peer (%d calls served)", remote, served)
	case errors.As(err, &de):
		return fmt.Sprintf("connection from %s closed by the peer: %s (%d calls served)", remote, de.Reason, served)
	}
	return fmt.Sprintf("connection from %s broken: %v (%d calls served)", remote, err, served)
}
