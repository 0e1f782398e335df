package rpcrdma

import (
	"os"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// roundTrip runs one RPC at depth 1 through both endpoints, driven by this goroutine.
func roundTrip(p *pair, c Call, done []Result) {
	if err := p.req.Submit(c); err != nil {
		p.t.Fatal(err)
	}
	for {
		if _, err := p.rsp.Progress(done); err != nil {
			p.t.Fatal(err)
		}
		n, err := p.req.Progress(done)
		if err != nil {
			p.t.Fatal(err)
		}
		if n > 0 {
			if done[0].Err != nil {
				p.t.Fatal(done[0].Err)
			}
			return
		}
	}
}

// TestZeroAllocs: the RPC path allocates nothing per RPC, in every class and both memory
// modes.
func TestZeroAllocs(t *testing.T) {
	if os.Getenv("RPCRDMA_TEST_TCP") != "" {
		// AllocsPerRun runs at GOMAXPROCS 1, where this goroutine's busy polling starves
		// the provider's TCP goroutines; allocations are the engine's, checked in process.
		t.Skip("in-process provider only")
	}
	for _, mem := range []MemoryMode{MemoryPreregistered, MemoryWindows} {
		cfg := testCfg(4096)
		cfg.Memory = mem
		cfg.ResponderRead = true
		cfg.RemoteInvalidate = true
		p := newPair(t, cfg, cfg)
		done := make([]Result, 16)
		for _, c := range []Call{
			{Proc: benchprog.ProcNull},
			{Proc: benchprog.ProcEcho, Size: 512},
			{Proc: benchprog.ProcSink, Size: 8192},
			{Proc: benchprog.ProcSource, Size: 8192},
			{Proc: benchprog.ProcEcho, Size: 8192},
			{Proc: benchprog.ProcSource, Size: 8192, Class: rpcproto.ClassReplyChunk},
			{Proc: benchprog.ProcSource, Size: 8192, Class: rpcproto.ClassResponderRead},
			{Proc: benchprog.ProcNull, Class: rpcproto.ClassPosZeroRead},
		} {
			roundTrip(p, c, done) // warm up: slices reach their working capacity
			if n := testing.AllocsPerRun(200, func() { roundTrip(p, c, done) }); n != 0 {
				t.Errorf("%s: %s %d bytes class %s: %v allocs per RPC", mem, procNames[c.Proc], c.Size, c.Class, n)
			}
		}
	}
}

// BenchmarkNullRPC measures the engine's CPU cost of a short NULL RPC at depth 1 over the
// soft provider in process: requester and responder run in this goroutine, so ns/op is the
// sum of both sides plus the emulated wire (a memcpy per Send and the completion pushes,
// which the soft provider does in the posting goroutine). BenchmarkNullRPCSides splits it.
func BenchmarkNullRPC(b *testing.B) {
	for _, mem := range []MemoryMode{MemoryPreregistered, MemoryWindows} {
		b.Run(mem.String(), func(b *testing.B) {
			cfg := testCfg(4096)
			cfg.Memory = mem
			cfg.Verify = false
			p := newPair(b, cfg, cfg)
			done := make([]Result, 16)
			c := Call{Proc: benchprog.ProcNull}
			roundTrip(p, c, done)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				roundTrip(p, c, done)
			}
		})
	}
}

// BenchmarkNullRPCSides reports each side's share of a depth-1 short NULL RPC as req-ns/op
// (Submit and the Progress calls that poll, decode and complete the reply) and rsp-ns/op
// (the Progress calls that decode, serve and answer the call), each including its own
// posts into the soft provider. The clock reads around each side's calls are timed
// separately and subtracted.
func BenchmarkNullRPCSides(b *testing.B) {
	cfg := testCfg(4096)
	cfg.Verify = false
	p := newPair(b, cfg, cfg)
	done := make([]Result, 16)
	c := Call{Proc: benchprog.ProcNull}
	roundTrip(p, c, done)
	var clock time.Duration
	for range 1000 {
		t0 := time.Now()
		clock += time.Since(t0)
	}
	clock /= 1000
	var req, rsp time.Duration
	var reqCalls, rspCalls int
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := p.req.Submit(c); err != nil {
			b.Fatal(err)
		}
		req += time.Since(t0)
		reqCalls++
		for {
			t0 = time.Now()
			p.rsp.Progress(done)
			rsp += time.Since(t0)
			rspCalls++
			t0 = time.Now()
			n, _ := p.req.Progress(done)
			req += time.Since(t0)
			reqCalls++
			if n > 0 {
				break
			}
		}
	}
	b.ReportMetric(float64(req-time.Duration(reqCalls)*clock)/float64(b.N), "req-ns/op")
	b.ReportMetric(float64(rsp-time.Duration(rspCalls)*clock)/float64(b.N), "rsp-ns/op")
}

