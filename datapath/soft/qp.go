package soft

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

var qpnSeq atomic.Uint32

// conn is one end of a reliable connection: a queue pair.
//
// State shared with the other end (the receive queue the peer's SENDs consume, the pending
// send queue, the error state) is guarded by mu. In process both ends share one mutex, the
// pair's: it is uncontended unless both ends post at the same instant, and it makes a SEND,
// the receive it consumes and both completions one atomic step, which is what keeps the
// emulation simple and exactly ordered. Over TCP each end has its own.
type conn struct {
	dev    *device
	pd     *pd
	qpn    uint32
	caps   datapath.QPCaps
	scq    *cq
	rcq    *cq
	local  string
	remote string
	peerPD []byte

	// Slots taken, freed by CQ.Poll (see cell.retire).
	sqOut atomic.Int32
	rqOut atomic.Int32
	err   atomic.Pointer[error]

	mu *sync.Mutex

	// Guarded by mu.
	rq      ring[rqe]
	sq      ring[sqe] // in process: work requests waiting behind a SEND that found no receive
	unsig   int32     // unsignaled work requests completed since the last send completion
	broken  bool
	closed  bool
	rnrAt   time.Time // when the SEND at the head of sq gives up waiting for a receive
	rnr     *time.Timer
	src     [][]byte // scratch for resolved SGLs
	dst     [][]byte
	peer    *conn    // in process
	link    *tcpLink // over TCP
	onClose func()   // releases the listener's or connector's bookkeeping
}

var _ datapath.Conn = (*conn)(nil)

type rqe struct {
	id  uint64
	sgl []datapath.SGE
}

type sqe struct {
	wr       datapath.SendWR // SGL points into sgl's backing array
	sgl      []datapath.SGE
	inline   []byte   // the data of a FlagInline work request, copied at post time
	seq      uint32   // over TCP: the request's sequence number
	segs     [][]byte // over TCP: the SGL resolved when the request was handed to the writer
	resolved bool
}

// ring is a FIFO of at most limit entries. Entries are allocated as the queue first needs
// them, not at connection setup (a deep queue that is never full costs only what it used),
// and never move, so pointers to them stay valid. Steady state allocates nothing.
type ring[T any] struct {
	buf   []*T
	head  int
	n     int
	limit int
	// fresh prepares an entry when it is allocated (its SGL and scratch buffers).
	fresh func(*T)
}

func newRing[T any](limit int, fresh func(*T)) ring[T] {
	return ring[T]{limit: limit, fresh: fresh}
}

func (r *ring[T]) full() bool { return r.n == r.limit }
func (r *ring[T]) front() *T  { return r.buf[r.head] }
func (r *ring[T]) back() *T {
	if r.n == len(r.buf) {
		r.grow()
	}
	i := r.head + r.n
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.n++
	return r.buf[i]
}
func (r *ring[T]) at(i int) *T {
	i += r.head
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	return r.buf[i]
}

// grow doubles the ring (up to limit), keeping its entries in order; callers check full first.
func (r *ring[T]) grow() {
	nb := make([]*T, min(max(2*len(r.buf), 8), r.limit))
	for i := range r.n {
		nb[i] = r.at(i)
	}
	// The entries not in use keep their place after the used ones; new ones are made.
	k := r.n
	for i := r.n; i < len(r.buf); i++ {
		nb[k] = r.at(i)
		k++
	}
	for ; k < len(nb); k++ {
		e := new(T)
		if r.fresh != nil {
			r.fresh(e)
		}
		nb[k] = e
	}
	r.buf, r.head = nb, 0
}

// unpop puts back the entry pop just removed.
func (r *ring[T]) unpop() {
	r.head--
	if r.head < 0 {
		r.head = len(r.buf) - 1
	}
	r.n++
}

func (r *ring[T]) pop() {
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
}

// prepare runs cfg.Prepare on a new queue pair that is not yet connected. Its error is the
// caller's own, returned as it is; the queue pair is not counted among the device's objects
// yet, so on failure it is simply dropped.
func prepare(c *conn, cfg datapath.QPConfig) error {
	if cfg.Prepare == nil {
		return nil
	}
	return cfg.Prepare(c)
}

