//go:build verbs && cgo

package verbs

// #include "shim.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// maxID bounds work request IDs: the bits above carry the opcode and the queue pair's slot
// (see the package comment and shim.h).
const maxID = 1<<C.VB_SLOT_SHIFT - 1

type conn struct {
	d        *device
	id       *C.struct_rdma_cm_id
	ec       *evchan
	q        *C.struct_vb_qp
	h        C.uintptr_t // q, for the datapath's calls (see shim.h)
	scq, rcq *cq
	qpn      uint32
	caps     datapath.QPCaps
	peer     []byte
	local    string
	remote   string

	// Views of the C batch memory Go fills before each post.
	in   []C.struct_vb_swr
	ssge []datapath.SGE
	rwr  []C.struct_ibv_recv_wr
	rsge []datapath.SGE

	// deferred: PostSend and PostRecv stage work requests for the next poll of the CQ to
	// post (DeferPosts). Only the connection's owner reads or writes it.
	deferred bool

	err       atomic.Pointer[errBox]
	idMu      sync.Mutex // guards id against Close while a failing poller disconnects
	discon    bool       // rdma_disconnect was called
	watching  bool
	done      chan struct{} // closed when the CM watcher exits
	closeOnce sync.Once
	closeErr  error
}

type errBox struct{ err error }

var (
	_ datapath.Conn     = (*conn)(nil)
	_ datapath.Deferrer = (*conn)(nil)
)

func defaulted(v, def, limit int) int {
	if v <= 0 {
		v = def
	}
	if limit > 0 {
		v = min(v, limit)
	}
	return v
}

// newConn creates the queue pair of id in cfg.PD (default: the device's PD). MaxInlineData is clamped to what
// the device accepted in the probe and, should the device still refuse the queue pair with
// EINVAL, lowered until it accepts it.
func (d *device) newConn(id *C.struct_rdma_cm_id, ec *evchan, cfg datapath.QPConfig) (*conn, error) {
	scq, ok1 := cfg.SendCQ.(*cq)
	rcq, ok2 := cfg.RecvCQ.(*cq)
	if !ok1 || !ok2 || scq.d != d || rcq.d != d {
		return nil, &datapath.OpError{Op: "rdma_create_qp", Err: errors.New("SendCQ and RecvCQ must be CQs of this device")}
	}
	qpd, err := d.pdOf(cfg.PD)
	if err != nil {
		return nil, &datapath.OpError{Op: "rdma_create_qp", Err: err}
	}
	d.reap(func(z *zombie) bool { return time.Since(z.at) > zombieLinger })
	info := d.info
	rd := defaulted(cfg.RDMAReadDepth, datapath.DefaultRDMAReadDepth, info.MaxQPRdAtom)
	var cp C.struct_ibv_qp_cap
	cp.max_send_wr = C.uint32_t(defaulted(cfg.MaxSendWR, datapath.DefaultMaxWR, info.MaxQPWR))
	cp.max_recv_wr = C.uint32_t(defaulted(cfg.MaxRecvWR, datapath.DefaultMaxWR, info.MaxQPWR))
	cp.max_send_sge = C.uint32_t(defaulted(cfg.MaxSendSGE, datapath.DefaultMaxSGE, info.MaxSGE))
	cp.max_recv_sge = C.uint32_t(defaulted(cfg.MaxRecvSGE, datapath.DefaultMaxSGE, info.MaxSGE))
	inline := min(max(cfg.MaxInlineData, 0), info.MaxInlineData)
	try0 := cp
	var rc C.int
	for {
		try := cp
		try.max_inline_data = C.uint32_t(inline)
		rc = C.vb_create_qp(id, qpd, scq.c.cq, rcq.c.cq, &try)
		if rc == 0 {
			cp = try
			break
		}
		if rc != C.EINVAL || inline == 0 {
			return nil, &datapath.OpError{Op: "rdma_create_qp", Err: fmt.Errorf("send %d×%d, recv %d×%d, inline %d: %w",
				cp.max_send_wr, cp.max_send_sge, cp.max_recv_wr, cp.max_recv_sge, inline, pinnedHint(errno(rc)))}
		}
		inline /= 2
	}
	// Advertise what was asked (the device may have made the queues larger): the accounting
	// in C enforces exactly this.
	sendWR := min(int(cp.max_send_wr), int(try0.max_send_wr))
	recvWR := min(int(cp.max_recv_wr), int(try0.max_recv_wr))
	c := &conn{
		d:   d,
		id:  id,
		ec:  ec,
		scq: scq,
		rcq: rcq,
		qpn: uint32(id.qp.qp_num),
		caps: datapath.QPCaps{
			MaxSendWR:  int(cp.max_send_wr),
			MaxRecvWR:  int(cp.max_recv_wr),
			MaxSendSGE: int(cp.max_send_sge),
			MaxRecvSGE: int(cp.max_recv_sge),
			// The device may round the inline size up; the effective value is what was asked.
			MaxInlineData: min(int(cp.max_inline_data), inline),
			RDMAReadDepth: rd,
		},
		done: make(chan struct{}),
	}
	c.q = C.vb_qp_alloc(C.int(sendWR), C.int(cp.max_send_sge), C.int(recvWR), C.int(cp.max_recv_sge))
	c.h = C.uintptr_t(uintptr(unsafe.Pointer(c.q)))
	if c.q == nil {
		C.rdma_destroy_qp(id)
		return nil, &datapath.OpError{Op: "verbs: work request memory", Err: errno(C.ENOMEM)}
	}
	c.q.qp = id.qp
	c.q.qp_num = id.qp.qp_num
	if err := d.claim(c.q); err != nil {
		C.rdma_destroy_qp(id)
		C.vb_qp_free(c.q)
		return nil, err
	}
	c.in = unsafe.Slice(c.q.in, c.caps.MaxSendWR)
	c.ssge = sgeSlice(c.q.ssge, c.caps.MaxSendWR*c.caps.MaxSendSGE)
	c.rwr = unsafe.Slice(c.q.rwr, c.caps.MaxRecvWR)
	c.rsge = sgeSlice(c.q.rsge, c.caps.MaxRecvWR*c.caps.MaxRecvSGE)
	if err := d.track(&d.nconn, 1); err != nil {
		C.rdma_destroy_qp(id)
		d.zmu.Lock()
		d.release(c.q)
		d.zmu.Unlock()
		return nil, err
	}
	scq.attach(c)
	rcq.attach(c)
	return c, nil
}

