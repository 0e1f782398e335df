package rpcrdma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// Wire cases of the second protocol audit: remote invalidation of RDMA_DONE, replies that
// arrive by Send With Invalidate and are bad, credit values of messages of unknown
// direction, and reply validation.

// rawSendHeader sends h from c as one message, with Send With Invalidate of inv when inv is
// not zero, bypassing the engine's own choice of messages (a hostile or differently built
// peer). body follows the header in the same message; patch, if set, rewrites the encoded
// header.
func rawSendHeader(t *testing.T, c *Conn, h *wire.Header, inv uint32, body []byte, patch ...func([]byte)) {
	t.Helper()
	buf := c.sendPool.Get()
	n, err := h.Encode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range patch {
		f(buf.Bytes()[:n])
	}
	n += copy(buf.Bytes()[n:], body)
	wr := datapath.SendWR{ID: wrID(kindErrSend, buf.Index()), Op: datapath.OpSend, Flags: datapath.FlagSignaled}
	if inv != 0 {
		wr.Op, wr.InvRKey = datapath.OpSendInv, inv
	}
	c.queue(&wr, buf.SGE(n))
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
}

// Item 1, the responder's end: an RDMA_DONE that arrives by Send With Invalidate of the
// reply's Read chunk key (the reliable-reply draft, section 4.1.4) ends the chunk without a
// LOCAL_INV of the dead window, and the connection goes on, in either memory mode of the
// responder (both expose the reply through a window where the device has them).
func TestResponderHonoursDoneInvalidate(t *testing.T) {
	for _, w := range wires {
		for _, mem := range []MemoryMode{MemoryPreregistered, MemoryWindows} {
			t.Run(fmt.Sprintf("%s/%s", w.name, mem), func(t *testing.T) {
				rc, sc := testCfg(1024), testCfg(1024)
				rc.Memory, sc.Memory = MemoryWindows, mem
				rc.RemoteInvalidate, sc.RemoteInvalidate = true, true
				rc.ResponderRead, sc.ResponderRead = true, true
				sc.DoneTimeout = 2 * hangGuard // only the RDMA_DONE may release the chunk
				p := newPairAt(t, w.addr, rc, sc)
				sv := &p.rsp.sv
				free := len(sv.free)
				faults(p.req).suppressDone = true
				rr := Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead, Tag: 1}
				if r := p.callGuarded(rr); r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
					t.Fatalf("%+v", r)
				}
				x := &sv.ctxs[sv.waiting[0]]
				key, xid := x.mwKey, x.hdr.XID
				h := newHeader(wire.Limits{})
				h.XID, h.Vers, h.Credit, h.Proc = xid, wire.Version, 8, wire.ProcDone
				rawSendHeader(t, p.req, h, key, nil)
				p.until("the chunk's release", func() bool { return len(sv.free) == free || p.rsp.Err() != nil })
				if err := p.rsp.Err(); err != nil {
					t.Fatalf("RDMA_DONE by Send With Invalidate broke the responder: %v", err)
				}
				if st := p.rsp.stats; st.DoneReceived != 1 || st.LocalInvs != 0 || st.RemoteInvalidated != 1 {
					t.Fatalf("RDMA_DONE received %d, local invalidations %d, remote %d; want 1, 0, 1", st.DoneReceived, st.LocalInvs, st.RemoteInvalidated)
				}
				faults(p.req).suppressDone = false
				if r := p.callGuarded(Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead, Tag: 2}); r.Err != nil {
					t.Fatalf("after the RDMA_DONE: %v", r.Err)
				}
				stale(t, p, key)
			})
		}
	}
}

