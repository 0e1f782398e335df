package rpcrdma

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// cbProg is a callback program as a server calls it: NULL, a procedure whose results the
// service writes, one it answers as failed, and a number it does not define.
var cbProg = &rpcproto.Program{Name: "cb", Number: 0x40000001, Version: 1, Procs: []rpcproto.Procedure{
	{Name: "cb_null", Number: 0}, {Name: "cb_word", Number: 1}, {Name: "cb_fail", Number: 2}, {Name: "cb_none", Number: 7},
}}

var errCBFail = rpcproto.NewResultError("cb_fail", "cb: failed")

// cbService answers cbProg and remembers the arguments of its last call.
type cbService struct{ args []byte }

func (*cbService) Program() (uint32, uint32) { return cbProg.Number, cbProg.Version }
func (*cbService) Procs() []string           { return []string{"cb_null", "cb_word", "cb_fail"} }
func (s *cbService) Serve(proc uint32, args, res []byte) (int, error) {
	s.args = append(s.args[:0], args...)
	switch proc {
	case 1:
		return copy(res, "word"), nil
	case 2:
		return copy(res, "\x00\x00\x00\x01"), errCBFail
	}
	return 0, nil
}

// wordCodec checks cb_word's results.
type wordCodec struct{ rpcproto.NullCodec }

func (wordCodec) Sizes(proc, size int) (int, int, int) { return 8, 8, 4 }
func (wordCodec) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {
	copy(b, "argsargs")
}
func (wordCodec) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	if proc == 1 && !bytes.Equal(body, []byte("word")) {
		return nil, errors.New("cb_word results " + string(body))
	}
	return nil, nil
}

// TestServiceAnswersReverseCalls: a requester with a Service answers the responder's
// reverse calls with it (the reverse direction enabled by the upper layer, not by private
// data), reports each reply's procedure, time and failure through Served, and rejects calls
// of procedures and programs the service does not define.
func TestServiceAnswersReverseCalls(t *testing.T) {
	type served struct {
		proc   uint32
		class  rpcproto.Kind
		ns     int64
		failed bool
	}
	var got []served
	svc := &cbService{}
	rc, sc := testCfg(4096), testCfg(4096)
	rc.ReverseCredits, rc.Service = 2, svc
	rc.Served = func(proc uint32, class rpcproto.Kind, ns int64, failed bool) {
		got = append(got, served{proc, class, ns, failed})
	}
	sc.ReverseCredits, sc.Codec = 2, wordCodec{rpcproto.NullCodec{P: cbProg}}
	p := newPair(t, rc, sc)
	if !p.req.Params().Reverse {
		t.Fatal("requester with a Service: reverse direction not enabled")
	}
	p.call(p.req, Call{Proc: 0})
	for proc, want := range []error{nil, nil, nil, ErrRPCRejected} {
		if r := p.call(p.rsp, Call{Proc: proc}); !errors.Is(r.Err, want) {
			t.Errorf("reverse %s: %v, want %v", cbProg.Procs[proc].Name, r.Err, want)
		}
	}
	if string(svc.args) != "argsargs" {
		t.Errorf("service saw arguments %q", svc.args)
	}
	p.until("the last reply's Send completion", func() bool { return len(got) >= 4 })
	if len(got) != 4 {
		t.Fatalf("Served called %d times, want 4: %+v", len(got), got)
	}
	for k, w := range []served{{0, rpcproto.Short, 0, false}, {1, rpcproto.Short, 0, false}, {2, rpcproto.Short, 0, true}} {
		if got[k].proc != w.proc || got[k].class != w.class || got[k].failed != w.failed || got[k].ns <= 0 {
			t.Errorf("Served %d: %+v, want proc %d, short, failed %v and a time", k, got[k], w.proc, w.failed)
		}
	}
	if got[3].proc != 7 || !got[3].failed {
		t.Errorf("a procedure the service does not define: %+v, want 7, failed", got[3])
	}

	// A call of another program is PROG_UNAVAIL.
	other := *cbProg
	other.Number++
	sc.Codec = wordCodec{rpcproto.NullCodec{P: &other}}
	p = newPair(t, rc, sc)
	p.call(p.req, Call{Proc: 0})
	got = got[:0]
	if r := p.call(p.rsp, Call{Proc: 0}); !errors.Is(r.Err, ErrRPCRejected) {
		t.Errorf("another program: %v, want ErrRPCRejected", r.Err)
	}
	p.until("the reply's Send completion", func() bool { return len(got) >= 1 })
	if len(got) != 1 || !got[0].failed {
		t.Errorf("another program: Served %+v, want one failed", got)
	}
}

// TestLimitCalls: an upper layer's bound on outstanding calls holds below the credits.
func TestLimitCalls(t *testing.T) {
	p := newPair(t, testCfg(4096), testCfg(4096))
	p.call(p.req, Call{Proc: 0}) // the first reply grants the 8 credits
	p.req.LimitCalls(2)
	for k, want := range []error{nil, nil, ErrNoCredit} {
		if err := p.req.Submit(Call{Proc: 0}); !errors.Is(err, want) {
			t.Fatalf("call %d with 2 allowed: %v, want %v", k+1, err, want)
		}
	}
}

// TestServedEachReply: Served reports each reverse call's reply as its own Send completes,
// not when a later reply's does (the responder's replies are signalled only every few).
func TestServedEachReply(t *testing.T) {
	n := 0
	rc, sc := testCfg(4096), testCfg(4096)
	rc.ReverseCredits, rc.Service = 8, &cbService{}
	rc.Served = func(uint32, rpcproto.Kind, int64, bool) { n++ }
	sc.ReverseCredits, sc.Codec = 8, wordCodec{rpcproto.NullCodec{P: cbProg}}
	p := newPair(t, rc, sc)
	p.call(p.req, Call{Proc: 0})
	for k := 1; k <= 3; k++ {
		if r := p.call(p.rsp, Call{Proc: 1}); r.Err != nil {
			t.Fatal(r.Err)
		}
		p.until(fmt.Sprintf("reply %d reported", k), func() bool { return n >= k })
	}
}

// TestServiceZeroAllocs: answering a reverse call with a Service, and reporting it through
// Served, allocates nothing per call.
func TestServiceZeroAllocs(t *testing.T) {
	if os.Getenv("RPCRDMA_TEST_TCP") != "" {
		t.Skip("in-process provider only (see TestZeroAllocs)")
	}
	n := 0
	rc, sc := testCfg(4096), testCfg(4096)
	rc.ReverseCredits, rc.Service = 4, &cbService{}
	rc.Served = func(uint32, rpcproto.Kind, int64, bool) { n++ }
	sc.ReverseCredits, sc.Codec = 4, wordCodec{rpcproto.NullCodec{P: cbProg}}
	p := newPair(t, rc, sc)
	done := make([]Result, 16)
	roundTrip(p, Call{Proc: 0}, done) // the first forward call lets the responder call back
	reverse := func() {
		if err := p.rsp.Submit(Call{Proc: 1}); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := p.req.Progress(done); err != nil {
				t.Fatal(err)
			}
			k, err := p.rsp.Progress(done)
			if err != nil {
				t.Fatal(err)
			}
			if k > 0 {
				if done[0].Err != nil {
					t.Fatal(done[0].Err)
				}
				return
			}
		}
	}
	reverse()
	if a := testing.AllocsPerRun(200, reverse); a != 0 {
		t.Errorf("%v allocs per reverse call", a)
	}
	if n < 200 {
		t.Errorf("Served reported %d calls of at least 201", n)
	}
}
