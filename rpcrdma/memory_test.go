package rpcrdma

import (
	"os"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// registeredFormula is TRANSPORT.md's formula for a connection's registered memory, written
// out independently of plan: credits requested for own calls, granted for the peer's.
func registeredFormula(cfg Config, credits, granted int, ownSinks bool) int {
	page := os.Getpagesize()
	roundUp := func(n, a int) int { return (n + a - 1) &^ (a - 1) }
	stride := func(size int) int {
		if size >= page {
			return roundUp(size, page)
		}
		return roundUp(size, 64)
	}
	rr := 0
	if cfg.ResponderRead {
		rr = granted
	}
	slots := credits
	ctxs := 2*granted + credits + max(1, min(16, granted/2)) + rr
	recvTarget := max(1, granted+credits+rr)
	recvBufs := recvTarget + 7 + ctxs + slots
	sends := slots + ctxs + 16
	big := 256 + cfg.MaxPayload + 8
	off := 0
	add := func(size, count int) {
		if count == 0 {
			return
		}
		a := 64
		if size >= page {
			a = page
		}
		off = roundUp(off, a) + count*stride(size)
	}
	add(2048, sends)
	add(cfg.RecvSize, recvBufs)
	add(big, slots)
	add(big, slots)
	if ownSinks {
		add(big, ctxs)
	}
	return roundUp(off, page)
}

func TestRegisteredBytesFollowFormula(t *testing.T) {
	for _, tc := range []struct {
		name       string
		req, rsp   Config
		rspCredits int // what the responder grants: min(requested, its Credits)
	}{
		{"defaults", Config{}, Config{}, DefaultCredits},
		{"small", Config{Credits: 1, MaxPayload: 4096}, Config{Credits: 64, MaxPayload: 4096}, 64},
		{"16k inline, 1 MiB", Config{SendSize: 16384, RecvSize: 16384, Credits: 32, MaxPayload: 1 << 20},
			Config{SendSize: 16384, RecvSize: 16384, Credits: 16, MaxPayload: 1 << 20}, 16},
		{"responder read, reverse", Config{Credits: 8, ResponderRead: true, ReverseCredits: 2},
			Config{Credits: 8, ResponderRead: true, ReverseCredits: 2}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, tc.req, tc.rsp)
			req, rsp := p.req.cfg, p.rsp.cfg
			reverse := 0
			if p.req.params.Reverse {
				reverse = req.ReverseCredits
			}
			// The requester sends calls with its credits and grants the reverse credits;
			// the responder sends reverse calls and grants up to its own Credits.
			if got, want := p.req.RegisteredBytes(), registeredFormula(req, req.Credits, reverse, true); got != want {
				t.Errorf("requester registered %d bytes, formula says %d", got, want)
			}
			if got, want := p.rsp.RegisteredBytes(), registeredFormula(rsp, reverse, rsp.Credits, true); got != want {
				t.Errorf("responder registered %d bytes, formula says %d", got, want)
			}
			if p.req.stats.RegisteredBytes != p.req.RegisteredBytes() {
				t.Errorf("Stats.RegisteredBytes %d, RegisteredBytes() %d", p.req.stats.RegisteredBytes, p.req.RegisteredBytes())
			}
		})
	}
}

// TestReceivesFollowGrant: a responder that may grant 64 credits keeps receives posted for
// what its peer asked, not for 64, and grows them before the reply that grants more.
func TestReceivesFollowGrant(t *testing.T) {
	for _, credits := range []int{1, 8, 32} {
		req := testCfg(4096)
		req.Credits = credits
		rsp := testCfg(4096)
		rsp.Credits = 64
		p := newPair(t, req, rsp)
		if p.rsp.recvTarget != 1 {
			t.Fatalf("requester asking %d: before any call the responder keeps %d receives posted, want 1 (the requester's first credit)", credits, p.rsp.recvTarget)
		}
		for i := range 3 {
			if r := p.call(p.req, Call{Proc: benchprog.ProcNull, Tag: uint64(i)}); r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		if p.rsp.stats.Granted != uint32(credits) || p.req.stats.Credit != uint32(credits) {
			t.Fatalf("requester asking %d: granted %d, requester holds %d", credits, p.rsp.stats.Granted, p.req.stats.Credit)
		}
		if p.rsp.recvTarget != credits || p.rsp.recvPosted < credits || p.rsp.recvPosted > credits+recvBatch {
			t.Fatalf("requester asking %d: responder keeps %d receives posted (target %d), want %d..%d",
				credits, p.rsp.recvPosted, p.rsp.recvTarget, credits, credits+recvBatch)
		}
	}
}

// TestPeerOpsFromChunks: what a requester infers of the responder's RDMA Reads and Writes
// from its own chunks and the replies equals what the responder counted, for every class.
func TestPeerOpsFromChunks(t *testing.T) {
	for _, mem := range []MemoryMode{MemoryPreregistered, MemoryWindows} {
		cfg := testCfg(4096)
		cfg.Memory, cfg.ResponderRead = mem, true
		p := newPair(t, cfg, cfg)
		for i, tc := range classCases(4096) {
			tc.call.Tag = uint64(i)
			if r := p.call(p.req, tc.call); r.Err != nil {
				t.Fatalf("%s %s: %v", mem, tc.name, r.Err)
			}
		}
		req, rsp := p.req.stats, p.rsp.stats
		if req.PeerRead != rsp.Read || req.PeerWrite != rsp.Write || rsp.Read.Count == 0 || rsp.Write.Count == 0 {
			t.Fatalf("%s: requester infers reads %+v, writes %+v; responder counted reads %+v, writes %+v",
				mem, req.PeerRead, req.PeerWrite, rsp.Read, rsp.Write)
		}
	}
}
