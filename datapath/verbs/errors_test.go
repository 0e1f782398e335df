package verbs

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"golang.org/x/sys/unix"
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
	err := error(&datapath.OpError{Op: "rdma_connect", Err: &datapath.RejectedError{Status: 28, PrivateData: []byte("no")}})
	var rej *datapath.RejectedError
	if !errors.As(err, &rej) || string(rej.PrivateData) != "no" || !strings.Contains(err.Error(), "CM status 28") {
		t.Fatalf("%q", err)
	}
}

// A registration that fails with ENOMEM names the op, keeps the errno and says what to raise.
func TestPinnedMemoryHint(t *testing.T) {
	err := error(&datapath.OpError{Op: "ibv_reg_mr", Err: pinnedHint(unix.ENOMEM)})
	if !errors.Is(err, unix.ENOMEM) {
		t.Fatalf("%v lost ENOMEM", err)
	}
	for _, want := range []string{"ibv_reg_mr: cannot allocate memory", "RLIMIT_MEMLOCK", "ulimit -l"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if other := pinnedHint(unix.EINVAL); other != unix.EINVAL {
		t.Errorf("pinnedHint(EINVAL) = %v, want it unchanged", other)
	}
}
