package engine

import (
	"errors"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

func TestConnEndLine(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&rpcrdma.RefusedError{Remote: "192.0.2.7:5000", Reason: "server full: 2 connections (--max-connections)"},
			"refused connection from 192.0.2.7:5000: server full: 2 connections (--max-connections)"},
		{errors.New("connection from 192.0.2.7:5000: ibv_reg_mr: cannot allocate memory"),
			"failed connection request: connection from 192.0.2.7:5000: ibv_reg_mr: cannot allocate memory"},
	} {
		if got := ConnEndLine(nil, tc.err); got != tc.want {
			t.Errorf("ConnEndLine(nil, %v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// A peer's deliberate close is not a failure.
func TestConnEndLineSaysClosedByPeer(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&datapath.DisconnectError{}, "connection from 192.0.2.7:5000 closed by the peer (3 calls served)"},
		{&datapath.DisconnectError{Reason: "done"}, "connection from 192.0.2.7:5000 closed by the peer: done (3 calls served)"},
		{errors.New("rpcrdma: connection broken: recv: flushed"), "connection from 192.0.2.7:5000 broken: rpcrdma: connection broken: recv: flushed (3 calls served)"},
	} {
		if got := connEnd("192.0.2.7:5000", 3, tc.err); got != tc.want {
			t.Errorf("connEnd(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
