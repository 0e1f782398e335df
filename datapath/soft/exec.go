package soft

import (
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// PostSend posts send queue work requests. In process each one executes at once, in posting
// order, under the pair mutex: the data moves by one copy from the source region to the
// destination region and both completions are pushed before PostSend returns. A SEND that
// finds no receive posted waits (with everything posted after it) until the peer posts one
// or RNRTimeout passes.
func (c *conn) PostSend(wrs []datapath.SendWR) (int, error) {
	if s := c.dev.p.slow; s != nil {
		s.spin(len(wrs))
		for i := range wrs {
			if wrs[i].Op <= datapath.OpRead { // the operations that move bytes
				for _, g := range wrs[i].SGL {
					s.charge(int(g.Length))
				}
			}
		}
	}
	if c.link != nil {
		return c.link.postSend(c, wrs)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.postable(); err != nil {
		return 0, err
	}
	for i := range wrs {
		wr := &wrs[i]
		if err := c.admit(wr); err != nil {
			return i, err
		}
		switch {
		case c.broken:
			// An earlier work request of this batch failed: the rest are flushed.
			c.sendDone(wr, datapath.StatusFlushed, 0)
		case c.sq.n > 0:
			c.defer1(wr)
		case !c.exec(wr, nil):
			c.defer1(wr)
			c.waitRNR()
		}
	}
	return len(wrs), nil
}

// postable says why nothing can be posted on c, if anything. mu is held.
func (c *conn) postable() error {
	if c.closed {
		return errPostClosed
	}
	if c.broken {
		return errPostBroken
	}
	return nil
}

// admit checks wr and takes a send queue slot for it. A window bind records its new key at
// post time, not when it executes. mu is held.
func (c *conn) admit(wr *datapath.SendWR) error {
	if err := c.checkSend(wr); err != nil {
		return err
	}
	if c.sqOut.Load() >= int32(c.caps.MaxSendWR) {
		return errQueueFull
	}
	c.sqOut.Add(1)
	if wr.Op == datapath.OpBindMW {
		wr.MW.(*mw).r.lastKey.Store(wr.RKey)
	}
	return nil
}

// defer1 copies wr into the pending send queue; inline data is copied now, as FlagInline
// promises the memory is free when PostSend returns.
func (c *conn) defer1(wr *datapath.SendWR) {
	e := c.sq.back()
	e.wr = *wr
	e.sgl = append(e.sgl[:0], wr.SGL...)
	e.wr.SGL = e.sgl
	e.resolved = false
	e.inline = e.inline[:0]
	if wr.Flags&datapath.FlagInline != 0 {
		for _, s := range wr.SGL {
			b, ok := c.pd.local(s.LKey, s.Addr, s.Length, 0)
			if !ok {
				// Leave it to exec to fail with a local protection error.
				e.wr.Flags &^= datapath.FlagInline
				return
			}
			e.inline = append(e.inline, b...)
		}
	}
}

// drain runs the pending send queue until it is empty or its head waits for a receive.
func (c *conn) drain() {
	for c.sq.n > 0 && !c.broken {
		e := c.sq.front()
		var inl []byte
		if e.wr.Flags&datapath.FlagInline != 0 {
			inl = e.inline
		}
		// Off the queue while it runs, so that a failure flushes only what follows it.
		wr := e.wr
		c.sq.pop()
		if !c.exec(&wr, inl) {
			c.sq.unpop()
			c.waitRNR()
			return
		}
		c.rnrAt = time.Time{}
	}
}

// waitRNR starts the RNR budget for the SEND at the head of the pending queue.
func (c *conn) waitRNR() {
	if !c.rnrAt.IsZero() {
		return
	}
	d := c.dev.p.cfg.RNRTimeout
	if d < 0 {
		d = 0
	}
	c.rnrAt = time.Now().Add(d)
	if c.rnr == nil {
		c.rnr = time.AfterFunc(d, c.rnrExpired)
	} else {
		c.rnr.Reset(d)
	}
}

func (c *conn) rnrExpired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken || c.sq.n == 0 || c.rnrAt.IsZero() {
		return
	}
	if left := time.Until(c.rnrAt); left > 0 {
		c.rnr.Reset(left)
		return
	}
	e := c.sq.front()
	c.sq.pop()
	c.fail(&e.wr, datapath.StatusRNRRetryExceeded, "RNR retry exceeded: no receive posted")
}

// fail completes wr with st and breaks both ends.
func (c *conn) fail(wr *datapath.SendWR, st datapath.Status, reason string) {
	c.sendDone(wr, st, 0)
	c.breakLocked(brokenBy(st, false, reason))
	if p := c.peer; p != nil {
		p.breakLocked(brokenBy(datapath.StatusFlushed, true, "peer failed: "+reason))
	}
}

// failRecv fails the receive the peer's SEND consumed with rst and the SEND with sst.
func (c *conn) failRecv(wr *datapath.SendWR, sst, rst datapath.Status, reason string) {
	p := c.peer
	e := p.rq.front()
	p.recvDone(e.id, rst, 0, 0, false)
	p.rq.pop()
	c.sendDone(wr, sst, 0)
	p.breakLocked(brokenBy(rst, false, reason))
	c.breakLocked(brokenBy(sst, true, "peer failed: "+reason))
}

// gather resolves a local SGL into c.src (need is the access the data direction needs) and
// returns the total length.
func (c *conn) gather(out *[][]byte, p *pd, sgl []datapath.SGE, need datapath.Access) (uint64, bool) {
	*out = (*out)[:0]
	var n uint64
	for _, s := range sgl {
		b, ok := p.local(s.LKey, s.Addr, s.Length, need)
		if !ok {
			return 0, false
		}
		*out = append(*out, b)
		n += uint64(len(b))
	}
	return n, true
}

// source points c.src at the bytes wr sends or writes: the copy PostSend made of inline data,
// else wr's SGL, which must be valid local memory.
func (c *conn) source(wr *datapath.SendWR, inline []byte) (uint64, bool) {
	if inline != nil {
		c.src = append(c.src[:0], inline)
		return uint64(len(inline)), true
	}
	return c.gather(&c.src, c.pd, wr.SGL, 0)
}

// land points *out at the first n bytes of a receive's SGL. fits is false when the receive is
// shorter than n; ok is false when those bytes are not writable local memory of d.
func land(out *[][]byte, p *pd, sgl []datapath.SGE, n uint64) (fits, ok bool) {
	var room uint64
	for _, s := range sgl {
		room += uint64(s.Length)
	}
	if n > room {
		return false, true
	}
	*out = (*out)[:0]
	for _, s := range sgl {
		if n == 0 {
			break
		}
		k := min(uint64(s.Length), n)
		b, ok := p.local(s.LKey, s.Addr, uint32(k), datapath.AccessLocalWrite)
		if !ok {
			return true, false
		}
		*out = append(*out, b)
		n -= k
	}
	return true, true
}

// sgcopy copies the concatenation of src into the concatenation of dst, the emulated wire.
func sgcopy(dst, src [][]byte) {
	var d []byte
	for _, s := range src {
		for len(s) > 0 {
			for len(d) == 0 {
				d, dst = dst[0], dst[1:]
			}
			k := copy(d, s)
			d, s = d[k:], s[k:]
		}
	}
}

// exec runs one work request in process. It reports false when a SEND found no receive and
// must wait; otherwise the work request is complete (successfully or not).
func (c *conn) exec(wr *datapath.SendWR, inline []byte) bool {
	p := c.peer
	switch wr.Op {
	case datapath.OpSend, datapath.OpSendInv:
		n, ok := c.source(wr, inline)
		if !ok {
			c.fail(wr, datapath.StatusLocalProtection, "bad local key or range in a SEND")
			return true
		}
		if p.rq.n == 0 {
			if p.closed || p.broken {
				c.fail(wr, datapath.StatusRetryExceeded, "peer gone")
				return true
			}
			return false
		}
		r := p.rq.front()
		switch fits, ok := land(&c.dst, p.pd, r.sgl, n); {
		case !fits:
			c.failRecv(wr, datapath.StatusRemoteInvalidRequest, datapath.StatusLocalLength,
				"SEND larger than the receive buffer")
			return true
		case !ok:
			c.failRecv(wr, datapath.StatusRemoteOperation, datapath.StatusLocalProtection,
				"bad local key or range in a receive")
			return true
		}
		sgcopy(c.dst, c.src)
		var inv uint32
		invalidated := wr.Op == datapath.OpSendInv
		if invalidated {
			inv = wr.InvRKey
			if !p.pd.invalidate(p, inv) {
				c.failRecv(wr, datapath.StatusRemoteOperation, datapath.StatusLocalProtection,
					"SEND_WITH_INV names no valid memory window")
				return true
			}
		}
		id := r.id
		p.rq.pop()
		p.recvDone(id, datapath.StatusSuccess, uint32(n), inv, invalidated)
		c.sendDone(wr, datapath.StatusSuccess, uint32(n))

	case datapath.OpWrite:
		n, ok := c.source(wr, inline)
		if !ok {
			c.fail(wr, datapath.StatusLocalProtection, "bad local key or range in an RDMA WRITE")
			return true
		}
		c.rdma(p, wr, n)

	case datapath.OpRead:
		n, ok := c.gather(&c.dst, c.pd, wr.SGL, datapath.AccessLocalWrite)
		if !ok {
			c.fail(wr, datapath.StatusLocalProtection, "bad local key, range or access in an RDMA READ")
			return true
		}
		c.rdma(p, wr, n)

	default:
		c.localOp(wr)
	}
	return true
}

// rdma completes an RDMA WRITE or READ whose n local bytes are gathered (c.src for a WRITE,
// c.dst for a READ): it checks the peer's region and copies, or fails wr with a remote access
// error when the region does not exist, lacks the access or is too short.
func (c *conn) rdma(p *conn, wr *datapath.SendWR, n uint64) {
	if n > 0 {
		need, remote, reason := datapath.AccessRemoteWrite, &c.dst, "RDMA WRITE outside a writable region"
		if wr.Op == datapath.OpRead {
			need, remote, reason = datapath.AccessRemoteRead, &c.src, "RDMA READ outside a readable region"
		}
		b, ok := p.remoteMem(wr.RKey, wr.RemoteAddr, uint32(n), need)
		if !ok || n > 1<<31 {
			c.fail(wr, datapath.StatusRemoteAccess, reason)
			return
		}
		*remote = append((*remote)[:0], b)
		sgcopy(c.dst, c.src)
	}
	c.sendDone(wr, datapath.StatusSuccess, uint32(n))
}

// local runs the work requests that never leave the host: window bind and invalidation.
func (c *conn) localOp(wr *datapath.SendWR) {
	switch wr.Op {
	case datapath.OpBindMW:
		s := wr.SGL[0]
		if !c.bind(wr.MW.(*mw), s.LKey, s.Addr, s.Length, wr.RKey, wr.BindAccess) {
			c.fail(wr, datapath.StatusMWBind, "memory window bind refused")
			return
		}
	case datapath.OpLocalInv:
		if !c.pd.invalidate(nil, wr.InvRKey) {
			c.fail(wr, datapath.StatusLocalQPOperation, "LOCAL_INV names no valid memory window")
			return
		}
	}
	c.sendDone(wr, datapath.StatusSuccess, 0)
}