// start records the addresses, sets the RNR timer and watches the connection's CM events once
// it is established.
func (c *conn) start() error {
	if rc := C.vb_set_min_rnr_timer(c.id.qp, C.int(c.d.p.cfg.minRNRTimer())); rc != 0 {
		return opErr("ibv_modify_qp min_rnr_timer", rc)
	}
	c.local = addrString(C.rdma_get_local_addr(c.id))
	c.remote = addrString(C.rdma_get_peer_addr(c.id))
	c.watching = true
	go c.watch()
	return nil
}

// errDisconnected: rdma_disconnect carries no private data, so the peer's reason is unknown
// here (DisconnectError.Reason stays empty).
var errDisconnected error = &datapath.DisconnectError{}

// watch breaks the connection when the peer disconnects: rdma_disconnect moves the queue pair
// to the error state, so outstanding work requests flush.
func (c *conn) watch() {
	defer close(c.done)
	ev := new(C.struct_vb_event)
	for {
		if err := c.ec.next(context.Background(), ev); err != nil {
			return
		}
		switch ev._type {
		case C.RDMA_CM_EVENT_DISCONNECTED:
			c.disconnected()
		case C.RDMA_CM_EVENT_DEVICE_REMOVAL:
			c.fail(errDeviceRemoved)
		}
	}
}

var errDeviceRemoved = fmt.Errorf("%w: the device was removed", datapath.ErrBroken)

// disconnected records the peer's disconnect as the cause, also in place of a flushed
// completion polled before the CM event arrived: the flush was its effect.
func (c *conn) disconnected() {
	for {
		old := c.err.Load()
		if old != nil {
			var ce *CompletionError
			if !errors.As(old.err, &ce) || ce.Status != datapath.StatusFlushed {
				break
			}
		}
		if c.err.CompareAndSwap(old, &errBox{errDisconnected}) {
			break
		}
	}
	c.disconnect()
}

