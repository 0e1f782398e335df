package rpcrdma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
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
			g := checkGrants(p.rsp)
			calls := make([]Call, 3000)
			for i := range calls {
				calls[i] = Call{Proc: benchprog.ProcEcho, Size: 64 + i%512, Class: rpcproto.ClassReplyChunk, Tag: uint64(i)}
			}
			rs, _ := p.run(calls, nil)
			for _, r := range rs {
				if r.Err != nil {
					t.Fatalf("call %d: %v", r.Tag, r.Err)
				}
			}
			if g.checks == 0 {
				t.Fatal("no reply post was checked")
			}
			if g.violations > 0 {
				t.Fatalf("%d of %d reply posts carried a grant not backed by receives; first: %s", g.violations, g.checks, g.first)
			}
		})
	}
}

// grantCheck counts, at every post of a send batch holding a reply, whether the grant the
// reply carries is backed by receives posted (plus calls in service): item 1's invariant.
type grantCheck struct {
	checks, violations int
	first              string
}

func checkGrants(c *Conn) *grantCheck {
	g := &grantCheck{}
	faults(c).beforeSend = func() {
		replies := 0
		for _, wr := range c.sendWRs {
			if k := wr.ID >> wrKindShift; k == kindReplySend || k == kindErrSend {
				replies++
			}
		}
		if replies == 0 {
			return
		}
		g.checks++
		have := c.recvPosted + c.sv.serving
		need := int(c.stats.Granted) + c.sv.pendingDone + c.cl.outstanding
		if have < need {
			g.violations++
			if g.first == "" {
				g.first = fmt.Sprintf("granted %d (+%d RDMA_DONE, +%d replies) with %d receives posted and %d calls in service",
					c.stats.Granted, c.sv.pendingDone, c.cl.outstanding, c.recvPosted, c.sv.serving)
			}
		}
	}
	return g
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
		if n := p.req.stats.SendInv.Count; n != 0 {
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
		if p.rsp.stats.SendInv.Count != 1 {
			t.Fatalf("forward reply: %d Send With Invalidate, want 1", p.rsp.stats.SendInv.Count)
		}
		for _, c := range []Call{{Proc: benchprog.ProcSink, Size: 5000}, {Proc: benchprog.ProcSource, Size: 5000}, {Proc: benchprog.ProcEcho, Size: 5000}} {
			if r := p.call(p.rsp, c); r.Err != nil {
				t.Fatalf("reverse %s: %v", procNames[c.Proc], r.Err)
			}
		}
		if n := p.req.stats.SendInv.Count; n != 0 {
			t.Fatalf("reverse replies used Send With Invalidate %d times, want 0", n)
		}
		if st := p.rsp.stats; st.LocalInvs != st.Binds {
			t.Fatalf("responder bound %d windows and invalidated %d itself", st.Binds, st.LocalInvs)
		}
	})
}

