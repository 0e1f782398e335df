package soft

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// The data transfer of a TCP connection: the writer and reader goroutines, requests and
// their ACK or NAK, RNR, the transport timer and quiesce (tcpconn.go sets connections up
// and ends them).
//
// Between processes a connection is one TCP connection carrying the frames of WIRE.md.
//
// The requester keeps every posted send work request in its send queue until the responder
// acknowledges it (ACK, NAK or the READ response), so completions, and their statuses, come
// from the responder exactly as on RC hardware. A reader goroutine per connection executes
// the peer's requests and the responses to ours; a writer goroutine sends the frames of a
// txQueue, so that neither the poster nor the reader ever blocks on the socket and two ends
// that both send a lot cannot deadlock. The queue is bounded by everything that can be in
// flight (our requests, possibly twice after an RNR rewind, and one response per request
// the peer may have outstanding). Payloads go straight from the registered memory to the
// socket and from the socket into the registered memory.

const (
	// bufSize is each TCP link's read and write buffer: headers and small payloads. A
	// payload larger than it goes between the socket and registered memory directly (bufio
	// bypasses its buffer then), so a larger one would cost memory per connection and save
	// little.
	bufSize       = 16 << 10
	lingerTimeout = 5 * time.Second
	// quiesceTimeout bounds how long breaking a connection waits for a payload transfer in
	// progress before cutting it short.
	quiesceTimeout = 200 * time.Millisecond
)

// txd is one frame for the writer.
type txd struct {
	h     header
	epoch uint32 // a request: the link's epoch when it was handed to the writer
	e     *sqe   // a request: its payload is e.segs (or e.inline)
	data  []byte // a READ response's payload
	text  []byte // a DISCONNECT's reason: not registered memory, sent even once dead
}

// txQueue hands frames to the writer goroutine: a slice that grows to what is actually in
// flight (a channel would have to be sized for the worst case at connection setup, which
// for a deep send queue was most of a connection's memory) and a one-slot wake-up. The
// writer swaps the slice out whole, so a busy link takes the lock once per batch, and the
// two slices' storage is reused: steady state allocates nothing.
type txQueue struct {
	mu    sync.Mutex
	q     []txd
	limit int // frames that may be queued: the protocol's bound (see newLink)
	wake  chan struct{}
}

// push queues d; false means the bound was exceeded (the peer broke the protocol).
func (t *txQueue) push(d txd) bool {
	t.mu.Lock()
	if len(t.q) >= t.limit {
		t.mu.Unlock()
		return false
	}
	t.q = append(t.q, d)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
	return true
}

// take returns what is queued and keeps the storage of batch, which the writer is done with,
// for the next frames.
func (t *txQueue) take(batch []txd) []txd {
	clear(batch) // drop the references to send queue entries and payloads
	t.mu.Lock()
	q := t.q
	t.q = batch[:0]
	t.mu.Unlock()
	return q
}

func (t *txQueue) empty() bool {
	t.mu.Lock()
	n := len(t.q)
	t.mu.Unlock()
	return n == 0
}

type tcpLink struct {
	nc    net.Conn
	br    *bufio.Reader
	bw    *bufio.Writer
	tx    txQueue
	hdr   [headerLen]byte // writer's
	rhdr  [headerLen]byte // reader's
	retry time.Duration

	// What reached the socket, so that a response is accepted only for a request on the
	// wire (the writer may still be reading a request's memory until then). bw writes
	// through sock. Writer only: cur is the request being written to bw, pend the last one
	// bw holds in full. flying is the last request whose memory a socket write under way
	// may read, and wired the last one handed to the socket in full; both change only under
	// wmem. Each is epoch<<32|seq.
	sock          sockWriter
	cur, pend     uint64
	flying, wired atomic.Uint64

	// Guarded by the conn's mu.
	seq     uint32 // next request sequence number
	epoch   uint32 // bumped when an RNR NAK sends the requests again: older frames do not count
	sent    int    // send queue entries from the head handed to the writer
	reads   int    // RDMA READs handed to the writer and not answered
	paused  bool   // waiting out an RNR NAK
	rnrAt   time.Time
	closing bool // DISCONNECT queued

	// The transport timer (Config.RetryTimeout), guarded by the conn's mu: armed while
	// requests are outstanding, it fails the oldest when no response (answered) arrived
	// since its last expiry (seen).
	ackTimer       *time.Timer
	ackOn          bool
	answered, seen uint32

	// Responder side, guarded by the conn's mu: requests executed and not yet acknowledged.
	// One cumulative ACK covers them all, sent when the reader has no more input buffered,
	// every ackEvery requests, or before a NAK or a READ response (which must not overtake
	// it).
	ackDue int
	ackSeq uint32

	// Reader only.
	rxSeq  uint32 // the next request sequence number the responder executes
	rxSent bool   // the response being handled answers a request on the wire (onWire)
	one    [1][]byte

	// A completion, flushed ones included, tells the application that the provider is done
	// with the work request's memory, which it may then unmap. So the writer holds wmem while
	// it reads registered memory and the reader holds rmem while it writes it, and breaking
	// the connection sets dead and waits for both before it flushes anything; once dead,
	// neither touches registered memory again.
	wmem, rmem sync.Mutex
	dead       atomic.Bool
	done       chan struct{} // closed when the reader has finished
	wdone      chan struct{} // closed when the writer has finished
}

