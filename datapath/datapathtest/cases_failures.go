package datapathtest

import (
	"errors"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

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