// Item 3: RDMA_ERROR carries the failing request's rdma_vers (RFC 8166 section 4.5; Linux's
// svc_rdma_send_error_msg copies it), and an RDMA_ERROR in another version is never
// answered (no error loop between two endpoints).
func TestErrorEchoesVersion(t *testing.T) {
	for _, vers := range []uint32{0, 2, 7} {
		b := make([]byte, wire.MinHeaderSize)
		wire.PutNoChunks(b, 0x1234, vers, 8, wire.ProcMsg)
		h, r := newHeader(wire.Limits{}), newHeader(wire.Limits{})
		_, err := h.Decode(b, &wire.Limits{})
		if !h.ErrorReply(err, 5, r) {
			t.Fatalf("version %d: no RDMA_ERROR for %v", vers, err)
		}
		if r.Vers != vers || r.Err != wire.ErrCodeVers || r.XID != 0x1234 {
			t.Errorf("version %d: RDMA_ERROR %+v, want rdma_vers %d, ERR_VERS", vers, r, vers)
		}
		// That RDMA_ERROR, received, is not answered.
		out := make([]byte, 64)
		n, _ := r.Encode(out)
		if _, err := h.Decode(out[:n], &wire.Limits{}); !errors.Is(err, wire.ErrVersion) {
			t.Fatalf("version %d: decoding its RDMA_ERROR: %v", vers, err)
		}
		if h.ErrorReply(err, 5, r) {
			t.Errorf("version %d: an RDMA_ERROR of that version would be answered", vers)
		}
	}
	p := newPair(t, testCfg(4096), testCfg(4096))
	faults(p.req).mangle = func(b []byte) { binary.BigEndian.PutUint32(b[4:], 2) }
	if r := p.callGuarded(Call{Proc: benchprog.ProcNull, Tag: 1}); !errors.Is(r.Err, ErrVersionRejected) {
		t.Fatalf("version 2 call: %v, want ErrVersionRejected", r.Err)
	}
	if r := p.call(p.req, Call{Proc: benchprog.ProcNull}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if p.rsp.stats.ErrorsSent != 1 || p.req.stats.ErrorsSent != 0 {
		t.Fatalf("RDMA_ERROR sent: responder %d, requester %d; want 1, 0", p.rsp.stats.ErrorsSent, p.req.stats.ErrorsSent)
	}
}

// Offsets of the first segment's length in the transport headers of this requester's calls
// that offer one reply resource (RFC 8166 section 4.2): a Reply chunk's sits 12 bytes from
// the end, a Write chunk's 20 (its offset, then the list's end and the empty Reply chunk).
func shrinkReplyChunk(to uint32) func([]byte) {
	return func(b []byte) { binary.BigEndian.PutUint32(b[len(b)-12:], to) }
}

func shrinkWriteChunk(to uint32) func([]byte) {
	return func(b []byte) { binary.BigEndian.PutUint32(b[len(b)-20:], to) }
}

// Item 4: a reply its Write or Reply chunk cannot hold goes inline if it fits, else in a
// responder-provided Read chunk when both ends enabled them (the reliable-reply draft's
// section 4.1.1 MUST), else RDMA_ERROR ERR_CHUNK.
func TestReplyResourcesTooSmall(t *testing.T) {
	for _, w := range wires {
		for _, rr := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/responderRead=%v", w.name, rr), func(t *testing.T) {
				cfg := testCfg(1024)
				cfg.ResponderRead = rr
				p := newPairAt(t, w.addr, cfg, cfg)
				long := rpcproto.ClassResponderRead
				if !rr {
					long = 0
				}
				for _, tc := range []struct {
					name   string
					call   Call
					mangle func([]byte)
					want   rpcproto.Class // 0: ERR_CHUNK
				}{
					{"ECHO 500, Reply chunk 100", Call{Proc: benchprog.ProcEcho, Size: 500, Class: rpcproto.ClassReplyChunk}, shrinkReplyChunk(100), rpcproto.ClassShort},
					{"SOURCE 500, Write chunk 100", Call{Proc: benchprog.ProcSource, Size: 500, Class: rpcproto.ClassWriteChunk}, shrinkWriteChunk(100), rpcproto.ClassShort},
					{"ECHO 3000, Reply chunk 100", Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassReplyChunk}, shrinkReplyChunk(100), long},
					{"SOURCE 3000, Write chunk 100", Call{Proc: benchprog.ProcSource, Size: 3000, Class: rpcproto.ClassWriteChunk}, shrinkWriteChunk(100), long},
				} {
					overruns := p.rsp.stats.ReplyOverruns
					faults(p.req).mangle = tc.mangle
					tc.call.Tag = 7
					r := p.callGuarded(tc.call)
					switch {
					case tc.want == 0:
						if !errors.Is(r.Err, ErrChunkRejected) || p.rsp.stats.ReplyOverruns != overruns+1 {
							t.Errorf("%s: %v, want ErrChunkRejected (an overrun)", tc.name, r.Err)
						}
					case r.Err != nil || r.ReplyClass != tc.want:
						t.Errorf("%s: %v, reply class %s, want %s", tc.name, r.Err, r.ReplyClass, tc.want)
					case len(r.Data) != tc.call.Size:
						t.Errorf("%s: %d bytes of data, want %d", tc.name, len(r.Data), tc.call.Size)
					}
					if r := p.call(p.req, Call{Proc: benchprog.ProcSource, Size: 5000}); r.Err != nil {
						t.Fatalf("after %s: %v", tc.name, r.Err)
					}
				}
			})
		}
	}
}

// badReplyModes are the memory modes and R bits the bad-reply cases run in.
var badReplyModes = []struct {
	name string
	mem  MemoryMode
	inv  bool
}{
	{"preregistered", MemoryPreregistered, false},
	{"windows", MemoryWindows, false},
	{"windows+R", MemoryWindows, true},
}