func newLink(c *conn, nc net.Conn, br *bufio.Reader, peerSendWR int) *tcpLink {
	l := &tcpLink{nc: nc, br: br, epoch: 1, done: make(chan struct{}), wdone: make(chan struct{})}
	l.sock.l = l
	l.bw = bufio.NewWriterSize(&l.sock, bufSize)
	l.tx.limit, l.tx.wake = 2*c.caps.MaxSendWR+peerSendWR+8, make(chan struct{}, 1)
	d := c.dev.p.cfg.RNRTimeout
	l.retry = min(max(d/16, 50*time.Microsecond), 5*time.Millisecond)
	c.link = l
	c.rnr = time.AfterFunc(time.Hour, c.rnrRetry)
	c.rnr.Stop()
	l.ackTimer = time.AfterFunc(time.Hour, c.ackExpired)
	l.ackTimer.Stop()
	go l.write(c)
	go l.read(c)
	return l
}

// queue hands a frame to the writer. The queue's bound is never reached by a peer that keeps
// to the protocol's bounds; one that does not breaks the connection.
func (l *tcpLink) queue(c *conn, d txd) {
	if !l.tx.push(d) {
		c.breakLocked(brokenBy(datapath.StatusGeneral, false, "soft wire: transmit queue overflow"))
	}
}

// recvPosted needs nothing over TCP: a requester that got an RNR NAK retries on its own.
func (l *tcpLink) recvPosted() {}

// quiesce stops all access to registered memory before a break flushes work requests.
// mu is held; neither the reader nor the writer takes mu while it holds rmem or wmem.
func (l *tcpLink) quiesce() {
	l.dead.Store(true)
	if !l.wmem.TryLock() {
		l.nc.SetWriteDeadline(time.Now().Add(quiesceTimeout))
		l.wmem.Lock()
		l.nc.SetWriteDeadline(time.Time{})
	}
	l.wmem.Unlock()
	if !l.rmem.TryLock() {
		l.nc.SetReadDeadline(time.Now().Add(quiesceTimeout))
		l.rmem.Lock()
	}
	l.rmem.Unlock()
}

// readMem reads a payload into registered memory, or discards it once the connection broke.
func (l *tcpLink) readMem(segs [][]byte) error {
	l.rmem.Lock()
	defer l.rmem.Unlock()
	if !l.dead.Load() {
		return readSegs(l.br, segs)
	}
	for _, s := range segs {
		if _, err := l.br.Discard(len(s)); err != nil {
			return err
		}
	}
	return nil
}

// write is the writer goroutine.
func (l *tcpLink) write(c *conn) {
	defer close(l.wdone)
	failed := false
	fail := func(err error) {
		failed = true
		c.mu.Lock()
		c.breakLocked(brokenBy(datapath.StatusRetryExceeded, false, "TCP write: "+err.Error()))
		c.mu.Unlock()
	}
	var batch []txd
	for range l.tx.wake {
		for {
			if batch = l.tx.take(batch); len(batch) == 0 {
				break
			}
			for i := range batch {
				d := &batch[i]
				if !failed {
					if err := l.frameMem(d); err != nil {
						fail(err)
					}
				}
				if d.h.typ == frameDisconnect {
					if !failed {
						l.flush()
					}
					if tc, ok := l.nc.(*net.TCPConn); ok {
						tc.CloseWrite()
					}
					return
				}
			}
			// Flush once nothing more is queued: frames queued meanwhile go out in the
			// same write.
			if !failed && l.tx.empty() {
				if err := l.flush(); err != nil {
					fail(err)
				}
			}
		}
	}
}

