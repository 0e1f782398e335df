package verbs

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

func TestCompletionErrorMatchesBrokenAndStatus(t *testing.T) {
	err := error(&CompletionError{QPN: 0x11, ID: 7, Op: datapath.OpWrite, Status: datapath.StatusRemoteAccess, VendorErr: 0x88})
	var se *datapath.StatusError
	if !errors.Is(err, datapath.ErrBroken) || !errors.As(err, &se) || se.Status != datapath.StatusRemoteAccess {
		t.Fatalf("%v does not match ErrBroken and its status", err)
	}
	for _, want := range []string{"0x11", "RDMA_WRITE", "remote access error", "0x88"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestRejectedError(t *testing.T) {
	err := &RejectedError{Reason: 28, PrivateData: []byte("no")}
	if !strings.Contains(err.Error(), "reason 28") {
		t.Fatalf("%q", err)
	}
}
