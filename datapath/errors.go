package datapath

import (
	"errors"
	"strconv"
	"time"
)

var (
	// ErrNotSupported: the provider or device cannot do this (a provider built without its
	// library, a device without memory windows). Tests that need the feature skip on it.
	ErrNotSupported = errors.New("not supported")
	// ErrBroken: the connection is in the error state or disconnected.
	ErrBroken = errors.New("connection broken")
	// ErrClosed: the object was closed.
	ErrClosed = errors.New("closed")
	// ErrTimeout: CQ.Wait timed out.
	ErrTimeout = errors.New("timed out")
	// ErrQueueFull: a post exceeded the queue's capacity.
	ErrQueueFull = errors.New("work queue full")
)

// OpError is a failed setup operation: what was attempted and why. Providers wrap the cause
// they got (an errno, a completion status, a network error) rather than replacing it.
type OpError struct {
	Op  string // "rdma_connect", "ibv_reg_mr", "soft: accept", ...
	Err error
}

func (e *OpError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// Timeout reports whether the error is a timeout, for net.Error-like use.
func (e *OpError) Timeout() bool { return errors.Is(e.Err, ErrTimeout) }

// DefaultConnectTimeout bounds address/route resolution and connection establishment when
// the caller's context has no deadline.
const DefaultConnectTimeout = 10 * time.Second

// RejectedError is what Device.Connect's error wraps (errors.As finds it) when the listener
// refused the request with ConnRequest.Reject.
type RejectedError struct {
	// PrivateData is the rejecter's private data as received: possibly zero-padded (to
	// MaxRejectPrivateData by RDMA-CM over IB and RoCE, to MaxAcceptPrivateData by the soft
	// provider), so decoders must not take its length as the sender's.
	PrivateData []byte
	// Status is the transport's reject reason where it has one, else 0: over IB and RoCE
	// the IBTA CM reason code of the REJ (28, "consumer defined", is what Reject sends);
	// over iWARP a negative errno (-ECONNRESET for an MPA reject). RejectStatusText says
	// what it usually means.
	Status int
}

func (e *RejectedError) Error() string {
	s := "connection rejected by the peer"
	if e.Status != 0 {
		s += " (CM status " + strconv.Itoa(e.Status) + ": " + RejectStatusText(e.Status) + ")"
	}
	return s
}

// RejectStatusText says what a RejectedError.Status usually means: the IBTA CM REJ reason
// codes (positive, IB and RoCE) and the errnos Linux's iw_cm reports (negative, iWARP),
// as the kernel's rdma_reject_msg names them.
func RejectStatusText(status int) string {
	switch status {
	case 0:
		return "no status"
	case -104: // ECONNRESET
		return "iWARP: the peer sent an MPA reject (its application or RDMA stack refused)"
	case -111: // ECONNREFUSED
		return "iWARP: the peer refused the TCP connection (nothing listening on that port?)"
	case -110: // ETIMEDOUT
		return "iWARP: connection setup timed out"
	}
	if status < 0 {
		return "iWARP: errno " + strconv.Itoa(-status)
	}
	if status < len(ibRejReasons) && ibRejReasons[status] != "" {
		return ibRejReasons[status]
	}
	return "unknown CM reject reason"
}

// ibRejReasons are the IBTA CM REJ reason codes (enum ib_cm_rej_reason).
var ibRejReasons = [...]string{
	1:  "no QP available",
	2:  "no EEC available",
	3:  "no resources at the peer",
	4:  "timeout",
	5:  "unsupported request",
	6:  "invalid comm ID",
	7:  "invalid comm instance",
	8:  "invalid service ID (nothing listening on that port?)",
	9:  "invalid transport type",
	10: "stale connection",
	11: "RDC does not exist",
	12: "invalid GID",
	13: "invalid LID",
	14: "invalid SL",
	15: "invalid traffic class",
	16: "invalid hop limit",
	17: "invalid packet rate",
	18: "invalid alternate GID",
	19: "invalid alternate LID",
	20: "invalid alternate SL",
	21: "invalid alternate traffic class",
	22: "invalid alternate hop limit",
	23: "invalid alternate packet rate",
	24: "port CM redirect",
	25: "port redirect",
	26: "invalid MTU",
	27: "insufficient responder resources",
	28: "consumer defined: the peer's application refused",
	29: "invalid RNR retry",
	30: "duplicate local comm ID",
	31: "invalid class version",
	32: "invalid flow label",
	33: "invalid alternate flow label",
	35: "vendor option not supported",
}

// DisconnectError is a connection's Err (errors.Is ErrBroken) after the peer closed it
// deliberately: rdma_disconnect, or a soft DISCONNECT that reports no failure. Reason is
// what the peer said, where the provider carries it (see Aborter); "" otherwise.
type DisconnectError struct {
	Reason string
}

func (e *DisconnectError) Error() string {
	if e.Reason == "" {
		return "connection broken: peer disconnected"
	}
	return "connection broken: peer closed: " + e.Reason
}

func (e *DisconnectError) Is(target error) bool { return target == ErrBroken }
