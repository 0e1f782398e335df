package results

import (
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

// testParams are the points of the synthetic sweep.
var testParams = []Params{
	{Procedure: "ECHO", Class: "auto", CallBytes: 64, ReplyBytes: 64, InlineThreshold: 4096, Depth: 1, Connections: 1},
	{Procedure: "ECHO", Class: "auto", CallBytes: 4096, ReplyBytes: 4096, InlineThreshold: 4096, Depth: 1, Connections: 1},
	{Procedure: "SOURCE", Class: "auto", CallBytes: 8, ReplyBytes: 65536, InlineThreshold: 4096, Depth: 4, Connections: 1},
}

// baseRTT is the synthetic median RTT of a point.
func baseRTT(p Params) float64 { return 2000 + float64(p.CallBytes+p.ReplyBytes)/4 }

// classesOf mimics RFC 8166 section 3.5's choice for a 4 KiB threshold.
func classesOf(p Params) (call, reply Class) {
	call, reply = Short, Short
	if p.CallBytes+28 > p.InlineThreshold {
		call = Chunked
	}
	if p.ReplyBytes+28 > p.InlineThreshold {
		reply = Chunked
	}
	return call, reply
}

// makeRun builds a deterministic run: n RPCs per point, split over workers, RTTs lognormal
// around baseRTT*scale.
func makeRun(tb testing.TB, seed uint64, scale float64, n, workers int) *Run {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 42))
	run := &Run{
		SchemaVersion: SchemaVersion,
		Tool:          "rpcrdma-bench test",
		Start:         t0,
		Config:        []byte(`{"seed":1}`),
		Environment: Environment{
			Hostname: "bench1", OS: "linux", Arch: "amd64", Kernel: "6.12.0", KernelVersion: "#1 SMP",
			CPUModel: "Test CPU", NumCPU: 2, GoVersion: "go1.26", GOMAXPROCS: 2, Provider: "soft",
			Device: &datapath.DeviceInfo{Name: "soft0", Provider: "soft", FirmwareVersion: "1.0", MaxInlineData: 256,
				MaxSGE: 2, MaxQPWR: 1024, Ports: []datapath.PortInfo{{Num: 1, State: "ACTIVE", ActiveMTU: 4096, LinkLayer: "soft"}}},
			Port: 1,
		},
		Points: []Point{},
		Status: Status{State: StateComplete},
	}
	at := t0
	for _, par := range testParams {
		recs := make([]*Recorder, workers)
		for i := range recs {
			recs[i] = NewRecorder()
		}
		call, reply := classesOf(par)
		var sum float64
		for i := range n {
			v := int64(baseRTT(par) * scale * math.Exp(0.25*rng.NormFloat64()))
			sum += float64(v)
			r := recs[i%workers]
			r.Record(call, reply, v, par.CallBytes+par.ReplyBytes)
			r.Op(datapath.OpSend, par.CallBytes+28)
			r.Op(datapath.OpRecv, 28)
			if reply == Chunked {
				r.Op(datapath.OpWrite, par.ReplyBytes)
			}
		}
		recs[0].Fail("timeout", errors.New("rpc 17: no reply in 1s"))
		// Closed loop at depth d: the run lasts about n*mean/d.
		dur := time.Duration(sum / float64(par.Depth))
		p, err := Summarize(par, at, at.Add(dur), recs...)
		if err != nil {
			tb.Fatal(err)
		}
		p.Complete = true
		p.CPU = CPU{UserNs: int64(dur) / 2, SysNs: int64(dur) / 10}
		p.Negotiated = &Negotiated{
			Role:            "requester",
			Local:           PrivateData{Hex: "f6ab0e1801010303", Valid: true, Version: 1, RemoteInvalidate: true, SendBytes: 4096, RecvBytes: 4096},
			Peer:            &PrivateData{Hex: "f6ab0e1801010303", Valid: true, Version: 1, RemoteInvalidate: true, SendBytes: 4096, RecvBytes: 4096},
			InlineSendBytes: 4096, InlineRecvBytes: 4096, CreditsRequested: 128, CreditsGranted: 64, RemoteInvalidation: true,
		}
		half := dur / 2
		p.Intervals = []Interval{
			{OffsetNs: 0, DurationNs: int64(half), RPCs: p.Throughput.RPCs / 2, PayloadBytes: p.Throughput.PayloadBytes / 2},
			{OffsetNs: int64(half), DurationNs: int64(dur - half), RPCs: p.Throughput.RPCs - p.Throughput.RPCs/2,
				PayloadBytes: p.Throughput.PayloadBytes - p.Throughput.PayloadBytes/2, Errors: 1},
		}
		run.Points = append(run.Points, p)
		at = at.Add(dur + time.Millisecond)
	}
	run.End = at
	return run
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got:\n%s\n--- want:\n%s", name, got, want)
	}
}
