package rpcrdma

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// pair is a requester and a responder connected over the soft provider in process (or, with
// RPCRDMA_TEST_TCP set, over its TCP mode), each on its own device (as on two hosts: neither
// can use the other's keys), both driven by the test goroutine.
type pair struct {
	t        testing.TB
	req, rsp *Conn
	// got collects the requester's Results that until came across.
	got []Result
}

func newPair(t testing.TB, reqCfg, rspCfg Config) *pair {
	t.Helper()
	addr := soft.InprocPrefix + "0"
	if os.Getenv("RPCRDMA_TEST_TCP") != "" {
		addr = "127.0.0.1:0" // the soft provider's between-process mode
	}
	return newPairAt(t, addr, reqCfg, rspCfg)
}

// newPairAt is newPair listening at addr: soft.InprocPrefix for the in-process mode,
// "127.0.0.1:0" for the TCP wire two processes would use.
func newPairAt(t testing.TB, addr string, reqCfg, rspCfg Config) *pair {
	t.Helper()
	return newPairWith(t, addr, reqCfg, func(rdev datapath.Device, l datapath.Listener) (*Conn, error) {
		return Accept(context.Background(), rdev, l, rspCfg)
	})
}

// newPairWith is newPairAt with the responder's end made by accept.
func newPairWith(t testing.TB, addr string, reqCfg Config, accept func(datapath.Device, datapath.Listener) (*Conn, error)) *pair {
	t.Helper()
	prov := soft.New(soft.Config{})
	dev, err := prov.Open("")
	if err != nil {
		t.Fatal(err)
	}
	rdev, err := prov.Open("")
	if err != nil {
		t.Fatal(err)
	}
	l, err := rdev.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		c   *Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := accept(rdev, l)
		ch <- res{c, err}
	}()
	req, err := Dial(context.Background(), dev, l.Addr(), reqCfg)
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	p := &pair{t: t, req: req, rsp: r.c}
	t.Cleanup(func() {
		p.req.Close()
		p.rsp.Close()
		l.Close()
		for _, d := range []datapath.Device{dev, rdev} {
			if err := d.Close(); err != nil {
				t.Errorf("device close: %v", err)
			}
		}
	})
	return p
}

// run submits calls on both endpoints as credits allow (reqCalls from the requester,
// rspCalls as reverse calls from the responder), interleaved, and drives both until every
// call finished. It returns the Results in completion order, per side.
func (p *pair) run(reqCalls, rspCalls []Call) (reqRes, rspRes []Result) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var buf [64]Result
	type side struct {
		c     *Conn
		calls []Call
		res   *[]Result
	}
	sides := [2]side{{p.req, reqCalls, &reqRes}, {p.rsp, rspCalls, &rspRes}}
	for len(reqRes) < len(reqCalls) || len(rspRes) < len(rspCalls) {
		if time.Now().After(deadline) {
			p.t.Fatalf("calls did not finish: %d/%d forward, %d/%d reverse", len(reqRes), len(reqCalls), len(rspRes), len(rspCalls))
		}
		for k := range sides {
			s := &sides[k]
			for len(s.calls) > 0 {
				err := s.c.Submit(s.calls[0])
				if errors.Is(err, ErrNoCredit) || errors.Is(err, ErrReverseDisabled) && s.c == p.rsp {
					break
				}
				if err != nil {
					*s.res = append(*s.res, Result{Tag: s.calls[0].Tag, Err: err})
				}
				s.calls = s.calls[1:]
			}
			n, err := s.c.Progress(buf[:])
			*s.res = append(*s.res, buf[:n]...)
			if err != nil && n == 0 {
				p.t.Fatalf("%s Progress: %v", s.c.params.Role, err)
			}
		}
	}
	return reqRes, rspRes
}

// call runs one RPC from `from` to completion and returns its Result.
func (p *pair) call(from *Conn, c Call) Result {
	p.t.Helper()
	var rs []Result
	if from == p.req {
		rs, _ = p.run([]Call{c}, nil)
	} else {
		_, rs = p.run(nil, []Call{c})
	}
	return rs[0]
}

func testCfg(threshold int) Config {
	return Config{SendSize: threshold, RecvSize: threshold, Credits: 8, MaxPayload: 192 << 10, Verify: true}
}

func TestNullShort(t *testing.T) {
	p := newPair(t, testCfg(4096), testCfg(4096))
	for i := range 3 {
		r := p.call(p.req, Call{Proc: benchprog.ProcNull, Tag: uint64(i)})
		if r.Err != nil || r.CallClass != rpcproto.ClassShort || r.ReplyClass != rpcproto.ClassShort {
			t.Fatalf("NULL: %+v", r)
		}
	}
	if got := p.req.stats.Calls.Short; got != 3 {
		t.Errorf("short calls = %d", got)
	}
	if got := p.rsp.stats.Replies.Short; got != 3 {
		t.Errorf("short replies = %d", got)
	}
	if got := p.req.stats.Credit; got != 8 {
		t.Errorf("credit = %d, want 8", got)
	}
}

// TestRecvBatch: receives are refilled in batches, about one refill per recvBatch+1
// messages at depth 1, and no side is left with fewer than recvTarget posted after an RPC
// (the credit it grants is backed by posted receives).
func TestRecvBatch(t *testing.T) {
	p := newPair(t, testCfg(4096), testCfg(4096))
	done := make([]Result, 16)
	const rpcs = 80
	refills := 0
	for range rpcs {
		before := p.rsp.recvPosted
		roundTrip(p, Call{Proc: benchprog.ProcNull}, done)
		for _, c := range []*Conn{p.req, p.rsp} {
			if c.recvMax != c.recvTarget+recvBatch {
				t.Fatalf("%s: refills up to %d, want %d", c.params.Role, c.recvMax, c.recvTarget+recvBatch)
			}
			if c.recvPosted < c.recvTarget || c.recvPosted > c.recvMax {
				t.Fatalf("%s: %d receives posted, want %d..%d", c.params.Role, c.recvPosted, c.recvTarget, c.recvMax)
			}
		}
		if p.rsp.recvPosted > before {
			refills++
		}
	}
	if most := rpcs/(recvBatch+1) + 1; refills == 0 || refills > most {
		t.Errorf("responder refilled its receives %d times in %d RPCs, want 1..%d", refills, rpcs, most)
	}
}
