package datapathtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// tcase is one conformance case; its halves run concurrently, possibly in two processes.
type tcase struct {
	name    string
	active  func(h *half)
	passive func(h *half)
}

const (
	send = datapath.OpSend
	recv = datapath.OpRecv
	ok   = datapath.StatusSuccess
	sig  = datapath.FlagSignaled

	rw   = datapath.AccessLocalWrite
	rrd  = datapath.AccessRemoteRead
	rwr  = datapath.AccessRemoteWrite | datapath.AccessLocalWrite
	bind = datapath.AccessMWBind
)

var cases = []tcase{
	{"PrivateData", privateDataActive, privateDataPassive},
	{"PrivateDataLimits", pdLimitsActive, pdLimitsPassive},
	{"Reject", rejectActive, rejectPassive},
	{"RejectLimits", rejectLimitsActive, rejectLimitsPassive},
	{"RejectAfterFailedAccept", rejectActive, rejectAfterFailedAcceptPassive},
	{"SendRecv", sendRecvActive, sendRecvPassive},
	{"PrepareBeforeConnected", prepareActive, preparePassive},
	{"Unsignaled", unsignaledActive, unsignaledPassive},
	{"Inline", inlineActive, inlinePassive},
	{"CQWait", cqWaitActive, cqWaitPassive},
	{"WriteThenSend", writeThenSendActive, writeThenSendPassive},
	{"Read", readActive, readPassive},
	{"TwoConnsOneCQ", twoConnsActive, twoConnsPassive},
	{"QueueFull", queueFullActive, queueFullPassive},
	{"WriteBadRKey", remoteAccessActive(datapath.OpWrite, badKey), remoteAccessPassive(rwr | rrd)},
	{"WriteOutOfRange", remoteAccessActive(datapath.OpWrite, pastEnd), remoteAccessPassive(rwr | rrd)},
	{"WriteNoAccess", remoteAccessActive(datapath.OpWrite, asIs), remoteAccessPassive(rw | rrd)},
	{"ReadBadRKey", remoteAccessActive(datapath.OpRead, badKey), remoteAccessPassive(rwr | rrd)},
	{"ReadOutOfRange", remoteAccessActive(datapath.OpRead, pastEnd), remoteAccessPassive(rwr | rrd)},
	{"ReadNoAccess", remoteAccessActive(datapath.OpRead, asIs), remoteAccessPassive(rwr)},
	{"SendTooLarge", sendTooLargeActive, sendTooLargePassive},
	{"SendNoRecv", sendNoRecvActive, sendNoRecvPassive},
	{"LocalProtection", localProtActive, localProtPassive},
	{"CloseFlushes", closeActive, closePassive},
	{"SendInvalidate", sendInvActive, sendInvPassive},
	{"MWLocalInvalidate", localInvActive, localInvPassive},
	{"MWRange", mwRangeActive, mwRangePassive},
	{"MWBindRefused", bindRefusedActive, bindRefusedPassive},
	{"PDIsolationRead", pdRemoteActive(datapath.OpRead), pdRemotePassive},
	{"PDIsolationWrite", pdRemoteActive(datapath.OpWrite), pdRemotePassive},
	{"PDIsolationLocalKey", pdLocalActive, pdLocalPassive},
	{"MWBoundToQP", mwOtherQPActive, mwOtherQPPassive},
}

// ---- connection setup and private data

// checkPadded checks that got is want followed by zeros (RDMA-CM pads to the CM field size)
// and no longer than max.
func (h *half) checkPadded(got, want []byte, max int, what string) {
	if len(got) < len(want) || len(got) > max || !bytes.Equal(got[:len(want)], want) ||
		!bytes.Equal(got[len(want):], make([]byte, len(got)-len(want))) {
		h.fatalf("%s = %x, want %x padded with zeros to at most %d bytes", what, got, want, max)
	}
}

var (
	connectPD = []byte("rpcrdma-bench active")
	acceptPD  = []byte("rpcrdma-bench passive, a little longer")
)

func privateDataActive(h *half) {
	cfg, _ := h.qp(0, 0)
	c := h.connect(cfg, connectPD)
	h.checkPadded(c.PeerPrivateData(), acceptPD, datapath.MaxAcceptPrivateData, "PeerPrivateData")
	caps := c.Caps()
	if caps.MaxSendWR < datapath.DefaultMaxWR || caps.MaxRecvWR < datapath.DefaultMaxWR ||
		caps.MaxSendSGE < datapath.DefaultMaxSGE || caps.MaxRecvSGE < datapath.DefaultMaxSGE || caps.RDMAReadDepth < 1 {
		h.fatalf("caps %+v below the defaults asked for", caps)
	}
	if c.Err() != nil || c.LocalAddr() == "" || c.RemoteAddr() == "" {
		h.fatalf("new connection: Err %v, local %q, remote %q", c.Err(), c.LocalAddr(), c.RemoteAddr())
	}
	h.sync()
}

func privateDataPassive(h *half) {
	req := h.request()
	h.checkPadded(req.PrivateData(), connectPD, datapath.MaxConnectPrivateData, "request PrivateData")
	if req.RemoteAddr() == "" {
		h.fatalf("request without a remote address")
	}
	cfg, _ := h.qp(0, 0)
	c, err := req.Accept(cfg, acceptPD)
	h.must(err, "Accept")
	h.defer1(func() { c.Close() })
	h.checkPadded(c.PeerPrivateData(), connectPD, datapath.MaxConnectPrivateData, "PeerPrivateData")
	h.sync()
}

func pdLimitsActive(h *half) {
	cfg, _ := h.qp(0, 0)
	if c, err := h.dev.Connect(h.ctx(), h.addr, cfg, pattern(datapath.MaxConnectPrivateData+1, 1)); err == nil {
		c.Close()
		h.fatalf("Connect with %d bytes of private data succeeded", datapath.MaxConnectPrivateData+1)
	}
	// The passive half refuses to accept with too much private data and rejects.
	if c, err := h.dev.Connect(h.ctx(), h.addr, cfg, nil); err == nil {
		c.Close()
		h.fatalf("Connect succeeded although the accept had %d bytes of private data", datapath.MaxAcceptPrivateData+1)
	}
	cfg, _ = h.qp(0, 0)
	c := h.connect(cfg, pattern(datapath.MaxConnectPrivateData, 2))
	h.checkPadded(c.PeerPrivateData(), pattern(datapath.MaxAcceptPrivateData, 3), datapath.MaxAcceptPrivateData, "PeerPrivateData")
	h.sync()
}