// sockWriter is bw's destination: a socket write carries every request bw held in full
// before it (bufio writes out all it holds, in order).
type sockWriter struct{ l *tcpLink }

func (w *sockWriter) Write(p []byte) (int, error) {
	l := w.l
	if l.pend != 0 {
		// Their bytes are in p, bw's copy: registered memory is done with as the write starts.
		l.wired.Store(l.pend)
		l.pend = 0
	}
	if l.cur != 0 {
		l.flying.Store(l.cur)
	}
	return l.nc.Write(p)
}

// covers reports whether the request tag names is seq or later, in this epoch. The epoch
// changes only on the reader goroutine.
func (l *tcpLink) covers(tag uint64, seq uint32) bool {
	return uint32(tag>>32) == l.epoch && int32(seq-uint32(tag)) <= 0
}

// onWire reports whether request seq was handed to the socket in full. A peer can answer
// a request as soon as its last byte leaves, before the writer learns so: for a request a
// socket write under way may carry, it waits for the writer. The reader calls it without mu.
func (l *tcpLink) onWire(seq uint32) bool {
	if l.covers(l.wired.Load(), seq) {
		return true
	}
	if !l.covers(l.flying.Load(), seq) {
		return false
	}
	l.wmem.Lock()
	defer l.wmem.Unlock()
	return l.covers(l.wired.Load(), seq)
}

// flush writes out what bw holds, under wmem like every socket write (see awaitWire).
func (l *tcpLink) flush() error {
	l.wmem.Lock()
	defer l.wmem.Unlock()
	return l.bw.Flush()
}

// frameMem writes a frame, skipping those that carry registered memory once dead.
func (l *tcpLink) frameMem(d *txd) error {
	l.wmem.Lock()
	defer l.wmem.Unlock()
	if (d.e != nil || d.data != nil) && l.dead.Load() {
		return nil
	}
	if d.e == nil {
		return l.frame(d)
	}
	l.cur = uint64(d.epoch)<<32 | uint64(d.h.seq)
	err := l.frame(d)
	// A request is on the wire once bw holds none of it.
	if err == nil && l.bw.Buffered() == 0 {
		l.wired.Store(l.cur)
	} else if err == nil {
		l.pend = l.cur
	}
	l.cur = 0
	return err
}

