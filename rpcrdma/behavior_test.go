package rpcrdma

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// TestInlineBoundary: a call whose whole message (transport header + RPC message) is
// threshold-1, threshold or threshold+1 bytes before XDR padding goes inline for the first
// two (padded to exactly the threshold) and not for the third; the same for replies, decided
// by the requester (Write chunk offered) and by the responder (no reply resources offered).
func TestInlineBoundary(t *testing.T) {
	for _, th := range []int{1024, 4096, 65536} {
		t.Run(fmt.Sprint(th), func(t *testing.T) {
			p := newPair(t, testCfg(th), testCfg(th))
			// ECHO call: 28 (transport) + 40 (RPC call header) + 4 (length) + data.
			callFixed := wire.MinHeaderSize + callHeaderSize + 4
			for _, d := range []int{-1, 0, 1} {
				size := th - callFixed + d
				before := p.req.stats.Send.Bytes
				r := p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: size})
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				sent := p.req.stats.Send.Bytes - before
				if d <= 0 {
					if r.CallClass != rpcproto.ClassShort || sent != uint64(th) {
						t.Errorf("ECHO message of %d bytes: class %s, %d bytes sent, want short, %d", th+d, r.CallClass, sent, th)
					}
				} else if r.CallClass != rpcproto.ClassPosZeroRead {
					t.Errorf("ECHO message of %d bytes: class %s, want pos0-read", th+d, r.CallClass)
				}
			}
			// SOURCE reply: 28 (transport) + 24 (RPC reply header) + 8 (stat, length) + data.
			replyFixed := wire.MinHeaderSize + replyHeaderSize + 8
			for _, force := range []rpcproto.Class{rpcproto.ClassAuto, rpcproto.ClassResponderRead} {
				p.rsp.cfg.ResponderRead, p.rsp.params.ResponderRead = true, true
				p.req.params.ResponderRead = true
				p.rsp.sv.awaitCap = 1
				for _, d := range []int{-1, 0, 1} {
					size := th - replyFixed + d
					before := p.rsp.stats.Send.Bytes
					r := p.call(p.req, Call{Proc: benchprog.ProcSource, Size: size, Class: force})
					if r.Err != nil {
						t.Fatal(r.Err)
					}
					sent := p.rsp.stats.Send.Bytes - before
					long := rpcproto.ClassWriteChunk
					if force == rpcproto.ClassResponderRead {
						long = rpcproto.ClassResponderRead
					}
					if d <= 0 {
						if r.ReplyClass != rpcproto.ClassShort || sent != uint64(th) {
							t.Errorf("%s: SOURCE reply of %d bytes: class %s, %d bytes sent, want short, %d", force, th+d, r.ReplyClass, sent, th)
						}
					} else if r.ReplyClass != long {
						t.Errorf("%s: SOURCE reply of %d bytes: class %s, want %s", force, th+d, r.ReplyClass, long)
					}
				}
			}
		})
	}
}

