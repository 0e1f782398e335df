package rpcrdma

import (
	_ "encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// Protocol conformance cases found by an audit and by a hostile peer on the wire. The cases
// a peer can provoke run both in process and over the soft provider's TCP wire, the one two
// processes use.

// wires are the soft provider's two modes.
var wires = []struct{ name, addr string }{
	{"inproc", soft.InprocPrefix + "0"},
	{"tcp", "127.0.0.1:0"},
}

// hangGuard bounds a wait that only a hung engine exceeds; it is no performance bound.
const hangGuard = 10 * time.Second

// until drives both ends until cond holds, failing the test if it never does. The
// requester's Results are collected in p.got.
func (p *pair) until(what string, cond func() bool) {
	p.t.Helper()
	var done [16]Result
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: never happened", what)
		}
		p.rsp.Progress(done[:])
		n, _ := p.req.Progress(done[:])
		p.got = append(p.got, done[:n]...)
	}
}

// callGuarded runs one call from the requester and returns its Result, or fails the test
// if none comes.
func (p *pair) callGuarded(c Call) Result {
	p.t.Helper()
	p.got = p.got[:0]
	p.until("submitting", func() bool {
		err := p.req.Submit(c)
		if err != nil && !errors.Is(err, ErrNoCredit) {
			p.t.Fatalf("Submit: %v", err)
		}
		return err == nil
	})
	var r Result
	p.until("the RPC's result", func() bool {
		for _, g := range p.got {
			if g.Tag == c.Tag {
				r = g
				return true
			}
		}
		return false
	})
	return r
}

// Item 1: every reply that carries a grant leaves with the receives that back it posted
// (RFC 8166 section 3.3, RFC 8167 section 4.3.2), whichever path flushes it: checked at
// every post of a batch holding a reply, not after Progress returns. Reply-chunk replies
// fill the send batch with Writes, so most replies are flushed by a full batch.
func TestGrantBackedByReceives(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			rc, sc := testCfg(1024), testCfg(1024)
			rc.Credits, sc.Credits = 64, 64
			rc.MaxPayload, sc.MaxPayload = 16<<10, 16<<10
			p := newPairAt(t, w.addr, rc, sc)
			checks, violations := 0, 0
			var first string
			p.rsp.beforeSend = func() {
				c := p.rsp
				replies := 0
				for _, wr := range c.sendWRs {
					if k := wr.ID >> wrKindShift; k == kindReplySend || k == kindErrSend {
						replies++
					}
				}
				if replies == 0 {
					return
				}
				checks++
				have := c.recvPosted + c.sv.serving
				need := int(c.Stats.Granted) + c.sv.pendingDone + c.cl.outstanding
				if have < need {
					violations++
					if first == "" {
						first = fmt.Sprintf("granted %d (+%d RDMA_DONE, +%d replies) with %d receives posted and %d calls in service",
							c.Stats.Granted, c.sv.pendingDone, c.cl.outstanding, c.recvPosted, c.sv.serving)
					}
				}
			}
			calls := make([]Call, 3000)
			for i := range calls {
				calls[i] = Call{Proc: benchprog.ProcEcho, Size: 64 + i%512, Class: ClassReplyChunk, Tag: uint64(i)}
			}
			rs, _ := p.run(calls, nil)
			for _, r := range rs {
				if r.Err != nil {
					t.Fatalf("call %d: %v", r.Tag, r.Err)
				}
			}
			if checks == 0 {
				t.Fatal("no reply post was checked")
			}
			if violations > 0 {
				t.Fatalf("%d of %d reply posts carried a grant not backed by receives; first: %s", violations, checks, first)
			}
		})
	}
}

// Item 2: a responder in MemoryPreregistered mode never offers remote invalidation (its
// chunks all share the region's key), and reverse-direction replies never use Send With
// Invalidate: the R bits of RFC 8797 section 4.1 allow it for the responder's replies only.
func TestRemoteInvalidationOnlyWhereSafe(t *testing.T) {
	t.Run("preregistered responder", func(t *testing.T) {
		rc, sc := testCfg(1024), testCfg(1024)
		rc.Memory, sc.Memory = MemoryWindows, MemoryPreregistered
		rc.RemoteInvalidate, sc.RemoteInvalidate = true, true
		rc.ReverseCredits, sc.ReverseCredits = 2, 2
		p := newPair(t, rc, sc)
		if p.rsp.Params().Local.RemoteInvalidate || p.req.Params().Inline.RemoteInvalidate {
			t.Errorf("preregistered responder advertised R=%v; negotiated %v, want neither",
				p.rsp.Params().Local.RemoteInvalidate, p.req.Params().Inline.RemoteInvalidate)
		}
		p.call(p.req, Call{Proc: benchprog.ProcNull})
		// A reverse call with a Read chunk: its reply must not invalidate the region's key.
		if r := p.call(p.rsp, Call{Proc: benchprog.ProcSink, Size: 5000}); r.Err != nil {
			t.Fatalf("reverse SINK: %v", r.Err)
		}
		if n := p.req.Stats.SendInv.Count; n != 0 {
			t.Fatalf("requester sent %d Send With Invalidate to a preregistered responder", n)
		}
	})
	t.Run("windows both ends", func(t *testing.T) {
		cfg := testCfg(1024)
		cfg.Memory, cfg.RemoteInvalidate, cfg.ReverseCredits = MemoryWindows, true, 2
		p := newPair(t, cfg, cfg)
		if r := p.call(p.req, Call{Proc: benchprog.ProcSource, Size: 5000}); r.Err != nil {
			t.Fatal(r.Err)
		}
		if p.rsp.Stats.SendInv.Count != 1 {
			t.Fatalf("forward reply: %d Send With Invalidate, want 1", p.rsp.Stats.SendInv.Count)
		}
		for _, c := range []Call{{Proc: benchprog.ProcSink, Size: 5000}, {Proc: benchprog.ProcSource, Size: 5000}, {Proc: benchprog.ProcEcho, Size: 5000}} {
			if r := p.call(p.rsp, c); r.Err != nil {
				t.Fatalf("reverse %s: %v", procNames[c.Proc], r.Err)
			}
		}
		if n := p.req.Stats.SendInv.Count; n != 0 {
			t.Fatalf("reverse replies used Send With Invalidate %d times, want 0", n)
		}
		if st := p.rsp.Stats; st.LocalInvs != st.Binds {
			t.Fatalf("responder bound %d windows and invalidated %d itself", st.Binds, st.LocalInvs)
		}
	})
}
