package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// pairProg is the benchmark program with "pair", a procedure measured alone.
var pairProg = &rpcproto.Program{Name: "bench", Number: benchprog.Prog.Number, Version: benchprog.Prog.Version,
	Procs: append(slices.Clone(benchprog.Prog.Procs), rpcproto.Procedure{Name: "pair", Alone: true})}

// pairCodec is the benchmark program's Codec as a Measurer of pairProg's "pair", whose
// connections need no setup.
type pairCodec struct {
	benchprog.Codec
	m *pairMeasurement
}

func (*pairCodec) Program() *rpcproto.Program                  { return pairProg }
func (c *pairCodec) NewConn() rpcproto.Conversation            { return &pairCodec{m: c.m} }
func (*pairCodec) Service() rpcproto.Service                   { return nil }
func (*pairCodec) Start(rpcproto.ConnInfo)                     {}
func (*pairCodec) Next(bool) (int, int, bool)                  { return 0, 0, false }
func (*pairCodec) Slots() int                                  { return 0 }
func (*pairCodec) Unanswered(int, int)                         {}
func (*pairCodec) Lost() bool                                  { return false }
func (c *pairCodec) Measure(int) (rpcproto.Measurement, error) { return c.m, nil }

// pairMeasurement is a request made of a NULL on connection 0, then one on connection 1;
// its first Step declines a try, and stopped it holds something that a NULL on connection 1
// releases. It logs what the driver told it.
type pairMeasurement struct {
	convs    []rpcproto.Conversation
	busy     bool
	steps    int
	stopped  bool
	released bool
	log      []string
}

func (m *pairMeasurement) Conns() int { return 2 }

func (m *pairMeasurement) Connected(i int, cv rpcproto.Conversation) error {
	if i != len(m.convs) {
		return fmt.Errorf("connection %d after %d", i, len(m.convs))
	}
	m.convs = append(m.convs, cv)
	return nil
}

func (m *pairMeasurement) Begin(d rpcproto.Driver) (bool, error) {
	if m.busy {
		return false, nil
	}
	m.busy = true
	return true, d.Call(0, benchprog.ProcNull)
}

func (m *pairMeasurement) Reply(d rpcproto.Driver, i, proc int, err error) error {
	m.log = append(m.log, fmt.Sprintf("%d %s %v", i, pairProg.Procs[proc].Name, err))
	switch {
	case err != nil:
		return err
	case i == 0:
		return d.Call(1, benchprog.ProcNull)
	}
	d.Done(rpcproto.Figures{CallbackNs: 1000, AnswerNs: 2000, TotalNs: 3000, Retries: 1})
	m.busy = false
	return nil
}

func (m *pairMeasurement) Step(d rpcproto.Driver) error {
	if m.steps++; m.steps == 1 {
		d.Declined()
	}
	return nil
}

func (m *pairMeasurement) Stop()         { m.stopped = true }
func (m *pairMeasurement) Settled() bool { return !m.busy }

func (m *pairMeasurement) Release() (int, int, bool) {
	if !m.stopped || m.released {
		return 0, 0, false
	}
	m.released = true
	return 1, benchprog.ProcNull, true
}

// The engine drives a procedure measured alone through the Measurement its codec makes:
// its own connections, each with its Conversation; every reply handed over with its
// connection and procedure; each request complete when Done says so, with the figures and
// the declined tries in the point's recalls; Release's calls made before teardown.
func TestEngineDrivesMeasurement(t *testing.T) {
	m := &pairMeasurement{}
	mix, err := workloads.ParseMix("pair", pairProg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	w, err := workloads.Config{Prog: pairProg, Mix: mix, Count: n, Warmup: workloads.NoWarmup, Depth: 1}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	r := runOnSoftWith(t, &pairCodec{m: m}, []workloads.Point{{Threshold: 4096, Depth: 1, Workload: w}})
	p := r.Points[0]
	if p.Throughput.RPCs != n {
		t.Errorf("%d requests, want %d", p.Throughput.RPCs, n)
	}
	rc := p.Recalls
	if rc == nil || rc.Count != n || rc.NotGranted != 1 || rc.Retries != n || *rc.Recall.RTT.Min != 1000 || *rc.DelegReturn.RTT.Max != 2000 || *rc.Conflict.RTT.Max != 3000 {
		t.Errorf("recalls %+v, want %d of 1, 2 and 3 µs with a retry each, 1 not granted", rc, n)
	}
	if len(m.convs) != 2 || m.convs[0] == m.convs[1] {
		t.Errorf("connections' Conversations %v, want two of their own", m.convs)
	}
	if len(m.log) != 2*n {
		t.Fatalf("%d replies, want %d", len(m.log), 2*n)
	}
	for k, l := range m.log {
		if want := fmt.Sprintf("%d null <nil>", k%2); l != want {
			t.Fatalf("reply %d: %q, want %q", k, l, want)
		}
	}
	if !m.stopped || !m.released {
		t.Errorf("stopped %v, released %v: want both before teardown", m.stopped, m.released)
	}
}
