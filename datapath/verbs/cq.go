//go:build verbs && cgo

package verbs

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"golang.org/x/sys/unix"
)

type cq struct {
	d    *device
	c    *C.struct_vb_cq
	h    C.uintptr_t // c, for the datapath's calls
	fd   int         // completion channel, non-blocking
	spin C.int

	// conns maps QP numbers to the connections this CQ serves, to break the right one when a
	// completion fails (the slow path only).
	mu     sync.Mutex
	conns  map[uint32]*conn
	closed bool
}

var _ datapath.CQ = (*cq)(nil)

var errCQFailed = &datapath.OpError{Op: "ibv_poll_cq", Err: errors.New("completion queue failed (overrun?)")}

// Poll moves up to min(len(wcs), 64) completions into wcs with one C call that writes them in
// place.
func (q *cq) Poll(wcs []datapath.Completion) (int, error) {
	if len(wcs) == 0 {
		return 0, nil
	}
	// Handles as integers: no pointer argument for cgocheck to inspect (see shim.h). wcs
	// stays referenced by the caller across the call, and C keeps no pointer into it.
	n := int(C.vb_cq_poll(q.h, C.uintptr_t(uintptr(unsafe.Pointer(&wcs[0]))), C.int(min(len(wcs), C.VB_CQ_BATCH)), q.spin))
	if q.c.flush_failed != 0 {
		q.flushFailed()
	}
	if n < 0 {
		return 0, errCQFailed
	}
	for i := range wcs[:n] {
		if wcs[i].Status != datapath.StatusSuccess {
			q.failed(i, &wcs[i])
		}
	}
	return n, nil
}

// failed breaks the connection a failed completion belongs to, keeping the vendor error.
func (q *cq) failed(i int, wc *datapath.Completion) {
	q.mu.Lock()
	c := q.conns[wc.QPN]
	q.mu.Unlock()
	if c == nil {
		return
	}
	c.fail(&CompletionError{
		QPN:       wc.QPN,
		ID:        wc.ID,
		Op:        wc.Op,
		Status:    wc.Status,
		VendorErr: uint32(q.c.wc[int(q.c.last_off)+i].vendor_err),
	})
}

// flushFailed breaks the connections whose staged work requests the device refused, with
// the error the post returned.
func (q *cq) flushFailed() {
	q.c.flush_failed = 0
	q.mu.Lock()
	var failed []*conn
	for _, c := range q.conns {
		if c.q != nil && c.q.flush_rc != 0 {
			failed = append(failed, c)
		}
	}
	q.mu.Unlock()
	for _, c := range failed {
		op := "ibv_post_recv"
		if c.q.flush_send != 0 {
			op = "ibv_post_send"
		}
		c.fail(opErr(op, c.q.flush_rc))
	}
}

// Wait arms the CQ and sleeps on its completion channel. Arming posts what is staged first.
func (q *cq) Wait(timeout time.Duration) error {
	n := C.vb_cq_arm(q.h)
	if q.c.flush_failed != 0 {
		q.flushFailed()
	}
	if n != 0 {
		if n > 0 {
			return nil
		}
		return opErr("ibv_req_notify_cq", n)
	}
	ms := -1
	if timeout >= 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	fds := [1]unix.PollFd{{Fd: int32(q.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds[:], ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &datapath.OpError{Op: "poll completion channel", Err: err}
		}
		if n == 0 {
			return datapath.ErrTimeout
		}
		C.vb_cq_event(q.h)
		return nil
	}
}

func (q *cq) attach(c *conn) {
	q.mu.Lock()
	q.conns[c.qpn] = c
	q.mu.Unlock()
}

func (q *cq) detach(c *conn) {
	q.mu.Lock()
	delete(q.conns, c.qpn)
	q.mu.Unlock()
}

func (q *cq) Close() error {
	q.d.reap(func(z *zombie) bool { return z.scq == q || z.rcq == q })
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return &datapath.OpError{Op: "ibv_destroy_cq", Err: datapath.ErrClosed}
	}
	if len(q.conns) > 0 {
		return &datapath.OpError{Op: "ibv_destroy_cq", Err: fmt.Errorf("still used by %d connections", len(q.conns))}
	}
	C.vb_cq_flush(q.c) // with no connection left, only takes closed queue pairs off its list
	if rc := C.vb_cq_close(q.c); rc != 0 {
		return opErr("ibv_destroy_cq", rc)
	}
	q.closed = true
	q.d.track(&q.d.ncq, -1)
	return nil
}

var _ datapath.TurnaroundProber = (*cq)(nil)

// Turnarounds implements datapath.TurnaroundProber.
func (q *cq) Turnarounds() (datapath.Turnaround, bool) {
	if q.c.probe == 0 {
		return datapath.Turnaround{}, false
	}
	t := datapath.Turnaround{
		Count: uint64(q.c.turns),
		Total: time.Duration(q.c.turn_ns),
		Min:   time.Duration(q.c.turn_min),
		Max:   time.Duration(q.c.turn_max),
		Post:  time.Duration(q.c.post_ns),
	}
	for i := range t.Hist {
		t.Hist[i] = uint64(q.c.turn_hist[i])
	}
	return t, true
}

// The C histogram and Turnaround.Hist have one shape: a difference makes either constant
// negative, which does not compile.
const (
	_ = uint(C.VB_TURN_BUCKETS-datapath.TurnaroundBuckets) + uint(datapath.TurnaroundBuckets-C.VB_TURN_BUCKETS)
	_ = uint(C.VB_TURN_BUCKET_NS-datapath.TurnaroundBucket) + uint(datapath.TurnaroundBucket-C.VB_TURN_BUCKET_NS)
)