// newConn creates the queue pair cfg describes, validated and clamped like ibv_create_qp.
func newConn(d *device, cfg datapath.QPConfig) (*conn, error) {
	const op = "soft: create QP"
	scq, ok1 := cfg.SendCQ.(*cq)
	rcq, ok2 := cfg.RecvCQ.(*cq)
	if !ok1 || !ok2 || scq.dev != d || rcq.dev != d {
		return nil, &datapath.OpError{Op: op, Err: errForeignCQ}
	}
	p, err := d.pdOf(cfg.PD)
	if err != nil {
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	def := func(v, dflt, max int, what string) (int, error) {
		switch {
		case v == 0:
			return dflt, nil
		case v < 0 || v > max:
			return 0, &datapath.OpError{Op: op, Err: fmt.Errorf("%s %d out of range 1..%d", what, v, max)}
		}
		return v, nil
	}
	var caps datapath.QPCaps
	if caps.MaxSendWR, err = def(cfg.MaxSendWR, datapath.DefaultMaxWR, maxQPWR, "max_send_wr"); err != nil {
		return nil, err
	}
	if caps.MaxRecvWR, err = def(cfg.MaxRecvWR, datapath.DefaultMaxWR, maxQPWR, "max_recv_wr"); err != nil {
		return nil, err
	}
	if caps.MaxSendSGE, err = def(cfg.MaxSendSGE, datapath.DefaultMaxSGE, maxSGE, "max_send_sge"); err != nil {
		return nil, err
	}
	if caps.MaxRecvSGE, err = def(cfg.MaxRecvSGE, datapath.DefaultMaxSGE, maxSGE, "max_recv_sge"); err != nil {
		return nil, err
	}
	caps.MaxInlineData = min(max(cfg.MaxInlineData, 0), d.p.cfg.MaxInlineData)
	caps.RDMAReadDepth = cfg.RDMAReadDepth
	if caps.RDMAReadDepth <= 0 {
		caps.RDMAReadDepth = datapath.DefaultRDMAReadDepth
	}
	caps.RDMAReadDepth = min(caps.RDMAReadDepth, maxQPRdAtom)

	c := &conn{dev: d, pd: p, qpn: qpnSeq.Add(1) & 0xffffff, caps: caps, scq: scq, rcq: rcq}
	c.rq = newRing(caps.MaxRecvWR, func(e *rqe) { e.sgl = make([]datapath.SGE, 0, caps.MaxRecvSGE) })
	c.sq = newRing(caps.MaxSendWR, func(e *sqe) {
		e.sgl = make([]datapath.SGE, 0, caps.MaxSendSGE)
		e.inline = make([]byte, 0, caps.MaxInlineData)
		e.segs = make([][]byte, 0, caps.MaxSendSGE)
	})
	c.src = make([][]byte, 0, maxSGE)
	c.dst = make([][]byte, 0, maxSGE)
	c.mu = new(sync.Mutex)
	return c, nil
}

func (c *conn) PeerPrivateData() []byte { return c.peerPD }
func (c *conn) QPN() uint32             { return c.qpn }
func (c *conn) Caps() datapath.QPCaps   { return c.caps }
func (c *conn) LocalAddr() string       { return c.local }
func (c *conn) RemoteAddr() string      { return c.remote }
func (c *conn) Err() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

// checkSend validates a work request as ibv_post_send does before accepting it.
func (c *conn) checkSend(wr *datapath.SendWR) error {
	switch wr.Op {
	case datapath.OpSend, datapath.OpSendInv, datapath.OpWrite, datapath.OpRead, datapath.OpLocalInv:
	case datapath.OpBindMW:
		if _, ok := wr.MW.(*mw); !ok || len(wr.SGL) != 1 {
			return errBadMW
		}
	default:
		return errBadOpcode
	}
	if len(wr.SGL) > c.caps.MaxSendSGE {
		return errTooManySGE
	}
	if wr.Flags&datapath.FlagInline != 0 {
		if wr.Op == datapath.OpRead {
			return errBadOpcode
		}
		var n uint64
		for i := range wr.SGL {
			n += uint64(wr.SGL[i].Length)
		}
		if n > uint64(c.caps.MaxInlineData) {
			return errInlineTooLong
		}
	}
	return nil
}

// PostRecv queues receive buffers. Their keys are checked when a SEND lands in them, as on
// hardware.
func (c *conn) PostRecv(wrs []datapath.RecvWR) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.postable(); err != nil {
		return 0, err
	}
	for i := range wrs {
		wr := &wrs[i]
		if len(wr.SGL) > c.caps.MaxRecvSGE {
			return i, errTooManySGE
		}
		if c.rqOut.Load() >= int32(c.caps.MaxRecvWR) || c.rq.full() {
			return i, errQueueFull
		}
		c.rqOut.Add(1)
		e := c.rq.back()
		e.id = wr.ID
		e.sgl = append(e.sgl[:0], wr.SGL...)
	}
	if c.link != nil {
		c.link.recvPosted()
	} else if p := c.peer; p != nil && p.sq.n > 0 {
		p.drain()
	}
	return len(wrs), nil
}