func (l *tcpLink) frame(d *txd) error {
	d.h.put(l.hdr[:])
	if _, err := l.bw.Write(l.hdr[:]); err != nil {
		return err
	}
	switch {
	case d.data != nil:
		_, err := l.bw.Write(d.data)
		return err
	case d.text != nil:
		_, err := l.bw.Write(d.text)
		return err
	case d.e != nil && d.h.typ != frameReadReq:
		if d.e.wr.Flags&datapath.FlagInline != 0 {
			_, err := l.bw.Write(d.e.inline)
			return err
		}
		for _, s := range d.e.segs {
			if _, err := l.bw.Write(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// postSend queues work requests; kick hands what may go now to the writer.
func (l *tcpLink) postSend(c *conn, wrs []datapath.SendWR) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.postable(); err != nil {
		return 0, err
	}
	for i := range wrs {
		wr := &wrs[i]
		if err := c.admit(wr); err != nil {
			c.kick()
			return i, err
		}
		if c.broken {
			c.sendDone(wr, datapath.StatusFlushed, 0)
			continue
		}
		c.defer1(wr)
		if op := wr.Op; op != datapath.OpBindMW && op != datapath.OpLocalInv {
			c.sq.at(c.sq.n - 1).seq = l.seq
			l.seq++
		}
	}
	c.kick()
	return len(wrs), nil
}

// kick hands the send queue's next work requests to the writer as far as ordering allows:
// local operations and fenced ones wait for everything before them, READs for a free
// initiator slot, everything for the end of an RNR pause. mu is held.
func (c *conn) kick() {
	l := c.link
	for !c.broken && !l.paused && l.sent < c.sq.n {
		e := c.sq.at(l.sent)
		op := e.wr.Op
		if op == datapath.OpBindMW || op == datapath.OpLocalInv {
			if l.sent != 0 {
				return
			}
			wr := e.wr
			c.sq.pop()
			c.localOp(&wr)
			continue
		}
		if e.wr.Flags&datapath.FlagFence != 0 && l.sent != 0 {
			return
		}
		if op == datapath.OpRead && l.reads >= c.caps.RDMAReadDepth {
			return
		}
		d := txd{h: header{seq: e.seq}, e: e, epoch: l.epoch}
		var n uint64
		switch {
		case e.wr.Flags&datapath.FlagInline != 0:
			n = uint64(len(e.inline))
		case e.resolved:
			// Sent before an RNR NAK: the writer may still be writing the first copy from
			// segs, so they stay as they are.
			for _, s := range e.segs {
				n += uint64(len(s))
			}
		default:
			need := datapath.Access(0)
			if op == datapath.OpRead {
				need = datapath.AccessLocalWrite
			}
			var ok bool
			if n, ok = c.gather(&e.segs, c.pd, e.wr.SGL, need); !ok {
				c.failQueued(l.sent, datapath.StatusLocalProtection, "bad local key, range or access")
				return
			}
			e.resolved = true
		}
		if n > maxFrame {
			c.failQueued(l.sent, datapath.StatusLocalLength, "message over 2 GiB")
			return
		}
		d.h.len = uint32(n)
		switch op {
		case datapath.OpSend:
			d.h.typ = frameSend
		case datapath.OpSendInv:
			d.h.typ, d.h.flags, d.h.rkey = frameSend, flagInvalidate, e.wr.InvRKey
		case datapath.OpWrite:
			d.h.typ, d.h.addr, d.h.rkey = frameWrite, e.wr.RemoteAddr, e.wr.RKey
		case datapath.OpRead:
			d.h.typ, d.h.addr, d.h.rkey = frameReadReq, e.wr.RemoteAddr, e.wr.RKey
			l.reads++
		}
		l.sent++
		l.queue(c, d)
		if !l.ackOn {
			l.ackOn, l.seen = true, l.answered
			l.ackTimer.Reset(c.dev.p.cfg.RetryTimeout)
		}
	}
}

// ackExpired is the transport timer: with requests outstanding and no response since the
// last expiry, the oldest request fails as RC's retry counter would.
func (c *conn) ackExpired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.link
	switch {
	case c.broken || l.sent == 0:
		l.ackOn = false
	case l.answered != l.seen:
		l.seen = l.answered
		l.ackTimer.Reset(c.dev.p.cfg.RetryTimeout)
	default:
		l.ackOn = false
		c.failQueued(0, datapath.StatusRetryExceeded, "the peer answered no request for "+c.dev.p.cfg.RetryTimeout.String())
	}
}

// failQueued fails the send queue entry i with st: the ones before it (handed to the
// writer, not yet answered) are flushed first so completions stay in order. The writer
// lets go of their memory before any of them completes, as when the connection breaks.
func (c *conn) failQueued(i int, st datapath.Status, reason string) {
	c.link.quiesce()
	for range i {
		wr := c.sq.front().wr
		c.sq.pop()
		c.sendDone(&wr, datapath.StatusFlushed, 0)
	}
	wr := c.sq.front().wr
	c.sq.pop()
	c.fail(&wr, st, reason)
}

// rnrRetry ends an RNR pause: the requester sends again from the head of the queue.
func (c *conn) rnrRetry() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.link.paused {
		c.link.paused = false
		c.kick()
	}
}

// read is the reader goroutine: it executes the peer's requests and completes ours.
func (l *tcpLink) read(c *conn) {
	var err error
	for err == nil {
		if err = l.frameIn(c); err == nil && l.br.Buffered() == 0 {
			// Nothing more to execute now: acknowledge what was.
			c.mu.Lock()
			if !c.broken {
				l.flushAck(c)
			}
			c.mu.Unlock()
		}
	}
	var pe *protocolError
	c.mu.Lock()
	if !c.broken {
		switch {
		case errors.As(err, &pe):
			// The peer sent what no soft peer sends: we found the fault, and say so.
			c.breakLocked(brokenBy(datapath.StatusFlushed, false, pe.Error()))
		case errors.Is(err, io.EOF):
			c.breakLocked(brokenBy(datapath.StatusRetryExceeded, true, "connection lost: peer closed the TCP connection"))
		default:
			c.breakLocked(brokenBy(datapath.StatusRetryExceeded, true, "connection lost: "+err.Error()))
		}
	}
	c.mu.Unlock()
	if pe != nil {
		// The stream cannot be parsed any more, but the peer is to read our DISCONNECT: let
		// the writer send it, then read and drop whatever comes until the peer closes (or
		// the linger deadline broken set), so that our close is a FIN, not an RST.
		select {
		case <-l.wdone:
			io.Copy(io.Discard, l.br)
		case <-time.After(lingerTimeout):
		}
	}
	l.nc.Close()
	close(l.done)
}

var errDisconnected = errors.New("disconnected")

// protocolError is a frame no soft peer sends (a malformed header): the connection breaks
// with it as the cause, which the peer is told.
type protocolError struct{ err error }

func (e *protocolError) Error() string { return e.err.Error() }
func (e *protocolError) Unwrap() error { return e.err }

func (l *tcpLink) frameIn(c *conn) error {
	if _, err := io.ReadFull(l.br, l.rhdr[:]); err != nil {
		return err
	}
	var h header
	if err := h.parse(l.rhdr[:]); err != nil {
		return &protocolError{err}
	}
	var reason string
	if h.typ == frameDisconnect && h.len > 0 {
		// Read before taking mu: a peer that sends the header alone must not block posters.
		var err error
		if reason, err = l.readReason(h.len); err != nil {
			return err
		}
		h.len = 0
	}
	if h.typ == frameAck || h.typ == frameNak || h.typ == frameReadResp {
		l.rxSent = l.onWire(h.seq)
	}
	c.mu.Lock()
	if c.broken {
		// Linger until the peer closes: keep reading so that our close sends a FIN, not an
		// RST that could destroy the frames the peer has yet to read.
		c.mu.Unlock()
		if h.hasPayload() {
			_, err := l.br.Discard(int(h.len))
			return err
		}
		if h.typ == frameDisconnect {
			return errDisconnected
		}
		return nil
	}
	switch h.typ {
	case frameSend:
		return l.sendIn(c, &h)
	case frameWrite:
		return l.writeIn(c, &h)
	case frameReadReq:
		l.readReqIn(c, &h)
	case frameAck:
		l.ackIn(c, &h)
	case frameReadResp:
		return l.readRespIn(c, &h)
	case frameNak:
		l.nakIn(c, &h)
	case frameDisconnect:
		st := datapath.Status(h.flags)
		if reason == "" && st != datapath.StatusFlushed && st != datapath.StatusSuccess {
			c.breakLocked(brokenBy(datapath.StatusFlushed, true, "peer failed: "+st.String()))
		} else {
			c.breakLocked(&datapath.DisconnectError{Reason: reason})
		}
		c.mu.Unlock()
		return errDisconnected
	default:
		c.breakLocked(brokenBy(datapath.StatusGeneral, false, "soft wire: unexpected frame"))
	}
	c.mu.Unlock()
	return nil
}

// respond queues an ACK, or a NAK with st, for request seq.
func (l *tcpLink) respond(c *conn, seq uint32, st datapath.Status) {
	if st == datapath.StatusSuccess {
		l.ackSeq = seq
		if l.ackDue++; l.ackDue >= ackEvery {
			l.flushAck(c)
		}
		return
	}
	l.flushAck(c)
	l.queue(c, txd{h: header{typ: frameNak, seq: seq, flags: uint8(st)}})
}

// ackEvery bounds how many requests one ACK covers: the requester's send queue entries stay
// taken until acknowledged.
const ackEvery = 16

// flushAck sends the cumulative ACK of the requests executed since the last one.
func (l *tcpLink) flushAck(c *conn) {
	if l.ackDue > 0 {
		l.ackDue = 0
		l.queue(c, txd{h: header{typ: frameAck, seq: l.ackSeq}})
	}
}

// nakBreak answers the request with a NAK and breaks the connection: the responder's half of
// every failure except RNR.
func (l *tcpLink) nakBreak(c *conn, seq uint32, st, local datapath.Status, reason string) {
	l.respond(c, seq, st)
	c.breakLocked(brokenBy(local, false, reason))
}

// inOrder reports whether the request is the next one; requests after one that got an RNR
// NAK are dropped until the requester sends that one again (go-back-N, as RC does).
func (l *tcpLink) inOrder(h *header) bool { return h.seq == l.rxSeq }

func (l *tcpLink) sendIn(c *conn, h *header) error {
	n := uint64(h.len)
	if !l.inOrder(h) {
		c.mu.Unlock()
		_, err := l.br.Discard(int(n))
		return err
	}
	if c.rq.n == 0 {
		l.respond(c, h.seq, datapath.StatusRNRRetryExceeded) // an RNR NAK: the requester retries
		c.mu.Unlock()
		_, err := l.br.Discard(int(n))
		return err
	}
	r := c.rq.front()
	fail := func(rst, sst datapath.Status, reason string) error {
		id := r.id
		c.rq.pop()
		c.recvDone(id, rst, 0, 0, false)
		l.nakBreak(c, h.seq, sst, rst, reason)
		c.mu.Unlock()
		_, err := l.br.Discard(int(n))
		return err
	}
	switch fits, ok := land(&c.dst, c.pd, r.sgl, n); {
	case !fits:
		return fail(datapath.StatusLocalLength, datapath.StatusRemoteInvalidRequest, "SEND larger than the receive buffer")
	case !ok:
		return fail(datapath.StatusLocalProtection, datapath.StatusRemoteOperation, "bad local key or range in a receive")
	}
	id := r.id
	c.rq.pop()
	c.mu.Unlock()
	err := l.readMem(c.dst)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		return err
	}
	if c.broken {
		c.recvDone(id, datapath.StatusFlushed, 0, 0, false)
		return nil
	}
	var inv uint32
	invalidated := h.flags&flagInvalidate != 0
	if invalidated {
		inv = h.rkey
		if !c.pd.invalidate(c, inv) {
			c.recvDone(id, datapath.StatusLocalProtection, 0, 0, false)
			l.nakBreak(c, h.seq, datapath.StatusRemoteOperation, datapath.StatusLocalProtection,
				"SEND_WITH_INV names no valid memory window")
			return nil
		}
	}
	c.recvDone(id, datapath.StatusSuccess, uint32(n), inv, invalidated)
	l.respond(c, h.seq, datapath.StatusSuccess)
	l.rxSeq++
	return nil
}

