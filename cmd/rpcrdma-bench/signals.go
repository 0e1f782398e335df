package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// stopper turns SIGINT and SIGTERM into a clean stop: the first cancels ctx, which the
// measuring runner and the server take, so the current point drains and everything finished
// is written with status "interrupted"; a second one cancels hurry, which skips the drain
// and still writes everything measured, the point in progress included (a double press, or
// GNU timeout, can deliver two at once); a third exits at once (exitFailed). A stopper
// without measurements to write (the server's) exits at the second.
type stopper struct {
	ctx, hurry     context.Context
	cancel, hasten context.CancelFunc
	signals        atomic.Int32
	ch             chan os.Signal
	done           chan struct{}
}

func newStopper(e *env, measuring bool) *stopper {
	s := &stopper{ch: make(chan os.Signal, 3), done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.hurry, s.hasten = context.WithCancel(context.Background())
	signal.Notify(s.ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for {
			select {
			case <-s.done:
				return
			case sig := <-s.ch:
				n := s.signals.Add(1)
				if n == 2 && !measuring {
					n = 3
				}
				switch n {
				case 1:
					fmt.Fprintf(e.stderr, "\nrpcrdma-bench: %v: stopping after the outstanding RPCs%s\n", sig, again(measuring))
					s.cancel()
				case 2:
					fmt.Fprintf(e.stderr, "\nrpcrdma-bench: %v again: writing what was measured without waiting for outstanding RPCs (again to exit at once)\n", sig)
					s.hasten()
				default:
					fmt.Fprintf(e.stderr, "\nrpcrdma-bench: %v again: exiting without waiting\n", sig)
					os.Exit(exitFailed)
				}
			}
		}
	}()
	return s
}

// release restores the default signal handling.
func (s *stopper) release() {
	signal.Stop(s.ch)
	close(s.done)
	s.cancel()
	s.hasten()
}

// again says what the next signal does, after the first.
func again(measuring bool) string {
	if measuring {
		return " (again to skip waiting for them)"
	}
	return " (again to exit at once)"
}
