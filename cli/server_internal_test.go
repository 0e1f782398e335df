package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// A server says at stop what it served and what its pollers and the process spent.
func TestServerSummaryAtStop(t *testing.T) {
	var log strings.Builder
	c := &ServeConfig{Provider: "soft", Pollers: 1, MaxConnections: 1}
	s, err := StartServing(c, func(c *ServeConfig) (Server, error) { return &polledServer{c: c}, nil }, &log)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "0 connection(s), 0 calls served; pollers: 40 polls, 25% empty; process CPU ") {
		t.Fatalf("log %q", log.String())
	}
}

// polledServer's one poller polls 40 times, 10 of them empty, and stops.
type polledServer struct{ c *ServeConfig }

func (s *polledServer) Addr() string { return "127.0.0.1:0" }
func (s *polledServer) Serve(context.Context) error {
	s.c.PollerDone(0, datapath.PollerStats{Iterations: 40, EmptyPolls: 10})
	return nil
}
func (s *polledServer) Close() error { return nil }

func TestTurnaroundLine(t *testing.T) {
	var ta datapath.Turnaround
	ta.Count, ta.Total, ta.Post = 4, 10*time.Microsecond, 2*time.Microsecond
	ta.Hist[14], ta.Hist[19], ta.Hist[29], ta.Hist[39] = 1, 1, 1, 1
	ta.Hist[datapath.TurnaroundBuckets-1] = 1 // one of 25.5 µs or more: the open bucket
	ta.Count++
	ta.Total += 30 * time.Microsecond
	got := turnaroundLine(1, &ta)
	want := "poller 1 turnaround (its own time from a completion to the posts it caused, the connections' setup included), µs: p50 3.0  p90 >25.5  p99 >25.5  mean 8.00  posts 0.40  (5)"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// The inline rule defaults to Linux's for NFS, so that its results predict what a Linux
// client sees, and to the exact header for the benchmark program; a rule given overrides both.
func TestInlineRuleDefault(t *testing.T) {
	for _, tc := range []struct {
		nfs, rule bool // --program nfs3 --mix read/4k; --inline-rule given
		set       rpcrdma.InlineRule
		want      rpcrdma.InlineRule
	}{
		{false, false, rpcrdma.InlineExact, rpcrdma.InlineExact},
		{false, true, rpcrdma.InlineLinux, rpcrdma.InlineLinux},
		{true, false, rpcrdma.InlineExact, rpcrdma.InlineLinux},
		{true, true, rpcrdma.InlineExact, rpcrdma.InlineExact},
	} {
		c := RunConfig{Command: "run", Duration: time.Second, Given: map[string]bool{"inline-rule": tc.rule}}
		c.Workload.Depth, c.Workload.Pollers, c.Workload.Connections = 1, 1, 1
		c.Transport.InlineRule = tc.set
		if tc.nfs {
			c.Workload.Prog, c.Mix, c.Given["mix"] = nfs3.Prog, "read/4k", true
		}
		if _, err := c.Base(); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if c.Transport.InlineRule != tc.want {
			t.Errorf("%+v: inline rule %v, want %v", tc, c.Transport.InlineRule, tc.want)
		}
	}
}