func (l *tcpLink) writeIn(c *conn, h *header) error {
	var dst []byte
	ok := l.inOrder(h)
	if ok && h.len > 0 {
		if dst, ok = c.remoteMem(h.rkey, h.addr, h.len, datapath.AccessRemoteWrite); !ok {
			l.nakBreak(c, h.seq, datapath.StatusRemoteAccess, datapath.StatusFlushed, "peer's RDMA WRITE outside a writable region")
		}
	}
	c.mu.Unlock()
	if !ok {
		_, err := l.br.Discard(int(h.len))
		return err
	}
	l.one[0] = dst
	if err := l.readMem(l.one[:]); err != nil {
		return err
	}
	c.mu.Lock()
	if !c.broken {
		l.respond(c, h.seq, datapath.StatusSuccess)
		l.rxSeq++
	}
	c.mu.Unlock()
	return nil
}

// readReqIn answers an RDMA READ: the response's payload is written from the region by the
// writer.
func (l *tcpLink) readReqIn(c *conn, h *header) {
	if !l.inOrder(h) {
		return
	}
	var src []byte
	if h.len > 0 {
		var ok bool
		if src, ok = c.remoteMem(h.rkey, h.addr, h.len, datapath.AccessRemoteRead); !ok {
			l.nakBreak(c, h.seq, datapath.StatusRemoteAccess, datapath.StatusFlushed, "peer's RDMA READ outside a readable region")
			return
		}
	} else {
		src = []byte{}
	}
	l.flushAck(c)
	l.queue(c, txd{h: header{typ: frameReadResp, seq: h.seq, len: h.len}, data: src})
	l.rxSeq++
}

