package soft

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// cq is a bounded multi-producer, single-consumer ring (D. Vyukov's bounded queue with a
// sequence number per cell): producers are whoever executes work (the poster of either end in
// process, the TCP reader), the consumer is the one poller. No locks, no allocations.
//
// The capacity is depth rounded up to a power of two, as hardware rounds ibv_create_cq up.
// A push into a full ring sets the overrun flag for good: like hardware, the CQ is then in
// error and Poll reports it.
type cq struct {
	dev   *device
	mask  uint64
	cells []cell
	enq   atomic.Uint64
	_     [56]byte // keep producers' enq off the consumer's line
	deq   uint64

	overrun atomic.Bool
	closed  atomic.Bool
	waiting atomic.Bool
	sig     chan struct{}
	timer   *time.Timer
	slow    *slowdown // the provider's (nil: none)
}

type cell struct {
	// seq is Vyukov's sequence number less the cell's index, so that the zero value is the
	// initial state: a large CQ costs no memory until its cells are used.
	seq atomic.Uint64
	wc  datapath.Completion
	c   *conn // whose queue slots the completion frees when polled
	// retire is how many send queue slots the completion frees: itself and the unsignaled
	// work requests that completed before it; 0 for a receive.
	retire int32
	// due is when a slowed-down CQ lets the completion be polled (nanotime; 0: not stamped
	// yet, see stamp).
	due int64
}

var _ datapath.CQ = (*cq)(nil)

func newCQ(d *device, depth int) *cq {
	n := 1
	for n < depth {
		n <<= 1
	}
	q := &cq{dev: d, mask: uint64(n - 1), cells: make([]cell, n), sig: make(chan struct{}, 1)}
	if d.p.slow.holds() {
		q.slow = d.p.slow
	}
	return q
}

// push adds a completion. It never blocks; a full ring is an overrun.
func (q *cq) push(wc *datapath.Completion, c *conn, retire int32) {
	if q.closed.Load() {
		return
	}
	pos := q.enq.Load()
	for {
		cl := &q.cells[pos&q.mask]
		switch d := int64(cl.seq.Load() + pos&q.mask - pos); {
		case d == 0:
			if !q.enq.CompareAndSwap(pos, pos+1) {
				pos = q.enq.Load()
				continue
			}
			cl.wc, cl.c, cl.retire = *wc, c, retire
			if q.slow != nil && q.slow.nsPerByte > 0 {
				cl.due = q.slow.due() // else Poll stamps it: no clock read per push
			}
			cl.seq.Store(pos + 1 - pos&q.mask)
			q.wake()
			return
		case d < 0:
			q.overrun.Store(true)
			q.wake()
			return
		default:
			pos = q.enq.Load()
		}
	}
}

func (q *cq) wake() {
	if q.waiting.Load() {
		select {
		case q.sig <- struct{}{}:
		default:
		}
	}
}

// Poll frees the queue slots of the completions it returns: a send queue slot stays taken
// until its completion (or a later signaled one) is polled, as on hardware, so an upper layer
// that never polls fills its queue and gets ErrQueueFull.
func (q *cq) Poll(wcs []datapath.Completion) (int, error) {
	if q.closed.Load() {
		return 0, errCQClosed
	}
	n := 0
	var now int64
	clock := false // read only once a completion is there: an empty poll reads no clock
	for n < len(wcs) {
		cl := &q.cells[q.deq&q.mask]
		idx := q.deq & q.mask
		if cl.seq.Load()+idx != q.deq+1 {
			break
		}
		if q.slow != nil {
			if !clock {
				now, clock = nanotime(), true
			}
			if cl.due == 0 {
				q.stamp(now)
			}
			if cl.due > now {
				break // held back: the slowdown's completions come in order
			}
			cl.due = 0
		}
		wcs[n] = cl.wc
		c, r := cl.c, cl.retire
		cl.c = nil
		cl.seq.Store(q.deq + q.mask + 1 - idx)
		q.deq++
		n++
		if r > 0 {
			c.sqOut.Add(-r)
		} else {
			c.rqOut.Add(-1)
		}
	}
	if q.overrun.Load() {
		return n, errCQOverrun
	}
	return n, nil
}

func (q *cq) ready() bool {
	idx := q.deq & q.mask
	return q.cells[idx].seq.Load()+idx == q.deq+1 || q.overrun.Load()
}

// Wait is the event mode: the consumer announces it is waiting, re-checks, and sleeps on a
// one-slot channel that producers signal after a push. A stale signal only makes Wait
// return early, which the contract allows.
func (q *cq) Wait(timeout time.Duration) error {
	if q.closed.Load() {
		return errCQClosed
	}
	if q.slow != nil {
		if wait := q.held(); wait > spinHold {
			// A completion is there but held back: sleep until it is due.
			return q.sleep(min(wait, timeout), wait > timeout)
		} else if wait > 0 {
			// A timer's own wake-up costs more than a short hold: spin it out, so that the
			// slowdown grows linearly from the smallest delay up.
			deadline := time.Now().Add(timeout)
			for q.held() > 0 {
				if time.Now().After(deadline) {
					return datapath.ErrTimeout
				}
				runtime.Gosched()
			}
			return nil
		}
	}
	if q.ready() {
		return nil
	}
	q.waiting.Store(true)
	defer q.waiting.Store(false)
	if q.ready() {
		return nil
	}
	if q.timer == nil {
		q.timer = time.NewTimer(timeout)
	} else {
		q.timer.Reset(timeout)
	}
	select {
	case <-q.sig:
		q.timer.Stop()
		return nil
	case <-q.timer.C:
		if q.ready() {
			return nil
		}
		return datapath.ErrTimeout
	}
}

// stamp gives every completion in the ring that has no due time yet (a delay-only slowdown
// stamps none when pushed) the time it may be polled: now plus the delay. The poller finds a
// completion as soon as it is pushed, so the delay runs from about then, for every completion
// found at once, as it would from the push.
func (q *cq) stamp(now int64) {
	for pos := q.deq; ; pos++ {
		idx := pos & q.mask
		cl := &q.cells[idx]
		if cl.seq.Load()+idx != pos+1 {
			return
		}
		if cl.due == 0 {
			cl.due = now + q.slow.delay
		}
		if pos-q.deq == q.mask {
			return
		}
	}
}

// spinHold is the longest hold Wait spins out instead of sleeping on a timer (a parked
// goroutine's timer wake-up alone costs microseconds).
const spinHold = 20 * time.Microsecond

// held is how long the slowdown still holds back the oldest completion (0: none is held).
func (q *cq) held() time.Duration {
	idx := q.deq & q.mask
	cl := &q.cells[idx]
	if cl.seq.Load()+idx != q.deq+1 {
		return 0
	}
	return time.Duration(max(0, cl.due-nanotime()))
}

// sleep waits d on the CQ's timer; timedOut says Wait's timeout ends it.
func (q *cq) sleep(d time.Duration, timedOut bool) error {
	if q.timer == nil {
		q.timer = time.NewTimer(d)
	} else {
		q.timer.Reset(d)
	}
	<-q.timer.C
	if timedOut {
		return datapath.ErrTimeout
	}
	return nil
}

// Close stops the CQ; completions pushed later are dropped.
func (q *cq) Close() error {
	if !q.closed.CompareAndSwap(false, true) {
		return &datapath.OpError{Op: "soft: close CQ", Err: datapath.ErrClosed}
	}
	q.dev.count(&q.dev.nCQ, -1)
	return nil
}