// Item 5: a reply whose transport header cannot be decoded, or whose Position Zero Read
// chunk cannot be pulled, fails the RPC its XID names at once with ErrBadReply, and the
// requester sends no RDMA_ERROR back (XIDs are per direction: it could end an unrelated
// reverse RPC of the responder). In every memory mode, with and without the R bit: a bad
// reply that came by Send With Invalidate costs that RPC, not the connection.
func TestBadReplyFailsRPC(t *testing.T) {
	for _, w := range wires {
		for _, m := range badReplyModes {
			t.Run(w.name+"/"+m.name, func(t *testing.T) {
				cfg := testCfg(1024)
				cfg.ResponderRead = true
				cfg.Memory, cfg.RemoteInvalidate = m.mem, m.inv
				p := newPairAt(t, w.addr, cfg, cfg)
				for _, tc := range []struct {
					name   string
					call   Call
					mangle func([]byte)
				}{
					{"bad discriminator", Call{Proc: benchprog.ProcNull}, func(b []byte) { binary.BigEndian.PutUint32(b[16:], 7) }},
					{"unknown procedure", Call{Proc: benchprog.ProcEcho, Size: 10}, func(b []byte) { binary.BigEndian.PutUint32(b[12:], 9) }},
					// Replies to calls with chunks: Send With Invalidate of one of their windows.
					{"bad discriminator, Reply chunk", Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassReplyChunk}, func(b []byte) { binary.BigEndian.PutUint32(b[16:], 7) }},
					{"unknown procedure, Write chunk", Call{Proc: benchprog.ProcSource, Size: 3000}, func(b []byte) { binary.BigEndian.PutUint32(b[12:], 9) }},
					{"RDMA_ERROR with an unknown code", Call{Proc: benchprog.ProcNull}, func(b []byte) {
						binary.BigEndian.PutUint32(b[12:], uint32(wire.ProcError))
						binary.BigEndian.PutUint32(b[16:], 9)
					}},
					{"RDMA_MSG with a Reply chunk discriminator of 2", Call{Proc: benchprog.ProcSource, Size: 10}, func(b []byte) { binary.BigEndian.PutUint32(b[24:], 2) }},
					// RDMA_NOMSG, Read list: present, position, handle, length, ...
					{"unpullable Position Zero Read chunk", Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead},
						func(b []byte) { binary.BigEndian.PutUint32(b[28:], 1<<30) }},
				} {
					errsSent, errsRecv := p.req.stats.ErrorsSent, p.rsp.stats.ErrorsReceived
					faults(p.rsp).mangleReply = tc.mangle
					tc.call.Tag = 9
					r := p.callGuarded(tc.call)
					if !errors.Is(r.Err, ErrBadReply) || r.Err == ErrBadReply {
						t.Errorf("%s: %v, want ErrBadReply with what was wrong", tc.name, r.Err)
					}
					if p.req.stats.ErrorsSent != errsSent || p.rsp.stats.ErrorsReceived != errsRecv {
						t.Errorf("%s: the requester answered the reply with RDMA_ERROR", tc.name)
					}
					if r := p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: 3000}); r.Err != nil {
						t.Fatalf("after %s: %v", tc.name, r.Err)
					}
				}
			})
		}
	}
}

// Item 8: a reply sent in a responder-provided Read chunk returns the call's Write list,
// every chunk at length zero (RFC 8166 section 3.4.6).
func TestResponderReadEchoesWriteList(t *testing.T) {
	cfg := testCfg(1024)
	cfg.ResponderRead = true
	p := newPair(t, cfg, cfg)
	var sent []byte
	faults(p.rsp).mangleReply = func(b []byte) { sent = append([]byte(nil), b...) }
	faults(p.req).mangle = shrinkWriteChunk(100)
	r := p.callGuarded(Call{Proc: benchprog.ProcSource, Size: 3000, Tag: 1})
	if r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
		t.Fatalf("%v, reply class %s, want %s", r.Err, r.ReplyClass, rpcproto.ClassResponderRead)
	}
	h := newHeader(wire.Limits{})
	if _, err := h.Decode(sent, &DefaultEndpointLimits); err != nil {
		t.Fatal(err)
	}
	if h.Proc != wire.ProcNoMsg || len(h.ReadList) != 1 || len(h.WriteCounts) != 1 || h.WriteCounts[0] != 1 || h.WriteList[0].Length != 0 {
		t.Fatalf("reply header %+v: want RDMA_NOMSG, one Read segment, the Write list echoed with length 0", h)
	}
}