// unsent breaks the connection if a response (what) answers a request not yet handed to
// the socket in full: the writer may still be reading its memory.
func (l *tcpLink) unsent(c *conn, what string, seq uint32) bool {
	if l.rxSent {
		return false
	}
	c.breakLocked(brokenBy(datapath.StatusGeneral, false,
		"soft wire: "+what+" for request "+strconv.FormatUint(uint64(seq), 10)+", which was not sent yet"))
	return true
}

// head returns the oldest outstanding request if h answers it.
func (l *tcpLink) head(c *conn, h *header, what string) (*sqe, bool) {
	if l.unsent(c, what, h.seq) {
		return nil, false
	}
	if l.sent == 0 || c.sq.front().seq != h.seq {
		c.breakLocked(brokenBy(datapath.StatusGeneral, false, "soft wire: response out of order"))
		return nil, false
	}
	l.answered++
	return c.sq.front(), true
}

func (l *tcpLink) complete(c *conn, st datapath.Status, n uint32) {
	wr := c.sq.front().wr
	c.sq.pop()
	l.sent--
	if wr.Op == datapath.OpRead {
		l.reads--
	}
	c.sendDone(&wr, st, n)
}

// ackIn completes every request up to and including h.seq: an ACK is cumulative. It must
// cover at least the oldest outstanding request, nothing not yet handed to the socket (a
// completion means the provider is done with the memory), and no RDMA READ (a READ is
// answered by its response, which the responder sends before any later ACK).
func (l *tcpLink) ackIn(c *conn, h *header) {
	if l.unsent(c, "ACK", h.seq) {
		return
	}
	if l.sent == 0 || int32(h.seq-c.sq.front().seq) < 0 {
		c.breakLocked(brokenBy(datapath.StatusGeneral, false, "soft wire: response out of order"))
		return
	}
	for {
		e := c.sq.front()
		if e.wr.Op == datapath.OpRead {
			c.breakLocked(brokenBy(datapath.StatusGeneral, false, "soft wire: ACK for an RDMA READ"))
			return
		}
		var n uint32
		if e.wr.Flags&datapath.FlagInline != 0 {
			n = uint32(len(e.inline))
		} else {
			for _, s := range e.segs {
				n += uint32(len(s))
			}
		}
		last := e.seq == h.seq
		l.answered++
		l.rnrAt = time.Time{}
		l.complete(c, datapath.StatusSuccess, n)
		if last {
			break
		}
	}
	c.kick()
}

