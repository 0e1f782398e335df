package datapathtest

import (
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

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
