package datapathtest

import (
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

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
