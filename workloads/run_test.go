package workloads_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"golang.org/x/sys/unix"

	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads/workloadstest"
)

// closingFake records that Run closed it.
type closingFake struct {
	*workloadstest.Fake
	closed *atomic.Int32
}

func (c closingFake) Close() error { c.closed.Add(1); return nil }

func allowedCPU(t *testing.T) int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	for cpu := range 1024 {
		if set.IsSet(cpu) {
			return cpu
		}
	}
	t.Skip("no CPU in the affinity mask")
	return -1
}

func TestRunnerSplitsWorkOverPollers(t *testing.T) {
	cpu := allowedCPU(t)
	var closed atomic.Int32
	shares := make([]int, 2)
	recs := []*samples{{s: make([]workloads.Sample, 0, 1000)}, {s: make([]workloads.Sample, 0, 1000)}}
	r := workloads.Runner{
		Config: workloads.Config{Prog: benchprog.Prog, Pollers: 2, Connections: 3, Depth: 4, Count: 1001, CPUs: []int{cpu}, Warmup: workloads.Duration(-1),
			Mix: workloads.Only("sink", workloads.Fixed(64<<10))},
		Open: func(_ context.Context, poller, conns int) (workloads.Client, error) {
			shares[poller] = conns
			f := workloadstest.New(64)
			f.Latency = time.Microsecond
			return closingFake{f, &closed}, nil
		},
		Recorder: func(i int) workloads.Recorder { return recs[i] },
	}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if shares[0] != 2 || shares[1] != 1 || closed.Load() != 2 {
		t.Fatalf("connection shares %v, %d closed", shares, closed.Load())
	}
	if res.Total.Completed != 1001 || res.Pollers[0].Stats.Completed != 501 || res.Pollers[1].Stats.Completed != 500 {
		t.Fatalf("completed %d = %d + %d", res.Total.Completed, res.Pollers[0].Stats.Completed, res.Pollers[1].Stats.Completed)
	}
	if len(recs[0].s) != 501 || len(recs[1].s) != 500 {
		t.Fatalf("recorders got %d and %d", len(recs[0].s), len(recs[1].s))
	}
	if res.Total.Classes[rpcproto.Chunked] != 1001 || res.Pollers[1].CPU != cpu {
		t.Fatalf("classes %v, cpu %d", res.Total.Classes, res.Pollers[1].CPU)
	}
}

func TestRunnerOpenFailureStopsAll(t *testing.T) {
	var closed atomic.Int32
	refused := errors.New("connection refused")
	r := workloads.Runner{
		Config: workloads.Config{Prog: benchprog.Prog, Pollers: 2, Connections: 2, Duration: workloads.Duration(time.Hour)},
		Open: func(_ context.Context, poller, conns int) (workloads.Client, error) {
			if poller == 1 {
				return nil, refused
			}
			return closingFake{workloadstest.New(64), &closed}, nil
		},
	}
	_, err := r.Run(context.Background())
	var re *workloads.RunError
	if !errors.As(err, &re) || re.Poller != 1 || re.Op != "open" || !errors.Is(err, refused) {
		t.Fatalf("err %v", err)
	}
	if closed.Load() != 1 {
		t.Fatalf("%d clients closed, want the one that opened", closed.Load())
	}
}

func TestRunnerPinFailure(t *testing.T) {
	r := workloads.Runner{
		Config: workloads.Config{Prog: benchprog.Prog, CPUs: []int{1023}},
		Open:   func(context.Context, int, int) (workloads.Client, error) { return workloadstest.New(1), nil },
	}
	_, err := r.Run(context.Background())
	var pe *workloads.PinError
	if !errors.As(err, &pe) || pe.CPU != 1023 {
		t.Fatalf("err %v, want a PinError for cpu 1023", err)
	}
}

func TestRunnerBadConfig(t *testing.T) {
	r := workloads.Runner{Config: workloads.Config{Prog: benchprog.Prog, Depth: -3}}
	if _, err := r.Run(context.Background()); err == nil {
		t.Fatal("bad config ran")
	}
}

// A RunError names the step once: "pin poller to cpu 3" already says "pin".
func TestRunErrorNamesTheStepOnce(t *testing.T) {
	pin := &workloads.RunError{Poller: 1, Op: "pin", Err: &workloads.PinError{CPU: 3, Err: errors.New("invalid argument")}}
	if got := pin.Error(); got != "poller 1: pin poller to cpu 3: invalid argument" {
		t.Errorf("pin: %q", got)
	}
	open := &workloads.RunError{Poller: 0, Op: "open", Err: errors.New("connection refused")}
	if got := open.Error(); got != "poller 0: open: connection refused" {
		t.Errorf("open: %q", got)
	}
}
