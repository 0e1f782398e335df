package workloadstest

import (
	"errors"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

func TestFakeClassModelAndTiming(t *testing.T) {
	f := New(4)
	f.Clock = new(Clock)
	f.Latency, f.Tick, f.Threshold = 10*time.Microsecond, 5*time.Microsecond, 1024
	reqs := []workloads.Request{
		{Tag: 1, Proc: benchprog.ProcEcho, CallSize: 900, ReplySize: 900},   // 900+100 fits 1024
		{Tag: 2, Proc: benchprog.ProcSink, CallSize: 4096},                  // DDP call: chunked
		{Tag: 3, Proc: benchprog.ProcEcho, CallSize: 4096, ReplySize: 4096}, // no DDP: long
		{Tag: 4, Proc: benchprog.ProcSource, ReplySize: 64, Class: rpcproto.Long},
	}
	for i := range reqs {
		if err := f.Submit(&reqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Submit(&reqs[0]); !errors.Is(err, ErrFakeOverflow) {
		t.Fatalf("fifth submit: %v", err)
	}
	done := make([]workloads.Completed, 8)
	if n, _ := f.Progress(done); n != 0 { // 5 µs: not due yet
		t.Fatalf("%d done after 5 µs", n)
	}
	n, err := f.Progress(done) // 10 µs: all due
	if err != nil || n != 4 {
		t.Fatalf("%d done, %v", n, err)
	}
	S, C, L := rpcproto.Short, rpcproto.Chunked, rpcproto.Long
	want := [][2]rpcproto.Kind{{S, S}, {C, S}, {L, L}, {L, L}}
	for i, d := range done[:n] {
		if d.Tag != uint64(i+1) || [2]rpcproto.Kind{d.CallClass, d.ReplyClass} != want[i] {
			t.Errorf("completion %d: %+v, want classes %v", i, d, want[i])
		}
	}
	if f.MaxOutstanding() != 4 || f.Outstanding() != 0 || f.Submitted() != 4 || f.Completed() != 4 {
		t.Fatalf("counters %d %d %d %d", f.MaxOutstanding(), f.Outstanding(), f.Submitted(), f.Completed())
	}
}

func TestFakeCreditsAndFailure(t *testing.T) {
	f := New(8)
	f.Credits, f.FailAfter, f.Err = 1, 1, errors.New("broken")
	r := workloads.Request{Proc: benchprog.ProcNull}
	if err := f.Submit(&r); err != nil {
		t.Fatal(err)
	}
	if err := f.Submit(&r); err != workloads.ErrBusy {
		t.Fatalf("second submit with one credit: %v", err)
	}
	done := make([]workloads.Completed, 2)
	if n, err := f.Progress(done); n != 1 || err != nil {
		t.Fatalf("%d, %v", n, err)
	}
	if _, err := f.Progress(done); err == nil || err.Error() != "broken" {
		t.Fatalf("after FailAfter: %v", err)
	}
}