// TestCreditsNeverExceeded runs a long mixed workload at depth 64 and checks RFC 8166
// section 3.3.1 on both sides: one credit until the first reply, then never more calls
// outstanding than granted; the responder never holds more calls than it granted, and keeps
// at least that many receives posted.
func TestCreditsNeverExceeded(t *testing.T) {
	for _, grant := range []int{64, 13, 1} {
		t.Run(fmt.Sprint(grant), func(t *testing.T) {
			rc, sc := testCfg(4096), testCfg(4096)
			rc.Credits, sc.Credits = 64, grant
			rc.MaxPayload, sc.MaxPayload = 16<<10, 16<<10
			p := newPair(t, rc, sc)
			if err := p.req.Submit(Call{Proc: benchprog.ProcNull}); err != nil {
				t.Fatal(err)
			}
			if err := p.req.Submit(Call{Proc: benchprog.ProcNull}); !errors.Is(err, ErrNoCredit) {
				t.Fatalf("second call before any reply: %v, want ErrNoCredit", err)
			}
			procs := []Call{
				{Proc: benchprog.ProcNull},
				{Proc: benchprog.ProcEcho, Size: 100},
				{Proc: benchprog.ProcSink, Size: 9000},
				{Proc: benchprog.ProcSource, Size: 12000},
				{Proc: benchprog.ProcEcho, Size: 6000},
			}
			const total = 20000
			sent, got := 1, 0
			var done [64]Result
			for got < total+1 {
				for sent < total+1 {
					c := procs[sent%len(procs)]
					c.Tag = uint64(sent)
					if err := p.req.Submit(c); errors.Is(err, ErrNoCredit) {
						break
					} else if err != nil {
						t.Fatal(err)
					}
					sent++
					cl := &p.req.cl
					if cl.outstanding > int(cl.credits) || cl.outstanding > grant {
						t.Fatalf("%d calls outstanding with %d credits (granted at most %d)", cl.outstanding, cl.credits, grant)
					}
				}
				if _, err := p.rsp.Progress(done[:]); err != nil {
					t.Fatal(err)
				}
				if p.rsp.recvPosted < grant {
					t.Fatalf("responder has %d receives posted, granted %d", p.rsp.recvPosted, grant)
				}
				n, err := p.req.Progress(done[:])
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range done[:n] {
					if r.Err != nil {
						t.Fatalf("call %d: %v", r.Tag, r.Err)
					}
				}
				got += n
			}
			st, rs := p.req.stats, p.rsp.stats
			if st.MaxCredit != uint32(grant) || rs.Granted != uint32(grant) {
				t.Errorf("credit %d, granted %d, want %d", st.MaxCredit, rs.Granted, grant)
			}
			if st.MaxOutstanding != grant {
				t.Errorf("max outstanding %d, want the grant %d (the window was never filled)", st.MaxOutstanding, grant)
			}
			if rs.MaxServing > grant {
				t.Errorf("responder held %d calls, granted %d", rs.MaxServing, grant)
			}
			// Served counts only the replies whose Send is known complete.
			if st.Completed != total+1 || rs.Replies.Total() != total+1 || rs.Served > total+1 {
				t.Errorf("completed %d, replies %d, served %d", st.Completed, rs.Replies.Total(), rs.Served)
			}
		})
	}
}

// TestTransportErrors: a call with an unsupported version gets ERR_VERS, one with a
// malformed or unusable chunk list ERR_CHUNK; just that RPC fails and the connection goes
// on.
func TestTransportErrors(t *testing.T) {
	p := newPair(t, testCfg(4096), testCfg(4096))
	cases := []struct {
		name   string
		call   Call
		mangle func(b []byte)
		want   error
	}{
		{"version 2", Call{Proc: benchprog.ProcNull}, func(b []byte) { binary.BigEndian.PutUint32(b[4:], 2) }, ErrVersionRejected},
		{"bad discriminator", Call{Proc: benchprog.ProcNull}, func(b []byte) { binary.BigEndian.PutUint32(b[16:], 7) }, ErrChunkRejected},
		{"RDMA_MSGP", Call{Proc: benchprog.ProcNull}, func(b []byte) { binary.BigEndian.PutUint32(b[12:], 2) }, ErrChunkRejected},
		{"read position misaligned", Call{Proc: benchprog.ProcSink, Size: 100, Class: rpcproto.ClassReadChunk},
			func(b []byte) { binary.BigEndian.PutUint32(b[20:], 58) }, ErrChunkRejected},
		{"read position past the message", Call{Proc: benchprog.ProcSink, Size: 100, Class: rpcproto.ClassReadChunk},
			func(b []byte) { binary.BigEndian.PutUint32(b[20:], 60) }, ErrChunkRejected},
		{"read chunk too long", Call{Proc: benchprog.ProcSink, Size: 100, Class: rpcproto.ClassReadChunk},
			func(b []byte) { binary.BigEndian.PutUint32(b[28:], 1<<30) }, ErrChunkRejected},
	}
	for _, tc := range cases {
		faults(p.req).mangle = tc.mangle
		r := p.call(p.req, tc.call)
		if !errors.Is(r.Err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, r.Err, tc.want)
		}
		if r := p.call(p.req, Call{Proc: benchprog.ProcSink, Size: 5000}); r.Err != nil {
			t.Fatalf("after %s: %v", tc.name, r.Err)
		}
	}
	if p.rsp.stats.ErrorsSent != uint64(len(cases)) || p.req.stats.ErrorsReceived != uint64(len(cases)) {
		t.Errorf("errors sent %d, received %d", p.rsp.stats.ErrorsSent, p.req.stats.ErrorsReceived)
	}
}