func pdLimitsPassive(h *half) {
	req := h.request()
	cfg, _ := h.qp(0, 0)
	if c, err := req.Accept(cfg, pattern(datapath.MaxAcceptPrivateData+1, 1)); err == nil {
		c.Close()
		h.fatalf("Accept with %d bytes of private data succeeded", datapath.MaxAcceptPrivateData+1)
	}
	req.Reject(nil) //nolint:errcheck // the provider may have rejected already
	c, req := h.accept(cfg, pattern(datapath.MaxAcceptPrivateData, 3))
	h.checkPadded(req.PrivateData(), pattern(datapath.MaxConnectPrivateData, 2), datapath.MaxConnectPrivateData, "request PrivateData")
	h.checkPadded(c.PeerPrivateData(), pattern(datapath.MaxConnectPrivateData, 2), datapath.MaxConnectPrivateData, "PeerPrivateData")
	h.sync()
}

var rejectPD = []byte("go away: too many connections")

func rejectActive(h *half) {
	cfg, _ := h.qp(0, 0)
	c, err := h.dev.Connect(h.ctx(), h.addr, cfg, connectPD)
	if err == nil {
		c.Close()
		h.fatalf("Connect succeeded although the listener rejected it")
	}
	// The requester learns the rejecter's reason.
	var rej *datapath.RejectedError
	if !errors.As(err, &rej) {
		h.fatalf("Connect to a rejecting listener: %v, want an error wrapping *datapath.RejectedError", err)
	}
	h.checkPadded(rej.PrivateData, rejectPD, datapath.MaxAcceptPrivateData, "RejectedError.PrivateData")
}

func rejectPassive(h *half) {
	h.must(h.request().Reject(rejectPD), "Reject")
}

// An Accept that fails before answering (here: no CQs, so no queue pair; then a Prepare
// that fails) leaves the request undecided, so that the responder can still refuse it with
// its reason.
func rejectAfterFailedAcceptPassive(h *half) {
	req := h.request()
	if c, err := req.Accept(datapath.QPConfig{}, nil); err == nil {
		c.Close()
		h.fatalf("Accept with no CQs succeeded")
	}
	cfg, _ := h.qp(0, 0)
	cfg.Prepare = func(datapath.Conn) error { return errPrepare }
	if c, err := req.Accept(cfg, nil); !errors.Is(err, errPrepare) {
		if err == nil {
			c.Close()
		}
		h.fatalf("Accept whose Prepare failed: %v, want its error", err)
	}
	h.must(req.Reject(rejectPD), "Reject after a failed Accept")
}

var errPrepare = errors.New("no receive buffers")

// QPConfig.Prepare runs on the new queue pair before the peer can send on the connection:
// each end posts its receive there and sends the moment it is connected, with no sync, and
// each SEND finds the peer's receive. Prepare gets the queue pair that is returned.
func prepareActive(h *half) {
	cfg, cq := h.qp(0, 0)
	dst := h.reg(64, rw, 0)
	var prepared datapath.Conn
	cfg.Prepare = func(c datapath.Conn) error {
		prepared = c
		_, err := c.PostRecv([]datapath.RecvWR{{ID: 100, SGL: []datapath.SGE{sge(dst, 0, 64)}}})
		return err
	}
	c := h.connect(cfg, nil)
	if prepared == nil || prepared.QPN() != c.QPN() {
		h.fatalf("Connect returned QP %#x; Prepare ran on %v", c.QPN(), prepared)
	}
	src := h.reg(16, 0, 12)
	h.postSend(c, datapath.SendWR{ID: 1, Op: send, Flags: sig, SGL: []datapath.SGE{sge(src, 0, 16)}})
	wcs := h.byID(cq, 2)
	h.check(wcs[1], c, 1, send, ok)
	h.check(wcs[100], c, 100, recv, ok)
	h.equal(dst.Bytes()[:16], pattern(16, 13), "the passive half's first SEND")
	h.sync()
}

func preparePassive(h *half) {
	cfg, cq := h.qp(0, 0)
	dst := h.reg(64, rw, 0)
	var prepared datapath.Conn
	cfg.Prepare = func(c datapath.Conn) error {
		prepared = c
		_, err := c.PostRecv([]datapath.RecvWR{{ID: 200, SGL: []datapath.SGE{sge(dst, 0, 64)}}})
		return err
	}
	c, _ := h.accept(cfg, nil)
	if prepared == nil || prepared.QPN() != c.QPN() {
		h.fatalf("Accept returned QP %#x; Prepare ran on %v", c.QPN(), prepared)
	}
	src := h.reg(16, 0, 13)
	h.postSend(c, datapath.SendWR{ID: 2, Op: send, Flags: sig, SGL: []datapath.SGE{sge(src, 0, 16)}})
	wcs := h.byID(cq, 2)
	h.check(wcs[2], c, 2, send, ok)
	h.check(wcs[200], c, 200, recv, ok)
	h.equal(dst.Bytes()[:16], pattern(16, 12), "the active half's first SEND")
	h.sync()
}

// A reject carries MaxRejectPrivateData bytes whole (the room a reason has: IB's REJ), and a
// provider refuses more before it rejects.
func rejectLimitsActive(h *half) {
	cfg, _ := h.qp(0, 0)
	c, err := h.dev.Connect(h.ctx(), h.addr, cfg, connectPD)
	if err == nil {
		c.Close()
		h.fatalf("Connect succeeded although the listener rejected it")
	}
	var rej *datapath.RejectedError
	if !errors.As(err, &rej) {
		h.fatalf("Connect to a rejecting listener: %v, want an error wrapping *datapath.RejectedError", err)
	}
	h.checkPadded(rej.PrivateData, pattern(datapath.MaxRejectPrivateData, 4), datapath.MaxAcceptPrivateData, "RejectedError.PrivateData")
}