func (l *tcpLink) readRespIn(c *conn, h *header) error {
	e, ok := l.head(c, h, "READ response")
	var want uint64
	if ok {
		if e.wr.Op != datapath.OpRead {
			c.breakLocked(brokenBy(datapath.StatusGeneral, false, "soft wire: READ response for another operation"))
			ok = false
		} else {
			for _, s := range e.segs {
				want += uint64(len(s))
			}
			if want != uint64(h.len) {
				c.breakLocked(brokenBy(datapath.StatusGeneral, false, "soft wire: READ response of the wrong length"))
				ok = false
			}
		}
	}
	c.mu.Unlock()
	if !ok {
		_, err := l.br.Discard(int(h.len))
		return err
	}
	// Only this goroutine completes the head, so e stays ours while the lock is released.
	if err := l.readMem(e.segs); err != nil {
		return err
	}
	c.mu.Lock()
	if !c.broken {
		l.complete(c, datapath.StatusSuccess, h.len)
		c.kick()
	}
	c.mu.Unlock()
	return nil
}

func (l *tcpLink) nakIn(c *conn, h *header) {
	if _, ok := l.head(c, h, "NAK"); !ok {
		return
	}
	st := datapath.Status(h.flags)
	if st == datapath.StatusRNRRetryExceeded {
		// RNR NAK: wait, then send again from this request on.
		now := time.Now()
		if l.rnrAt.IsZero() {
			l.rnrAt = now.Add(c.dev.p.cfg.RNRTimeout)
		}
		if !now.Before(l.rnrAt) {
			l.complete(c, st, 0)
			c.breakLocked(brokenBy(st, false, "RNR retry exceeded: no receive posted"))
			return
		}
		l.sent, l.reads, l.paused = 0, 0, true
		l.epoch++
		c.rnr.Reset(l.retry)
		return
	}
	l.complete(c, st, 0)
	c.breakLocked(brokenBy(st, true, "peer refused: "+st.String()))
}

// readSegs fills segs from r.
func readSegs(r io.Reader, segs [][]byte) error {
	for _, s := range segs {
		if _, err := io.ReadFull(r, s); err != nil {
			return err
		}
	}
	return nil
}