// TestReplyOverrun: a reply larger than the reply resources the call offered gets
// RDMA_ERROR ERR_CHUNK, or with responder-provided Read chunks enabled on both ends, comes
// back in one.
func TestReplyOverrun(t *testing.T) {
	for _, rr := range []bool{false, true} {
		t.Run(fmt.Sprint("responderRead=", rr), func(t *testing.T) {
			cfg := testCfg(1024)
			cfg.ResponderRead = rr
			p := newPair(t, cfg, cfg)
			c := Call{Proc: benchprog.ProcSource, Size: 5000, Class: rpcproto.ClassShort}
			r := p.call(p.req, c)
			if rr {
				if r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead || len(r.Data) != 5000 {
					t.Fatalf("%+v", r)
				}
				return
			}
			if !errors.Is(r.Err, ErrChunkRejected) || p.rsp.stats.ReplyOverruns != 1 {
				t.Fatalf("%v, overruns %d", r.Err, p.rsp.stats.ReplyOverruns)
			}
			// A Reply chunk that is too small is an overrun too.
			faults(p.req).mangle = func(b []byte) { binary.BigEndian.PutUint32(b[len(b)-12:], 100) }
			r = p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassReplyChunk})
			if !errors.Is(r.Err, ErrChunkRejected) {
				t.Fatalf("short Reply chunk: %v", r.Err)
			}
			if r := p.call(p.req, Call{Proc: benchprog.ProcSource, Size: 5000}); r.Err != nil {
				t.Fatal(r.Err)
			}
		})
	}
}

// TestResponderReadDone: the responder releases a responder-provided Read chunk when
// RDMA_DONE arrives, or after DoneTimeout when none comes; after the timeout, in
// MemoryWindows mode, the chunk's key no longer works.
func TestResponderReadDone(t *testing.T) {
	for _, mem := range []MemoryMode{MemoryPreregistered, MemoryWindows} {
		for _, sendDone := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/done=%v", mem, sendDone), func(t *testing.T) {
				cfg := testCfg(1024)
				cfg.ResponderRead = true
				cfg.Memory = mem
				cfg.DoneTimeout = 30 * time.Millisecond
				p := newPair(t, cfg, cfg)
				faults(p.req).suppressDone = !sendDone
				free := len(p.rsp.sv.free)
				start := time.Now()
				r := p.call(p.req, Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead})
				if r.Err != nil || r.ReplyClass != rpcproto.ClassResponderRead {
					t.Fatalf("%+v", r)
				}
				var done [4]Result
				for len(p.rsp.sv.free) != free {
					p.rsp.Progress(done[:])
					p.req.Progress(done[:])
					if time.Since(start) > 5*time.Second {
						t.Fatal("responder never released the Read chunk")
					}
				}
				rs := p.rsp.stats
				if sendDone {
					if rs.DoneReceived != 1 || rs.DoneTimeouts != 0 || p.req.stats.DoneSent != 1 {
						t.Fatalf("done received %d, timeouts %d, sent %d", rs.DoneReceived, rs.DoneTimeouts, p.req.stats.DoneSent)
					}
				} else {
					if rs.DoneReceived != 0 || rs.DoneTimeouts != 1 {
						t.Fatalf("done received %d, timeouts %d", rs.DoneReceived, rs.DoneTimeouts)
					}
					if time.Since(start) < cfg.DoneTimeout {
						t.Fatal("released before the timeout")
					}
				}
				if mem == MemoryWindows {
					if p.rsp.stats.LocalInvs != 1 {
						t.Fatalf("responder local invalidations %d, want 1", p.rsp.stats.LocalInvs)
					}
					// A READ with the stale key now fails and breaks the connection.
					var key uint32
					for i := range p.rsp.sv.ctxs {
						if k := p.rsp.sv.ctxs[i].mwKey; k != 0 {
							key = k
						}
					}
					stale(t, p, key)
				}
			})
		}
	}
}

