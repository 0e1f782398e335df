package report

import (
	"encoding/json"
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

// sweep describes a synthetic run, built the way plots' tests build theirs: real HDR
// histograms through results' Recorder, from a seeded RTT model.
type sweep struct {
	seed       uint64
	provider   string
	device     string // JSON of a datapath.DeviceInfo
	thresholds []int
	sizes      []int
	point      time.Duration // measuring time of each point (closed loop, depth 1)
	slow       float64       // RTT scale
	peerRecv   int           // the peer's receive size: caps the effective send threshold
}

var soft = sweep{
	seed: 1, provider: "soft",
	device: `{"name":"soft0","provider":"soft","node_type":"soft","firmware_version":"1.0","max_inline_data":256,
		"max_sge":2,"max_qp_wr":1024,"max_cqe":4096,"max_qp_rd_atom":16,"max_mr_size":1073741824,"max_mw":64,
		"ports":[{"num":1,"state":"ACTIVE","active_mtu":4096,"link_layer":"soft"}]}`,
	thresholds: []int{1024, 4096},
	sizes:      []int{64, 4096, 65536},
	point:      20 * time.Millisecond, slow: 1, peerRecv: 8192,
}

var rxe = sweep{
	seed: 2, provider: "verbs",
	device: `{"name":"rxe0","provider":"verbs","node_type":"CA","max_inline_data":64,"vendor_id":32902,"vendor_part_id":1,
		"max_sge":32,"max_qp_wr":1048576,"ports":[{"num":1,"state":"ACTIVE","active_mtu":1024,"link_layer":"Ethernet",
		"gids":[{"index":1,"gid":"fe80::1","type":"RoCE v2","netdev":"eth0"}]}]}`,
	thresholds: []int{4096},
	sizes:      []int{64, 4096, 65536},
	point:      15 * time.Millisecond, slow: 1.8, peerRecv: 4096,
}

func class(size, thr int) results.Class {
	switch {
	case size+28 <= thr:
		return results.Short
	case size <= 16*thr:
		return results.Chunked
	}
	return results.Long
}

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

// run builds a deterministic ECHO sweep. Points whose class is chunked also carry a quarter of
// short RPCs (so the summary has per-class rows and an "all" row), the operations a requester
// would post, and the 4096-byte points saw one timeout.
func (s sweep) run(tb testing.TB) *results.Run {
	tb.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 7))
	r := &results.Run{
		SchemaVersion: results.SchemaVersion,
		Tool:          "rpcrdma-bench test",
		Start:         t0,
		Config:        json.RawMessage(`{"seed":1,"sizes":"64,4096,65536"}`),
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
			var sum int64
			for n := 0; sum < int64(s.point); n++ {
				k := c
				if c == results.Chunked && n%4 == 0 {
					k = results.Short
				}
				v := rttNs(rng, size, k, s.slow)
				sum += v
				rec.Record(k, k, v, 2*size)
				rec.Op(datapath.OpSend, size)
				rec.Op(datapath.OpRecv, size)
				if k != results.Short {
					rec.Op(datapath.OpRead, size)
				}
			}
			if size == 4096 {
				rec.Fail("timeout", errors.New("rpc xid 0x2a: no reply in 1s"))
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
				Role: "requester",
				Local: results.PrivateData{Hex: "f6ab0e1801010303", Valid: true, Version: 1, RemoteInvalidate: true,
					SendBytes: thr, RecvBytes: thr},
				Peer: &results.PrivateData{Hex: "f6ab0e1801010707", Valid: true, Version: 1, RemoteInvalidate: true,
					SendBytes: s.peerRecv, RecvBytes: s.peerRecv},
				InlineSendBytes: eff, InlineRecvBytes: min(thr, s.peerRecv), CreditsRequested: 128, CreditsGranted: 64,
				RemoteInvalidation: true,
			}
			r.Points = append(r.Points, p)
			at = at.Add(dur + 50*time.Millisecond)
		}
	}
	r.End = at
	return r
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
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (%d bytes, want %d); run go test ./report -update if the change is intended",
			name, len(got), len(want))
	}
}