func rejectLimitsPassive(h *half) {
	req := h.request()
	if err := req.Reject(pattern(datapath.MaxRejectPrivateData+1, 4)); err == nil {
		h.fatalf("Reject with %d bytes of private data succeeded", datapath.MaxRejectPrivateData+1)
	}
	h.must(req.Reject(pattern(datapath.MaxRejectPrivateData, 4)), "Reject")
}

// ---- SEND and RECV

func sendRecvActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	src := h.reg(8192, 0, 10)
	dst := h.reg(4096, rw, 0)
	h.postRecv(c, datapath.RecvWR{ID: 100, SGL: []datapath.SGE{sge(dst, 0, 4096)}})
	h.sync() // the passive half's receives are posted
	h.postSend(c,
		datapath.SendWR{ID: 1, Op: send, Flags: sig, SGL: []datapath.SGE{sge(src, 0, 1)}},
		// Gathered from two SGEs; lands in the passive half's two-SGE receive.
		datapath.SendWR{ID: 2, Op: send, Flags: sig, SGL: []datapath.SGE{sge(src, 100, 1000), sge(src, 5000, 3096)}},
		datapath.SendWR{ID: 3, Op: send, Flags: sig}, // zero length
	)
	wcs := h.byID(cq, 4)
	for id := uint64(1); id <= 3; id++ {
		h.check(wcs[id], c, id, send, ok)
	}
	// The reply proves the other direction.
	h.check(wcs[100], c, 100, recv, ok)
	if wcs[100].ByteLen != 300 || wcs[100].Invalidated {
		h.fatalf("reply completion %+v, want 300 bytes", wcs[100])
	}
	h.equal(dst.Bytes()[:300], pattern(300, 11), "reply")

	// Many small SENDs in one batch arrive in order, each in the oldest receive.
	const burst = 32
	wrs := make([]datapath.SendWR, burst)
	for i := range wrs {
		binary.BigEndian.PutUint32(src.Bytes()[i*4:], uint32(i))
		wrs[i] = datapath.SendWR{ID: uint64(10 + i), Op: send, SGL: []datapath.SGE{sge(src, i*4, 4)}}
	}
	wrs[burst-1].Flags = sig
	h.sync()
	h.postSend(c, wrs...)
	h.pollOne(cq, c, 10+burst-1, send, ok)
	h.sync()
}

func sendRecvPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	dst := h.reg(3*4096, rw, 0)
	h.postRecv(c,
		datapath.RecvWR{ID: 20, SGL: []datapath.SGE{sge(dst, 0, 64)}},
		datapath.RecvWR{ID: 21, SGL: []datapath.SGE{sge(dst, 4096, 2000), sge(dst, 8192, 4096)}},
		datapath.RecvWR{ID: 22, SGL: []datapath.SGE{sge(dst, 6096, 16)}},
	)
	h.sync()
	wcs := h.poll(cq, 3)
	// One receive queue: completions come in posting order.
	for i, want := range []uint32{1, 4096, 0} {
		h.check(wcs[i], c, uint64(20+i), recv, ok)
		if wcs[i].ByteLen != want || wcs[i].Invalidated {
			h.fatalf("receive %d: %+v, want %d bytes", i, wcs[i], want)
		}
	}
	whole := pattern(8192, 10)
	h.equal(dst.Bytes()[:1], whole[:1], "first SEND")
	got := append(append([]byte(nil), dst.Bytes()[4096:6096]...), dst.Bytes()[8192:8192+2096]...)
	h.equal(got, append(append([]byte(nil), whole[100:1100]...), whole[5000:8096]...), "gathered SEND")
	if dst.Bytes()[6096] != 0 {
		h.fatalf("zero-length SEND wrote into its receive")
	}

	src := h.reg(300, 0, 11)
	h.postSend(c, datapath.SendWR{ID: 5, Op: send, Flags: sig, SGL: []datapath.SGE{sge(src, 0, 300)}})
	h.pollOne(cq, c, 5, send, ok)

	const burst = 32
	rwrs := make([]datapath.RecvWR, burst)
	for i := range rwrs {
		rwrs[i] = datapath.RecvWR{ID: uint64(i), SGL: []datapath.SGE{sge(dst, 64*i, 64)}}
	}
	h.postRecv(c, rwrs...)
	h.sync()
	for i, wc := range h.poll(cq, burst) {
		h.check(wc, c, uint64(i), recv, ok)
		if v := binary.BigEndian.Uint32(dst.Bytes()[64*i:]); wc.ByteLen != 4 || v != uint32(i) {
			h.fatalf("receive %d holds SEND %d (%d bytes): out of order", i, v, wc.ByteLen)
		}
	}
	h.sync()
}

func unsignaledActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	src := h.reg(64, 0, 1)
	h.sync()
	wrs := make([]datapath.SendWR, 4)
	for i := range wrs {
		wrs[i] = datapath.SendWR{ID: uint64(i), Op: send, SGL: []datapath.SGE{sge(src, i, 1)}}
	}
	wrs[3].Flags = sig
	h.postSend(c, wrs...)
	h.pollOne(cq, c, 3, send, ok) // the unsignaled ones completed silently before it
	h.sync()                      // the passive half got all four
	h.empty(cq)
}

func unsignaledPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	dst := h.reg(64, rw, 0)
	for i := range 4 {
		h.postRecv(c, datapath.RecvWR{ID: uint64(i), SGL: []datapath.SGE{sge(dst, i, 1)}})
	}
	h.sync()
	for i, wc := range h.poll(cq, 4) {
		h.check(wc, c, uint64(i), recv, ok)
	}
	h.equal(dst.Bytes()[:4], pattern(64, 1)[:4], "data")
	h.sync()
}

