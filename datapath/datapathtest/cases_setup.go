package datapathtest

import (
	"bytes"
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

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