// fail records why the connection broke (the first cause wins) and disconnects: the queue
// pair enters the error state, so everything outstanding flushes, and the peer learns of it
// through the CM, so its connection breaks too.
func (c *conn) fail(err error) {
	c.err.CompareAndSwap(nil, &errBox{err})
	c.disconnect()
}

func (c *conn) disconnect() {
	c.idMu.Lock()
	if c.id != nil && !c.discon {
		c.discon = true
		C.rdma_disconnect(c.id)
	}
	c.idMu.Unlock()
}

func (c *conn) Err() error {
	if b := c.err.Load(); b != nil {
		return b.err
	}
	return nil
}

func (c *conn) PeerPrivateData() []byte { return c.peer }
func (c *conn) QPN() uint32             { return c.qpn }
func (c *conn) Caps() datapath.QPCaps   { return c.caps }
func (c *conn) LocalAddr() string       { return c.local }
func (c *conn) RemoteAddr() string      { return c.remote }

// Preallocated errors of the posting path (which must not allocate).
var (
	errPostBroken = &datapath.OpError{Op: "ibv_post_send", Err: datapath.ErrBroken}
	errRecvBroken = &datapath.OpError{Op: "ibv_post_recv", Err: datapath.ErrBroken}
	errSendFull   = &datapath.OpError{Op: "ibv_post_send", Err: datapath.ErrQueueFull}
	errRecvFull   = &datapath.OpError{Op: "ibv_post_recv", Err: datapath.ErrQueueFull}
	errSendSGE    = &datapath.OpError{Op: "ibv_post_send", Err: errors.New("SGL longer than the queue pair's MaxSendSGE")}
	errRecvSGE    = &datapath.OpError{Op: "ibv_post_recv", Err: errors.New("SGL longer than the queue pair's MaxRecvSGE")}
	errInline     = &datapath.OpError{Op: "ibv_post_send", Err: errors.New("inline data longer than the queue pair's MaxInlineData")}
	errID         = &datapath.OpError{Op: "ibv_post_send", Err: errors.New("work request ID must be below 1<<48 with the verbs provider")}
	errOpcode     = &datapath.OpError{Op: "ibv_post_send", Err: errors.New("invalid opcode for the send queue")}
	errBindMW     = &datapath.OpError{Op: "ibv_post_send", Err: errors.New("OpBindMW needs a MW of this device and SGL[0] inside an MR of this device")}
	errRecvIDs    = &datapath.OpError{Op: "ibv_post_recv", Err: errors.New("work request ID must be below 1<<48 with the verbs provider")}
	errConnClosed = &datapath.OpError{Op: "verbs: conn", Err: datapath.ErrClosed}
)

// PostSend fills the Conn's C work requests from wrs and posts them with one C call per
// MaxSendWR of them, or stages them for the next poll of the CQ (DeferPosts).
func (c *conn) PostSend(wrs []datapath.SendWR) (int, error) {
	if c.err.Load() != nil {
		return 0, errPostBroken
	}
	if c.deferred {
		return c.stageSend(wrs)
	}
	posted := 0
	for posted < len(wrs) {
		batch := wrs[posted:]
		if len(batch) > len(c.in) {
			batch = batch[:len(c.in)]
		}
		n, verr, binds := c.fillSend(batch, 0)
		if n > 0 {
			rc := C.vb_post_send(c.h, C.int(n))
			bad := c.q.posted
			if binds {
				c.recordBinds(batch[:bad])
			}
			posted += int(bad)
			if rc != 0 {
				if rc == C.ENOMEM {
					return posted, errSendFull
				}
				return posted, opErr("ibv_post_send", rc)
			}
		}
		if verr != nil {
			return posted, verr
		}
	}
	return posted, nil
}

// stageSend writes wrs after what is staged already, as far as the send queue has room for
// them beside what is outstanding and staged (the same bound vb_post_send enforces).
func (c *conn) stageSend(wrs []datapath.SendWR) (int, error) {
	q := c.q
	at := int(q.staged_send)
	room := int(uint64(q.send_cap) - (uint64(q.sq_posted) + uint64(at) - uint64(q.sq_retired)))
	batch := wrs
	if len(batch) > room {
		batch = batch[:room]
	}
	n, verr, binds := c.fillSend(batch, at)
	if n > 0 {
		if binds {
			c.recordBinds(batch[:n])
		}
		q.staged_send += C.int(n)
		c.link()
	}
	if verr != nil {
		return n, verr
	}
	if n < len(wrs) {
		return n, errSendFull
	}
	return n, nil
}

