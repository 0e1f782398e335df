package verbs

import (
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
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

// RejectedError is returned by Device.Connect when the listener rejected the request.
type RejectedError struct {
	// Reason is the transport's reject reason (IBTA CM reason code on InfiniBand and RoCE;
	// 28 means "consumer defined", what ConnRequest.Reject sends).
	Reason int
	// PrivateData is the rejecter's private data, as received (possibly padded).
	PrivateData []byte
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("connection rejected (reason %d, %d bytes of private data)", e.Reason, len(e.PrivateData))
}
