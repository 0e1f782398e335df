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
	// MaxAcceptPrivateData by RDMA-CM over RoCE and by the soft provider), so decoders must
	// not take its length as the sender's.
	PrivateData []byte
	// Status is the transport's reject reason where it has one (the IBTA CM reason code in
	// RDMA_CM_EVENT_REJECTED's status: 28, "consumer defined", is what Reject sends), else 0.
	Status int
}

func (e *RejectedError) Error() string {
	s := "connection rejected by the peer"
	if e.Status != 0 {
		s += " (CM status " + strconv.Itoa(e.Status) + ")"
	}
	return s
}