// sendDone completes a send queue work request. Unsignaled successes only count towards the
// next completion's retire, as unsignaled work requests do on hardware.
func (c *conn) sendDone(wr *datapath.SendWR, st datapath.Status, n uint32) {
	if st == datapath.StatusSuccess && wr.Flags&datapath.FlagSignaled == 0 {
		c.unsig++
		return
	}
	wc := datapath.Completion{ID: wr.ID, QPN: c.qpn, Op: wr.Op, Status: st, ByteLen: n}
	c.scq.push(&wc, c, c.unsig+1)
	c.unsig = 0
}

func (c *conn) recvDone(id uint64, st datapath.Status, n uint32, inv uint32, invalidated bool) {
	wc := datapath.Completion{ID: id, QPN: c.qpn, Op: datapath.OpRecv, Status: st, ByteLen: n,
		InvRKey: inv, Invalidated: invalidated}
	c.rcq.push(&wc, c, 0)
}

// breakLocked moves the connection to the error state: cause becomes Err() and every
// outstanding work request completes with StatusFlushed. mu is held.
func (c *conn) breakLocked(cause error) {
	if c.broken {
		return
	}
	c.broken = true
	c.err.Store(&cause)
	if c.link != nil {
		c.link.quiesce()
	}
	if c.rnr != nil {
		c.rnr.Stop()
	}
	c.rnrAt = time.Time{}
	for c.sq.n > 0 {
		c.sendDone(&c.sq.front().wr, datapath.StatusFlushed, 0)
		c.sq.pop()
	}
	for c.rq.n > 0 {
		c.recvDone(c.rq.front().id, datapath.StatusFlushed, 0, 0, false)
		c.rq.pop()
	}
	if c.link != nil {
		c.link.broken(c)
	}
}

// Close disconnects: both ends flush what is outstanding, the peer sees ErrBroken.
func (c *conn) Close() error { return c.close("") }

var _ datapath.Aborter = (*conn)(nil)

// Abort is Close telling the peer why: over TCP in the DISCONNECT's reason (at most
// maxReason bytes, WIRE.md), in process directly.
func (c *conn) Abort(reason string) error {
	if reason == "" {
		reason = "closed without a reason"
	}
	return c.close(reason[:min(len(reason), maxReason)])
}

func (c *conn) close(reason string) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return &datapath.OpError{Op: "soft: close QP", Err: datapath.ErrClosed}
	}
	c.closed = true
	if reason != "" {
		// Found here, not by the peer: over TCP the DISCONNECT carries it (tcpLink.broken).
		c.breakLocked(brokenBy(datapath.StatusFlushed, false, reason))
	}
	c.breakLocked(errLocalClose)
	if p := c.peer; p != nil {
		p.breakLocked(&datapath.DisconnectError{Reason: reason})
	}
	onClose := c.onClose
	c.mu.Unlock()
	if onClose != nil {
		onClose()
	}
	c.counted(-1)
	if c.link != nil {
		c.dev.linger(c.link.done)
	}
	return nil
}

// counted adds delta to the open connections of the device and of the PD: +1 once the
// connection is established, -1 when it closes.
func (c *conn) counted(delta int) {
	d := c.dev
	d.mu.Lock()
	d.nConn += delta
	c.pd.nConn += delta
	d.mu.Unlock()
}

// BrokenError is a connection's Err after it broke: errors.Is(err, datapath.ErrBroken)
// holds, and Status is the failure that broke it (StatusFlushed when the peer's failure or a
// disconnect did), Remote whether it was detected by the peer.
type BrokenError struct {
	Status datapath.Status
	Remote bool
	Reason string
}

func (e *BrokenError) Error() string {
	s := "connection broken: " + e.Reason
	if e.Status != datapath.StatusSuccess && e.Status != datapath.StatusFlushed {
		s += " (" + e.Status.String() + ")"
	}
	return s
}

func (e *BrokenError) Is(target error) bool { return target == datapath.ErrBroken }

var (
	errForeignCQ  = errors.New("CQ is not a CQ of this soft device")
	errLocalClose = &BrokenError{Status: datapath.StatusFlushed, Reason: "closed locally"}
)

func brokenBy(st datapath.Status, remote bool, reason string) error {
	return &BrokenError{Status: st, Remote: remote, Reason: reason}
}
