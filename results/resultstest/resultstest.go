package resultstest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// T0 is the start of every synthetic run: goldens must not depend on the clock.
var T0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

// FailMessage is the error a failing point records.
const FailMessage = "rpc xid 0x2a: no reply in 1s"

// Sweep describes a synthetic run. The zero value is one 64-byte ECHO point at a 4 KiB
// threshold on the soft device.
type Sweep struct {
	// Seed seeds the RTT model: the same Sweep always builds the same run.
	Seed uint64
	// Device is the environment's device; its Provider is the run's provider. Nil means
	// SoftDevice().
	Device *datapath.DeviceInfo

	// Points lists the points in order. When empty, the points are ECHO calls, depth 1, one
	// connection, for each of Thresholds and, within it, each of Sizes.
	Points []results.Params
	// Thresholds are the inline thresholds of the generated ECHO points; empty means 4096.
	Thresholds []int
	// Sizes are the call and reply sizes of the generated ECHO points; empty means 64.
	Sizes []int
	// PeerRecv is the peer's receive size, which caps the effective send threshold; 0 means
	// the point's own threshold.
	PeerRecv int

	// RPCs, when positive, is the number of RPCs of each point; otherwise a point records RPCs
	// (closed loop) until their RTTs add up to Time times its depth.
	RPCs int
	// Time is the measuring time of a point when RPCs is 0; 0 means 10ms.
	Time time.Duration
	// Workers is the number of recorders a point's RPCs are dealt to, round robin; 0 means 1.
	Workers int

	// Slow scales every RTT; 0 means 1.
	Slow float64
	// Spread is the sigma of the lognormal RTT noise; 0 means 0.15.
	Spread float64
	// Tail is the fraction of RPCs that take 3 to 10 times longer; 0 means none.
	Tail float64
	// Mixed makes every fourth RPC of a chunked point a short one, so its summary has more
	// than one class.
	Mixed bool

	// Intervals is the number of throughput intervals of each point (their RPC counts vary by
	// up to 10% but add up); 0 means none.
	Intervals int
	// FailSizes are the call sizes whose points record one timeout (FailMessage) and, with
	// Intervals, one error in their third (or last) interval.
	FailSizes []int
}

// SoftDevice is the device the soft provider reports.
func SoftDevice() *datapath.DeviceInfo {
	return &datapath.DeviceInfo{Name: "soft0", Provider: "soft", NodeType: "soft", FirmwareVersion: "1.0",
		MaxInlineData: 256, MaxSGE: 2, MaxQPWR: 1024, MaxCQE: 4096, MaxQPRdAtom: 16, MaxMRSize: 1 << 30, MaxMW: 64,
		Ports: []datapath.PortInfo{{Num: 1, State: "ACTIVE", ActiveMTU: 4096, LinkLayer: "soft"}}}
}

// RxeDevice is a Soft-RoCE (rxe) device as the verbs provider reports it.
func RxeDevice() *datapath.DeviceInfo {
	return &datapath.DeviceInfo{Name: "rxe0", Provider: "verbs", NodeType: "CA", VendorID: 32902, VendorPartID: 1,
		MaxInlineData: 64, MaxSGE: 32, MaxQPWR: 1 << 20,
		Ports: []datapath.PortInfo{{Num: 1, State: "ACTIVE", ActiveMTU: 1024, LinkLayer: "Ethernet",
			GIDs: []datapath.GIDInfo{{Index: 1, GID: "fe80::1", Type: "RoCE v2", NetDev: "eth0"}}}}}
}

// Class is the synthetic message class of a payload under an effective threshold: inline
// when it fits with a 28-byte header, chunks up to 16 thresholds, then a long message.
func Class(size, threshold int) rpcproto.Kind {
	switch {
	case size+28 <= threshold:
		return rpcproto.Short
	case size <= 16*threshold:
		return rpcproto.Chunked
	}
	return rpcproto.Long
}

// rttNs is the RTT model: a fixed cost, a per-byte cost, a penalty for chunks and long
// messages, lognormal noise and a rare tail.
func (s *Sweep) rttNs(rng *rand.Rand, bytes int, c rpcproto.Kind) int64 {
	us := 4 + float64(bytes)/1000
	switch c {
	case rpcproto.Chunked:
		us += 6
	case rpcproto.Long:
		us += 11
	}
	us *= s.Slow * math.Exp(s.Spread*rng.NormFloat64())
	if rng.Float64() < s.Tail {
		us *= 3 + 7*rng.Float64()
	}
	return int64(us * 1e3)
}

// privateData is what RFC 8797 section 4 puts on the wire for these sizes: the magic, version
// 1, the Remote Invalidation flag and the sizes in 1 KiB units minus one.
func privateData(send, recv int) results.PrivateData {
	return results.PrivateData{Hex: fmt.Sprintf("f6ab0e180101%02x%02x", send/1024-1, recv/1024-1),
		Valid: true, Version: 1, RemoteInvalidate: true, SendBytes: send, RecvBytes: recv}
}

// withDefaults returns s with its zero fields replaced by their defaults.
func (s Sweep) withDefaults() Sweep {
	if s.Device == nil {
		s.Device = SoftDevice()
	}
	if len(s.Points) == 0 {
		thr, sizes := s.Thresholds, s.Sizes
		if len(thr) == 0 {
			thr = []int{4096}
		}
		if len(sizes) == 0 {
			sizes = []int{64}
		}
		for _, t := range thr {
			for _, n := range sizes {
				s.Points = append(s.Points, results.Params{Procedure: "ECHO", Class: "auto", CallBytes: n,
					ReplyBytes: n, InlineThreshold: t, Depth: 1, Connections: 1})
			}
		}
	}
	if s.Time == 0 {
		s.Time = 10 * time.Millisecond
	}
	s.Workers = max(s.Workers, 1)
	if s.Slow == 0 {
		s.Slow = 1
	}
	if s.Spread == 0 {
		s.Spread = 0.15
	}
	return s
}

