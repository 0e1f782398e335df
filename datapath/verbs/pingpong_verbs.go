//go:build verbs && cgo && pingpong

package verbs

/*
#include "pingpong.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// RunPingPong runs one side of p over dc, whose send and receive CQ is dq, in one C call
// that loops through the same calls and the same deferred posting as the Go datapath
// (vb_cq_poll posts what is staged and polls), so that what a Go loop over the same queue
// pair costs more is the Go side's own. dc must defer posts (datapath.Deferrer) and have
// its receives posted and nothing staged. The client writes its measured round trips to
// rtts[:p.Iters]. The calling thread busy-polls in C until the side is done; the CQ's
// turnaround probe (Config.Turnarounds) measures C's own turnarounds meanwhile.
func RunPingPong(dc datapath.Conn, dq datapath.CQ, p PingPong, rtts []time.Duration) error {
	c, ok := dc.(*conn)
	q, qok := dq.(*cq)
	switch {
	case !ok || !qok:
		return ppErr(errors.New("the connection and CQ must be the verbs provider's"))
	case c.q == nil:
		return errConnClosed
	case c.scq != q || c.rcq != q:
		return ppErr(errors.New("the connection's send and receive CQ must be cq"))
	case !c.deferred:
		return ppErr(errors.New("the connection must defer posts (DeferPosts)"))
	case c.q.staged_send != 0 || c.q.staged_recv != 0:
		return ppErr(errors.New("work requests are staged already"))
	case p.Warmup < 0 || p.Iters < 0 || (p.Client && len(rtts) < p.Iters):
		return ppErr(fmt.Errorf("warmup %d, %d round trips, room for %d times", p.Warmup, p.Iters, len(rtts)))
	case p.Inline && int(p.Send.Length) > c.caps.MaxInlineData:
		return errInline
	case p.Chunk != 0 && (p.Client || (p.Chunk != datapath.OpRead && p.Chunk != datapath.OpWrite)):
		return ppErr(fmt.Errorf("chunk %v (client %v): only the server moves one, by OpRead or OpWrite", p.Chunk, p.Client))
	case p.Chunk != 0 && p.Local.LKey != p.Send.LKey:
		return ppErr(errors.New("the chunk's local memory must be in the region of the SEND's"))
	}
	wait := p.Wait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	cp := C.struct_vb_pingpong{
		client:       cBool(p.Client),
		warmup:       C.int(p.Warmup),
		iters:        C.int(p.Iters),
		signal_every: C.int(max(1, p.SignalEvery)),
		inl:          cBool(p.Inline),
		send_len:     C.uint32_t(p.Send.Length),
		recv_len:     C.uint32_t(p.RecvLen),
		lkey:         C.uint32_t(p.Send.LKey),
		send_addr:    C.uint64_t(p.Send.Addr),
		recv_base:    C.uint64_t(p.RecvBase),
		recv_stride:  C.uint64_t(p.RecvStride),
		wait_ns:      C.uint64_t(wait),
		chunk_op:     C.int(p.Chunk),
		chunk_len:    C.uint32_t(p.Local.Length),
		chunk_rkey:   C.uint32_t(p.RKey),
		chunk_local:  C.uint64_t(p.Local.Addr),
		chunk_remote: C.uint64_t(p.RemoteAddr),
	}
	// time.Duration is an int64 of nanoseconds: C writes the client's times in place.
	var out *C.int64_t
	if p.Client && p.Iters > 0 {
		out = (*C.int64_t)(unsafe.Pointer(&rtts[0]))
	}
	rc := C.vb_pingpong(q.h, c.h, &cp, out)
	if q.c.flush_failed != 0 {
		q.flushFailed()
	}
	switch {
	case rc == 0:
		return nil
	case rc == -1:
		return errCQFailed
	case rc == -2:
		return ppErr(fmt.Errorf("%v completion: %v (%v)", datapath.Opcode(cp.op), datapath.Status(cp.status), c.Err()))
	case rc == C.ETIMEDOUT:
		return ppErr(fmt.Errorf("no completion in %v: %w", wait, datapath.ErrTimeout))
	case rc == C.EPROTO:
		return ppErr(errors.New("a receive completed while the chunk's Read was awaited"))
	case rc == C.ENOMEM:
		return ppErr(datapath.ErrQueueFull)
	}
	return opErr("verbs: ping-pong", rc)
}

func ppErr(err error) error { return &datapath.OpError{Op: "verbs: ping-pong", Err: err} }
