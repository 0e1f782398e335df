package transport

import (
	"runtime/metrics"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// cgoCalls reads the runtime's count of calls from Go into C.
func cgoCalls() uint64 {
	s := []metrics.Sample{{Name: "/cgo/go-to-c-calls:calls"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkNullRPC is a depth-1 NULL RPC between this project's requester and responder on
// one device (rxe0 in the VM), both progressed by this goroutine: ns/op is a full round
// trip with both ends' work in it. Beside it, what one RPC costs in crossings: cgo-calls/op
// (Go to C calls, the whole process), progress/op (Progress calls, each at least one CQ
// poll, on either end), posts/op (Sends posted plus receives completed, both ends).
func BenchmarkNullRPC(b *testing.B) {
	cdev, sdev, l, _ := setup(b)
	cfg := rpcrdma.Config{SendSize: 4096, RecvSize: 4096, Credits: 1, MaxPayload: 4096}
	p := connect(b, cdev, sdev, l, cfg)
	defer p.close()
	call := rpcrdma.Call{Proc: benchprog.ProcNull}
	var res [4]rpcrdma.Result
	rpc := func() (progress int) {
		if err := p.req.Submit(call); err != nil {
			b.Fatal(err)
		}
		for {
			progress += 2
			if _, err := p.rsp.Progress(res[:]); err != nil {
				b.Fatal(err)
			}
			n, err := p.req.Progress(res[:])
			if err != nil {
				b.Fatal(err)
			}
			if n == 1 {
				if res[0].Err != nil {
					b.Fatal(res[0].Err)
				}
				return progress
			}
		}
	}
	for range 100 {
		rpc() // warm up: receives posted, slices at their working size
	}
	posts0 := p.req.Stats().Send.Count + p.rsp.Stats().Send.Count + p.req.Stats().Recv.Count + p.rsp.Stats().Recv.Count
	c0 := cgoCalls()
	progress := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		progress += rpc()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(cgoCalls()-c0)/n, "cgo-calls/op")
	b.ReportMetric(float64(progress)/n, "progress/op")
	posts := p.req.Stats().Send.Count + p.rsp.Stats().Send.Count + p.req.Stats().Recv.Count + p.rsp.Stats().Recv.Count
	b.ReportMetric(float64(posts-posts0)/n, "posts/op")
}
