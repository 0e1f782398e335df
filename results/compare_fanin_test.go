package results_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

// faninRuns are n fan-in runs of one point over three client ranks, RTTs scaled per rank by
// slow, seeds from seed on.
func faninRuns(tb testing.TB, n int, seed uint64, slow ...float64) []*results.Run {
	var rs []*results.Run
	for i := range n {
		rs = append(rs, resultstest.FanIn{Sweep: resultstest.Sweep{Seed: seed + 10*uint64(i), RPCs: 1000}, Slow: slow}.Run(tb))
	}
	return rs
}

func verdicts(c *results.Comparison) map[string]results.Verdict {
	v := map[string]results.Verdict{}
	for _, r := range c.Points[0].Metrics {
		v[r.Metric.String()] = r.Verdict
	}
	return v
}

// compare gates a fan-in on fairness too: one rank starved while the others take up its
// share (the aggregate rate unchanged) is a regression of jain and slowest, exit 1; the same
// fairness is ok, exit 0. Fairness is judged by default at fan-in points only.
func TestCompareFanInFairness(t *testing.T) {
	base := faninRuns(t, 6, 1, 1, 1, 1)
	same := faninRuns(t, 6, 2, 1, 1, 1)
	starved := faninRuns(t, 6, 3, 0.75, 0.75, 3)

	c, err := results.Compare(base, starved, results.CompareConfig{Metrics: []results.Metric{results.MetricJain, results.MetricSlowest, results.MetricRPS}})
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(c)
	if v["jain"] != results.Regressed || v["slowest"] != results.Regressed || v["rps"] != results.OK || c.ExitCode() != results.ExitRegression {
		t.Errorf("starved rank: %v, exit %d, want jain and slowest regressed, rps ok, exit 1", v, c.ExitCode())
	}
	c, err = results.Compare(base, same, results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	v = verdicts(c)
	if len(v) != 5 || v["jain"] != results.OK || v["slowest"] != results.OK || c.ExitCode() != results.ExitOK {
		t.Errorf("same fairness: %v, exit %d, want p50, p99, rps, jain and slowest ok, exit 0", v, c.ExitCode())
	}
	var b strings.Builder
	if err := results.WriteCompareText(&b, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "jain -5% (default)") || !strings.Contains(b.String(), "slowest -10% (default)") {
		t.Errorf("the tolerances are not named:\n%s", b.String())
	}

	// A plain run has no fairness: the metrics are not judged, and a note says so when named.
	plain := []*results.Run{makeRun(t, 1, 1, 1000, 1), makeRun(t, 2, 1, 1000, 1)}
	c, err = results.Compare(plain, plain, results.CompareConfig{Metrics: []results.Metric{results.MetricP50, results.MetricJain}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(c.Metrics, results.MetricJain) || len(c.Points[0].Metrics) != 1 ||
		!slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "jain judge fan-in points") }) {
		t.Errorf("plain runs: metrics %v, point %v, notes %q", c.Metrics, c.Points[0].Metrics, c.Notes)
	}
}

func TestParseFairnessMetrics(t *testing.T) {
	ms, err := results.ParseMetrics("jain,slowest")
	if err != nil || !slices.Equal(ms, []results.Metric{results.MetricJain, results.MetricSlowest}) {
		t.Errorf("ParseMetrics: %v, %v", ms, err)
	}
	th, err := results.ParseThresholds("fairness=-3%")
	if err != nil || th.String() != "jain=-3%,slowest=-3%" {
		t.Errorf("ParseThresholds: %v, %v", th, err)
	}
	if _, err := results.ParseThresholds("jain=+3%"); err == nil {
		t.Error("jain=+3% accepted: the index regresses by falling")
	}
}
