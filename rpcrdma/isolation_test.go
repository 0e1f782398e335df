package rpcrdma

import (
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/mempool"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
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
		p.rsp.mangleReply = func(b []byte) { sent = append([]byte(nil), b...) }
		p.req.mangle = shrinkWriteChunk(100)
		r := p.callGuarded(Call{Proc: benchprog.ProcSource, Size: 3000, Tag: 1})
		if r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
			t.Fatalf("%s: %v, reply class %s, want %s", mem, r.Err, r.ReplyClass, rpcproto.ClassResponderRead)
		}
		h := newHeader(Limits{})
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
			q.rsp.mangleReply = func(b []byte) { sent = append([]byte(nil), b...) }
			q.req.mangle = shrinkWriteChunk(100)
			q.rsp.cfg.DoneTimeout = time.Hour // keep the chunk exposed
			q.req.suppressDone = true
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