// Run builds the run s describes, failing tb if results rejects it.
func (s Sweep) Run(tb testing.TB) *results.Run {
	tb.Helper()
	s = s.withDefaults()
	rng := rand.New(rand.NewPCG(s.Seed, 7))
	r := &results.Run{
		SchemaVersion: results.SchemaVersion,
		Tool:          "rpcrdma-bench test",
		Start:         T0,
		Config:        fmt.Appendf(nil, `{"seed":%d}`, s.Seed),
		Environment: results.Environment{
			Hostname: "bench1", OS: "linux", Arch: "amd64", Kernel: "6.12.0", KernelVersion: "#1 SMP",
			CPUModel: "Test CPU", NumCPU: 2, GoVersion: "go1.26", GOMAXPROCS: 2,
			Provider: s.Device.Provider, Device: s.Device, Port: 1,
		},
		Points: []results.Point{},
		Status: results.Status{State: results.StateComplete},
	}
	recs := make([]*results.Recorder, s.Workers)
	for i := range recs {
		recs[i] = results.NewRecorder()
	}
	at := T0.Add(time.Second)
	for _, par := range s.Points {
		peer := par.InlineThreshold
		if s.PeerRecv > 0 {
			peer = s.PeerRecv
		}
		send, recv := min(par.InlineThreshold, peer), par.InlineThreshold
		call, reply := Class(par.CallBytes, send), Class(par.ReplyBytes, recv)
		depth := max(par.Depth, 1)
		for _, rec := range recs {
			rec.Reset()
		}
		var sum int64
		var ops results.Ops // counted as the transport would, for the point's ops
		add := func(o *results.OpCount, n int) { o.Count++; o.Bytes += uint64(n) }
		for n := 0; s.RPCs > 0 && n < s.RPCs || s.RPCs <= 0 && sum < int64(s.Time)*int64(depth); n++ {
			c, rc := call, reply
			if s.Mixed && n%4 == 0 {
				if c == rpcproto.Chunked {
					c = rpcproto.Short
				}
				if rc == rpcproto.Chunked {
					rc = rpcproto.Short
				}
			}
			v := s.rttNs(rng, par.CallBytes+par.ReplyBytes, max(c, rc))
			sum += v
			rec := recs[n%len(recs)]
			rec.Record(c, rc, v, par.CallBytes+par.ReplyBytes)
			add(&ops.Send, min(par.CallBytes, send)+28)
			add(&ops.Recv, min(par.ReplyBytes, recv)+28)
			if c != rpcproto.Short {
				add(&ops.Read, par.CallBytes)
			}
			if rc != rpcproto.Short {
				add(&ops.Write, par.ReplyBytes)
			}
		}
		fail := slices.Contains(s.FailSizes, par.CallBytes)
		if fail {
			recs[0].Fail("timeout", errors.New(FailMessage))
		}
		// Closed loop at depth d: the point lasts about the sum of its RTTs over d.
		dur := time.Duration(sum / int64(depth))
		p, err := results.Summarize(par, at, at.Add(dur), recs...)
		if err != nil {
			tb.Fatal(err)
		}
		p.Complete = true
		p.Ops = ops
		p.CPU = results.CPU{UserNs: int64(dur) / 2, SysNs: int64(dur) / 10}
		peerPD := privateData(peer, peer)
		p.Negotiated = &results.Negotiated{
			Role: "requester", Local: privateData(par.InlineThreshold, par.InlineThreshold), Peer: &peerPD,
			InlineSendBytes: send, InlineRecvBytes: min(recv, peer), CreditsRequested: 128, CreditsGranted: 64,
			RemoteInvalidation: true,
		}
		if s.Intervals > 0 {
			p.Intervals = intervals(rng, p, s.Intervals, fail)
		}
		r.Points = append(r.Points, p)
		at = at.Add(dur + 50*time.Millisecond)
	}
	r.End = at
	return r
}

// intervals splits a point's RPCs over n intervals with ±10% noise in pairs, so they add up;
// a failed point's error falls in the third (or last) interval.
func intervals(rng *rand.Rand, p results.Point, n int, fail bool) []results.Interval {
	ivs := make([]results.Interval, 0, n)
	step := p.DurationNs / int64(n)
	per := float64(p.Throughput.PayloadBytes) / math.Max(1, float64(p.Throughput.RPCs))
	mean := float64(p.Throughput.RPCs) / float64(n)
	left, paid := p.Throughput.RPCs, uint64(0)
	d := 0.0
	for i := range n {
		if i%2 == 0 {
			d = 0.1 * rng.Float64()
		} else {
			d = -d
		}
		k := min(uint64(mean*(1+d)), left)
		b := uint64(float64(k) * per)
		dur := step
		if i == n-1 {
			k, b, dur = left, p.Throughput.PayloadBytes-paid, p.DurationNs-int64(i)*step
		}
		left -= k
		paid += b
		iv := results.Interval{OffsetNs: int64(i) * step, DurationNs: dur, RPCs: k, PayloadBytes: b}
		if fail && i == min(2, n-1) {
			iv.Errors = 1
		}
		ivs = append(ivs, iv)
	}
	return ivs
}
