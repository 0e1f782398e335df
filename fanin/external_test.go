package fanin_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// Against a server outside the job (an NFS server) every rank measures, rank 0 included, and
// every rank's point names that server; no rank serves.
func TestFanInExternalServer(t *testing.T) {
	out := filepath.Join(t.TempDir(), "external.json")
	c := config(t, out, 100*time.Millisecond, plain)
	var mu sync.Mutex
	addrs := map[string]int{}
	_, errs := job(t, 3, func(rank int) fanin.Config {
		cf := c(rank)
		cf.External = "nfs.example:20049"
		cf.Serve = func() (fanin.Server, error) {
			t.Errorf("rank %d was asked to serve", rank)
			return fakeServer{addr: "0.0.0.0:1"}, nil
		}
		measure := cf.Measure
		cf.Measure = func(ctx, hurry context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
			mu.Lock()
			addrs[addr]++
			mu.Unlock()
			return measure(ctx, hurry, addr, wrap)
		}
		return cf
	})
	f := succeeded(t, errs, out)
	fi := f.Points[0].FanIn
	var text strings.Builder
	if err := results.WriteText(&text, f); err != nil || !strings.Contains(text.String(), "3 client rank(s), a server outside the job;") {
		t.Errorf("text report (%v):\n%s", err, text.String())
	}
	if len(fi.Ranks) != 3 || len(fi.ServerRanks) != 0 || addrs["nfs.example:20049"] != 3 || len(addrs) != 1 {
		t.Fatalf("ranks %d, server ranks %d, addresses measured %v", len(fi.Ranks), len(fi.ServerRanks), addrs)
	}
	for i, rp := range fi.Ranks {
		if rp.Rank != i || rp.Server != "nfs.example:20049" {
			t.Errorf("rank entry %d: rank %d server %q", i, rp.Rank, rp.Server)
		}
	}
	_, errs = job(t, 2, func(rank int) fanin.Config {
		cf := c(rank)
		cf.External, cf.Pairs = "nfs.example:20049", true
		return cf
	})
	if errs[0] == nil {
		t.Error("--pairs against an external server: no error")
	}
}

// The command's checks before the job wires up: nfs3 needs the server every rank measures,
// which leaves no rank to serve.
func TestCommandCheck(t *testing.T) {
	for _, tc := range []struct {
		prog, addr string
		pairs      bool
		want       string // "" for no error; the address Check settles on otherwise
		wantAddr   string
	}{
		{"nfs3", "", false, "--program nfs3 needs --addr", ""},
		{"nfs3", "nfs1", false, "", "nfs1:20049"},
		{"", "10.0.0.1:7000", true, "there are no --server-ranks or --pairs", ""},
		{"", "", true, "", ""},
	} {
		rc := &cli.RunConfig{Command: "fanin", Duration: time.Second, Thresholds: []int{4096}, Given: map[string]bool{}}
		rc.Workload.Depth, rc.Workload.Pollers, rc.Workload.Connections = 4, 1, 1
		if tc.prog == "nfs3" {
			rc.Given["program"], rc.Workload.Prog = true, nfs3.Prog
		}
		rc.Addr = tc.addr
		c := &fanin.Command{Run: rc, Pairs: tc.pairs, Listen: "0.0.0.0:0"}
		_, err := c.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want %q", tc, err, tc.want)
		case tc.want == "" && rc.Addr != tc.wantAddr:
			t.Errorf("%+v: address %q, want %q", tc, rc.Addr, tc.wantAddr)
		}
	}
	if got := fanin.RankFile("bench.dat", 3); got != "bench.dat.3" {
		t.Errorf("RankFile: %q", got)
	}
}