// Item 8: the credit value of a message whose direction cannot be told (RFC 8167 section
// 4.1: undecodable, or an RDMA_NOMSG whose Position Zero Read chunk cannot be pulled) is
// ignored, by the responder (no larger grant, no receives posted for it) and by the requester
// (its credits stay what the last reply granted).
func TestUnknownDirectionCreditIgnored(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.Credits, sc.Credits = 2, 64
	rc.ResponderRead, sc.ResponderRead = true, true
	p := newPair(t, rc, sc)
	if r := p.call(p.req, Call{Proc: benchprog.ProcNull}); r.Err != nil {
		t.Fatal(r.Err)
	}
	granted, target := p.rsp.sv.granted, p.rsp.recvTarget
	for _, tc := range []struct {
		name  string
		h     wire.Header
		patch func([]byte)
	}{
		// A Read list discriminator of 7.
		{"undecodable", wire.Header{XID: 1, Vers: wire.Version, Credit: 50, Proc: wire.ProcMsg}, func(b []byte) { binary.BigEndian.PutUint32(b[16:], 7) }},
		{"unpullable", wire.Header{XID: 2, Vers: wire.Version, Credit: 50, Proc: wire.ProcNoMsg,
			ReadList: []wire.ReadSegment{{Position: 0, Segment: wire.Segment{Handle: 1, Length: 1 << 30, Offset: 0}}}}, func([]byte) {}},
	} {
		// The RDMA_ERROR answer names no call of the requester's: a stray reply there.
		strays := p.req.stats.StrayReplies
		rawSendHeader(t, p.req, &tc.h, 0, nil, tc.patch)
		p.until("the RDMA_ERROR", func() bool { return p.req.stats.StrayReplies > strays || p.rsp.Err() != nil })
		if p.rsp.sv.granted != granted || p.rsp.recvTarget != target {
			t.Errorf("%s message with credit 50: responder grants %d with %d receives, want %d with %d", tc.name, p.rsp.sv.granted, p.rsp.recvTarget, granted, target)
		}
	}

	credits := p.req.cl.credits
	// The responder's reply arrives unpullable with a credit value of 1.
	faults(p.rsp).mangleReply = func(b []byte) {
		binary.BigEndian.PutUint32(b[8:], 1)
		binary.BigEndian.PutUint32(b[28:], 1<<30)
	}
	r := p.callGuarded(Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead, Tag: 3})
	if !errors.Is(r.Err, ErrBadReply) {
		t.Fatalf("unpullable reply: %v, want ErrBadReply", r.Err)
	}
	if p.req.cl.credits != credits {
		t.Errorf("unpullable reply with credit 1: requester's credits %d, want %d", p.req.cl.credits, credits)
	}
}

// rpcNullReply is an accepted SUCCESS reply to xid with no results.
func rpcNullReply(xid uint32) []byte {
	b := make([]byte, 64)
	return b[:putReply(b, &oncrpc.Reply{XID: xid, Stat: oncrpc.Accepted, Accept: oncrpc.Success})]
}

// busyXID is the XID of the requester's one outstanding call.
func busyXID(t *testing.T, c *Conn) uint32 {
	t.Helper()
	for i := range c.cl.slots {
		if s := &c.cl.slots[i]; s.state == slotBusy && s.waits&waitReply != 0 {
			return s.xid
		}
	}
	t.Fatal("no call outstanding")
	return 0
}