// Item 6: a call whose rdma_xid differs from its RPC XID is an XDR error (RFC 8166 section
// 4.5.2): ERR_CHUNK, for inline calls and for calls pulled from a Position Zero Read chunk.
func TestXIDMismatch(t *testing.T) {
	p := newPair(t, testCfg(1024), testCfg(1024))
	for _, c := range []Call{
		{Proc: benchprog.ProcNull},
		{Proc: benchprog.ProcSink, Size: 3000},                                   // Read chunk
		{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassPosZeroRead}, // whole call pulled
	} {
		// Flip a bit of the transport XID that is not the slot index, and expect the
		// answer under that XID.
		faults(p.req).mangle = func(b []byte) { binary.BigEndian.PutUint32(b, binary.BigEndian.Uint32(b)^1<<31) }
		if err := p.req.Submit(c); err != nil {
			t.Fatal(err)
		}
		for i := range p.req.cl.slots {
			if s := &p.req.cl.slots[i]; s.state == slotBusy {
				s.xid ^= 1 << 31
			}
		}
		p.got = p.got[:0]
		p.until("the RPC's result", func() bool { return len(p.got) > 0 })
		r := p.got[0]
		if !errors.Is(r.Err, ErrChunkRejected) {
			t.Errorf("%s %d: %v, want ErrChunkRejected", procNames[c.Proc], c.Size, r.Err)
		}
	}
	if r := p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: 3000}); r.Err != nil {
		t.Fatal(r.Err)
	}
}

// Item 7: a responder keeps the receive it reserved for a reply's RDMA_DONE past
// DoneTimeout, until the RDMA_DONE arrives or a second, longer bound passes, so that a late
// RDMA_DONE never takes a receive the grant promised to a call.
func TestLateDoneKeepsReservation(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			rc, sc := testCfg(1024), testCfg(1024)
			rc.ResponderRead, sc.ResponderRead = true, true
			sc.Credits = 1                         // one reply may wait for RDMA_DONE
			sc.DoneTimeout = 50 * time.Millisecond // the late RDMA_DONE comes within 4×
			p := newPairAt(t, w.addr, rc, sc)
			sv := &p.rsp.sv
			rr := Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead, Tag: 1}

			faults(p.req).suppressDone = true
			if r := p.callGuarded(rr); r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
				t.Fatalf("%+v", r)
			}
			xid := sv.ctxs[sv.waiting[0]].hdr.XID
			p.until("DoneTimeout", func() bool { return p.rsp.stats.DoneTimeouts == 1 })
			if sv.pendingDone != 1 {
				t.Fatalf("after DoneTimeout %d receives reserved for RDMA_DONE, want 1 until it arrives", sv.pendingDone)
			}
			// The reservation is taken: the next reply that needs one cannot have it.
			if r := p.callGuarded(rr); !errors.Is(r.Err, ErrChunkRejected) {
				t.Fatalf("responder-read reply with the RDMA_DONE receive still reserved: %v, want ErrChunkRejected", r.Err)
			}
			// The late RDMA_DONE arrives: the reservation ends, it is no stray.
			faults(p.req).suppressDone = false
			p.req.cl.sendDone(nil, xid, 0, false)
			p.until("late RDMA_DONE", func() bool { return sv.pendingDone == 0 })
			if st := p.rsp.stats; st.DoneStray != 0 || st.DoneLate != 1 {
				t.Fatalf("late RDMA_DONE counted as %d stray, %d late; want 0, 1", st.DoneStray, st.DoneLate)
			}
			if r := p.callGuarded(rr); r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
				t.Fatalf("after the late RDMA_DONE: %+v", r)
			}
			p.until("RDMA_DONE", func() bool { return sv.pendingDone == 0 })
			// No RDMA_DONE at all: the reservation ends at the second bound.
			faults(p.req).suppressDone = true
			start := time.Now()
			if r := p.callGuarded(rr); r.Err != nil {
				t.Fatal(r.Err)
			}
			p.until("the reservation's end", func() bool { return sv.pendingDone == 0 })
			if d := time.Since(start); d < doneReserve*sc.DoneTimeout {
				t.Fatalf("reservation dropped after %v, before %d × DoneTimeout", d, doneReserve)
			}
		})
	}
}
