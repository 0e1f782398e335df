package session

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// autoRun runs the two-point sweep on a fake connector whose RPCs take latency, for at most
// budget rounds, judged against base from the first round a look can be conclusive.
func autoRun(t *testing.T, latency time.Duration, budget int, base *results.Run, cfg results.CompareConfig) (*results.Run, int) {
	t.Helper()
	c := config(t, &fakeConnector{latency: latency}, "")
	judged := len(c.Points) * len(cfg.Metrics)
	first, _, lookAlpha := Looks(budget, judged, 0.05)
	cfg.Alpha = lookAlpha
	c.Rounds = budget
	c.AfterRound = UntilConclusive(first, AgainstBaseline([]*results.Run{base}, cfg))
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if o.Run.Status.State != results.StateComplete {
		t.Fatalf("status %+v", o.Run.Status)
	}
	return o.Run, len(o.Run.Points) / len(c.Points)
}

func baseRun(t *testing.T, rounds int) *results.Run {
	t.Helper()
	c := config(t, &fakeConnector{}, "")
	c.Rounds = rounds
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return o.Run
}

// A change far beyond the tolerance is decided at the first look, long before the budget.
func TestAutoStopsWhenConclusive(t *testing.T) {
	cfg := results.CompareConfig{Metrics: []results.Metric{results.MetricP50}}
	budget := 12
	first, _, _ := Looks(budget, 2, 0.05)
	run, rounds := autoRun(t, 2*time.Millisecond, budget, baseRun(t, first), cfg)
	if rounds != first {
		t.Errorf("ran %d rounds, want the first look's %d (budget %d)", rounds, first, budget)
	}
	cfg.Alpha = 0.05
	c, err := results.Compare([]*results.Run{baseRun(t, first)}, []*results.Run{run}, cfg)
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
	c := config(t, &fakeConnector{slowAt: 1024}, "")
	s := workloads.Sweep{Thresholds: []int{1024, 4096}, Sizes: []int{64}, Depths: []int{1}, Proc: "echo",
		Base: workloads.Config{Count: 50, Warmup: workloads.NoWarmup}}
	pts, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	c.Points, c.Rounds = pts, 12
	first, _, a := Looks(c.Rounds, len(results.ThresholdMetrics), 0.05)
	c.AfterRound = UntilConclusive(first, ThresholdsSettled(a))
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if rounds := len(o.Run.Points) / len(pts); rounds != first {
		t.Fatalf("ran %d rounds, want the first look's %d (budget 12)", rounds, first)
	}
	for _, ch := range results.BestThresholds([]*results.Run{o.Run}, a) {
		if !ch.Clear || ch.Candidates[0].Threshold != 4096 {
			t.Errorf("%s %v: %s, want 4k beyond noise", ch.Label, ch.Metric, ch.Verdict())
		}
	}
}

// The looks split alpha evenly; the first look is where MinRuns says one can be conclusive.
func TestLooksSplitAlpha(t *testing.T) {
	for _, tc := range []struct {
		budget, judged int
	}{{10, 1}, {10, 9}, {6, 1}, {30, 46}} {
		first, looks, a := Looks(tc.budget, tc.judged, 0.05)
		if want := results.MinRuns(tc.judged, 0.05/float64(tc.budget)); first != want {
			t.Errorf("%+v: first look %d, want MinRuns %d", tc, first, want)
		}
		if looks != tc.budget-first+1 || math.Abs(a*float64(looks)-0.05) > 1e-12 {
			t.Errorf("%+v: %d looks at %g each", tc, looks, a)
		}
		if results.MinRuns(tc.judged, a) > first {
			t.Errorf("%+v: a look at round %d cannot be conclusive at %g", tc, first, a)
		}
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
