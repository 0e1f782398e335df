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
// is written with status "interrupted"; a second one exits at once (exitFailed), for a run
// that does not drain.
type stopper struct {
	ctx         context.Context
	cancel      context.CancelFunc
	interrupted atomic.Bool
	ch          chan os.Signal
	done        chan struct{}
}

func newStopper(e *env) *stopper {
	s := &stopper{ch: make(chan os.Signal, 2), done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	signal.Notify(s.ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for {
			select {
			case <-s.done:
				return
			case sig := <-s.ch:
				if s.interrupted.Swap(true) {
					fmt.Fprintf(e.stderr, "\nrpcrdma-bench: %v again: exiting without waiting\n", sig)
					os.Exit(exitFailed)
				}
				fmt.Fprintf(e.stderr, "\nrpcrdma-bench: %v: stopping after the outstanding RPCs (again to exit at once)\n", sig)
				s.cancel()
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
}