// Item 9: replies the requester must refuse, each failing its RPC with ErrBadReply that says
// what was wrong while the connection goes on: an RDMA_MSG reply with a Read list or a
// non-empty Reply chunk (as Linux's rpcrdma_decode_msg), a Reply chunk whose returned length
// exceeds the length the call offered, and a reply in a responder-provided Read chunk when
// the extension was not negotiated.
func TestReplyValidation(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			cfg := testCfg(1024)
			p := newPairAt(t, w.addr, cfg, cfg)
			// Forged replies: the call is submitted, and this reply sent by the test before
			// the responder sees the call (the responder's own reply is then a stray).
			for _, tc := range []struct {
				name string
				h    wire.Header
			}{
				{"RDMA_MSG with a Read list", wire.Header{Vers: wire.Version, Credit: 8, Proc: wire.ProcMsg,
					ReadList: []wire.ReadSegment{{Position: 24, Segment: wire.Segment{Handle: 1, Length: 8, Offset: 4096}}}}},
				{"RDMA_MSG with a non-empty Reply chunk", wire.Header{Vers: wire.Version, Credit: 8, Proc: wire.ProcMsg,
					HasReply: true, Reply: []wire.Segment{{Handle: 1, Length: 8, Offset: 4096}}}},
			} {
				if err := p.req.Submit(Call{Proc: benchprog.ProcNull, Tag: 4}); err != nil {
					t.Fatal(err)
				}
				tc.h.XID = busyXID(t, p.req)
				rawSendHeader(t, p.rsp, &tc.h, 0, rpcNullReply(tc.h.XID))
				p.got = p.got[:0]
				p.until("the RPC's result", func() bool { return len(p.got) > 0 || p.req.Err() != nil })
				if err := p.req.Err(); err != nil {
					t.Fatalf("%s: the connection broke: %v", tc.name, err)
				}
				if r := p.got[0]; !errors.Is(r.Err, ErrBadReply) || r.Err == ErrBadReply {
					t.Errorf("%s: %v, want ErrBadReply with what was wrong", tc.name, r.Err)
				}
				if r := p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: 3000}); r.Err != nil {
					t.Fatalf("after %s: %v", tc.name, r.Err)
				}
			}

			// The returned Reply chunk claims 4 bytes more than the call offered (still
			// within the buffer behind it).
			faults(p.rsp).mangleReply = func(b []byte) {
				binary.BigEndian.PutUint32(b[len(b)-12:], binary.BigEndian.Uint32(b[len(b)-12:])+4)
			}
			r := p.callGuarded(Call{Proc: benchprog.ProcEcho, Size: 500, Class: rpcproto.ClassReplyChunk, Tag: 5})
			var re *ReplyError
			if !errors.As(r.Err, &re) || re != errReplyReplyLen {
				t.Errorf("Reply chunk longer than offered: %v, want %v", r.Err, errReplyReplyLen)
			}
			if r := p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: 3000}); r.Err != nil {
				t.Fatalf("after the long Reply chunk: %v", r.Err)
			}
		})
	}
}

// Item 9, the last case: a responder that answers in a responder-provided Read chunk although
// the requester did not enable them fails that RPC, not the connection; the requester still
// notifies pull completion (the draft's section 4.1.3 asks it of a requester that does not
// support such chunks).
func TestResponderReadNotNegotiated(t *testing.T) {
	for _, w := range wires {
		for _, reverse := range []int{0, 4} {
			t.Run(fmt.Sprintf("%s/reverse=%d", w.name, reverse), func(t *testing.T) {
				rc, sc := testCfg(1024), testCfg(1024)
				rc.ReverseCredits, sc.ReverseCredits = reverse, reverse
				sc.ResponderRead = true
				p := newPairAt(t, w.addr, rc, sc)
				if p.req.params.ResponderRead {
					t.Fatal("responder Read chunks negotiated with only the responder enabling them")
				}
				// A responder that uses them anyway.
				p.rsp.params.ResponderRead = true
				p.rsp.sv.awaitCap = 8
				faults(p.req).mangle = shrinkReplyChunk(100)
				r := p.callGuarded(Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassReplyChunk, Tag: 6})
				if err := p.req.Err(); err != nil {
					t.Fatalf("the connection broke: %v", err)
				}
				if p.rsp.stats.Replies.ResponderRead != 1 {
					t.Fatalf("the responder sent %d replies in a Read chunk, want 1", p.rsp.stats.Replies.ResponderRead)
				}
				if !errors.Is(r.Err, ErrBadReply) || r.Err == ErrBadReply {
					t.Errorf("reply in a responder-provided Read chunk not negotiated: %v, want ErrBadReply saying so", r.Err)
				}
				if p.req.stats.DoneSent != 1 {
					t.Errorf("%d RDMA_DONE sent, want 1 (the draft's section 4.1.3)", p.req.stats.DoneSent)
				}
				if r := p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: 3000}); r.Err != nil {
					t.Fatalf("after it: %v", r.Err)
				}
			})
		}
	}
}

