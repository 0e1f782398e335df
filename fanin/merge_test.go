package fanin

import (
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// A fan-in's point merges its ranks' callbacks and delegation recalls exactly.
func TestMergePointBackchannel(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	var rps []results.RankPoint
	for k := range 2 {
		r := results.NewRecorder()
		r.SetCallbacks([]string{"CB_NULL", "CB_COMPOUND"})
		for i := range 100 {
			r.Record(rpcproto.Short, rpcproto.Short, 10000, 8)
			r.RecordCallback(1, rpcproto.Short, int64(1000*(k+1)+i))
		}
		r.RecordRecall(30000, 15000, int64(90000*(k+1)), 1)
		r.FailCallback(0, rpcproto.Short)
		p, err := results.Summarize(results.Params{Procedure: "NULL", Class: "auto", Depth: 1, Connections: 1}, t0, t0.Add(time.Second), r)
		if err != nil {
			t.Fatal(err)
		}
		p.Complete = true
		rps = append(rps, results.RankPoint{Rank: k + 1, Point: p})
	}
	p, err := mergePoint(rps, results.FanIn{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Callbacks) != 2 || p.Callbacks[0].Errors != 2 || p.Callbacks[1].RTT.Count != 200 || *p.Callbacks[1].RTT.Min != 1000 || *p.Callbacks[1].RTT.Max != 2099 {
		t.Errorf("callbacks %+v, want CB_NULL with 2 errors and CB_COMPOUND of 200 calls from 1000 to 2099 ns", p.Callbacks)
	}
	if rc := p.Recalls; rc == nil || rc.Count != 2 || rc.Retries != 2 || *rc.Conflict.RTT.Min != 90000 || *rc.Conflict.RTT.Max != 180000 {
		t.Errorf("recalls %+v, want 2 recalls, 2 retries, conflicts of 90 and 180 µs", rc)
	}
	run := &results.Run{SchemaVersion: results.SchemaVersion, Start: p.Start, End: p.End, Status: results.Status{State: results.StateComplete}, Points: []results.Point{p}}
	if err := run.Validate(); err != nil {
		t.Error(err)
	}
}

// A fan-in's point of a mix merges its ranks' per-procedure rows exactly: a row per procedure,
// its histogram the sum of the ranks', its errors summed, the counts adding up to the point's.
func TestMergePointProcedures(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	var rps []results.RankPoint
	for k := range 2 {
		r := results.NewRecorder()
		r.SetProcedures([]string{"read", "write", "getattr"})
		for i := range 100 {
			rtt := int64(1000*(k+1) + i)
			r.Record(rpcproto.Short, rpcproto.Short, rtt, 8)
			r.RecordProc(i%2, rtt) // read and write; getattr only on rank 2
		}
		if k == 1 {
			r.Record(rpcproto.Short, rpcproto.Short, 50000, 8)
			r.RecordProc(2, 50000)
			r.FailProc(0)
		}
		p, err := results.Summarize(results.Params{Procedure: "MIX", Class: "auto", Depth: 1, Connections: 1}, t0, t0.Add(time.Second), r)
		if err != nil {
			t.Fatal(err)
		}
		p.Complete = true
		rps = append(rps, results.RankPoint{Rank: k + 1, Point: p})
	}
	p, err := mergePoint(rps, results.FanIn{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Procedures) != 3 {
		t.Fatalf("procedures %+v, want read, write and getattr", p.Procedures)
	}
	rd, wr, ga := p.Procedures[0], p.Procedures[1], p.Procedures[2]
	if rd.Procedure != "read" || rd.RTT.Count != 100 || *rd.RTT.Min != 1000 || *rd.RTT.Max != 2098 || rd.Errors != 1 ||
		wr.Procedure != "write" || wr.RTT.Count != 100 || *wr.RTT.Min != 1001 || *wr.RTT.Max != 2099 ||
		ga.Procedure != "getattr" || ga.RTT.Count != 1 || *ga.RTT.Max != 50000 {
		t.Errorf("procedures %+v", p.Procedures)
	}
	h, err := results.DecodeHistogram(rd.Histogram)
	if err != nil || h.TotalCount() != 100 {
		t.Errorf("read's merged histogram: %v, %d samples", err, h.TotalCount())
	}
	run := &results.Run{SchemaVersion: results.SchemaVersion, Start: p.Start, End: p.End, Status: results.Status{State: results.StateComplete}, Points: []results.Point{p}}
	if err := run.Validate(); err != nil {
		t.Error(err)
	}
}