func inlineActive(h *half) {
	cfg, cq := h.qp(0, 0)
	cfg.MaxInlineData = 64
	c := h.connect(cfg, nil)
	inl := c.Caps().MaxInlineData // the effective value: it may differ from what was asked
	src := h.reg(max(64, inl+1), rw, 5)
	flags := sig
	if inl >= 64 {
		flags |= datapath.FlagInline
		// Longer than the effective limit: refused at post time.
		big := datapath.SendWR{ID: 9, Op: send, Flags: flags, SGL: []datapath.SGE{sge(src, 0, inl+1)}}
		if n, err := c.PostSend([]datapath.SendWR{big}); err == nil || n != 0 {
			h.fatalf("inline SEND of %d bytes with MaxInlineData %d: posted %d, err %v", inl+1, inl, n, err)
		}
	}
	h.sync()
	h.postSend(c, datapath.SendWR{ID: 1, Op: send, Flags: flags, SGL: []datapath.SGE{sge(src, 0, 64)}})
	if flags&datapath.FlagInline != 0 {
		clear(src.Bytes()) // inline: the memory is free once PostSend returns
	}
	h.pollOne(cq, c, 1, send, ok)
	h.sync()
}

func inlinePassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	dst := h.reg(64, rw, 0)
	h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(dst, 0, 64)}})
	h.sync()
	h.pollOne(cq, c, 1, recv, ok)
	h.equal(dst.Bytes(), pattern(64, 5), "inline SEND")
	h.sync()
}

func cqWaitActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	if err := cq.Wait(1e6); !errors.Is(err, datapath.ErrTimeout) {
		h.fatalf("Wait on an empty CQ returned %v, want ErrTimeout", err)
	}
	h.sync()
	h.postSend(c, datapath.SendWR{ID: 1, Op: send, Flags: sig})
	h.pollOne(cq, c, 1, send, ok)
	h.sync()
}

func cqWaitPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	h.postRecv(c, datapath.RecvWR{ID: 7})
	h.sync()
	var wc [1]datapath.Completion
	for {
		if err := cq.Wait(1e8); err != nil && !errors.Is(err, datapath.ErrTimeout) {
			h.fatalf("Wait: %v", err)
		}
		n, err := cq.Poll(wc[:])
		h.must(err, "Poll")
		if n == 1 {
			break
		}
		if h.expired() {
			h.fatalf("no completion after Wait")
		}
	}
	h.check(wc[0], c, 7, recv, ok)
	h.sync()
}

// ---- RDMA WRITE and READ

var sizes = []int{1, 4096, 1 << 20}

func writeThenSendActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	src := h.reg(1<<20+64, 0, 20)
	for i, n := range sizes {
		r := h.region(h.exchange(nil))
		// The data goes in two pieces at an offset; the SEND after it must find it placed.
		h.postSend(c,
			datapath.SendWR{ID: 1, Op: datapath.OpWrite, SGL: split(src, 0, n/2, 32+n/2, n-n/2),
				RemoteAddr: r.addr + 7, RKey: r.rkey},
			datapath.SendWR{ID: 2, Op: send, Flags: sig, SGL: []datapath.SGE{sge(src, 0, 4)}},
		)
		h.pollOne(cq, c, 2, send, ok)
		h.empty(cq)
		h.exchange([]byte{byte(i)})
	}
}

func writeThenSendPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	dst := h.reg(1<<20+64, rwr, 0)
	whole := pattern(1<<20+64, 20)
	for _, n := range sizes {
		h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(dst, 0, 4)}})
		h.exchange(regionOf(dst).bytes())
		h.pollOne(cq, c, 1, recv, ok)
		want := append(append([]byte(nil), whole[:n/2]...), whole[32+n/2:32+n]...)
		h.equal(dst.Bytes()[7:7+n], want, "RDMA WRITE data when the SEND after it completed")
		h.exchange(nil)
	}
}

func readActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	dst := h.reg(1<<20+64, rw, 0)
	r := h.region(h.exchange(nil))
	whole := pattern(int(r.len), 30)
	for _, n := range sizes {
		clear(dst.Bytes())
		h.postSend(c, datapath.SendWR{ID: 3, Op: datapath.OpRead, Flags: sig,
			SGL: split(dst, 0, n-n/2, 64+n-n/2, n/2), RemoteAddr: r.addr + 5, RKey: r.rkey})
		wc := h.pollOne(cq, c, 3, datapath.OpRead, ok)
		if wc.ByteLen != uint32(n) {
			h.fatalf("RDMA READ of %d bytes completed with ByteLen %d", n, wc.ByteLen)
		}
		got := append(append([]byte(nil), dst.Bytes()[:n-n/2]...), dst.Bytes()[64+n-n/2:64+n]...)
		h.equal(got, whole[5:5+n], "RDMA READ data")
	}
	h.sync()
	h.sync()
}

func readPassive(h *half) {
	cfg, _ := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	src := h.reg(1<<20+64, rrd, 30)
	h.exchange(regionOf(src).bytes())
	h.sync()
	if c.Err() != nil {
		h.fatalf("Err %v after the peer's READs", c.Err())
	}
	h.sync()
}

func twoConnsActive(h *half) {
	cq := h.cq(64)
	cfg := datapath.QPConfig{SendCQ: cq, RecvCQ: cq}
	dst := h.reg(128, rw, 0)
	var conns [2]datapath.Conn
	for i := range conns {
		conns[i] = h.connect(cfg, []byte{byte(i)})
		h.postRecv(conns[i], datapath.RecvWR{ID: uint64(i), SGL: []datapath.SGE{sge(dst, 64*i, 64)}})
	}
	if conns[0].QPN() == conns[1].QPN() {
		h.fatalf("two connections share QPN %d", conns[0].QPN())
	}
	h.sync()
	for _, wc := range h.poll(cq, 2) {
		i := wc.ID
		if i > 1 {
			h.fatalf("unexpected completion %+v", wc)
		}
		h.check(wc, conns[i], i, recv, ok)
		if wc.ByteLen != 1 || dst.Bytes()[64*i] != byte(0xa0+i) {
			h.fatalf("connection %d received %d bytes %#x", i, wc.ByteLen, dst.Bytes()[64*i])
		}
	}
	h.sync()
}

func twoConnsPassive(h *half) {
	src := h.reg(2, 0, 0)
	src.Bytes()[0], src.Bytes()[1] = 0xa0, 0xa1
	var conns [2]datapath.Conn
	var cqs [2]datapath.CQ
	for range 2 {
		cfg, cq := h.qp(0, 0)
		c, req := h.accept(cfg, nil)
		i := req.PrivateData()[0] & 1
		conns[i], cqs[i] = c, cq
	}
	h.sync()
	for i, c := range conns {
		h.postSend(c, datapath.SendWR{ID: 1, Op: send, Flags: sig, SGL: []datapath.SGE{sge(src, i, 1)}})
		h.pollOne(cqs[i], c, 1, send, ok)
	}
	h.sync()
}