// doneInvCase is a pairing of memory modes for RDMA_DONE by Send With Invalidate: the
// requester uses it only when both ends set the R bit, which each does only with windows.
type doneInvCase struct {
	req, rsp MemoryMode
}

func (c doneInvCase) name() string { return "req=" + c.req.String() + "/rsp=" + c.rsp.String() }
func (c doneInvCase) inv() bool    { return c.req == MemoryWindows && c.rsp == MemoryWindows }

var doneInvCases = []doneInvCase{
	{MemoryWindows, MemoryWindows}, {MemoryWindows, MemoryPreregistered},
	{MemoryPreregistered, MemoryWindows}, {MemoryPreregistered, MemoryPreregistered},
}

// doneInvCfgs are the two ends' configs of c: the R bit asked for on both, DoneInvalidate on
// the requester.
func doneInvCfgs(c doneInvCase) (rc, sc Config) {
	rc, sc = testCfg(1024), testCfg(1024)
	rc.Memory, sc.Memory = c.req, c.rsp
	rc.RemoteInvalidate, sc.RemoteInvalidate = true, true
	rc.ResponderRead, sc.ResponderRead = true, true
	rc.DoneInvalidate = true
	return rc, sc
}

// Item 1, both ends of this code: with Config.DoneInvalidate the requester sends RDMA_DONE by
// Send With Invalidate of the reply's Read chunk key when both ends set R, a plain Send
// otherwise; the responder skips its LOCAL_INV for the invalidated window, and the key is
// dead either way.
func TestDoneInvalidate(t *testing.T) {
	for _, w := range wires {
		for _, tc := range doneInvCases {
			t.Run(w.name+"/"+tc.name(), func(t *testing.T) {
				rc, sc := doneInvCfgs(tc)
				p := newPairAt(t, w.addr, rc, sc)
				sv := &p.rsp.sv
				free := len(sv.free)
				for k := range 3 {
					r := p.callGuarded(Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead, Tag: uint64(k + 1)})
					if r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
						t.Fatalf("call %d: %+v", k, r)
					}
				}
				p.until("the chunks' release", func() bool { return len(sv.free) == free || p.rsp.Err() != nil })
				if err := p.rsp.Err(); err != nil {
					t.Fatalf("the responder broke: %v", err)
				}
				want := uint64(0)
				if tc.inv() {
					want = 3
				}
				rs := p.rsp.stats
				if got := p.req.stats.SendInv.Count; got != want {
					t.Errorf("requester sent %d RDMA_DONE by Send With Invalidate, want %d", got, want)
				}
				if rs.DoneReceived != 3 || rs.LocalInvs != 3-want {
					t.Errorf("responder: RDMA_DONE received %d, local invalidations %d; want 3, %d", rs.DoneReceived, rs.LocalInvs, 3-want)
				}
				if tc.inv() && rs.RemoteInvalidated != 3 {
					t.Errorf("responder: %d windows invalidated remotely, want 3", rs.RemoteInvalidated)
				}
				var key uint32
				for i := range sv.ctxs {
					if k := sv.ctxs[i].mwKey; k != 0 {
						key = k
					}
				}
				if key == 0 {
					t.Fatal("no reply went through a window")
				}
				stale(t, p, key)
			})
		}
	}
}