// link appends the queue pair to its CQ's pending list, once: the poll posts the queue pairs
// in the order they staged their first work request.
func (c *conn) link() {
	q := c.q
	if q.linked != 0 {
		return
	}
	atomic.StoreInt32((*int32)(unsafe.Pointer(&q.linked)), 1) // pnext is nil while unlinked
	cc := c.scq.c
	if cc.pending_tail != nil {
		cc.pending_tail.pnext = q
	} else {
		cc.pending = q
	}
	cc.pending_tail = q
}

var errDeferCQs = &datapath.OpError{Op: "verbs: defer posts", Err: errors.New("the send and receive CQs differ: one poll must post both queues' work requests")}

// DeferPosts implements datapath.Deferrer: from now on PostSend and PostRecv stage, and
// vb_cq_poll or vb_cq_arm of the CQ post what is staged in the same C call as the poll.
func (c *conn) DeferPosts() error {
	if c.q == nil {
		return errConnClosed
	}
	if c.scq != c.rcq {
		return errDeferCQs
	}
	if !c.d.p.cfg.ImmediatePosts {
		c.deferred = true
	}
	return nil
}

// fillSend writes batch into the C work requests from index at until one is invalid; it
// returns how many it wrote, the error of the invalid one, and whether there are binds among
// them.
func (c *conn) fillSend(batch []datapath.SendWR, at int) (int, error, bool) {
	maxSGE := c.caps.MaxSendSGE
	binds := false
	for i := range batch {
		w := &batch[i]
		if w.ID > maxID {
			return i, errID, binds
		}
		if len(w.SGL) > maxSGE {
			return i, errSendSGE, binds
		}
		in := &c.in[at+i]
		in.id = C.uint64_t(w.ID | uint64(w.Op)<<C.VB_OP_SHIFT)
		in.op = C.uint8_t(w.Op)
		in.flags = C.uint8_t(w.Flags)
		in.num_sge = C.uint16_t(len(w.SGL))
		copy(c.ssge[(at+i)*maxSGE:], w.SGL)
		switch w.Op {
		case datapath.OpSend:
		case datapath.OpSendInv, datapath.OpLocalInv:
			in.inv_rkey = C.uint32_t(w.InvRKey)
		case datapath.OpWrite, datapath.OpRead:
			in.remote_addr = C.uint64_t(w.RemoteAddr)
			in.rkey = C.uint32_t(w.RKey)
		case datapath.OpBindMW:
			m, ok := w.MW.(*mw)
			if !ok || m.d != c.d || len(w.SGL) != 1 {
				return i, errBindMW, binds
			}
			r := c.d.mrByLKey(w.SGL[0].LKey)
			if r == nil {
				return i, errBindMW, binds
			}
			in.mw = m.mw
			in.mr = r.mr
			in.rkey = C.uint32_t(w.RKey)
			in.bind_access = C.uint32_t(ibvAccess(w.BindAccess) &^ C.IBV_ACCESS_MW_BIND)
			binds = true
		default:
			return i, errOpcode, binds
		}
		if w.Flags&datapath.FlagInline != 0 {
			var n uint32
			for _, s := range w.SGL {
				n += s.Length
			}
			if int(n) > c.caps.MaxInlineData {
				return i, errInline, binds
			}
		}
	}
	return len(batch), nil, binds
}

// recordBinds makes MW.RKey report the key of the latest bind posted. The device keeps the
// window's index bits and takes only the key byte from the work request.
func (c *conn) recordBinds(posted []datapath.SendWR) {
	for i := range posted {
		if w := &posted[i]; w.Op == datapath.OpBindMW {
			m := w.MW.(*mw)
			key := m.rkey.Load()&^0xff | w.RKey&0xff
			m.rkey.Store(key)
			// ibv_mw's own key follows in vb_post_send, once the bind is posted: librxe
			// passes it to the kernel as the window's current key, which must be the old
			// one until then (a deferred bind is staged here and posted later).
		}
	}
}

