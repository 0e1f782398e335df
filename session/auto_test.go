package session

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// inProcessBlocks is a RunBlock that runs each block as a session of its own over conn,
// as a fresh process would (its points then record their process).
func inProcessBlocks(t *testing.T, conn Connector, rounds int) RunBlock {
	return func(ctx context.Context, b Block) (*results.Run, error) {
		c := config(t, conn, "")
		c.Rounds, c.Block = rounds, &b
		o, err := Run(ctx, c)
		if err != nil {
			return nil, err
		}
		return o.Run, o.Err
	}
}

// autoRun runs the two-point sweep on a fake connector whose RPCs take latency, every
// round in a process of its own, for at most budget rounds, judged against base at the
// planned looks.
func autoRun(t *testing.T, latency time.Duration, budget int, base *results.Run, cfg results.CompareConfig) (*results.Run, int) {
	t.Helper()
	c := config(t, nil, "")
	judged := len(c.Points) * len(cfg.Metrics)
	c.Rounds = budget
	c.Blocks, c.BlockRounds = inProcessBlocks(t, &fakeConnector{latency: latency}, budget), 1
	c.AfterRound = UntilConclusive(Looks(budget, 1, judged, 0.05), AgainstBaseline([]*results.Run{base}, cfg))
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if o.Run.Status.State != results.StateComplete {
		t.Fatalf("status %+v", o.Run.Status)
	}
	return o.Run, len(o.Run.Points) / len(c.Points)
}

// baseRun is the sweep in rounds, each in a process of its own.
func baseRun(t *testing.T, rounds int) *results.Run {
	t.Helper()
	c := config(t, nil, "")
	c.Rounds = rounds
	c.Blocks, c.BlockRounds = inProcessBlocks(t, &fakeConnector{}, rounds), 1
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return o.Run
}

