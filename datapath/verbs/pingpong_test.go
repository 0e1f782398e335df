//go:build verbs && cgo && pingpong

package verbs

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// RunPingPong runs both sides of a ping-pong in C over deferring connections: every round
// trip is measured, each message arrives whole in the receive slot the loop reposts, the
// turnaround probe counts C's turnarounds, and nothing is left staged (a Go poll afterwards
// finds the queues consistent). It refuses a connection that does not defer, and a side
// whose peer stopped answering ends with ErrTimeout.
func TestIntegrationRunPingPong(t *testing.T) {
	const (
		warmup, iters = 10, 300
		slot          = 256
	)
	mem, mr, cqs, conns := pairOnTwoCQs(t, Config{Turnarounds: true})
	base, lkey := mr.Addr(), mr.LKey()
	sides := [2]PingPong{}
	for i := range sides {
		send := base + uint64(32768+1024*i)
		copy(mem[send-base:], fmt.Sprintf("side %d's message, 48 bytes long, padded.......", i))
		sides[i] = PingPong{Client: i == 0, Warmup: warmup, Iters: iters, SignalEvery: 4, Inline: i == 0,
			Send:     datapath.SGE{Addr: send, Length: 48, LKey: lkey},
			RecvBase: base + uint64(4096*(1+i)), RecvStride: slot, RecvLen: slot}
		for k := range 4 {
			if _, err := conns[i].PostRecv([]datapath.RecvWR{{ID: uint64(k), SGL: []datapath.SGE{{Addr: sides[i].RecvBase + uint64(k*slot), Length: slot, LKey: lkey}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := RunPingPong(conns[1], cqs[1], sides[1], nil); err == nil || !strings.Contains(err.Error(), "defer posts") {
		t.Fatalf("RunPingPong on a connection that does not defer: %v", err)
	}
	if err := RunPingPong(conns[0], cqs[1], sides[0], make([]time.Duration, iters)); err == nil {
		t.Fatal("RunPingPong with another connection's CQ: no error")
	}
	for _, c := range conns {
		if err := c.(datapath.Deferrer).DeferPosts(); err != nil {
			t.Fatal(err)
		}
	}
	if err := RunPingPong(conns[0], cqs[0], sides[0], make([]time.Duration, iters-1)); err == nil {
		t.Fatal("RunPingPong with room for fewer round trips than Iters: no error")
	}
	rtts := make([]time.Duration, iters)
	done := make(chan error, 1)
	go func() { done <- RunPingPong(conns[1], cqs[1], sides[1], nil) }()
	if err := RunPingPong(conns[0], cqs[0], sides[0], rtts); err != nil {
		t.Fatalf("client: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	slices.Sort(rtts)
	if rtts[0] <= 0 {
		t.Fatalf("shortest round trip %v", rtts[0])
	}
	t.Logf("%d round trips: min %v, p50 %v, max %v", iters, rtts[0], rtts[iters/2], rtts[iters-1])
	// The last message each side received: the other's, in the slot of receive ID
	// (warmup+iters-1) mod 4, since receives complete in posting order and each is reposted.
	last := uint64((warmup + iters - 1) % 4)
	for i := range sides {
		got := mem[sides[i].RecvBase-base+last*slot:][:48]
		if want := mem[sides[1-i].Send.Addr-base:][:48]; !bytes.Equal(got, want) {
			t.Errorf("side %d's last receive slot holds %q, want %q", i, got, want)
		}
	}
	for i, cq := range cqs {
		ta, ok := datapath.Turnarounds(cq)
		// The client turns around from each reply to its next SEND (the last one to the
		// poll that posts its receive refill), the server from each call to its reply.
		want := uint64(warmup + iters)
		if !ok || ta.Count != want || ta.Min <= 0 {
			t.Errorf("side %d: turnarounds %+v (ok %v), want %d counted", i, ta, ok, want)
		}
	}
	// Nothing staged, the queues' accounting intact: Go's own ping-pong goes on.
	for side := range 2 {
		if _, err := conns[side].PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{sides[side].Send}}}); err != nil {
			t.Fatalf("side %d: PostSend after RunPingPong: %v", side, err)
		}
		got := 0
		wcs := make([]datapath.Completion, 8)
		for deadline := time.Now().Add(5 * time.Second); got < 2 && time.Now().Before(deadline); {
			for _, q := range []int{side, 1 - side} {
				n, err := cqs[q].Poll(wcs)
				if err != nil {
					t.Fatal(err)
				}
				for _, wc := range wcs[:n] {
					if wc.Status != datapath.StatusSuccess {
						t.Fatalf("after RunPingPong: %+v", wc)
					}
					if (q == side && wc.Op == datapath.OpSend) || (q != side && wc.Op == datapath.OpRecv) {
						got++
					}
				}
			}
		}
		if got != 2 {
			t.Fatalf("side %d: a SEND after RunPingPong: %d of its 2 completions", side, got)
		}
	}
	// The client alone: no one answers.
	alone := sides[0]
	alone.Warmup, alone.Iters, alone.Wait = 0, 1, 50*time.Millisecond
	if err := RunPingPong(conns[0], cqs[0], alone, rtts); !errors.Is(err, datapath.ErrTimeout) {
		t.Fatalf("RunPingPong with no one answering: %v, want ErrTimeout", err)
	}
}

// RunPingPong with a chunk moves it as a SINK or SOURCE RPC does: the server's Read brings
// the client's data before each reply, its Write puts its own data at the client ahead of
// each reply. The client refuses a chunk of its own.
func TestIntegrationRunPingPongChunks(t *testing.T) {
	const (
		iters = 50
		slot  = 256
		size  = 8192
	)
	mem, mr, cqs, conns := pairOnTwoCQs(t, Config{})
	base, lkey := mr.Addr(), mr.LKey()
	// Client: receives at 4 KiB, its chunk at 16 KiB; server: receives at 8 KiB, its chunk
	// at 32 KiB; the SENDs at 60 KiB.
	cliChunk, srvChunk := base+16384, base+32768
	sides := [2]PingPong{}
	for i := range sides {
		sides[i] = PingPong{Client: i == 0, Iters: iters, SignalEvery: 4, Inline: true,
			Send:     datapath.SGE{Addr: base + uint64(61440+64*i), Length: 32, LKey: lkey},
			RecvBase: base + uint64(4096*(1+i)), RecvStride: slot, RecvLen: slot}
		for k := range 4 {
			if _, err := conns[i].PostRecv([]datapath.RecvWR{{ID: uint64(k), SGL: []datapath.SGE{{Addr: sides[i].RecvBase + uint64(k*slot), Length: slot, LKey: lkey}}}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := conns[i].(datapath.Deferrer).DeferPosts(); err != nil {
			t.Fatal(err)
		}
	}
	bad := sides[0]
	bad.Chunk, bad.Local = datapath.OpRead, datapath.SGE{Addr: cliChunk, Length: size, LKey: lkey}
	if err := RunPingPong(conns[0], cqs[0], bad, make([]time.Duration, iters)); err == nil || !strings.Contains(err.Error(), "only the server") {
		t.Fatalf("a client with a chunk: %v", err)
	}
	for _, op := range []datapath.Opcode{datapath.OpRead, datapath.OpWrite} {
		src, dst := cliChunk, srvChunk
		if op == datapath.OpWrite {
			src, dst = srvChunk, cliChunk
		}
		for k := range size {
			mem[src-base+uint64(k)] = byte(k*7) ^ byte(op)
			mem[dst-base+uint64(k)] = 0
		}
		srv := sides[1]
		srv.Chunk, srv.Local, srv.RemoteAddr, srv.RKey = op, datapath.SGE{Addr: srvChunk, Length: size, LKey: lkey}, cliChunk, mr.RKey()
		rtts := make([]time.Duration, iters)
		done := make(chan error, 1)
		go func() { done <- RunPingPong(conns[1], cqs[1], srv, nil) }()
		if err := RunPingPong(conns[0], cqs[0], sides[0], rtts); err != nil {
			t.Fatalf("%v: client: %v", op, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("%v: server: %v", op, err)
		}
		if !bytes.Equal(mem[dst-base:][:size], mem[src-base:][:size]) {
			t.Errorf("%v: the chunk did not arrive whole", op)
		}
		slices.Sort(rtts)
		if rtts[0] <= 0 {
			t.Fatalf("%v: shortest round trip %v", op, rtts[0])
		}
		t.Logf("%v of %d bytes, %d round trips: min %v, p50 %v", op, size, iters, rtts[0], rtts[iters/2])
	}
}
