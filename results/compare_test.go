package results_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

func TestParseThresholds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // canonical form
	}{
		{"", ""},
		{"p99=+10%,throughput=-5%", "p99=+10%,rps=-5%,gbps=-5%"},
		{"p99=10%", "p99=+10%"},
		{" p99.9 = +20% ", ""}, // spaces inside a token are not allowed: see the error table
		{"all=5%,p99.9=20%", "p50=+5%,p90=+5%,p99=+5%,p99.9=+20%,mean=+5%,rps=-5%,gbps=-5%"},
		{"latency=+2.5%,rtt=+1%", "p50=+2.5%,p90=+2.5%,p99=+2.5%,p99.9=+2.5%,mean=+1%"},
		{"p999=0%,gbps=-1e1%", "p99.9=+0%,gbps=-10%"},
	} {
		got, err := results.ParseThresholds(c.in)
		if c.in == " p99.9 = +20% " {
			if err == nil {
				t.Errorf("%q accepted", c.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseThresholds(%q): %v", c.in, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("ParseThresholds(%q) = %s, want %s", c.in, got, c.want)
		}
		if again, err := results.ParseThresholds(got.String()); err != nil || again.String() != got.String() {
			t.Errorf("String() of %q does not parse back: %v", c.in, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"p95=+10%", `threshold "p95=+10%": unknown metric "p95"`},
		{"p99=-10%", `threshold "p99=-10%": p99 regresses by rising: write +10%`},
		{"rps=+5%", `threshold "rps=+5%": rps regresses by falling: write -5%`},
		{"all=+5%", `threshold "all=+5%": rps regresses by falling`},
		{"p99=10", `threshold "p99=10": want NAME=CHANGE%`},
		{"p99", `threshold "p99": want NAME=CHANGE%`},
		{"p99=+10%,", `threshold "": want NAME=CHANGE%`},
		{"p99=+x%", `threshold "p99=+x%": "+x%" is not a percentage`},
		{"p99=%", `threshold "p99=%": "%" is not a percentage`},
		{"p99=+-3%", `threshold "p99=+-3%": "+-3%" is not a percentage`},
		{"p99=NaN%", `"NaN%" is not a percentage`},
		{"p50=+1%,p90=+2%,bogus=1%", `threshold "bogus=1%"`},
	} {
		_, err := results.ParseThresholds(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseThresholds(%q) error = %v, want %q", c.in, err, c.want)
		}
	}
}

// runs makes n repeated runs: each run's scale varies by 2% (run-to-run noise, the larger
// part of real benchmark noise) around scale.
func runs(t *testing.T, seed uint64, n int, scale float64) []*results.Run {
	rng := rand.New(rand.NewPCG(seed, 99))
	var rs []*results.Run
	for i := range n {
		rs = append(rs, makeRun(t, seed*100+uint64(i), scale*(1+0.02*rng.NormFloat64()), 2000, 1))
	}
	return rs
}

func mustThresholds(t *testing.T, s string) results.Thresholds {
	th, err := results.ParseThresholds(s)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func verdicts(c *results.Comparison) map[results.Verdict]int {
	m := map[results.Verdict]int{}
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			m[r.Verdict]++
		}
	}
	return m
}

func TestCompareIdentical(t *testing.T) {
	base := runs(t, 1, 5, 1)
	c, err := results.Compare(base, base, results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != results.OK || c.ExitCode() != results.ExitOK {
		t.Errorf("identical sets: verdict %v exit %d", c.Verdict, c.ExitCode())
	}
	// 3 points, 7 metrics, minus the p99.9 that 2000 samples cannot support.
	if v := verdicts(c); v[results.OK] != 3*6 || v[results.NotCompared] != 3 {
		t.Errorf("verdicts %v", v)
	}
	for _, r := range c.Points[0].Metrics {
		if r.Verdict == results.OK && (r.P != 1 || r.Delta != 0 || !r.NoiseEstimate) {
			t.Errorf("%v: p %v delta %v", r.Metric, r.P, r.Delta)
		}
	}
}

func TestCompareSlowed(t *testing.T) {
	base, slow := runs(t, 1, 5, 1), runs(t, 2, 5, 1.2)
	for _, c := range []struct {
		thresholds string
		want       results.Verdict
	}{
		{"", results.Regressed},
		{"latency=+10%,throughput=-10%", results.Regressed},
		{"all=25%", results.OK}, // beyond noise but within what the user tolerates
	} {
		cmp, err := results.Compare(base, slow, results.CompareConfig{Thresholds: mustThresholds(t, c.thresholds)})
		if err != nil {
			t.Fatal(err)
		}
		if cmp.Verdict != c.want {
			t.Errorf("thresholds %q: verdict %v, want %v\n%v", c.thresholds, cmp.Verdict, c.want, verdicts(cmp))
		}
		if c.want == results.Regressed && (cmp.ExitCode() != results.ExitRegression || verdicts(cmp)[results.Regressed] != 18) {
			t.Errorf("thresholds %q: exit %d, verdicts %v; want exit 1 and all 18 comparable metrics regressed", c.thresholds, cmp.ExitCode(), verdicts(cmp))
		}
		for _, r := range cmp.Points[1].Metrics {
			if r.Verdict == results.NotCompared {
				continue
			}
			// 5 runs a side, fully separated: p = 2/C(10,5).
			if r.P > 0.0080 || r.Delta*sign(r.Metric) < 10 || r.Delta*sign(r.Metric) > 30 {
				t.Errorf("%v: p %v delta %v, want p 0.0079 and a ~20%% worsening", r.Metric, r.P, r.Delta)
			}
		}
	}
	// And the other way round it is an improvement.
	cmp, _ := results.Compare(slow, base, results.CompareConfig{})
	if cmp.Verdict != results.Improved || cmp.ExitCode() != results.ExitOK {
		t.Errorf("speed-up: verdict %v exit %d", cmp.Verdict, cmp.ExitCode())
	}
}

func sign(m results.Metric) float64 {
	if m.HigherIsBetter() {
		return -1 // a 20% slowdown is a 16.7% throughput fall
	}
	return 1
}

func TestCompareNoise(t *testing.T) {
	// Two independent sets from the same distribution: differences are run-to-run noise.
	base, again := runs(t, 3, 6, 1), runs(t, 4, 6, 1)
	c, err := results.Compare(base, again, results.CompareConfig{Thresholds: mustThresholds(t, "all=5%")})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict == results.Regressed || c.ExitCode() != results.ExitOK {
		var b bytes.Buffer
		results.WriteCompareText(&b, c)
		t.Errorf("noise flagged as regression:\n%s", b.String())
	}
	// The noise is real: the medians differ, so the pass is not an identity.
	if r := c.Points[0].Metrics[0]; r.Delta == 0 || r.P == 1 {
		t.Errorf("p50: delta %v p %v, want some noise", r.Delta, r.P)
	}
}

func TestCompareSingleRun(t *testing.T) {
	base, slow := runs(t, 1, 1, 1), runs(t, 2, 1, 1.2)
	c, err := results.Compare(base, slow, results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != results.NoEstimate || c.ExitCode() != results.ExitOK || verdicts(c)[results.NoEstimate] != 18 {
		t.Errorf("1 vs 1 without thresholds: verdict %v exit %d %v", c.Verdict, c.ExitCode(), verdicts(c))
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "need >= 4 runs per side to detect a difference at alpha 0.05 (have 1 base and 1 current runs)") {
		t.Errorf("notes %q", c.Notes)
	}
	c, _ = results.Compare(base, slow, results.CompareConfig{Thresholds: mustThresholds(t, "p99=+10%")})
	if c.Verdict != results.Regressed || c.ExitCode() != results.ExitRegression {
		t.Errorf("1 vs 1 with p99=+10%%: verdict %v", c.Verdict)
	}
	r := c.Points[0].Metrics[results.MetricP99]
	if r.Verdict != results.Regressed || r.NoiseEstimate || r.String() != "regressed (no noise estimate)" {
		t.Errorf("p99: %v noise %v", r.String(), r.NoiseEstimate)
	}
	if r := c.Points[0].Metrics[results.MetricP50]; r.Verdict != results.NoEstimate {
		t.Errorf("p50 without a threshold: %v", r.String())
	}
	// 3 a side is still too few at 0.05 (min p 0.1), as benchstat warns; the note counts
	// runs, not the values of the metric with the fewest (a percentile some runs lack).
	b3, c3 := runs(t, 1, 3, 1), runs(t, 2, 3, 1.2)
	b3[0].Points[0].RTT.P999, c3[0].Points[0].RTT.P999, c3[1].Points[0].RTT.P999 = nil, nil, nil
	c, _ = results.Compare(b3, c3, results.CompareConfig{})
	if c.Verdict != results.NoEstimate || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "(have 3 base and 3 current runs)") {
		t.Errorf("3 vs 3: %v %q", c.Verdict, c.Notes)
	}
	// 4 a side suffice, but a metric with fewer values says why it has no estimate.
	b4, c4 := runs(t, 1, 4, 1), runs(t, 2, 4, 1.2)
	b4[0].Points[0].RTT.P50 = nil
	c, _ = results.Compare(b4, c4, results.CompareConfig{})
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "as few as 3 base and 4 current, of 4 and 4 runs") {
		t.Errorf("4 vs 4 with a missing p50: %q", c.Notes)
	}
}

// A comparison that cannot judge says so loudly in its summary: a 98% drop in RPC/s with one
// run a side and no threshold still exits 0, but not quietly.
func TestCompareWarnsWithoutNoiseEstimate(t *testing.T) {
	base, cur := runs(t, 1, 1, 1), runs(t, 2, 1, 1)
	for i := range cur[0].Points {
		cur[0].Points[i].Throughput.RPCPerSec = base[0].Points[i].Throughput.RPCPerSec * 0.02
	}
	c, err := results.Compare(base, cur, results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := results.WriteCompareText(&b, c); err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(b.String(), "\n", 3)
	if c.ExitCode() != results.ExitOK || !strings.HasPrefix(first[1], "WARNING: 18 metric(s) NOT JUDGED") ||
		!strings.Contains(first[1], "the worst change is rps -98.0%") || !strings.Contains(first[1], "need >= 4 runs per side") {
		t.Errorf("exit %d, summary:\n%s", c.ExitCode(), b.String())
	}
	// With four runs a side every verdict has its estimate: no warning.
	c, _ = results.Compare(runs(t, 1, 4, 1), runs(t, 2, 4, 1), results.CompareConfig{})
	if w := c.Warning(); w != "" {
		t.Errorf("4 vs 4: %q", w)
	}
}

func TestCompareMatching(t *testing.T) {
	base := runs(t, 1, 4, 1)
	cur := runs(t, 1, 4, 1)
	for _, r := range cur {
		r.Points = r.Points[:2] // SOURCE point lost
		r.Points = append(r.Points, r.Points[0])
		r.Points[2].Params.Depth = 8 // a new point
	}
	cur[0].Points[0].Complete = false
	cur[0].Status = results.Status{State: results.StateInterrupted}
	cur[1].Environment.Device = &datapath.DeviceInfo{Name: "mlx5_0"}
	c, err := results.Compare(base, cur, results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.MissingInCurrent) != 1 || c.MissingInCurrent[0].Procedure != "SOURCE" || len(c.NewInCurrent) != 1 || c.NewInCurrent[0].Depth != 8 {
		t.Errorf("missing %v new %v", c.MissingInCurrent, c.NewInCurrent)
	}
	if c.Verdict != results.Regressed {
		t.Errorf("a lost point must fail the gate, verdict %v", c.Verdict)
	}
	if n := len(c.Points[0].Metrics[0].Current); n != 3 {
		t.Errorf("%d current samples of point 0, want 3 (one incomplete)", n)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"1 incomplete current point(s) left out", "1 current run(s) did not complete",
		"different setups: base soft/soft0, current soft/mlx5_0,soft/soft0"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", c.Notes, want)
		}
	}

	for _, c := range []struct {
		base, cur []*results.Run
	}{{nil, cur}, {base, nil}, {base[:1], []*results.Run{{Points: []results.Point{}}}}} {
		if _, err := results.Compare(c.base, c.cur, results.CompareConfig{}); !errors.Is(err, results.ErrNothingToCompare) {
			t.Errorf("bad input: err %v", err)
		}
	}
	if _, err := results.Compare(base, cur, results.CompareConfig{Alpha: 2}); err == nil {
		t.Error("alpha 2 accepted")
	}
}

func TestCompareReports(t *testing.T) {
	c, err := results.Compare(runs(t, 1, 4, 1), runs(t, 2, 4, 1.2), results.CompareConfig{Thresholds: mustThresholds(t, "p99=+10%,throughput=-25%")})
	if err != nil {
		t.Fatal(err)
	}
	var txt, md bytes.Buffer
	if err := results.WriteCompareText(&txt, c); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteCompareMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.txt", txt.Bytes())
	golden(t, "compare.md", md.Bytes())
	if !strings.HasPrefix(txt.String(), "verdict: regressed (exit 1)") {
		t.Errorf("text starts %q", strings.SplitN(txt.String(), "\n", 2)[0])
	}
	if !strings.Contains(md.String(), "| **regressed** |") || !strings.Contains(md.String(), "|---|---|") {
		t.Error("markdown lacks a bold regression or the table rule")
	}
}

// Runs taken with the turnaround probe are not comparable with runs taken without: the
// comparison says so.
func TestCompareNotesProbe(t *testing.T) {
	probe := func(rs []*results.Run) []*results.Run {
		for _, r := range rs {
			for i := range r.Points {
				r.Points[i].Pollers = []results.PollerUsage{{Poll: "busy", CPU: -1,
					Turnaround: &results.Turnaround{Count: 1, MeanNs: 500, P50Ns: 500, P90Ns: 500, P99Ns: 500}}}
			}
		}
		return rs
	}
	note := func(base, cur []*results.Run) string {
		c, err := results.Compare(base, cur, results.CompareConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(c.Notes, "\n")
	}
	if n := note(runs(t, 1, 5, 1), probe(runs(t, 1, 5, 1))); !strings.Contains(n, "the turnaround probe (--turnarounds) was off in base and on in current") {
		t.Errorf("notes %q do not say the probe differs", n)
	}
	if n := note(probe(runs(t, 1, 5, 1)), probe(runs(t, 1, 5, 1))); strings.Contains(n, "turnaround probe") {
		t.Errorf("both sides probed, yet notes %q", n)
	}
}
