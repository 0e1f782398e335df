package verbs

import (
	"errors"
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"golang.org/x/sys/unix"
)

// CompletionError is the cause a Conn reports (Conn.Err) after a work request completed in
// error: the completion's status plus what the device said about it. It matches both
// datapath.ErrBroken and the status's *datapath.StatusError.
type CompletionError struct {
	QPN       uint32
	ID        uint64
	Op        datapath.Opcode
	Status    datapath.Status
	VendorErr uint32 // ibv_wc.vendor_err, device specific
}

func (e *CompletionError) Error() string {
	return fmt.Sprintf("qp %#x: %v of work request %d: %v (vendor error %#x)", e.QPN, e.Op, e.ID, e.Status, e.VendorErr)
}

func (e *CompletionError) Unwrap() []error {
	return []error{datapath.ErrBroken, e.Status.Err()}
}

// pinnedHint adds to ENOMEM from a call that pins memory (registration, queue and completion
// queue buffers) the usual cause: the locked-memory limit, which is small by default (8 MiB
// or less) and counts every registered byte on siw and most hardware.
func pinnedHint(err error) error {
	if !errors.Is(err, unix.ENOMEM) {
		return err
	}
	return &hintError{err, "registered memory counts against RLIMIT_MEMLOCK: raise it (ulimit -l unlimited, or LimitMEMLOCK= for a systemd service) or register less"}
}

// hintError is an error with advice for the user; errors.Is and As see the cause.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + " (" + e.hint + ")" }
func (e *hintError) Unwrap() error { return e.err }
