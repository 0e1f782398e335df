package plots

import (
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

// sweep describes a synthetic run.
type sweep struct {
	seed       uint64
	provider   string
	device     string // JSON of a datapath.DeviceInfo: tests reach the type only through results
	thresholds []int
	sizes      []int
	point      time.Duration // measuring time of each point (closed loop, depth 1)
	slow       float64       // RTT scale
	peerRecv   int           // the peer's receive size: caps the effective send threshold
}

var soft = sweep{
	seed: 1, provider: "soft",
	device: `{"name":"soft0","provider":"soft","firmware_version":"1.0","max_inline_data":256,
		"max_sge":2,"max_qp_wr":1024,"ports":[{"num":1,"state":"ACTIVE","active_mtu":4096,"link_layer":"soft"}]}`,
	thresholds: []int{1024, 4096, 16384},
	sizes:      []int{64, 512, 4096, 32768, 262144, 1 << 20},
	point:      300 * time.Millisecond, slow: 1, peerRecv: 8192,
}

var rxe = sweep{
	seed: 2, provider: "verbs",
	device: `{"name":"rxe0","provider":"verbs","firmware_version":"","max_inline_data":64,
		"max_sge":32,"max_qp_wr":1048576,"ports":[{"num":1,"state":"ACTIVE","active_mtu":1024,"link_layer":"Ethernet"}]}`,
	thresholds: []int{4096},
	sizes:      []int{64, 512, 4096, 32768, 262144, 1 << 20},
	point:      200 * time.Millisecond, slow: 1.8, peerRecv: 4096,
}

// class is the synthetic message class of a size under an effective threshold: inline when it
// fits, chunks up to 16 thresholds, then a long message.
func class(size, thr int) results.Class {
	switch {
	case size+28 <= thr:
		return results.Short
	case size <= 16*thr:
		return results.Chunked
	}
	return results.Long
}

// rttNs is the synthetic RTT model: a fixed cost, a per-byte cost each way, a penalty for
// chunks and long messages, a lognormal spread and a rare tail.
func rttNs(rng *rand.Rand, size int, c results.Class, slow float64) int64 {
	us := 4 + 2*float64(size)/1000
	switch c {
	case results.Chunked:
		us += 6
	case results.Long:
		us += 11
	}
	us *= slow * math.Exp(0.15*rng.NormFloat64())
	if rng.Float64() < 0.003 {
		us *= 3 + 7*rng.Float64()
	}
	return int64(us * 1e3)
}

// run builds a deterministic ECHO sweep with real HDR histograms through results' Recorder.
func (s sweep) run(tb testing.TB) *results.Run {
	tb.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 7))
	r := &results.Run{
		SchemaVersion: results.SchemaVersion,
		Tool:          "rpcrdma-bench test",
		Start:         t0,
		Config:        json.RawMessage(`{"seed":1}`),
		Environment: results.Environment{
			Hostname: "bench1", OS: "linux", Arch: "amd64", Kernel: "6.12.0", KernelVersion: "#1 SMP",
			CPUModel: "Test CPU", NumCPU: 2, GoVersion: "go1.26", GOMAXPROCS: 2, Provider: s.provider, Port: 1,
		},
		Points: []results.Point{},
		Status: results.Status{State: results.StateComplete},
	}
	if err := json.Unmarshal([]byte(s.device), &r.Environment.Device); err != nil {
		tb.Fatal(err)
	}
	at := t0.Add(time.Second)
	rec := results.NewRecorder()
	for _, thr := range s.thresholds {
		eff := min(thr, s.peerRecv)
		for _, size := range s.sizes {
			rec.Reset()
			c := class(size, eff)
			// One worker at depth 1: RPCs follow each other until the point's time is up.
			var sum int64
			for sum < int64(s.point) {
				v := rttNs(rng, size, c, s.slow)
				sum += v
				rec.Record(c, c, v, 2*size)
			}
			dur := time.Duration(sum)
			par := results.Params{Procedure: "ECHO", Class: "auto", CallBytes: size, ReplyBytes: size,
				InlineThreshold: thr, Depth: 1, Connections: 1}
			p, err := results.Summarize(par, at, at.Add(dur), rec)
			if err != nil {
				tb.Fatal(err)
			}
			p.Complete = true
			p.Negotiated = &results.Negotiated{
				Role:            "requester",
				Local:           results.PrivateData{Valid: true, Version: 1, RemoteInvalidate: true, SendBytes: thr, RecvBytes: thr},
				Peer:            &results.PrivateData{Valid: true, Version: 1, RemoteInvalidate: true, SendBytes: s.peerRecv, RecvBytes: s.peerRecv},
				InlineSendBytes: eff, InlineRecvBytes: min(thr, s.peerRecv), CreditsRequested: 128, CreditsGranted: 64,
				RemoteInvalidation: true,
			}
			p.Intervals = intervals(rng, p, 8)
			r.Points = append(r.Points, p)
			at = at.Add(dur + 50*time.Millisecond)
		}
	}
	r.End = at
	return r
}

// intervals splits a point's RPCs over n (even) intervals with ±10% noise in pairs, so they
// add up; the third interval of the 4K points saw an error.
func intervals(rng *rand.Rand, p results.Point, n int) []results.Interval {
	var ivs []results.Interval
	step := p.DurationNs / int64(n)
	per := float64(p.Throughput.PayloadBytes) / math.Max(1, float64(p.Throughput.RPCs))
	mean := float64(p.Throughput.RPCs) / float64(n)
	left := p.Throughput.RPCs
	d := 0.0
	for i := range n {
		if i%2 == 0 {
			d = 0.1 * rng.Float64()
		} else {
			d = -d
		}
		k := min(uint64(mean*(1+d)), left)
		if i == n-1 {
			k = left
		}
		left -= k
		iv := results.Interval{OffsetNs: int64(i) * step, DurationNs: step, RPCs: k, PayloadBytes: uint64(float64(k) * per)}
		if i == 2 && p.Params.CallBytes == 4096 {
			iv.Errors = 1
		}
		ivs = append(ivs, iv)
	}
	return ivs
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (%d bytes, want %d); run go test ./plots -update if the change is intended",
			name, len(got), len(want))
	}
}