// Item 1 across processes, over the soft provider's TCP wire: a requester process sends
// RDMA_DONE by Send With Invalidate to this responder, and this requester to a responder
// process, in every pairing of memory modes.
func TestProcessDoneInvalidate(t *testing.T) {
	for _, tc := range doneInvCases {
		want := uint64(0)
		if tc.inv() {
			want = 1
		}
		t.Run("peer-requester/"+tc.name(), func(t *testing.T) {
			rc, sc := doneInvCfgs(tc)
			sc.DoneTimeout = 2 * hangGuard // only the RDMA_DONE may release the chunk
			p := startPeer(t, "req", rc, sc)
			c := p.local
			call := fmt.Sprintf("CALL %d 3000 %d", benchprog.ProcEcho, rpcproto.ClassResponderRead)
			if got := p.do(call, "RES"); got != fmt.Sprintf("RES ok %d", rpcproto.ClassResponderRead) {
				t.Fatal(got)
			}
			var res [4]Result
			for deadline := time.Now().Add(hangGuard); c.stats.DoneReceived == 0 || c.sv.serving > 0 || len(c.sv.free) != len(c.sv.ctxs); {
				if _, err := c.Progress(res[:]); err != nil {
					t.Fatalf("the responder broke: %v", err)
				}
				if time.Now().After(deadline) {
					t.Fatal("the chunk was never released")
				}
			}
			if st := c.stats; st.RemoteInvalidated != want || st.LocalInvs != 1-want {
				t.Errorf("responder: %d windows invalidated remotely, %d locally; want %d, %d", st.RemoteInvalidated, st.LocalInvs, want, 1-want)
			}
			if got := p.do(call, "RES"); got != fmt.Sprintf("RES ok %d", rpcproto.ClassResponderRead) {
				t.Fatalf("second call: %s", got)
			}
		})
		t.Run("peer-responder/"+tc.name(), func(t *testing.T) {
			rc, sc := doneInvCfgs(tc)
			p := startPeer(t, "rsp", sc, rc)
			pr := &pair{t: t, req: p.local}
			for k := range 2 {
				r := pr.callRemote(p, Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead, Tag: uint64(k + 1)})
				if r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
					t.Fatalf("call %d: %+v", k, r)
				}
			}
			if got := p.local.stats.SendInv.Count; got != 2*want {
				t.Errorf("requester sent %d RDMA_DONE by Send With Invalidate, want %d", got, 2*want)
			}
		})
	}
}

// Item 11, what header.go says: an RDMA_DONE that names no reply waiting for it is dropped,
// never answered, whether responder-provided Read chunks were negotiated or not.
func TestStrayDoneDropped(t *testing.T) {
	for _, rr := range []bool{false, true} {
		t.Run(fmt.Sprintf("responderRead=%v", rr), func(t *testing.T) {
			cfg := testCfg(1024)
			cfg.ResponderRead = rr
			p := newPair(t, cfg, cfg)
			if r := p.call(p.req, Call{Proc: benchprog.ProcNull}); r.Err != nil {
				t.Fatal(r.Err)
			}
			h := newHeader(wire.Limits{})
			h.XID, h.Vers, h.Credit, h.Proc = 12345, wire.Version, 8, wire.ProcDone
			rawSendHeader(t, p.req, h, 0, nil)
			p.until("the RDMA_DONE", func() bool { return p.rsp.stats.DoneStray == 1 || p.rsp.Err() != nil })
			if r := p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: 3000}); r.Err != nil {
				t.Fatal(r.Err)
			}
			if st := p.rsp.stats; st.ErrorsSent != 0 || p.req.stats.StrayReplies != 0 || p.req.stats.ErrorsReceived != 0 {
				t.Fatalf("stray RDMA_DONE answered: %d RDMA_ERROR sent, %d stray replies at the requester", st.ErrorsSent, p.req.stats.StrayReplies)
			}
		})
	}
}