func (c *conn) PostRecv(wrs []datapath.RecvWR) (int, error) {
	if c.err.Load() != nil {
		return 0, errRecvBroken
	}
	if c.deferred {
		return c.stageRecv(wrs)
	}
	posted := 0
	for posted < len(wrs) {
		batch := wrs[posted:]
		if len(batch) > len(c.rwr) {
			batch = batch[:len(c.rwr)]
		}
		n, verr := c.fillRecv(batch, 0)
		if n > 0 {
			rc := C.vb_post_recv(c.h, C.int(n))
			bad := c.q.posted
			posted += int(bad)
			if rc != 0 {
				if rc == C.ENOMEM {
					return posted, errRecvFull
				}
				return posted, opErr("ibv_post_recv", rc)
			}
		}
		if verr != nil {
			return posted, verr
		}
	}
	return posted, nil
}

// stageRecv is stageSend for the receive queue.
func (c *conn) stageRecv(wrs []datapath.RecvWR) (int, error) {
	q := c.q
	at := int(q.staged_recv)
	room := int(uint64(q.recv_cap) - (uint64(q.rq_posted) + uint64(at) - uint64(q.rq_done)))
	batch := wrs
	if len(batch) > room {
		batch = batch[:room]
	}
	n, verr := c.fillRecv(batch, at)
	if n > 0 {
		q.staged_recv += C.int(n)
		c.link()
	}
	if verr != nil {
		return n, verr
	}
	if n < len(wrs) {
		return n, errRecvFull
	}
	return n, nil
}

// fillRecv writes batch into the C receive work requests from index at until one is
// invalid; it returns how many it wrote and the error of the invalid one.
func (c *conn) fillRecv(batch []datapath.RecvWR, at int) (int, error) {
	maxSGE := c.caps.MaxRecvSGE
	for i := range batch {
		w := &batch[i]
		if w.ID > maxID {
			return i, errRecvIDs
		}
		if len(w.SGL) > maxSGE {
			return i, errRecvSGE
		}
		r := &c.rwr[at+i]
		r.wr_id = C.uint64_t(w.ID | uint64(datapath.OpRecv)<<C.VB_OP_SHIFT)
		r.num_sge = C.int(len(w.SGL))
		copy(c.rsge[(at+i)*maxSGE:], w.SGL)
	}
	return len(batch), nil
}

var errClosedConn = &datapath.OpError{Op: "verbs: conn", Err: fmt.Errorf("%w: closed", datapath.ErrBroken)}

// Close disconnects (the queue pair enters the error state and flushes what is outstanding)
// and destroys the rdma_cm id. The queue pair itself lingers until its CQs close or a second
// has passed (see device.retire): some devices drop a destroyed queue pair's completions, and
// the flushed ones must reach the CQ.
func (c *conn) Close() error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		c.fail(errClosedConn)
		if c.watching {
			c.ec.wake()
			<-c.done
		}
		c.idMu.Lock()
		qp := c.id.qp
		c.id.qp = nil // rdma_cm must not touch the queue pair any more
		C.rdma_destroy_id(c.id)
		c.id = nil
		c.idMu.Unlock()
		c.ec.destroy()
		c.scq.detach(c)
		c.rcq.detach(c)
		// What is staged is dropped: the next poll skips a dead queue pair and unlinks it,
		// and its memory outlives the link (see device.bury).
		atomic.StoreInt32((*int32)(unsafe.Pointer(&c.q.dead)), 1)
		c.d.retire(qp, c.q, c.scq, c.rcq) // c.q too: polling its completions still counts
		c.q, c.h = nil, 0
		c.d.track(&c.d.nconn, -1)
	})
	if !first {
		return errConnClosed
	}
	return nil
}

// destroy undoes newConn for a connection that never got established.
func (c *conn) destroy() {
	if c.watching {
		c.ec.wake()
		<-c.done
	}
	c.destroyQP()
	C.rdma_destroy_id(c.id)
	c.ec.destroy()
}

// destroyQP undoes newConn, leaving the CM id and its channel: an Accept whose Prepare
// failed still answers the request with them.
func (c *conn) destroyQP() {
	c.scq.detach(c)
	c.rcq.detach(c)
	c.d.zmu.Lock()
	c.d.release(c.q) // before the queue pair goes, as in reap
	c.d.zmu.Unlock()
	C.rdma_destroy_qp(c.id)
	c.q, c.h = nil, 0
	c.d.track(&c.d.nconn, -1)
}
