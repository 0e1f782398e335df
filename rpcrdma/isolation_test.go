package rpcrdma

import (
	"context"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/mempool"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// A reply in a responder-provided Read chunk is exposed exactly and read-only, in both
// memory modes: its key is a window's, not the region's, and the peer can neither read past
// the reply nor write through it.
func TestResponderReadExposesOnlyTheReply(t *testing.T) {
	for _, mem := range []MemoryMode{MemoryPreregistered, MemoryWindows} {
		cfg := testCfg(1024)
		cfg.ResponderRead, cfg.Memory = true, mem
		p := newPair(t, cfg, cfg)
		var sent []byte
		faults(p.rsp).mangleReply = func(b []byte) { sent = append([]byte(nil), b...) }
		faults(p.req).mangle = shrinkWriteChunk(100)
		r := p.callGuarded(Call{Proc: benchprog.ProcSource, Size: 3000, Tag: 1})
		if r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
			t.Fatalf("%s: %v, reply class %s, want %s", mem, r.Err, r.ReplyClass, rpcproto.ClassResponderRead)
		}
		h := newHeader(wire.Limits{})
		if _, err := h.Decode(sent, &DefaultEndpointLimits); err != nil || len(h.ReadList) != 1 {
			t.Fatalf("%s: reply header %+v, %v", mem, h, err)
		}
		seg := h.ReadList[0]
		if seg.Handle == p.rsp.region.MR().RKey() {
			t.Fatalf("%s: the reply's Read chunk names the region's key %#x", mem, seg.Handle)
		}
		// The requester's own queue pair tries to write through the key, and to read one
		// byte past the reply: both are remote access errors that break the connection.
		for _, op := range []datapath.Opcode{datapath.OpWrite, datapath.OpRead} {
			q := newPair(t, cfg, cfg)
			faults(q.rsp).mangleReply = func(b []byte) { sent = append([]byte(nil), b...) }
			faults(q.req).mangle = shrinkWriteChunk(100)
			q.rsp.cfg.DoneTimeout = time.Hour // keep the chunk exposed
			faults(q.req).suppressDone = true
			if r := q.callGuarded(Call{Proc: benchprog.ProcSource, Size: 3000, Tag: 1}); r.Err != nil {
				t.Fatal(r.Err)
			}
			if _, err := h.Decode(sent, &DefaultEndpointLimits); err != nil {
				t.Fatal(err)
			}
			seg := h.ReadList[0]
			scratch, err := mempool.New(q.req.pd, mempool.Config{Pools: []mempool.PoolConfig{{Name: "scratch", Size: 8192, Count: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			defer scratch.Close()
			sge := scratch.Pool("scratch").Get().SGE(int(seg.Length) + 1)
			wr := datapath.SendWR{ID: wrID(kindUnsignaled, 0), Op: op, Flags: datapath.FlagSignaled,
				SGL: []datapath.SGE{sge}, RemoteAddr: seg.Offset, RKey: seg.Handle}
			if op == datapath.OpWrite {
				wr.SGL[0].Length = 8
			}
			if _, err := q.req.qp.PostSend([]datapath.SendWR{wr}); err != nil {
				t.Fatal(err)
			}
			var wcs [4]datapath.Completion
			var got datapath.Status
			for deadline := time.Now().Add(10 * time.Second); got == 0; {
				n, _ := q.req.cq.Poll(wcs[:])
				for _, wc := range wcs[:n] {
					if wc.ID == wr.ID {
						got = wc.Status
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s %s through the reply's key: no completion", mem, op)
				}
			}
			if got != datapath.StatusRemoteAccess {
				t.Fatalf("%s: %s through the reply's key (%d bytes of a %d-byte chunk): status %s, want remote access error",
					mem, op, wr.SGL[0].Length, seg.Length, got)
			}
		}
	}
}

// Two connections one Serve poller serves share its protection domain and sink pool: the
// window over A's reply in a responder-provided Read chunk reads through A's queue pair and
// fails through B's, and the reply names no region's key.
func TestSharedPollerKeysStayWithTheirConnection(t *testing.T) {
	dev, l := softListener(t, soft.InprocPrefix+"sharedkeys")
	cfg := testCfg(1024)
	cfg.ResponderRead = true
	scq, err := dev.NewCQ(4 * CQNeed(dev, cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer scq.Close()
	smux := NewMux(scq, MuxConfig{})
	sh, err := newShare(dev, cfg.withDefaults(), 8)
	if err != nil {
		t.Fatal(err)
	}
	smux.share = sh
	defer sh.close()
	defer smux.Close()
	served := make(chan *Conn, 2)
	go func() {
		for range 2 {
			req, err := l.Accept(context.Background())
			if err != nil {
				close(served)
				return
			}
			c, err := AcceptOn(dev, req, cfg, smux)
			if err != nil {
				close(served)
				return
			}
			served <- c
		}
	}()
	var reqs, srvs [2]*Conn
	for k := range reqs {
		if reqs[k], err = Dial(context.Background(), dev, l.Addr(), cfg); err != nil {
			t.Fatal(err)
		}
		defer reqs[k].Close()
		if srvs[k] = <-served; srvs[k] == nil {
			t.Fatal("accept failed")
		}
	}
	a, sa := reqs[0], srvs[0]
	if sa.pd != srvs[1].pd || sa.ownPD || sa.params.Memory != MemoryWindows {
		t.Fatalf("served connections: shared PD %v, own PD %v, memory %s; want one shared PD, windows", sa.pd == srvs[1].pd, sa.ownPD, sa.params.Memory)
	}
	var sent []byte
	faults(sa).mangleReply = func(b []byte) { sent = append([]byte(nil), b...) }
	sa.cfg.DoneTimeout = time.Hour // keep the chunk exposed
	faults(a).suppressDone = true
	wcs := make([]datapath.Completion, 32)
	res := make([]Result, 4)
	if err := a.Submit(Call{Proc: benchprog.ProcSource, Size: 3000, Tag: 1, Class: rpcproto.ClassResponderRead}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if n, _ := scq.Poll(wcs); n > 0 {
			smux.Handle(wcs[:n])
		} else {
			smux.Idle()
		}
		n, err := a.Progress(res)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			if res[0].Err != nil || res[0].ReplyClass != rpcproto.ClassResponderRead {
				t.Fatalf("%v, reply class %s", res[0].Err, res[0].ReplyClass)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no reply")
		}
	}
	h := newHeader(wire.Limits{})
	if _, err := h.Decode(sent, &DefaultEndpointLimits); err != nil || len(h.ReadList) != 1 {
		t.Fatalf("reply header %+v, %v", h, err)
	}
	seg := h.ReadList[0]
	for _, c := range srvs {
		if seg.Handle == c.region.MR().RKey() {
			t.Fatalf("the reply's Read chunk names a served connection's region key %#x", seg.Handle)
		}
	}
	for _, r := range sh.sinks.segs {
		if seg.Handle == r.MR().RKey() {
			t.Fatalf("the reply's Read chunk names the shared sink pool's key %#x", seg.Handle)
		}
	}
	// read posts an RDMA Read of the chunk on c's queue pair and returns its status.
	read := func(c *Conn) datapath.Status {
		scratch, err := mempool.New(c.pd, mempool.Config{Pools: []mempool.PoolConfig{{Name: "scratch", Size: 8192, Count: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		defer scratch.Close()
		wr := datapath.SendWR{ID: wrID(kindUnsignaled, 7), Op: datapath.OpRead, Flags: datapath.FlagSignaled,
			SGL: []datapath.SGE{scratch.Pool("scratch").Get().SGE(int(seg.Length))}, RemoteAddr: seg.Offset, RKey: seg.Handle}
		if _, err := c.qp.PostSend([]datapath.SendWR{wr}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; {
			if n, _ := scq.Poll(wcs); n > 0 {
				smux.Handle(wcs[:n])
			}
			n, _ := c.cq.Poll(wcs)
			for _, wc := range wcs[:n] {
				if wc.ID == wr.ID {
					return wc.Status
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("no completion of the RDMA Read")
			}
		}
	}
	if st := read(a); st != datapath.StatusSuccess {
		t.Fatalf("RDMA Read of the reply through its own connection: %s", st)
	}
	if st := read(reqs[1]); st != datapath.StatusRemoteAccess {
		t.Fatalf("RDMA Read of connection A's reply through connection B: %s, want remote access error", st)
	}
}
