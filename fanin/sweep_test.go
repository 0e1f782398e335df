package fanin_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// sweepCommand is fanin --sweep --thresholds 1k,4k --sizes 64 --repeat 2 with a short point.
func sweepCommand() *fanin.Command {
	return &fanin.Command{Listen: "127.0.0.1:0", Run: &cli.RunConfig{Command: "fanin", Sweep: true, Thresholds: []int{1024, 4096},
		Workload: workloads.Config{Prog: benchprog.Prog, Size: workloads.Sizes{Values: []int{64}}, Depth: 2, Connections: 1, Pollers: 1, Seed: 1},
		Duration: 150 * time.Millisecond, Repeat: 2, Given: map[string]bool{"sizes": true}}}
}

// fanin --sweep plans a sweep's points (its axes from --thresholds, --sizes, --depths) and
// records the sweep; a plain fan-in refuses --depths.
func TestFanInSweepPlan(t *testing.T) {
	c := sweepCommand()
	c.Run.Depths = []int{1, 8}
	pts, err := c.Check()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pts {
		got = append(got, fmt.Sprintf("%d/%d/%d", p.Threshold, p.Size, p.Depth))
	}
	if want := "1024/64/1 1024/64/8 4096/64/1 4096/64/8"; strings.Join(got, " ") != want {
		t.Errorf("points %q, want %s", got, want)
	}
	rec := c.Record(4, pts)
	if rec.Sweep == nil || !slices.Equal(rec.Sweep.Thresholds, []int{1024, 4096}) || !slices.Equal(rec.Sweep.Sizes, []int{64}) ||
		rec.Workload != nil || rec.Repeat != 2 || rec.FanIn.Ranks != 4 {
		t.Errorf("record %+v", rec)
	}
	c = sweepCommand()
	c.Run.Workload.Size = workloads.Sizes{Dist: "uniform", Min: 64, Max: 128}
	if _, err := c.Check(); err == nil || !strings.Contains(err.Error(), "--sweep takes --sizes as a list") {
		t.Errorf("a size distribution swept: %v", err)
	}
	c = sweepCommand()
	c.Run.Sweep, c.Run.Thresholds, c.Run.Depths = false, nil, []int{4}
	if _, err := c.Check(); err == nil || !strings.Contains(err.Error(), "--depths is a sweep's axis") {
		t.Errorf("--depths without --sweep: %v", err)
	}
}

// A sweep's 2 points × 2 rounds over 3 client ranks: every point starts on every rank before
// any rank ends it, and rank 0 merges each point of each round on its own.
func TestFanInSweepLockstep(t *testing.T) {
	c := sweepCommand()
	pts, err := c.Check()
	if err != nil || len(pts) != 2 {
		t.Fatalf("%d points: %v", len(pts), err)
	}
	out := filepath.Join(t.TempDir(), "fanin.json")
	_, errs := job(t, 4, func(rank int) fanin.Config {
		return fanin.Config{Out: out, RunConfig: c.Record(4, pts),
			Serve: func() (fanin.Server, error) { return fakeServer{addr: fmt.Sprintf("0.0.0.0:%d", 20000+rank)}, nil },
			Measure: func(ctx, hurry context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
				o, err := session.Run(ctx, session.Config{Command: "fanin", Points: pts, Rounds: 2, Provider: "fake", Connector: wrap(&fakeConnector{})})
				if err != nil {
					return nil, err
				}
				return o.Run, o.Err
			}}
	})
	f := succeeded(t, errs, out)
	if len(f.Points) != 4 {
		t.Fatalf("%d points, want 2 points × 2 rounds", len(f.Points))
	}
	for k, p := range f.Points {
		fi := p.FanIn
		if fi == nil || len(fi.Ranks) != 3 {
			t.Fatalf("point %d: fanin %+v", k, fi)
		}
		if p.Params.InlineThreshold != pts[k%2].Threshold || p.Round != k/2+1 || p.Params.Connections != 3 {
			t.Errorf("point %d: threshold %d round %d connections %d, want %d, %d, 3", k, p.Params.InlineThreshold, p.Round, p.Params.Connections, pts[k%2].Threshold, k/2+1)
		}
		var sum uint64
		lastStart, firstEnd := fi.Ranks[0].StartClock, fi.Ranks[0].Point.End
		for _, rp := range fi.Ranks {
			q := &rp.Point
			if q.Params.InlineThreshold != p.Params.InlineThreshold || q.Round != p.Round {
				t.Errorf("point %d: rank %d ran threshold %d round %d", k, rp.Rank, q.Params.InlineThreshold, q.Round)
			}
			if rp.StartClock.IsZero() || rp.StartClock.After(q.Start) {
				t.Errorf("point %d: rank %d's start signal read at %v, its point started %v", k, rp.Rank, rp.StartClock, q.Start)
			}
			sum += q.RTT.Count
			if rp.StartClock.After(lastStart) {
				lastStart = rp.StartClock
			}
			if q.End.Before(firstEnd) {
				firstEnd = q.End
			}
		}
		if !lastStart.Before(firstEnd) {
			t.Errorf("point %d: a rank started at %v, after another ended at %v: not in lockstep", k, lastStart, firstEnd)
		}
		if p.RTT.Count != sum || sum == 0 {
			t.Errorf("point %d: merged count %d, ranks' sum %d", k, p.RTT.Count, sum)
		}
	}
	if !strings.Contains(string(f.Config), `"sweep":`) {
		t.Errorf("config does not record the sweep: %s", f.Config)
	}
}
