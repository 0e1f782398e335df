package knfsd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// streamCalls is the number of NFS NULL calls per depth (KNFSD_CALLS overrides it).
const streamCalls = 10000

// TestIntegrationKnfsdNullStream runs the project's requester (package rpcrdma) against
// knfsd: 10,000 NFSv3 NULL calls at depth 1 and at depth 32 on one connection, none of which
// may fail. It prints the negotiated parameters and, per depth, the round-trip percentiles
// as "KNFSD" lines for the host's summary.
func TestIntegrationKnfsdNullStream(t *testing.T) {
	addr := os.Getenv("KNFSD_ADDR")
	if addr == "" {
		t.Skip("KNFSD_ADDR not set: runs in the soft-RoCE VM against knfsd (make vmtest)")
	}
	n := streamCalls
	if s := os.Getenv("KNFSD_CALLS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("KNFSD_CALLS=%q: want a positive number", s)
		}
		n = v
	}
	dev, err := verbs.New(verbs.Config{}).Open(os.Getenv("KNFSD_DEVICE"))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	// The defaults: 4 KiB inline both ways (the Linux client's), 64 credits requested.
	cfg := rpcrdma.Config{Codec: rpcproto.NullCodec{P: rpcproto.NullProgram(nfsProg, 3)}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := rpcrdma.Dial(ctx, dev, addr, cfg)
	if err != nil {
		t.Fatalf("dial knfsd at %s: %v", addr, err)
	}
	defer c.Close()

	p := c.Params()
	fmt.Printf("KNFSD private data: ours sent=%v %s; knfsd's sent=%v %s\n", p.LocalSent, privString(p.Local), p.PeerSent, privString(p.Peer))
	fmt.Printf("KNFSD effective inline: send %d recv %d remote_invalidate=%v; credits requested %d\n",
		p.Inline.SendSize, p.Inline.RecvSize, p.Inline.RemoteInvalidate, p.Credits)
	if !p.PeerSent || p.Peer.SendSize != 4096 || p.Peer.RecvSize != 4096 {
		t.Errorf("knfsd private data %+v (sent %v), want 4096/4096", p.Peer, p.PeerSent)
	}
	if p.Inline.SendSize != 4096 || p.Inline.RecvSize != 4096 {
		t.Errorf("effective inline %+v, want 4096 both ways", p.Inline)
	}

	calls := make([]rpcrdma.Call, n)
	for i := range calls {
		calls[i] = rpcrdma.Call{Tag: uint64(i)}
	}
	for _, depth := range []int{1, 32} {
		c0 := c.Stats()
		start := time.Now()
		rtt, errs, first, err := drive(c, calls, depth, 5*time.Minute)
		elapsed := time.Since(start)
		if err != nil || len(rtt) == 0 {
			t.Fatalf("depth %d: %v after %d calls (%d failed, the first with %v)", depth, err, len(rtt), errs, first)
		}
		st := c.Stats()
		slices.Sort(rtt)
		pct := func(q float64) float64 { return float64(rtt[int(q*float64(len(rtt)-1))].Nanoseconds()) / 1e3 }
		fmt.Printf("KNFSD depth=%d calls=%d errors=%d credits_granted=%d max_outstanding=%d short_calls=%d short_replies=%d rtt_p50_us=%.1f rtt_p99_us=%.1f rtt_max_us=%.1f elapsed_s=%.1f rpc_per_s=%.0f\n",
			depth, len(rtt), errs, st.Credit, st.MaxOutstanding, st.Calls.Short-c0.Calls.Short,
			st.RepliesReceived.Short-c0.RepliesReceived.Short, pct(0.5), pct(0.99), pct(1),
			elapsed.Seconds(), float64(len(rtt))/elapsed.Seconds())
		if errs != 0 || len(rtt) != n {
			t.Errorf("depth %d: %d of %d calls failed, the first with %v", depth, errs, n, first)
		}
		if st.Credit == 0 || st.MaxOutstanding > int(st.MaxCredit) {
			t.Errorf("depth %d: credit %d, %d outstanding with at most %d granted", depth, st.Credit, st.MaxOutstanding, st.MaxCredit)
		}
		if want := min(depth, int(st.Credit)); st.MaxOutstanding < want {
			t.Errorf("depth %d: at most %d calls were outstanding, want %d", depth, st.MaxOutstanding, want)
		}
	}
}

func privString(p wire.PrivateData) string {
	return fmt.Sprintf("{version %d, send %d, recv %d, R=%v}", p.Version, p.SendSize, p.RecvSize, p.RemoteInvalidate)
}

// drive runs calls on c in a closed loop at most depth outstanding and returns each
// successful call's round trip, from Submit to the Result, the number that failed and the
// first of their errors.
func drive(c *rpcrdma.Conn, calls []rpcrdma.Call, depth int, timeout time.Duration) (rtt []time.Duration, errs int, first, err error) {
	sentAt := make([]time.Time, len(calls))
	rtt = make([]time.Duration, 0, len(calls))
	var buf [64]rpcrdma.Result
	deadline := time.Now().Add(timeout)
	next, inflight, done := 0, 0, 0
	for done < len(calls) {
		for next < len(calls) && inflight < depth {
			call := calls[next]
			call.Tag = uint64(next)
			sentAt[next] = time.Now()
			err := c.Submit(call)
			if errors.Is(err, rpcrdma.ErrNoCredit) {
				break
			}
			next++
			if err != nil {
				errs++
				done++
				first = cmp.Or(first, err)
				continue
			}
			inflight++
		}
		k, err := c.Progress(buf[:])
		now := time.Now()
		for _, r := range buf[:k] {
			if r.Err != nil {
				errs++
				first = cmp.Or(first, r.Err)
				continue
			}
			rtt = append(rtt, now.Sub(sentAt[r.Tag]))
		}
		inflight -= k
		done += k
		if err != nil {
			return rtt, errs, first, err
		}
		if now.After(deadline) {
			return rtt, errs, first, fmt.Errorf("%d of %d calls finished in %v", done, len(calls), timeout)
		}
	}
	return rtt, errs, first, nil
}