// BenchmarkRawPingPong is the datapath alone doing what a short NULL RPC needs: a Send each
// way, each consuming a posted receive, every completion polled, receives reposted. The
// difference to BenchmarkNullRPC is the engine's own cost (both sides).
func BenchmarkRawPingPong(b *testing.B) {
	step := rawPingPong(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		step()
	}
}

// BenchmarkEngine prints the protocol engine's own CPU per RPC per side,
// engine-ns/side = (NullRPC − RawPingPong) / 2. Both are measured in the same run on two
// pairs, alternating in blocks, so that load from other work on the machine falls on both
// alike instead of skewing their difference. ns/op is one of each together; rpc-ns/op and
// raw-ns/op are the two halves.
func BenchmarkEngine(b *testing.B) {
	cfg := testCfg(4096)
	cfg.Verify = false
	p := newPair(b, cfg, cfg)
	done := make([]Result, 16)
	c := Call{Proc: benchprog.ProcNull}
	roundTrip(p, c, done)
	raw := rawPingPong(b)
	const block = 512
	var rpcT, rawT time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		k := min(block, b.N-n)
		t0 := time.Now()
		for range k {
			roundTrip(p, c, done)
		}
		t1 := time.Now()
		for range k {
			raw()
		}
		rawT += time.Since(t1)
		rpcT += t1.Sub(t0)
		n += k
	}
	rpc, rw := float64(rpcT)/float64(b.N), float64(rawT)/float64(b.N)
	b.ReportMetric(rpc, "rpc-ns/op")
	b.ReportMetric(rw, "raw-ns/op")
	b.ReportMetric((rpc-rw)/2, "engine-ns/side")
}

// rawPingPong sets up a pair and returns one raw round trip on it: the requester posts a
// receive and Sends, the responder polls for it, posts a receive and Sends back, the
// requester polls for that. The engines are quiesced first; their queue pairs and memory
// are borrowed, so the pair is not used for RPCs afterwards.
func rawPingPong(b *testing.B) func() {
	cfg := testCfg(4096)
	cfg.Verify = false
	p := newPair(b, cfg, cfg)
	roundTrip(p, Call{Proc: benchprog.ProcNull}, make([]Result, 4))
	type end struct {
		c   *Conn
		buf []byte
		sge datapath.SGE
	}
	mk := func(c *Conn) end {
		buf := c.sendPool.Get()
		return end{c, buf.Bytes(), buf.SGE(96)}
	}
	a, z := mk(p.req), mk(p.rsp)
	rbufA, rbufZ := p.req.recvPool.Get(), p.rsp.recvPool.Get()
	wcs := make([]datapath.Completion, 8)
	send := []datapath.SendWR{{Op: datapath.OpSend, Flags: datapath.FlagSignaled | datapath.FlagInline}}
	recv := []datapath.RecvWR{{}}
	recvSGE := make([]datapath.SGE, 1)
	post := func(e end, rb interface{ SGE(int) datapath.SGE }) {
		recvSGE[0] = rb.SGE(4096)
		recv[0].SGL = recvSGE
		if _, err := e.c.qp.PostRecv(recv); err != nil {
			b.Fatal(err)
		}
	}
	sendSGE := make([]datapath.SGE, 1)
	sendOne := func(e end) {
		sendSGE[0] = e.sge
		send[0].SGL = sendSGE
		if _, err := e.c.qp.PostSend(send); err != nil {
			b.Fatal(err)
		}
	}
	// wait polls e's CQ until a receive completed, counting the send completions too.
	wait := func(e end) {
		for {
			n, err := e.c.cq.Poll(wcs)
			if err != nil {
				b.Fatal(err)
			}
			for _, wc := range wcs[:n] {
				if wc.Status != datapath.StatusSuccess {
					b.Fatal(wc.Status)
				}
				if wc.Op == datapath.OpRecv {
					return
				}
			}
		}
	}
	return func() {
		post(a, rbufA)
		sendOne(a)
		wait(z)
		post(z, rbufZ)
		sendOne(z)
		wait(a)
	}
}
