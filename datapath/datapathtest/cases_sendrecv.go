package datapathtest

import (
	"encoding/binary"
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

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