// A call that finds no free context breaks the connection with ErrCreditOverrun: a burst
// beyond a grant of 1 whose replies are queued at once (so never more than the grant
// unanswered) is answered until the contexts, held until each reply's Send completes, run out.
func TestNoFreeContextBreaks(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.Credits, sc.Credits = 1, 1
	p := newPair(t, rc, sc)
	if r := p.call(p.req, Call{Proc: benchprog.ProcNull}); r.Err != nil {
		t.Fatal(r.Err)
	}
	sv := &p.rsp.sv
	n := len(sv.ctxs) + 1
	if sv.granted != 1 || len(sv.ctxs) < 2 || n > p.rsp.recvPosted {
		t.Fatalf("granted %d with %d contexts and %d receives posted: want 1, more, enough for %d calls", sv.granted, len(sv.ctxs), p.rsp.recvPosted, n)
	}
	served := p.rsp.stats.Replies.Total()
	// NULL calls sent in one burst, beyond the grant of 1: the responder handles them in one
	// poll, each holding a context until its reply Send completes.
	call := p.req.cl.rpc
	h := newHeader(wire.Limits{})
	for k := range n {
		call.XID, call.Proc = uint32(0x7000+k), benchprog.ProcNull
		b := make([]byte, 64)
		b = b[:putCall(b, &call)]
		h.XID, h.Vers, h.Credit, h.Proc = call.XID, wire.Version, 1, wire.ProcMsg
		rawSendHeader(t, p.req, h, 0, b)
	}
	p.until("the break", func() bool { return p.rsp.Err() != nil })
	if err := p.rsp.Err(); !errors.Is(err, ErrCreditOverrun) {
		t.Fatalf("%d calls at once, %d contexts: %v, want ErrCreditOverrun", n, len(sv.ctxs), err)
	}
	if got := p.rsp.stats.Replies.Total() - served; got != uint64(len(sv.ctxs)) {
		t.Fatalf("%d calls answered before the break, want %d (one per context, the grant is 1)", got, len(sv.ctxs))
	}
}

// Item 1, the reverse direction: the responder's RDMA_DONE for a reverse reply stays a plain
// Send, as reverse replies do (RFC 8167 gives the reverse direction no Send With Invalidate
// rule), even with DoneInvalidate on both ends.
func TestDoneInvalidateForwardOnly(t *testing.T) {
	rc, sc := doneInvCfgs(doneInvCase{MemoryWindows, MemoryWindows})
	sc.DoneInvalidate = true
	rc.ReverseCredits, sc.ReverseCredits = 4, 4
	p := newPair(t, rc, sc)
	if r := p.call(p.req, Call{Proc: benchprog.ProcNull}); r.Err != nil {
		t.Fatal(r.Err)
	}
	inv := p.rsp.stats.SendInv.Count
	if r := p.call(p.rsp, Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead}); r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
		t.Fatalf("%+v", r)
	}
	if p.rsp.stats.DoneSent != 1 || p.rsp.stats.SendInv.Count != inv {
		t.Fatalf("reverse RDMA_DONE: %d sent, %d by Send With Invalidate; want 1, 0", p.rsp.stats.DoneSent, p.rsp.stats.SendInv.Count-inv)
	}
}

// What Config.DoneInvalidate warns of: an RDMA_DONE by Send With Invalidate that arrives
// after DoneTimeout released the chunk names a dead key, and the responder's device fails
// the receive, which breaks the connection.
func TestLateDoneInvalidateBreaks(t *testing.T) {
	rc, sc := doneInvCfgs(doneInvCase{MemoryWindows, MemoryWindows})
	sc.DoneTimeout = 20 * time.Millisecond
	p := newPair(t, rc, sc)
	sv := &p.rsp.sv
	faults(p.req).suppressDone = true
	if r := p.callGuarded(Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead, Tag: 1}); r.Err != nil {
		t.Fatal(r.Err)
	}
	x := &sv.ctxs[sv.waiting[0]]
	key, xid := x.mwKey, x.hdr.XID
	p.until("DoneTimeout", func() bool { return p.rsp.stats.DoneTimeouts == 1 && p.rsp.stats.LocalInvs == 1 })
	h := newHeader(wire.Limits{})
	h.XID, h.Vers, h.Credit, h.Proc = xid, wire.Version, 8, wire.ProcDone
	rawSendHeader(t, p.req, h, key, nil)
	p.until("the break", func() bool { return p.rsp.Err() != nil })
	if err := p.rsp.Err(); !errors.Is(err, datapath.ErrBroken) {
		t.Fatalf("late RDMA_DONE by Send With Invalidate: %v, want a broken connection", err)
	}
}