func queueFullActive(h *half) {
	cfg, cq := h.qp(16, 16)
	c := h.connect(cfg, nil)
	caps := c.Caps()
	src := h.reg(8, 0, 0)
	dst := h.reg(8, rw, 0)
	rwrs := make([]datapath.RecvWR, caps.MaxRecvWR+1)
	for i := range rwrs {
		rwrs[i] = datapath.RecvWR{ID: uint64(i), SGL: []datapath.SGE{sge(dst, 0, 8)}}
	}
	if n, err := c.PostRecv(rwrs); n != caps.MaxRecvWR || !errors.Is(err, datapath.ErrQueueFull) {
		h.fatalf("PostRecv of %d with MaxRecvWR %d: posted %d, err %v; want ErrQueueFull", len(rwrs), caps.MaxRecvWR, n, err)
	}
	r := h.region(h.exchange(nil))
	wrs := make([]datapath.SendWR, caps.MaxSendWR+1)
	for i := range wrs {
		wrs[i] = datapath.SendWR{ID: uint64(i), Op: datapath.OpWrite, Flags: sig, SGL: []datapath.SGE{sge(src, 0, 8)},
			RemoteAddr: r.addr, RKey: r.rkey}
	}
	if n, err := c.PostSend(wrs); n != caps.MaxSendWR || !errors.Is(err, datapath.ErrQueueFull) {
		h.fatalf("PostSend of %d with MaxSendWR %d: posted %d, err %v; want ErrQueueFull", len(wrs), caps.MaxSendWR, n, err)
	}
	for i, wc := range h.poll(cq, caps.MaxSendWR) {
		h.check(wc, c, uint64(i), datapath.OpWrite, ok)
	}
	// Polling freed the slots.
	h.postSend(c, wrs[caps.MaxSendWR])
	h.pollOne(cq, c, uint64(caps.MaxSendWR), datapath.OpWrite, ok)
	h.sync()
}

func queueFullPassive(h *half) {
	cfg, _ := h.qp(0, 0)
	h.accept(cfg, nil)
	dst := h.reg(8, rwr, 0)
	h.exchange(regionOf(dst).bytes())
	h.sync()
}

// ---- failures: the failing work request gets its status, everything else outstanding is
// flushed, and both ends report a broken connection.

func badKey(r *region)  { r.rkey = datapath.NextRKey(r.rkey) }
func pastEnd(r *region) { r.addr += uint64(r.len) - 8 }
func asIs(*region)      {}

func remoteAccessActive(op datapath.Opcode, mutate func(*region)) func(*half) {
	return func(h *half) {
		cfg, cq := h.qp(0, 0)
		c := h.connect(cfg, nil)
		buf := h.reg(64, rw, 1)
		r := h.region(h.exchange(nil))
		mutate(&r)
		h.postRecv(c, datapath.RecvWR{ID: 50, SGL: []datapath.SGE{sge(buf, 0, 64)}})
		h.postSend(c,
			datapath.SendWR{ID: 1, Op: op, Flags: sig, SGL: []datapath.SGE{sge(buf, 0, 16)}, RemoteAddr: r.addr, RKey: r.rkey},
			datapath.SendWR{ID: 2, Op: send, Flags: sig, SGL: []datapath.SGE{sge(buf, 0, 4)}},
		)
		wcs := h.byID(cq, 3)
		h.check(wcs[1], c, 1, op, datapath.StatusRemoteAccess)
		h.check(wcs[2], c, 2, send, datapath.StatusFlushed)
		h.check(wcs[50], c, 50, recv, datapath.StatusFlushed)
		h.broken(c, cq)
	}
}

func remoteAccessPassive(access datapath.Access) func(*half) {
	return func(h *half) {
		cfg, cq := h.qp(0, 0)
		c, _ := h.accept(cfg, nil)
		mem := h.reg(4096, access, 0)
		h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(mem, 0, 64)}},
			datapath.RecvWR{ID: 2, SGL: []datapath.SGE{sge(mem, 64, 64)}})
		h.exchange(regionOf(mem).bytes())
		wcs := h.poll(cq, 2)
		h.check(wcs[0], c, 1, recv, datapath.StatusFlushed)
		h.check(wcs[1], c, 2, recv, datapath.StatusFlushed)
		h.broken(c, cq)
		if mem.Bytes()[0] != 0 || mem.Bytes()[4095] != 0 {
			h.fatalf("a refused access changed memory")
		}
	}
}

func sendTooLargeActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	buf := h.reg(128, rw, 1)
	h.postRecv(c, datapath.RecvWR{ID: 50, SGL: []datapath.SGE{sge(buf, 0, 64)}})
	h.sync()
	h.postSend(c,
		datapath.SendWR{ID: 1, Op: send, Flags: sig, SGL: []datapath.SGE{sge(buf, 0, 65)}},
		datapath.SendWR{ID: 2, Op: send, Flags: sig, SGL: []datapath.SGE{sge(buf, 0, 1)}},
	)
	wcs := h.byID(cq, 3)
	// Hardware reports the responder's length error to the requester as a remote invalid
	// request (rxe, mlx5) or a remote operation error.
	if st := wcs[1].Status; st != datapath.StatusRemoteInvalidRequest && st != datapath.StatusRemoteOperation {
		h.fatalf("oversized SEND completed with %v, want remote invalid request or remote operation error", st)
	}
	h.check(wcs[2], c, 2, send, datapath.StatusFlushed)
	h.check(wcs[50], c, 50, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func sendTooLargePassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	dst := h.reg(128, rw, 0)
	h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(dst, 0, 32), sge(dst, 64, 32)}},
		datapath.RecvWR{ID: 2, SGL: []datapath.SGE{sge(dst, 0, 128)}})
	h.sync()
	wcs := h.poll(cq, 2)
	h.check(wcs[0], c, 1, recv, datapath.StatusLocalLength)
	h.check(wcs[1], c, 2, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func sendNoRecvActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	buf := h.reg(64, rw, 1)
	h.postRecv(c, datapath.RecvWR{ID: 50, SGL: []datapath.SGE{sge(buf, 0, 64)}})
	h.sync()
	h.postSend(c,
		datapath.SendWR{ID: 1, Op: send, Flags: sig, SGL: []datapath.SGE{sge(buf, 0, 8)}},
		datapath.SendWR{ID: 2, Op: datapath.OpWrite, Flags: sig, SGL: []datapath.SGE{sge(buf, 0, 8)}},
	)
	wcs := h.byID(cq, 3)
	h.check(wcs[1], c, 1, send, datapath.StatusRNRRetryExceeded)
	h.check(wcs[2], c, 2, send, datapath.StatusFlushed)
	h.check(wcs[50], c, 50, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func sendNoRecvPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	h.sync()
	h.broken(c, cq)
}

func localProtActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	gone := h.reg(64, rw, 1)
	s := sge(gone, 0, 8)
	h.must(gone.Close(), "MR.Close")
	h.sync()
	h.postSend(c, datapath.SendWR{ID: 1, Op: send, Flags: sig, SGL: []datapath.SGE{s}})
	h.pollOne(cq, c, 1, send, datapath.StatusLocalProtection)
	h.broken(c, cq)
}

func localProtPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	dst := h.reg(64, rw, 0)
	h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(dst, 0, 64)}})
	h.sync()
	h.pollOne(cq, c, 1, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func closeActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, err := h.dev.Connect(h.ctx(), h.addr, cfg, nil)
	h.must(err, "Connect")
	buf := h.reg(64, rw, 0)
	for i := range 3 {
		h.postRecv(c, datapath.RecvWR{ID: uint64(i), SGL: []datapath.SGE{sge(buf, 0, 64)}})
	}
	h.sync()
	h.must(c.Close(), "Conn.Close")
	for i, wc := range h.poll(cq, 3) {
		h.check(wc, c, uint64(i), recv, datapath.StatusFlushed)
	}
	if c.Err() == nil {
		h.fatalf("Err is nil after Close")
	}
}

func closePassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	buf := h.reg(64, rw, 0)
	h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(buf, 0, 64)}},
		datapath.RecvWR{ID: 2, SGL: []datapath.SGE{sge(buf, 0, 64)}})
	h.sync()
	wcs := h.poll(cq, 2)
	h.check(wcs[0], c, 1, recv, datapath.StatusFlushed)
	h.check(wcs[1], c, 2, recv, datapath.StatusFlushed)
	h.broken(c, cq)
	// The peer closed it: not a transport failure, and the requester can say so (verbs
	// learns it from the CM's DISCONNECTED event, which may come after the flushes).
	var de *datapath.DisconnectError
	for !errors.As(c.Err(), &de) {
		if time.Now().After(h.deadline) {
			h.fatalf("Err after the peer's Close = %v, want a *datapath.DisconnectError", c.Err())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// ---- memory windows

// window allocates a window and binds it over [off, off+n) of mr with a fresh key; it skips
// the case where the device has no windows.
func (h *half) window(c datapath.Conn, cq datapath.CQ, mr datapath.MR, off, n int, acc datapath.Access) datapath.MW {
	w, err := h.dev.AllocMW()
	if errors.Is(err, datapath.ErrNotSupported) {
		h.skip("device has no memory windows")
	}
	h.must(err, "AllocMW")
	h.defer1(func() { w.Close() })
	h.bind(c, cq, w, mr, off, n, acc)
	return w
}

func (h *half) bind(c datapath.Conn, cq datapath.CQ, w datapath.MW, mr datapath.MR, off, n int, acc datapath.Access) uint32 {
	key := datapath.NextRKey(w.RKey())
	h.postSend(c, datapath.SendWR{ID: 77, Op: datapath.OpBindMW, Flags: sig, SGL: []datapath.SGE{sge(mr, off, n)},
		MW: w, RKey: key, BindAccess: acc})
	h.pollOne(cq, c, 77, datapath.OpBindMW, ok)
	if w.RKey() != key {
		h.fatalf("MW.RKey %#x after binding with %#x", w.RKey(), key)
	}
	return key
}

func (h *half) invalidate(c datapath.Conn, cq datapath.CQ, key uint32) {
	h.postSend(c, datapath.SendWR{ID: 78, Op: datapath.OpLocalInv, Flags: sig, InvRKey: key})
	h.pollOne(cq, c, 78, datapath.OpLocalInv, ok)
}

func sendInvActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	src := h.reg(256, rw, 40)
	r := h.region(h.exchange(nil))
	h.postSend(c,
		datapath.SendWR{ID: 1, Op: datapath.OpWrite, SGL: []datapath.SGE{sge(src, 0, 256)}, RemoteAddr: r.addr, RKey: r.rkey},
		datapath.SendWR{ID: 2, Op: datapath.OpSendInv, Flags: sig, SGL: []datapath.SGE{sge(src, 0, 8)}, InvRKey: r.rkey},
	)
	h.pollOne(cq, c, 2, datapath.OpSendInv, ok)
	h.sync() // the passive half saw the invalidation
	h.postSend(c, datapath.SendWR{ID: 3, Op: datapath.OpWrite, Flags: sig, SGL: []datapath.SGE{sge(src, 0, 8)},
		RemoteAddr: r.addr, RKey: r.rkey})
	h.pollOne(cq, c, 3, datapath.OpWrite, datapath.StatusRemoteAccess)
	h.broken(c, cq)
}

func sendInvPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	mem := h.reg(8192, rwr|rrd|bind, 0)
	w := h.window(c, cq, mem, 4096, 256, datapath.AccessRemoteWrite)
	key := w.RKey()
	h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(mem, 0, 64)}},
		datapath.RecvWR{ID: 2, SGL: []datapath.SGE{sge(mem, 64, 64)}})
	h.exchange(region{mem.Addr() + 4096, key, 256}.bytes())
	wc := h.pollOne(cq, c, 1, recv, ok)
	if !wc.Invalidated || wc.InvRKey != key || wc.ByteLen != 8 {
		h.fatalf("SEND_WITH_INV receive %+v, want Invalidated with InvRKey %#x", wc, key)
	}
	h.equal(mem.Bytes()[4096:4096+256], pattern(256, 40), "RDMA WRITE through the window")
	h.sync()
	h.pollOne(cq, c, 2, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func localInvActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	dst := h.reg(64, rw, 0)
	read := func(id uint64, r region, st datapath.Status) {
		h.postSend(c, datapath.SendWR{ID: id, Op: datapath.OpRead, Flags: sig, SGL: []datapath.SGE{sge(dst, 0, 64)},
			RemoteAddr: r.addr, RKey: r.rkey})
		h.pollOne(cq, c, id, datapath.OpRead, st)
	}
	r1 := h.region(h.exchange(nil))
	read(1, r1, ok)
	h.equal(dst.Bytes(), pattern(8192, 41)[100:164], "READ through the window")
	h.sync()
	r2 := h.region(h.exchange(nil)) // invalidated and bound again with the next key
	if r2.rkey == r1.rkey {
		h.fatalf("rebind reused key %#x", r1.rkey)
	}
	read(2, r2, ok)
	read(3, r1, datapath.StatusRemoteAccess) // the stale key
	h.broken(c, cq)
}

func localInvPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	mem := h.reg(8192, rw|rrd|bind, 41)
	w := h.window(c, cq, mem, 100, 64, datapath.AccessRemoteRead)
	k1 := w.RKey()
	h.exchange(region{mem.Addr() + 100, k1, 64}.bytes())
	h.sync() // the active half read through k1
	h.invalidate(c, cq, k1)
	k2 := h.bind(c, cq, w, mem, 100, 64, datapath.AccessRemoteRead)
	h.postRecv(c, datapath.RecvWR{ID: 1})
	h.exchange(region{mem.Addr() + 100, k2, 64}.bytes())
	h.pollOne(cq, c, 1, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func mwRangeActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	dst := h.reg(64, rw, 0)
	r := h.region(h.exchange(nil))
	// Inside the region but one byte before the window.
	h.postSend(c, datapath.SendWR{ID: 1, Op: datapath.OpRead, Flags: sig, SGL: []datapath.SGE{sge(dst, 0, 8)},
		RemoteAddr: r.addr - 1, RKey: r.rkey})
	h.pollOne(cq, c, 1, datapath.OpRead, datapath.StatusRemoteAccess)
	h.broken(c, cq)
}

func mwRangePassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	mem := h.reg(8192, rw|rrd|bind, 0)
	w := h.window(c, cq, mem, 4096, 64, datapath.AccessRemoteRead)
	h.postRecv(c, datapath.RecvWR{ID: 1})
	h.exchange(region{mem.Addr() + 4096, w.RKey(), 64}.bytes())
	h.pollOne(cq, c, 1, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func bindRefusedActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	mem := h.reg(4096, rw|rrd, 0) // no AccessMWBind
	w, err := h.dev.AllocMW()
	if errors.Is(err, datapath.ErrNotSupported) {
		h.skip("device has no memory windows")
	}
	h.must(err, "AllocMW")
	h.defer1(func() { w.Close() })
	h.sync()
	h.postSend(c, datapath.SendWR{ID: 1, Op: datapath.OpBindMW, Flags: sig, SGL: []datapath.SGE{sge(mem, 0, 64)},
		MW: w, RKey: datapath.NextRKey(w.RKey()), BindAccess: datapath.AccessRemoteRead})
	h.pollOne(cq, c, 1, datapath.OpBindMW, datapath.StatusMWBind)
	h.broken(c, cq)
}

