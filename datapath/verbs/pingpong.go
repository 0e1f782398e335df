//go:build verbs && cgo && pingpong

package verbs

import (
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// PingPong is one side of a SEND/RECV ping-pong that RunPingPong drives from C: the
// measuring instrument that says what this provider's datapath costs without Go on the
// path. Each round trip the client sends Send and waits for a receive; the server waits for
// a receive and sends Send back. Every receive completion stages its slot's receive again.
// With a Chunk the server also moves data between the two as an RPC with a chunk does.
type PingPong struct {
	Client bool
	// Warmup round trips are not measured; Iters are (the client writes their times).
	Warmup, Iters int
	// Send is the message this side sends, Inline whether it goes inline. Every
	// SignalEvery-th SEND asks for a completion (at least 1).
	Send        datapath.SGE
	Inline      bool
	SignalEvery int
	// Receive slot ID i (the receive work request's ID) lies at RecvBase + i×RecvStride,
	// RecvLen bytes, in the region Send's LKey names.
	RecvBase, RecvStride uint64
	RecvLen              uint32
	// Wait bounds each wait for a completion (default 10 s): a peer that stopped answering
	// fails the run with datapath.ErrTimeout instead of spinning for ever.
	Wait time.Duration
	// Chunk, on the server, is an RDMA operation between each receive and the SEND that
	// answers it: datapath.OpRead (a SINK's Read chunk: the SEND waits for the Read's
	// completion) or datapath.OpWrite (a SOURCE's Write chunk: posted with the SEND, which
	// the peer receives after the data), of Local (in the region Send's LKey names) from or
	// to the peer's RemoteAddr under RKey. Zero: none.
	Chunk      datapath.Opcode
	Local      datapath.SGE
	RemoteAddr uint64
	RKey       uint32
}