// Blocks of rounds merge into one run, every point with its round and its block's process.
func TestBlocksRecordTheirProcess(t *testing.T) {
	c := config(t, nil, "")
	c.Rounds = 5
	c.Blocks, c.BlockRounds = inProcessBlocks(t, &fakeConnector{}, 5), 2
	o, err := Run(context.Background(), c)
	if err != nil || o.Run.Status.State != results.StateComplete {
		t.Fatalf("%v %+v", err, o)
	}
	var got [][2]int
	for _, p := range o.Run.Points {
		got = append(got, [2]int{p.Round, p.Process})
	}
	want := [][2]int{{1, 1}, {1, 1}, {2, 1}, {2, 1}, {3, 2}, {3, 2}, {4, 2}, {4, 2}, {5, 3}, {5, 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("(round, process) %v, want %v", got, want)
	}
}

// A change far beyond the tolerance is decided at the first look, long before the budget.
func TestAutoStopsWhenConclusive(t *testing.T) {
	cfg := results.CompareConfig{Metrics: []results.Metric{results.MetricP50}}
	budget := 12
	looks := Looks(budget, 1, 2, 0.05)
	run, rounds := autoRun(t, 2*time.Millisecond, budget, baseRun(t, budget), cfg)
	if rounds != looks[0].Round || rounds >= budget {
		t.Errorf("ran %d rounds, want the first look's %d (budget %d)", rounds, looks[0].Round, budget)
	}
	cfg.Alpha = looks[0].Alpha
	c, err := results.Compare([]*results.Run{baseRun(t, budget)}, []*results.Run{run}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != results.Regressed {
		t.Errorf("verdict %v, want regressed", c.Verdict)
	}
}

// A baseline too small for any interval never gives a conclusive look: every round of the
// budget runs.
func TestAutoStopsAtTheBudget(t *testing.T) {
	cfg := results.CompareConfig{Metrics: []results.Metric{results.MetricP50}}
	budget := 7
	_, rounds := autoRun(t, 0, budget, baseRun(t, 2), cfg)
	if rounds != budget {
		t.Errorf("ran %d rounds, want the budget's %d", rounds, budget)
	}
}

// A threshold far slower than the other is a clear loser at the first look for every row,
// long before the budget.
func TestAutoThresholdsStopWhenSettled(t *testing.T) {
	conn := &fakeConnector{slowAt: 1024}
	s := workloads.Sweep{Thresholds: []int{1024, 4096}, Sizes: []int{64}, Depths: []int{1}, Proc: "echo",
		Base: workloads.Config{Prog: benchprog.Prog, Count: 50, Warmup: workloads.NoWarmup}}
	pts, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	c := config(t, nil, "")
	c.Points, c.Rounds = pts, 12
	c.Blocks = func(ctx context.Context, b Block) (*results.Run, error) {
		cc := config(t, conn, "")
		cc.Points, cc.Rounds, cc.Block = pts, 12, &b
		o, err := Run(ctx, cc)
		if err != nil {
			return nil, err
		}
		return o.Run, o.Err
	}
	looks := Looks(c.Rounds, 1, len(results.ThresholdMetrics), 0.05)
	c.AfterRound = UntilConclusive(looks, ThresholdsSettled())
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if rounds := len(o.Run.Points) / len(pts); rounds != looks[0].Round {
		t.Fatalf("ran %d rounds, want the first look's %d (budget 12)", rounds, looks[0].Round)
	}
	for _, ch := range results.BestThresholds([]*results.Run{o.Run}, looks[0].Alpha) {
		if !ch.Clear || ch.Candidates[0].Threshold != 4096 {
			t.Errorf("%s %v: %s, want 4k beyond noise", ch.Label, ch.Metric, ch.Verdict())
		}
	}
}

// The O'Brien-Fleming-type spending function of Lan and DeMets at alpha 0.05 (two-sided):
// the published 0.0056 by half the information, and to four places what its closed form
// 2 - 2*Phi(1.95996/sqrt(t)) gives elsewhere; nothing at the start, all of alpha at the end.
func TestSpentMatchesPublishedValues(t *testing.T) {
	for _, tc := range []struct{ t, want float64 }{
		{0, 0}, {0.2, 0.0000}, {0.4, 0.0019}, {0.5, 0.0056}, {0.6, 0.0114}, {0.8, 0.0284}, {1, 0.05},
	} {
		if got := Spent(tc.t, 0.05); math.Abs(got-tc.want) > 0.00005 {
			t.Errorf("Spent(%g) = %.5f, want %.4f", tc.t, got, tc.want)
		}
	}
}

// The looks spend exactly alpha, three at most: the first block end where a look can be
// conclusive at its alpha (and no earlier one), halfway, and the budget.
func TestLooksSpendAlpha(t *testing.T) {
	for _, tc := range []struct {
		budget, step, judged int
	}{{10, 1, 1}, {10, 1, 9}, {20, 1, 9}, {6, 1, 1}, {30, 1, 46}, {10, 2, 9}, {9, 4, 3}} {
		looks := Looks(tc.budget, tc.step, tc.judged, 0.05)
		if len(looks) == 0 || len(looks) > 3 {
			t.Fatalf("%+v: looks %v", tc, looks)
		}
		sum := 0.0
		for i, l := range looks {
			sum += l.Alpha
			if l.Round%tc.step != 0 && l.Round != tc.budget {
				t.Errorf("%+v: a look after round %d, inside a block", tc, l.Round)
			}
			if i > 0 && l.Round <= looks[i-1].Round {
				t.Errorf("%+v: looks out of order: %v", tc, looks)
			}
		}
		if math.Abs(sum-0.05) > 1e-12 || looks[len(looks)-1].Round != tc.budget {
			t.Errorf("%+v: looks %v spend %g", tc, looks, sum)
		}
		if first := looks[0]; results.MinRuns(tc.judged, first.Alpha) > first.Round {
			t.Errorf("%+v: the first look at round %d cannot be conclusive at %g", tc, first.Round, first.Alpha)
		}
		if prev := looks[0].Round - tc.step; prev >= 1 && results.MinRuns(tc.judged, Spent(float64(prev)/float64(tc.budget), 0.05)) <= prev {
			t.Errorf("%+v: round %d could look already", tc, prev)
		}
	}
	// 9 judgements in 10 rounds: looks after rounds 6, 8 and 10, the last at more than twice
	// what an even split over every round from the first gives.
	looks := Looks(10, 1, 9, 0.05)
	if fmt.Sprint(looks[0].Round, looks[1].Round, looks[2].Round) != "6 8 10" || looks[2].Alpha <= 2*0.05/5 {
		t.Errorf("looks %v", looks)
	}
	// The README's recipe, 9 judgements in 20 rounds: after 8, 14 and 20.
	if looks := Looks(20, 1, 9, 0.05); fmt.Sprint(looks[0].Round, looks[1].Round, looks[2].Round) != "8 14 20" {
		t.Errorf("looks %v", looks)
	}
}

// A choice is settled by a clear winner, or by a tie every interval of which lies within
// the metric's default tolerance; a bounded interval reaching beyond it, or an unbounded
// one, is not settled.
func TestSettled(t *testing.T) {
	est := func(lo, hi float64) results.Estimate { return results.Estimate{Est: (lo + hi) / 2, Lo: lo, Hi: hi} }
	for _, tc := range []struct {
		name string
		c    results.ThresholdChoice
		want bool
	}{
		{"winner", results.ThresholdChoice{Metric: results.MetricP50, Compared: 2, Clear: true, Versus: []results.Estimate{est(1.2, 1.3)}}, true},
		{"one threshold", results.ThresholdChoice{Metric: results.MetricP50, Compared: 1}, true},
		{"tie p50", results.ThresholdChoice{Metric: results.MetricP50, Compared: 3, Versus: []results.Estimate{est(0.97, 1.05), est(0.99, 1.09)}}, true},
		{"p50 beyond 10%", results.ThresholdChoice{Metric: results.MetricP50, Compared: 3, Versus: []results.Estimate{est(0.97, 1.05), est(0.99, 1.11)}}, false},
		{"unbounded", results.ThresholdChoice{Metric: results.MetricP50, Compared: 2, Versus: []results.Estimate{est(0, math.Inf(1))}}, false},
		{"tie rps", results.ThresholdChoice{Metric: results.MetricRPS, Compared: 2, Versus: []results.Estimate{est(0.91, 1.02)}}, true},
		{"rps beyond 10%", results.ThresholdChoice{Metric: results.MetricRPS, Compared: 2, Versus: []results.Estimate{est(0.89, 1.02)}}, false},
	} {
		if got := Settled(&tc.c); got != tc.want {
			t.Errorf("%s: settled %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A block's process that fails ends the session failed with its own message; what it and
// the blocks before it measured is kept, each point with its process.
func TestFailedBlockKeepsWhatItMeasured(t *testing.T) {
	c := config(t, nil, "")
	c.Rounds = 4
	ok := inProcessBlocks(t, &fakeConnector{}, 4)
	c.Blocks = func(ctx context.Context, b Block) (*results.Run, error) {
		r, err := ok(ctx, b)
		if b.Process == 2 {
			r.Status = results.Status{State: results.StateFailed, Message: "1 point(s) measured no RPC at all"}
			return r, fmt.Errorf("process 2 (rounds 2-2): %s", r.Status.Message)
		}
		return r, err
	}
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if o.Run.Status.State != results.StateFailed || !strings.Contains(o.Run.Status.Message, "process 2 (rounds 2-2): 1 point(s) measured no RPC at all") {
		t.Errorf("status %+v", o.Run.Status)
	}
	if n := len(o.Run.Points); n != 4 || o.Run.Points[3].Process != 2 {
		t.Errorf("%d points kept, the last of process %d; want 4, 2", n, o.Run.Points[n-1].Process)
	}
}
