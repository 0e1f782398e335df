package datapathtest

import (
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

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
