package soft_test

import (
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
)

var benchSizes = []int{64, 4096, 64 << 10, 1 << 20}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// poll1 busy-polls one completion into wc.
func poll1(tb testing.TB, cq datapath.CQ, wc []datapath.Completion) {
	for {
		n, err := cq.Poll(wc[:1])
		if err != nil {
			tb.Fatal(err)
		}
		if n == 1 {
			if wc[0].Status != datapath.StatusSuccess {
				tb.Fatalf("completion %+v: %v", wc[0], wc[0].Status)
			}
			return
		}
		runtime.Gosched()
	}
}

// TestPostPollAllocFree proves the in-process post and poll path allocates nothing: SEND
// with its receive, WRITE, READ, window bind and invalidation, completions polled.
func TestPostPollAllocFree(t *testing.T) {
	p := newPair(t, soft.Config{}, "inproc:", datapath.QPConfig{MaxInlineData: 64}, nil, nil)
	defer p.close(t)
	a := p.reg(t, p.devA, 4096, rwAll|datapath.AccessMWBind)
	b := p.reg(t, p.devB, 4096, rwAll)
	w, err := p.devA.AllocMW()
	if err != nil {
		t.Fatal(err)
	}
	p.closers = append(p.closers, w.Close)
	recv := []datapath.RecvWR{{ID: 1, SGL: sge(b, 4096)}}
	sends := []datapath.SendWR{
		{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: sge(a, 1024)},
		{ID: 3, Op: datapath.OpWrite, SGL: sge(a, 4096), RemoteAddr: b.Addr(), RKey: b.RKey()},
		{ID: 4, Op: datapath.OpRead, Flags: datapath.FlagSignaled, SGL: sge(a, 4096), RemoteAddr: b.Addr(), RKey: b.RKey()},
		{ID: 5, Op: datapath.OpSend, Flags: datapath.FlagSignaled | datapath.FlagInline, SGL: sge(a, 64)},
	}
	mw := []datapath.SendWR{
		{ID: 6, Op: datapath.OpBindMW, Flags: datapath.FlagSignaled, SGL: sge(a, 64), MW: w, BindAccess: datapath.AccessRemoteRead},
		{ID: 7, Op: datapath.OpLocalInv, Flags: datapath.FlagSignaled},
	}
	wcs := make([]datapath.Completion, 8)
	allocs := testing.AllocsPerRun(1000, func() {
		recv = recv[:1]
		if _, err := p.b.PostRecv(recv); err != nil {
			t.Fatal(err)
		}
		if _, err := p.b.PostRecv(recv); err != nil {
			t.Fatal(err)
		}
		if _, err := p.a.PostSend(sends); err != nil {
			t.Fatal(err)
		}
		pollN(t, p.cqA, wcs[:3])
		pollN(t, p.cqB, wcs[:2])
		mw[0].RKey = datapath.NextRKey(w.RKey())
		mw[1].InvRKey = mw[0].RKey
		if _, err := p.a.PostSend(mw); err != nil {
			t.Fatal(err)
		}
		pollN(t, p.cqA, wcs[:2])
	})
	if allocs != 0 {
		t.Fatalf("post+poll allocates %v times per round", allocs)
	}
}

// BenchmarkPingPong is the SEND/RECV round trip between two pollers, each on its own
// goroutine as in the transport: ns/op is the RTT. In process, and between two
// connections over TCP on loopback (the cross-process mode, here within one process).
func BenchmarkPingPong(b *testing.B) {
	for _, mode := range []struct{ name, addr string }{{"", "inproc:"}, {"tcp/", "127.0.0.1:0"}} {
		for _, size := range benchSizes {
			benchPingPong(b, mode.name, mode.addr, size)
		}
	}
}

func benchPingPong(b *testing.B, mode, addr string, size int) {
	{
		b.Run(mode+sizeName(size), func(b *testing.B) {
			p := newPair(b, soft.Config{}, addr, datapath.QPConfig{}, nil, nil)
			defer p.close(b)
			// Over TCP an idle poller blocks in Wait: a goroutine that only yields keeps the
			// Go scheduler from polling the network, which it does only when idle (or from
			// sysmon every 10 ms), and the round trip grows to milliseconds.
			idle := func(datapath.CQ) { runtime.Gosched() }
			if mode != "" {
				idle = func(cq datapath.CQ) { cq.Wait(time.Millisecond) }
			}
			ma := p.reg(b, p.devA, 2*size, datapath.AccessLocalWrite)
			mb := p.reg(b, p.devB, 2*size, datapath.AccessLocalWrite)
			echo := func(c datapath.Conn, cq datapath.CQ, mr datapath.MR, first bool, n int) {
				sgl := sge(mr, size)
				rsgl := []datapath.SGE{{Addr: mr.Addr() + uint64(size), Length: uint32(size), LKey: mr.LKey()}}
				recv := []datapath.RecvWR{{ID: 1, SGL: rsgl}}
				send := []datapath.SendWR{{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: sgl}}
				wcs := make([]datapath.Completion, 4)
				c.PostRecv(recv)
				// Completions of consecutive rounds may come in one Poll, so count events,
				// not rounds.
				var recvd, sent int
				if first {
					c.PostSend(send)
				}
				for recvd < n || sent < n {
					k, err := cq.Poll(wcs)
					if err != nil {
						b.Error(err)
						return
					}
					if k == 0 {
						idle(cq)
						continue
					}
					for _, wc := range wcs[:k] {
						if wc.Status != datapath.StatusSuccess {
							b.Errorf("%+v: %v", wc, wc.Status)
							return
						}
						if wc.Op != datapath.OpRecv {
							sent++
							continue
						}
						recvd++
						c.PostRecv(recv)
						if !first || recvd < n {
							c.PostSend(send)
						}
					}
				}
			}
			var wg sync.WaitGroup
			wg.Add(1)
			b.SetBytes(int64(2 * size))
			b.ReportAllocs()
			b.ResetTimer()
			go func() { defer wg.Done(); echo(p.b, p.cqB, mb, false, b.N) }()
			echo(p.a, p.cqA, ma, true, b.N)
			wg.Wait()
		})
	}
}

// BenchmarkRDMA measures RDMA WRITE and READ throughput with 16 work requests posted per
// batch and their completions polled.
func BenchmarkRDMA(b *testing.B) {
	const batch = 16
	for _, op := range []datapath.Opcode{datapath.OpWrite, datapath.OpRead} {
		for _, size := range benchSizes {
			b.Run(op.String()+"/"+sizeName(size), func(b *testing.B) {
				p := newPair(b, soft.Config{}, "inproc:", datapath.QPConfig{}, nil, nil)
				defer p.close(b)
				la := p.reg(b, p.devA, size, rwAll)
				rb := p.reg(b, p.devB, size, rwAll)
				wrs := make([]datapath.SendWR, batch)
				for i := range wrs {
					wrs[i] = datapath.SendWR{ID: uint64(i), Op: op, SGL: sge(la, size), RemoteAddr: rb.Addr(), RKey: rb.RKey()}
				}
				wrs[batch-1].Flags = datapath.FlagSignaled
				wc := make([]datapath.Completion, 1)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					k := min(batch, b.N-i)
					w := wrs[batch-k:]
					if _, err := p.a.PostSend(w); err != nil {
						b.Fatal(err)
					}
					poll1(b, p.cqA, wc)
				}
			})
		}
	}
}
