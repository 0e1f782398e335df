package soft_test

import (
	"errors"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
)

// Abort closes like Close and the peer's Err carries the reason; a plain Close gives none.
func TestAbortTellsPeerWhy(t *testing.T) {
	for _, addr := range []string{"inproc:", "127.0.0.1:0"} {
		for _, reason := range []string{"rpcrdma: peer exceeded its credits", ""} {
			p := newPair(t, soft.Config{}, addr, datapath.QPConfig{}, nil, nil)
			var err error
			if reason != "" {
				err = p.b.(datapath.Aborter).Abort(reason)
			} else {
				err = p.b.Close()
			}
			if err != nil {
				t.Fatalf("%s: %v", addr, err)
			}
			var de *datapath.DisconnectError
			deadline := time.Now().Add(5 * time.Second)
			for p.a.Err() == nil && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if got := p.a.Err(); !errors.As(got, &de) || de.Reason != reason || !errors.Is(got, datapath.ErrBroken) {
				t.Errorf("%s: the peer's Err = %v, want a DisconnectError with reason %q", addr, got, reason)
			}
			p.closers = p.closers[:len(p.closers)-1] // b is closed
			p.close(t)
		}
	}
}