// stale checks that an RDMA READ by the requester with key fails with a remote access
// error: the window was invalidated.
func stale(t *testing.T, p *pair, key uint32) {
	t.Helper()
	// The window covered part of the responder's region; its first byte is as good an
	// address as any to show the key is dead.
	addr := p.rsp.region.MR().Addr()
	buf := p.req.sendPool.Get()
	wr := datapath.SendWR{ID: wrID(kindErrSend, buf.Index()), Op: datapath.OpRead, Flags: datapath.FlagSignaled,
		RemoteAddr: addr, RKey: key}
	wr.SGL = []datapath.SGE{buf.SGE(8)}
	if _, err := p.req.qp.PostSend([]datapath.SendWR{wr}); err != nil {
		t.Fatal(err)
	}
	var done [4]Result
	deadline := time.Now().Add(5 * time.Second)
	for p.req.Err() == nil && time.Now().Before(deadline) {
		p.req.Progress(done[:])
	}
	var se *datapath.StatusError
	if err := p.req.Err(); !errors.As(err, &se) || se.Status != datapath.StatusRemoteAccess || !errors.Is(err, datapath.ErrBroken) {
		t.Fatalf("READ with the invalidated key: %v, want remote access error", err)
	}
}

// TestRemoteInvalidation: with the R bit on both ends (MemoryWindows), the responder
// replies with Send With Invalidate for the call's reply-side chunk and the requester skips
// its own LOCAL_INV for it; with either end off, the requester invalidates everything itself.
func TestRemoteInvalidation(t *testing.T) {
	for _, tc := range []struct {
		req, rsp bool
		mem      MemoryMode
	}{{true, true, MemoryWindows}, {true, false, MemoryWindows}, {false, true, MemoryWindows}, {true, true, MemoryPreregistered}} {
		t.Run(fmt.Sprintf("req=%v/rsp=%v/%s", tc.req, tc.rsp, tc.mem), func(t *testing.T) {
			rc, sc := testCfg(1024), testCfg(1024)
			rc.Memory, sc.Memory = tc.mem, tc.mem
			rc.RemoteInvalidate, sc.RemoteInvalidate = tc.req, tc.rsp
			rc.ResponderRead, sc.ResponderRead = true, true
			p := newPair(t, rc, sc)
			on := tc.req && tc.rsp && tc.mem == MemoryWindows
			if got := p.req.Params().Inline.RemoteInvalidate; got != on {
				t.Fatalf("negotiated remote invalidation %v, want %v", got, on)
			}
			calls := []Call{
				{Proc: benchprog.ProcSource, Size: 5000},                                  // Write chunk: one window
				{Proc: benchprog.ProcSink, Size: 5000},                                    // Read chunk: one window
				{Proc: benchprog.ProcEcho, Size: 5000, Class: rpcproto.ClassReplyChunk},   // pos0 + Reply chunk: two
				{Proc: benchprog.ProcNull, Class: rpcproto.ClassShort},                    // none
				{Proc: benchprog.ProcSource, Size: 5000, Class: rpcproto.ClassReplyChunk}, // one
				// pos0 call; the reply comes in a responder-provided Read chunk, whose
				// RDMA_NOMSG invalidates the call's window: one
				{Proc: benchprog.ProcEcho, Size: 5000, Class: rpcproto.ClassResponderRead},
			}
			for _, c := range calls {
				if r := p.call(p.req, c); r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			st := p.req.stats
			switch {
			case tc.mem == MemoryPreregistered:
				if st.Binds != 0 || st.LocalInvs != 0 || st.RemoteInvalidated != 0 || p.rsp.stats.SendInv.Count != 0 {
					t.Fatalf("preregistered: %+v", st)
				}
			case on:
				if st.Binds != 6 || st.RemoteInvalidated != 5 || st.LocalInvs != 1 || p.rsp.stats.SendInv.Count != 5 {
					t.Fatalf("binds %d, remote %d, local %d, send-inv %d", st.Binds, st.RemoteInvalidated, st.LocalInvs, p.rsp.stats.SendInv.Count)
				}
			default:
				if st.Binds != 6 || st.RemoteInvalidated != 0 || st.LocalInvs != 6 || p.rsp.stats.SendInv.Count != 0 {
					t.Fatalf("binds %d, remote %d, local %d, send-inv %d", st.Binds, st.RemoteInvalidated, st.LocalInvs, p.rsp.stats.SendInv.Count)
				}
			}
		})
	}
}

// TestReverseInterleaved: the responder's reverse-direction calls (RFC 8167) run interleaved
// with forward calls on the same connection, each direction within its own credits.
func TestReverseInterleaved(t *testing.T) {
	rc, sc := testCfg(4096), testCfg(4096)
	rc.Credits, rc.ReverseCredits = 16, 3
	sc.Credits, sc.ReverseCredits = 16, 8
	p := newPair(t, rc, sc)
	if err := p.rsp.Submit(Call{Proc: benchprog.ProcNull}); !errors.Is(err, ErrReverseDisabled) {
		t.Fatalf("reverse call before the first forward call: %v", err)
	}
	var fwd, rev []Call
	for i := range 400 {
		fwd = append(fwd, Call{Proc: i % 4, Size: 100 + i*37, Tag: uint64(i)})
		rev = append(rev, Call{Proc: (i + 1) % 4, Size: 50 + i*41, Tag: uint64(i)})
	}
	fr, rr := p.run(fwd, rev)
	for _, rs := range [][]Result{fr, rr} {
		for _, r := range rs {
			if r.Err != nil {
				t.Fatalf("call %d: %v", r.Tag, r.Err)
			}
		}
	}
	if p.rsp.stats.MaxCredit != 3 || p.rsp.stats.MaxOutstanding > 3 {
		t.Errorf("reverse: credit %d, outstanding %d, want 3", p.rsp.stats.MaxCredit, p.rsp.stats.MaxOutstanding)
	}
	if p.req.stats.MaxCredit != 16 || p.req.stats.MaxServing > 3 || p.rsp.stats.MaxServing > 16 {
		t.Errorf("forward credit %d; requester served %d at once, responder %d", p.req.stats.MaxCredit, p.req.stats.MaxServing, p.rsp.stats.MaxServing)
	}
	if p.req.stats.Replies.Total() != 400 || p.rsp.stats.Replies.Total() != 400 {
		t.Errorf("answered %d forward, %d reverse", p.rsp.stats.Replies.Total(), p.req.stats.Replies.Total())
	}
	// Reverse calls exercised chunks too.
	if p.rsp.stats.Calls.ReadChunk == 0 || p.req.stats.Replies.WriteChunk == 0 {
		t.Errorf("reverse classes: %+v / %+v", p.rsp.stats.Calls, p.req.stats.Replies)
	}
}

// TestReverseNotOffered: without the requester's consent the responder cannot call it.
func TestReverseNotOffered(t *testing.T) {
	sc := testCfg(4096)
	sc.ReverseCredits = 4
	p := newPair(t, testCfg(4096), sc)
	p.call(p.req, Call{Proc: benchprog.ProcNull})
	if err := p.rsp.Submit(Call{Proc: benchprog.ProcNull}); !errors.Is(err, ErrReverseDisabled) {
		t.Fatalf("%v", err)
	}
}

// TestVerifyDetectsCorruption: with verification on, corrupted payloads fail the RPC in
// each direction of data flow.
func TestVerifyDetectsCorruption(t *testing.T) {
	p := newPair(t, testCfg(1024), testCfg(1024))
	for _, c := range []Call{
		{Proc: benchprog.ProcEcho, Size: 100},
		{Proc: benchprog.ProcSink, Size: 100},
		{Proc: benchprog.ProcSink, Size: 5000},
	} {
		faults(p.req).corrupt = true
		if r := p.call(p.req, c); !errors.Is(r.Err, ErrVerify) {
			t.Errorf("%s %d: %v, want ErrVerify", procNames[c.Proc], c.Size, r.Err)
		}
		faults(p.req).corrupt = false
		if r := p.call(p.req, c); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	faults(p.rsp).corrupt = true
	for _, size := range []int{100, 5000} {
		if r := p.call(p.req, Call{Proc: benchprog.ProcSource, Size: size}); !errors.Is(r.Err, ErrVerify) {
			t.Errorf("SOURCE %d: %v, want ErrVerify", size, r.Err)
		}
	}
}

// TestBrokenConnection: when the connection breaks, every outstanding RPC fails with a
// *ConnError and later calls are refused.
func TestBrokenConnection(t *testing.T) {
	p := newPair(t, testCfg(4096), testCfg(4096))
	p.call(p.req, Call{Proc: benchprog.ProcNull})
	for i := range 5 {
		if err := p.req.Submit(Call{Proc: benchprog.ProcSource, Size: 9000, Tag: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	p.rsp.qp.Close()
	var done [16]Result
	var got []Result
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		var n int
		n, err = p.req.Progress(done[:])
		got = append(got, done[:n]...)
	}
	var be *ConnError
	if !errors.As(err, &be) || !errors.Is(err, datapath.ErrBroken) {
		t.Fatalf("Progress: %v", err)
	}
	if len(got) != 5 {
		t.Fatalf("%d results, want 5", len(got))
	}
	for _, r := range got {
		if !errors.As(r.Err, &be) {
			t.Errorf("call %d: %v", r.Tag, r.Err)
		}
	}
	if err := p.req.Submit(Call{Proc: benchprog.ProcNull}); !errors.As(err, &be) {
		t.Errorf("Submit after break: %v", err)
	}
	t.Log(err)
}

// TestNegotiation: effective thresholds are min(sender's send, receiver's receive) each way
// (RFC 8797 section 4.2); a peer without private data counts as 1024/1024; receive buffers
// are the advertised receive size.
func TestNegotiation(t *testing.T) {
	rc, sc := testCfg(4096), testCfg(4096)
	rc.SendSize, rc.RecvSize = 8192, 2048
	sc.SendSize, sc.RecvSize = 4096, 16384
	p := newPair(t, rc, sc)
	if in := p.req.Params().Inline; in.SendSize != 8192 || in.RecvSize != 2048 {
		t.Errorf("requester %+v", in)
	}
	if in := p.rsp.Params().Inline; in.SendSize != 2048 || in.RecvSize != 8192 {
		t.Errorf("responder %+v", in)
	}
	if got := p.rsp.recvPool.Size(); got != 16384 {
		t.Errorf("responder receive buffers %d bytes", got)
	}
	// The largest inline SINK call fills the 8 KiB forward threshold exactly.
	if r := p.call(p.req, Call{Proc: benchprog.ProcSink, Size: 8192 - wire.MinHeaderSize - callHeaderSize - sinkArgsPrefix}); r.Err != nil || r.CallClass != rpcproto.ClassShort {
		t.Errorf("%v %s", r.Err, r.CallClass)
	}

	rc.NoPrivateData = true
	p = newPair(t, rc, sc)
	if pp := p.rsp.Params(); pp.PeerSent || pp.Inline.SendSize != 1024 || pp.Inline.RecvSize != 1024 {
		t.Errorf("responder with a silent peer: %+v", pp)
	}
	if pp := p.req.Params(); !pp.PeerSent || pp.Inline.SendSize != 1024 || pp.Inline.RecvSize != 1024 {
		t.Errorf("silent requester: %+v", pp.Inline)
	}
	if r := p.call(p.req, Call{Proc: benchprog.ProcSource, Size: 2000}); r.Err != nil || r.ReplyClass != rpcproto.ClassWriteChunk {
		t.Errorf("%v %s", r.Err, r.ReplyClass)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{SendSize: 1000}, {RecvSize: 512 << 10}, {Credits: -1}, {ReverseCredits: 1 << 20}, {MaxPayload: -5}, {Memory: 9}, {DoneTimeout: -1},
	} {
		var ce *ConfigError
		if err := c.withDefaults().validate(); !errors.As(err, &ce) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if err := (Config{}).withDefaults().validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSubmitErrors(t *testing.T) {
	cfg := testCfg(1024)
	p := newPair(t, cfg, cfg)
	for _, tc := range []struct {
		c    Call
		want error
	}{
		{Call{Proc: 9}, ErrBadProc},
		{Call{Proc: benchprog.ProcEcho, Size: cfg.MaxPayload + 1}, ErrTooLarge},
		{Call{Proc: benchprog.ProcEcho, Size: 2000, Class: rpcproto.ClassShort}, ErrTooLarge},
		{Call{Proc: benchprog.ProcEcho, Size: 10, Class: rpcproto.ClassReadChunk}, ErrClassNotApplicable},
		{Call{Proc: benchprog.ProcSink, Size: 10, Class: rpcproto.ClassWriteChunk}, ErrClassNotApplicable},
		{Call{Proc: benchprog.ProcSource, Size: 10, Class: rpcproto.ClassResponderRead}, ErrClassNotApplicable},
	} {
		if err := p.req.Submit(tc.c); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.c, err, tc.want)
		}
	}
	if r := p.call(p.req, Call{Proc: benchprog.ProcNull}); r.Err != nil {
		t.Fatal(r.Err)
	}
}

// TestForeignNull: a NULL call to another program goes out with its program and version;
// the responder (serving only the benchmark program) answers PROG_UNAVAIL, which the
// requester reports.
func TestForeignNull(t *testing.T) {
	cfg := testCfg(4096)
	cfg.Codec = rpcproto.NullCodec{P: rpcproto.NullProgram(100003, 3)}
	p := newPair(t, cfg, testCfg(4096))
	r := p.call(p.req, Call{})
	if !errors.Is(r.Err, ErrRPCRejected) {
		t.Fatalf("%v", r.Err)
	}
	if err := p.req.Submit(Call{Proc: 1}); !errors.Is(err, ErrBadProc) {
		t.Fatalf("%v", err)
	}
}

// TestJSON: the config and the counters go into results files.
func TestJSON(t *testing.T) {
	cfg := testCfg(4096)
	cfg.Memory = MemoryWindows
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, cfg) {
		t.Fatalf("round trip: %s -> %+v, %v", b, back, err)
	}
	if !strings.Contains(string(b), `"memory":"windows"`) {
		t.Errorf("memory mode not by name: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"memory":"bogus"}`), &back); err == nil {
		t.Error("unknown memory mode accepted")
	}
	p := newPair(t, cfg, cfg)
	p.call(p.req, Call{Proc: benchprog.ProcSource, Size: 9000})
	b, err = json.Marshal(p.req.stats)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"role":"requester"`, `"write_chunk":1`, `"memory":"windows"`, `"max_credit":8`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("stats JSON lacks %s: %s", want, b)
		}
	}
}

// TestPrivateDataBytes: what a requester puts in its connect private data, exactly: the RFC
// 8797 message (format identifier, version 1, R bit, sizes as (size/1024)-1), then the
// extension block.
func TestPrivateDataBytes(t *testing.T) {
	dev, l := softListener(t, soft.InprocPrefix+"0")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{SendSize: 8192, RecvSize: 4096, RemoteInvalidate: true, Memory: MemoryWindows, ResponderRead: true},
			"f6ab0e18 01 01 07 03 72726231 01 000000"},
		{Config{RemoteInvalidate: true, ReverseCredits: 2}, // preregistered: R cleared
			"f6ab0e18 01 00 03 03 72726231 02 000000"},
		{Config{NoPrivateData: true}, "72726231 00 000000"},
	} {
		errc := make(chan error, 1)
		go func() {
			c, err := Dial(context.Background(), dev, l.Addr(), tc.cfg)
			if err == nil {
				c.Close()
			}
			errc <- err
		}()
		req, err := l.Accept(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want, _ := hex.DecodeString(strings.ReplaceAll(tc.want, " ", ""))
		if got := req.PrivateData(); !bytes.HasPrefix(got, want) || strings.Trim(string(got[len(want):]), "\x00") != "" {
			t.Errorf("%+v: private data %x, want %x", tc.cfg, got, want)
		}
		req.Reject(nil)
		if err := <-errc; err == nil {
			t.Error("Dial succeeded against a rejecting listener")
		}
	}
}

// TestAsymmetricThresholds: each direction uses its own threshold: small calls, large
// replies (and the reverse direction the other way round, RFC 8167 section 4.2).
func TestAsymmetricThresholds(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.SendSize, rc.RecvSize, rc.ReverseCredits = 1024, 65536, 2
	sc.SendSize, sc.RecvSize, sc.ReverseCredits = 65536, 1024, 2
	p := newPair(t, rc, sc)
	for _, tc := range []struct {
		from   *Conn
		c      Call
		cc, rc rpcproto.Class
	}{
		{p.req, Call{Proc: benchprog.ProcSource, Size: 60000}, rpcproto.ClassShort, rpcproto.ClassShort},
		{p.req, Call{Proc: benchprog.ProcEcho, Size: 30000}, rpcproto.ClassPosZeroRead, rpcproto.ClassShort},
		{p.req, Call{Proc: benchprog.ProcSink, Size: 2000}, rpcproto.ClassReadChunk, rpcproto.ClassShort},
		{p.rsp, Call{Proc: benchprog.ProcSink, Size: 60000}, rpcproto.ClassShort, rpcproto.ClassShort},
		{p.rsp, Call{Proc: benchprog.ProcSource, Size: 2000}, rpcproto.ClassShort, rpcproto.ClassWriteChunk},
		{p.rsp, Call{Proc: benchprog.ProcEcho, Size: 30000}, rpcproto.ClassShort, rpcproto.ClassReplyChunk},
	} {
		r := p.call(tc.from, tc.c)
		if r.Err != nil || r.CallClass != tc.cc || r.ReplyClass != tc.rc {
			t.Errorf("%s %s %d: %v %s/%s, want %s/%s", tc.from.params.Role, procNames[tc.c.Proc], tc.c.Size, r.Err, r.CallClass, r.ReplyClass, tc.cc, tc.rc)
		}
	}
}

// TestSysCred: calls carry the configured credential (an NFS server wants AUTH_SYS) in
// every class, and the responder, which decodes any credential, answers them.
func TestSysCred(t *testing.T) {
	sys := oncrpc.SysCred{MachineName: []byte("rpcrdma-bench"), UID: 0, GID: 0}
	body := make([]byte, sys.Size())
	if _, err := sys.Encode(body); err != nil {
		t.Fatal(err)
	}
	cfg := testCfg(4096)
	cfg.Cred = oncrpc.OpaqueAuth{Flavor: oncrpc.FlavorSys, Body: body}
	p := newPair(t, cfg, testCfg(4096))
	for _, c := range []Call{{Proc: benchprog.ProcNull}, {Proc: benchprog.ProcEcho, Size: 100},
		{Proc: benchprog.ProcEcho, Size: 20000}, {Proc: benchprog.ProcSink, Size: 20000}} {
		if r := p.call(p.req, c); r.Err != nil {
			t.Fatalf("%s %d: %v", procNames[c.Proc], c.Size, r.Err)
		}
	}
	cfg.Cred.Body = make([]byte, 200)
	var ce *ConfigError
	if err := cfg.withDefaults().validate(); !errors.As(err, &ce) || ce.Field != "Cred" {
		t.Fatalf("a credential too large for the header's room: %v", err)
	}
}