func bindRefusedPassive(h *half) {
	cfg, cq := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	h.postRecv(c, datapath.RecvWR{ID: 1})
	h.sync()
	h.pollOne(cq, c, 1, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

// split is an SGL of the non-empty ones of two pieces of mr.
func split(mr datapath.MR, off1, n1, off2, n2 int) []datapath.SGE {
	var sgl []datapath.SGE
	if n1 > 0 {
		sgl = append(sgl, sge(mr, off1, n1))
	}
	if n2 > 0 {
		sgl = append(sgl, sge(mr, off2, n2))
	}
	return sgl
}

// ---- isolation: protection domains and type 2 windows

// pdPair is the passive side of the isolation cases: two connections from one peer, in
// their own PDs; the active half opens them in order, conns[0] first.
func (h *half) pdPair() (pds [2]datapath.PD, conns [2]datapath.Conn, cqs [2]datapath.CQ) {
	for i := range 2 {
		pds[i] = h.pd()
		cfg, cq := h.qp(0, 0)
		cfg.PD = pds[i]
		conns[i], _ = h.accept(cfg, nil)
		cqs[i] = cq
	}
	return pds, conns, cqs
}

// pdRemoteActive: over connection 0 the peer's region (in connection 0's PD) is reachable
// with its rkey; over connection 1 (another PD at the peer) the same rkey fails with a
// remote access error and breaks connection 1 only.
func pdRemoteActive(op datapath.Opcode) func(*half) {
	return func(h *half) {
		var conns [2]datapath.Conn
		var cqs [2]datapath.CQ
		for i := range conns {
			cfg, cq := h.qp(0, 0)
			conns[i], cqs[i] = h.connect(cfg, []byte{byte(i)}), cq
		}
		buf := h.reg(64, rw, 61)
		r := h.region(h.exchange(nil))
		h.postSend(conns[0], datapath.SendWR{ID: 1, Op: op, Flags: sig, SGL: []datapath.SGE{sge(buf, 0, 16)},
			RemoteAddr: r.addr, RKey: r.rkey})
		h.pollOne(cqs[0], conns[0], 1, op, ok)
		if op == datapath.OpRead {
			h.equal(buf.Bytes()[:16], pattern(4096, 60)[:16], "RDMA READ in the same PD")
		}
		h.postRecv(conns[1], datapath.RecvWR{ID: 50, SGL: []datapath.SGE{sge(buf, 32, 32)}})
		h.postSend(conns[1], datapath.SendWR{ID: 2, Op: op, Flags: sig, SGL: []datapath.SGE{sge(buf, 0, 16)},
			RemoteAddr: r.addr + 1024, RKey: r.rkey})
		wcs := h.byID(cqs[1], 2)
		h.check(wcs[2], conns[1], 2, op, datapath.StatusRemoteAccess)
		h.check(wcs[50], conns[1], 50, recv, datapath.StatusFlushed)
		h.broken(conns[1], cqs[1])
		h.sync()
		if err := conns[0].Err(); err != nil {
			h.fatalf("connection 0 broke with connection 1: %v", err)
		}
		h.sync()
	}
}

func pdRemotePassive(h *half) {
	pds, conns, cqs := h.pdPair()
	mem := h.regIn(pds[0], 4096, rwr|rrd, 60)
	h.postRecv(conns[1], datapath.RecvWR{ID: 1})
	h.exchange(regionOf(mem).bytes())
	h.pollOne(cqs[1], conns[1], 1, recv, datapath.StatusFlushed)
	h.broken(conns[1], cqs[1])
	h.sync()
	if err := conns[0].Err(); err != nil {
		h.fatalf("connection 0 broke with connection 1: %v", err)
	}
	h.equal(mem.Bytes()[1024:1040], pattern(4096, 60)[1024:1040], "memory the refused access named")
	h.sync()
}

// pdLocalActive receives what the passive half sends from memory of its connection's PD; the
// SEND after it, from another PD's memory, fails at the passive half.
func pdLocalActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	buf := h.reg(64, rw, 0)
	h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(buf, 0, 64)}},
		datapath.RecvWR{ID: 2, SGL: []datapath.SGE{sge(buf, 0, 64)}})
	h.sync()
	h.pollOne(cq, c, 1, recv, ok)
	h.equal(buf.Bytes()[:8], pattern(64, 62)[:8], "SEND from the connection's PD")
	h.pollOne(cq, c, 2, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func pdLocalPassive(h *half) {
	mine, other := h.pd(), h.pd()
	cfg, cq := h.qp(0, 0)
	cfg.PD = mine
	c, _ := h.accept(cfg, nil)
	good := h.regIn(mine, 64, rw, 62)
	foreign := h.regIn(other, 64, rw, 63)
	def := h.reg(64, rw, 64) // the device's default PD is another PD too
	h.sync()
	h.postSend(c, datapath.SendWR{ID: 1, Op: send, Flags: sig, SGL: []datapath.SGE{sge(good, 0, 8)}})
	h.pollOne(cq, c, 1, send, ok)
	// The lkey names a live region of the device, in another PD: a local protection error
	// (rxe reports an lkey it cannot use as a local QP operation error, see LocalProtection).
	for i, mr := range []datapath.MR{foreign, def} {
		n, err := c.PostSend([]datapath.SendWR{{ID: uint64(2 + i), Op: send, Flags: sig, SGL: []datapath.SGE{sge(mr, 0, 8)}}})
		if i > 0 && (err != nil || n != 1) {
			break // the first one broke the connection: posting may fail from then on
		}
		if err != nil || n != 1 {
			h.fatalf("PostSend: %d, %v", n, err)
		}
		wc := h.poll(cq, 1)[0]
		if i == 0 && wc.Status != datapath.StatusLocalProtection && wc.Status != datapath.StatusLocalQPOperation {
			h.fatalf("SEND from another PD's memory: %+v (%v), want a local protection error", wc, wc.Status)
		}
		if i > 0 && wc.Status != datapath.StatusFlushed {
			h.fatalf("SEND after the failure: %+v (%v), want flushed", wc, wc.Status)
		}
	}
	h.broken(c, cq)
	if def.Bytes()[0] != pattern(64, 64)[0] || foreign.Bytes()[0] != pattern(64, 63)[0] {
		h.fatalf("a refused SEND changed its source")
	}
}

// mwOtherQPActive reads through a type 2 window the passive half bound on connection 0: over
// connection 0 it works, over connection 1 (same PD at the peer) the key fails.
func mwOtherQPActive(h *half) {
	var conns [2]datapath.Conn
	var cqs [2]datapath.CQ
	for i := range conns {
		cfg, cq := h.qp(0, 0)
		conns[i], cqs[i] = h.connect(cfg, []byte{byte(i)}), cq
	}
	dst := h.reg(64, rw, 0)
	r := h.region(h.exchange(nil))
	read := func(i int, id uint64, st datapath.Status) {
		h.postSend(conns[i], datapath.SendWR{ID: id, Op: datapath.OpRead, Flags: sig, SGL: []datapath.SGE{sge(dst, 0, 32)},
			RemoteAddr: r.addr, RKey: r.rkey})
		h.pollOne(cqs[i], conns[i], id, datapath.OpRead, st)
	}
	read(0, 1, ok)
	h.equal(dst.Bytes()[:32], pattern(8192, 65)[512:544], "READ through the window on its own connection")
	read(1, 2, datapath.StatusRemoteAccess)
	h.broken(conns[1], cqs[1])
	h.sync()
	read(0, 3, ok) // still bound, still usable where it is bound
	h.sync()
}

func mwOtherQPPassive(h *half) {
	pd := h.pd()
	var conns [2]datapath.Conn
	var cqs [2]datapath.CQ
	for i := range conns {
		cfg, cq := h.qp(0, 0)
		cfg.PD = pd
		conns[i], _ = h.accept(cfg, nil)
		cqs[i] = cq
	}
	mem := h.regIn(pd, 8192, rw|rrd|bind, 65)
	w, err := pd.AllocMW()
	if errors.Is(err, datapath.ErrNotSupported) {
		h.skip("device has no memory windows")
	}
	h.must(err, "PD.AllocMW")
	h.defer1(func() { w.Close() })
	h.bind(conns[0], cqs[0], w, mem, 512, 64, datapath.AccessRemoteRead)
	h.postRecv(conns[1], datapath.RecvWR{ID: 1})
	h.exchange(region{mem.Addr() + 512, w.RKey(), 64}.bytes())
	h.pollOne(cqs[1], conns[1], 1, recv, datapath.StatusFlushed)
	h.broken(conns[1], cqs[1])
	h.sync()
	if err := conns[0].Err(); err != nil {
		h.fatalf("connection 0 broke with connection 1: %v", err)
	}
	h.sync()
}
