package rpcrdma

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// The requester's error, from what the provider delivered: our server's reason, or what is
// known of another server's refusal.
func TestRejectReasonErrorText(t *testing.T) {
	var rfc8797 [wire.PrivateDataSize]byte
	wire.PrivateData{SendSize: 4096, RecvSize: 1024}.Encode(rfc8797[:])
	for _, tc := range []struct {
		rej  *datapath.RejectedError
		want string
	}{
		{&datapath.RejectedError{Status: 28, PrivateData: wire.EncodeRejectReason("server full: 2 connections")},
			"server refused the connection: server full: 2 connections"},
		{&datapath.RejectedError{PrivateData: wire.EncodeRejectReason(strings.Repeat("a", 200))},
			"[cut to fit the reject; the server's log has all of it]"},
		{&datapath.RejectedError{Status: -104},
			"rdma_connect: connection rejected by the peer (CM status -104: iWARP: the peer sent an MPA reject (its application or RDMA stack refused)); the peer gave no reason we can read"},
		{&datapath.RejectedError{Status: 28, PrivateData: make([]byte, 148)},
			"(CM status 28: consumer defined: the peer's application refused); the peer gave no reason we can read"},
		{&datapath.RejectedError{Status: 8},
			"(CM status 8: invalid service ID (nothing listening on that port?))"},
		{&datapath.RejectedError{Status: 28, PrivateData: rfc8797[:]},
			"(its private data holds an RFC 8797 message: send 4096, receive 1024; RFC 8797 defines no reject reason)"},
	} {
		err := dialError(&datapath.OpError{Op: "rdma_connect", Err: tc.rej})
		var re *RejectReasonError
		var dre *datapath.RejectedError
		if !errors.As(err, &re) || !errors.As(err, &dre) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want a RejectReasonError containing %q", tc.rej, err, tc.want)
		}
	}
	if err := dialError(context.DeadlineExceeded); err != context.DeadlineExceeded {
		t.Errorf("dialError changed an error that is no rejection: %v", err)
	}
}
