package workloads

import (
	"errors"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Request is one RPC to send. The Driver owns it; a Client reads it during Submit only and
// must copy what it keeps.
type Request struct {
	// Tag identifies the RPC to the Driver; the Client returns it unchanged in Completed.Tag
	// and must not interpret it.
	Tag uint64
	// Proc is the procedure's index in the program's table (Config.Prog).
	Proc int
	// Class is the message class to force, or rpcproto.Auto for the requester's own choice.
	Class rpcproto.Kind
	// Verify asks for the payload to be checked end to end (Config.Verify).
	Verify bool
	// CallSize is the payload the call carries (ECHO and SINK arguments), ReplySize the one
	// the reply carries (ECHO and SOURCE results), as the procedure's table entry says;
	// both exclude the RPC and RPC-over-RDMA headers, which the Client adds.
	CallSize, ReplySize uint32
}

// Completed reports one finished RPC.
type Completed struct {
	// Tag is the finished Request's Tag.
	Tag uint64
	// Err is nil when the RPC succeeded (a reply arrived, decoded and, with Verify, checked
	// out); otherwise why it failed. Clients return preallocated errors here: the hot path
	// formats nothing.
	Err error
	// CallClass and ReplyClass are the message classes the call and the reply actually used:
	// rpcproto.Short, Chunked or Long for a successful RPC (the Driver fails the run on
	// anything else); ignored when Err is set.
	CallClass, ReplyClass rpcproto.Kind
}

// Client sends RPCs without blocking. It is the requester side of the engine (one or more
// connections polled by one goroutine) or a fake in tests. One goroutine owns a Client: its
// methods are never called concurrently.
type Client interface {
	// Submit starts the RPC req (valid during the call only). It returns ErrBusy, leaving
	// nothing started, when it cannot take another RPC now (no credit, no free send slot):
	// the Driver calls Progress and tries again. Any other error is fatal for the run.
	Submit(req *Request) error
	// Progress polls for finished RPCs without blocking, fills done[:n] with them and returns
	// n (0 when nothing finished; never more than len(done)). Every submitted RPC is reported
	// exactly once. An error means the Client as a whole failed (a broken connection): done[:n]
	// are still valid, and the run ends.
	Progress(done []Completed) (n int, err error)
}

// Waiter is a Client that can block until it may have finished RPCs: the event and hybrid
// poll modes (Config.Poll) wait through it.
type Waiter interface {
	// Wait blocks until a completion may be ready or timeout passes (then it returns
	// datapath.ErrTimeout or nil; any other error ends the run). It may return early.
	Wait(timeout time.Duration) error
}

// ErrBusy is what Client.Submit returns when it cannot take an RPC now. Return this value
// itself (the Driver compares it without unwrapping on the hot path's common case).
var ErrBusy = errors.New("workloads: client busy")

// Sample is one measured RPC as a Recorder receives it.
type Sample struct {
	Proc int
	// Call and Reply are the classes the call and the reply used (never rpcproto.Auto); the
	// RPC as a whole counts under the heavier.
	Call, Reply rpcproto.Kind
	// RTT is the full round trip: from the intended send time in open loop, from just before
	// Submit in closed loop, to just after the Progress call that returned it.
	RTT time.Duration
	// Payload is the call's plus the reply's payload bytes (Request.CallSize + ReplySize).
	Payload int
}

// Recorder takes one Driver's measured RPCs (a per-poller HDR histogram such as
// results.Recorder behind an adapter). Only the Driver's goroutine calls it: no locking.
// Record must not allocate; Fail is rare and may.
type Recorder interface {
	// Record takes a successful RPC.
	Record(s Sample)
	// Fail takes an RPC that completed with err (Completed.Err).
	Fail(proc int, err error)
}

// Discard is a Recorder that keeps nothing.
var Discard Recorder = discard{}

type discard struct{}

func (discard) Record(Sample)   {}
func (discard) Fail(int, error) {}
