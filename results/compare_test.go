package results_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
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

// judged counts the verdicts of c's judgements.
func judged(c *results.Comparison) map[results.Verdict]int {
	m := map[results.Verdict]int{}
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			m[r.Verdict]++
		}
	}
	return m
}

func compareText(c *results.Comparison) string {
	var b bytes.Buffer
	results.WriteCompareText(&b, c)
	return b.String()
}

// A clear 20% slowdown, 5 runs a side, default metrics and tolerances: p50 (+10%) and RPC/s
// (-10%) regressed at every point; p99's tolerance of +30% is beyond the slowdown, so its
// interval lies within it.
func TestCompareSlowed(t *testing.T) {
	base, slow := runs(t, 1, 5, 1), runs(t, 2, 5, 1.2)
	c, err := results.Compare(base, slow, results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != results.Regressed || c.ExitCode() != results.ExitRegression || c.Judged != 9 {
		t.Fatalf("verdict %v exit %d judged %d\n%s", c.Verdict, c.ExitCode(), c.Judged, compareText(c))
	}
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			want := results.Regressed
			if r.Metric == results.MetricP99 {
				want = results.OK
			}
			if r.Verdict != want || !r.Change.Bounded() || math.Abs(r.Change.Est-1.2) > 0.05 && r.Metric != results.MetricRPS {
				t.Errorf("%s %v: %v change %+v, want %v near 1.2", p.Params.Key(), r.Metric, r.Verdict, r.Change, want)
			}
		}
	}
	// 9 judgements at 0.05, Holm: the intervals at the level it stopped at.
	if math.Abs(c.Confidence-(1-0.1/float64(max(9-c.Decided, 1)))) > 1e-12 || c.Decided != judged(c)[results.Regressed]+judged(c)[results.OK] {
		t.Errorf("confidence %v, %d decided", c.Confidence, c.Decided)
	}
	// A tolerance wider than the slowdown passes it; the other way round it is an improvement.
	c, _ = results.Compare(base, slow, results.CompareConfig{Thresholds: mustThresholds(t, "p50=+30%,rps=-30%")})
	if c.Verdict != results.OK || judged(c)[results.OK] != 6 {
		t.Errorf("p50=+30%%,rps=-30%%: %v %v\n%s", c.Verdict, judged(c), compareText(c))
	}
	// Judging all 7 metrics (18 with values) asks more of 5 runs than they can give.
	c, _ = results.Compare(base, slow, results.CompareConfig{Thresholds: mustThresholds(t, "all=30%")})
	if r := c.Points[0].Metrics[0]; c.Verdict != results.Inconclusive || c.Judged != 18 || !strings.Contains(r.Reason, "18 judgement(s) at alpha 0.05 need >= 6 per side") {
		t.Errorf("all=30%%: %v judged %d %q", c.Verdict, c.Judged, r.Reason)
	}
	if r := c.Points[0].Metrics[results.MetricP999]; r.Verdict != results.Inconclusive || !strings.Contains(r.Reason, "no value on one side") {
		t.Errorf("p99.9 without values: %v %q", r.Verdict, r.Reason)
	}
	c, _ = results.Compare(slow, base, results.CompareConfig{})
	if c.Verdict != results.OK || c.ExitCode() != results.ExitOK || c.Points[0].Metrics[0].String() != "ok (improved)" {
		t.Errorf("speed-up: verdict %v exit %d %q", c.Verdict, c.ExitCode(), c.Points[0].Metrics[0].String())
	}
}

// Only what the user names is judged: no metric is ever held to an implicit 0%.
func TestCompareJudgesNamedMetrics(t *testing.T) {
	base, cur := runs(t, 1, 5, 1), runs(t, 2, 5, 1)
	for _, tc := range []struct {
		cfg  results.CompareConfig
		want []results.Metric
	}{
		{results.CompareConfig{}, results.DefaultMetrics},
		{results.CompareConfig{Thresholds: mustThresholds(t, "p90=+8%")}, []results.Metric{results.MetricP90}},
		{results.CompareConfig{Thresholds: mustThresholds(t, "p90=+8%"), Metrics: []results.Metric{results.MetricMean, results.MetricP90}},
			[]results.Metric{results.MetricMean, results.MetricP90}},
	} {
		c, err := results.Compare(base, cur, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.Points[0].Metrics {
			_, named := tc.cfg.Thresholds[r.Metric]
			if want := results.DefaultTolerance[r.Metric]; named {
				if r.Tolerance != tc.cfg.Thresholds[r.Metric] || !r.Explicit {
					t.Errorf("%v: tolerance %v explicit %v", r.Metric, r.Tolerance, r.Explicit)
				}
			} else if r.Tolerance != want || r.Explicit || want == 0 {
				t.Errorf("%v: tolerance %v, want the default %v", r.Metric, r.Tolerance, want)
			}
		}
		var got []results.Metric
		for _, r := range c.Points[0].Metrics {
			got = append(got, r.Metric)
		}
		if !slices.Equal(got, tc.want) || !slices.Equal(c.Metrics, tc.want) {
			t.Errorf("%+v: judged %v, want %v", tc.cfg, got, tc.want)
		}
	}
}

// Identical distributions: ok when the runs are enough for the tolerance; with 2 runs a
// side no interval exists, and the answer is "inconclusive", exit 3, never "ok".
func TestCompareSameDistribution(t *testing.T) {
	c, err := results.Compare(runs(t, 3, 5, 1), runs(t, 4, 5, 1), results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != results.OK || c.ExitCode() != results.ExitOK || !c.Conclusive() {
		t.Errorf("5 v 5: %v exit %d\n%s", c.Verdict, c.ExitCode(), compareText(c))
	}
	if r := c.Points[0].Metrics[0]; r.Change.Est == 1 || !(r.Change.Lo < 1 && r.Change.Hi > 1) {
		t.Errorf("p50 change %+v: want noise around 1", r.Change)
	}
	c, _ = results.Compare(runs(t, 3, 2, 1), runs(t, 4, 2, 1), results.CompareConfig{})
	if c.Verdict != results.Inconclusive || c.ExitCode() != results.ExitInconclusive || c.Conclusive() || judged(c)[results.Inconclusive] != 9 {
		t.Errorf("2 v 2: %v exit %d %v", c.Verdict, c.ExitCode(), judged(c))
	}
	r := c.Points[0].Metrics[0]
	if r.Change.Bounded() || !strings.Contains(r.Reason, "too few processes for an interval: 2 base and 2 current; 9 judgement(s) at alpha 0.05 need >= 5 per side") {
		t.Errorf("2 v 2 p50: %+v %q", r.Change, r.Reason)
	}
	// A file whose rounds ran in one process is one sample: its rounds share the process's
	// placement and connections. The same rounds recorded in five processes are five.
	merged := func(rs []*results.Run, fresh bool) []*results.Run {
		one := *rs[0]
		one.Points = nil
		for i, r := range rs {
			for _, p := range r.Points {
				p.Round = i + 1
				if fresh {
					p.Process = i + 1
				}
				one.Points = append(one.Points, p)
			}
		}
		return []*results.Run{&one}
	}
	c, _ = results.Compare(merged(runs(t, 3, 5, 1), false), merged(runs(t, 4, 5, 1), false), results.CompareConfig{})
	if r := c.Points[0].Metrics[0]; c.Verdict != results.Inconclusive || len(r.Base) != 1 || !strings.Contains(r.Reason, "one process a side") {
		t.Errorf("rounds of one process: %v, %d samples, %q", c.Verdict, len(r.Base), r.Reason)
	}
	c, _ = results.Compare(merged(runs(t, 3, 5, 1), true), merged(runs(t, 4, 5, 1), true), results.CompareConfig{})
	if c.Verdict != results.OK || len(c.Points[0].Metrics[0].Base) != 5 || c.BaseRounds != 5 || c.BaseProcesses != 5 || c.BaseRuns != 1 {
		t.Errorf("rounds in fresh processes: %v, %d samples\n%s", c.Verdict, len(c.Points[0].Metrics[0].Base), compareText(c))
	}
	if !strings.Contains(compareText(c), "base 5 round(s) in 5 process(es) (1 file(s))") {
		t.Errorf("header does not count rounds and processes:\n%s", compareText(c))
	}
}

// noisyRuns are n runs whose scale varies by noise (lognormal sigma) around scale.
func noisyRuns(t *testing.T, seed uint64, n int, scale, noise float64) []*results.Run {
	rng := rand.New(rand.NewPCG(seed, 7))
	var rs []*results.Run
	for i := range n {
		rs = append(rs, makeRun(t, seed*100+uint64(i), scale*math.Exp(noise*rng.NormFloat64()), 2000, 1))
	}
	return rs
}

// A change the size of the tolerance, or noise wider than it, is neither ok nor regressed.
func TestCompareStraddles(t *testing.T) {
	for _, tc := range []struct {
		name         string
		scale, noise float64
	}{{"a 10% change against 10%", 1.1, 0.02}, {"30% run-to-run noise", 1, 0.3}} {
		c, err := results.Compare(noisyRuns(t, 5, 6, 1, tc.noise), noisyRuns(t, 6, 6, tc.scale, tc.noise),
			results.CompareConfig{Thresholds: mustThresholds(t, "p50=+10%")})
		if err != nil {
			t.Fatal(err)
		}
		if c.Verdict != results.Inconclusive || c.ExitCode() != results.ExitInconclusive {
			t.Errorf("%s: %v\n%s", tc.name, c.Verdict, compareText(c))
		}
		for _, p := range c.Points {
			if r := p.Metrics[0]; r.Verdict == results.Inconclusive && (r.Reason != "the interval straddles the tolerance" || !r.Change.Bounded()) {
				t.Errorf("%s: %q %+v", tc.name, r.Reason, r.Change)
			}
		}
	}
}

func disturb(r *results.Run, other float64) {
	for i := range r.Points {
		r.Points[i].HostOtherCPU = &other
		r.Points[i].Disturbed = results.Disturbances(nil, 0, 2, &other)
	}
}

// Disturbed runs are left out while enough others remain, and a verdict that has to use
// them says so.
func TestCompareDisturbed(t *testing.T) {
	base, cur := runs(t, 1, 6, 1), runs(t, 2, 6, 1)
	for _, r := range append(base, cur...) {
		disturb(r, 2)
	}
	// One current run under pressure, three times slower: left out, the rest is ok.
	cur[0] = makeRun(t, 77, 3, 2000, 1)
	disturb(cur[0], 75)
	c, err := results.Compare(base, cur, results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Points[0].Metrics[0]
	if c.Verdict != results.OK || r.Excluded != 1 || r.Disturbed != 0 || len(r.Current) != 5 {
		t.Errorf("one disturbed run: %v excluded %d disturbed %d n %d\n%s", c.Verdict, r.Excluded, r.Disturbed, len(r.Current), compareText(c))
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"9 judgement(s) left disturbed processes out", "current data quality: 3 of 18 point(s) disturbed: other processes used more than 10% of the CPUs (3); other processes used up to 75% of the host CPU time",
		"base data quality: 0 of 18 point(s) disturbed; other processes used up to 2% of the host CPU time"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	// Every run disturbed: the verdict rests on them and says so.
	for _, r := range append(base, cur...) {
		disturb(r, 40)
	}
	c, _ = results.Compare(base, cur, results.CompareConfig{})
	r = c.Points[0].Metrics[0]
	if r.Disturbed != 12 || r.Excluded != 0 || !strings.Contains(compareText(c), "rests on 12 disturbed process(es)") ||
		!strings.Contains(strings.Join(c.Notes, "\n"), "9 verdict(s) rest on disturbed processes") {
		t.Errorf("all disturbed: disturbed %d excluded %d\n%s", r.Disturbed, r.Excluded, compareText(c))
	}
}

// No verdict rests on a neighbour's load: with every run disturbed, a change well within the
// tolerance and one far beyond it are both inconclusive, and say what they would have been.
func TestCompareAllDisturbedDecidesNothing(t *testing.T) {
	for _, tc := range []struct {
		scale float64
		would string
	}{{1, "it would be ok, but rests on 12 disturbed process(es)"}, {3, "it would be regressed, but rests on 12 disturbed process(es)"}} {
		base, cur := runs(t, 1, 6, 1), runs(t, 2, 6, tc.scale)
		for _, r := range append(base, cur...) {
			disturb(r, 40)
		}
		c, err := results.Compare(base, cur, results.CompareConfig{Metrics: []results.Metric{results.MetricP50}})
		if err != nil {
			t.Fatal(err)
		}
		r := c.Points[0].Metrics[0]
		if c.Verdict != results.Inconclusive || c.ExitCode() != results.ExitInconclusive || !strings.Contains(r.Reason, tc.would) {
			t.Errorf("scale %v: verdict %v (%q), want inconclusive saying %q\n%s", tc.scale, c.Verdict, r.Reason, tc.would, compareText(c))
		}
	}
}

// Reasons that belong to the configuration (its busy poller shares a CPU with the tool's own
// threads) hold for every run alike: they are noted, and no run is left out for them; a
// neighbour's run still is.
func TestCompareConfigurationalNotExcluded(t *testing.T) {
	base, cur := runs(t, 1, 6, 1), runs(t, 2, 6, 1)
	lost := results.Disturbances([]results.PollerUsage{{Poll: "busy", CPU: -1, WallNs: 1e9, CPUNs: 6e8, Involuntary: 300}}, 0, 2, nil)
	for _, r := range append(base, cur...) {
		for i := range r.Points {
			r.Points[i].Disturbed = lost
		}
	}
	cur[0] = makeRun(t, 77, 3, 2000, 1)
	disturb(cur[0], 75)
	c, err := results.Compare(base, cur, results.CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Points[0].Metrics[0]
	if c.Verdict != results.OK || r.Excluded != 1 || r.Disturbed != 0 || len(r.Current) != 5 || strings.Contains(compareText(c), "rests on") {
		t.Errorf("verdict %v excluded %d disturbed %d n %d\n%s", c.Verdict, r.Excluded, r.Disturbed, len(r.Current), compareText(c))
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{
		"base data quality: 0 of 18 point(s) disturbed; in 18 point(s) the configuration's own threads competed for CPUs: a busy poller lost its CPU (18)",
		"current data quality: 3 of 18 point(s) disturbed: other processes used more than 10% of the CPUs (3); in 15 point(s) the configuration's own threads competed for CPUs: a busy poller lost its CPU (15); other processes used up to 75% of the host CPU time",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestCompareReports(t *testing.T) {
	c, err := results.Compare(runs(t, 1, 5, 1), runs(t, 2, 5, 1.2), results.CompareConfig{Thresholds: mustThresholds(t, "p99=+10%,throughput=-25%")})
	if err != nil {
		t.Fatal(err)
	}
	var txt, md, js, ju bytes.Buffer
	for _, w := range []struct {
		f   func(io.Writer, *results.Comparison) error
		buf *bytes.Buffer
	}{{results.WriteCompareText, &txt}, {results.WriteCompareMarkdown, &md}, {results.WriteCompareJSON, &js}, {results.WriteCompareJUnit, &ju}} {
		if err := w.f(w.buf, c); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "compare.txt", txt.Bytes())
	golden(t, "compare.md", md.Bytes())
	golden(t, "compare.json", js.Bytes())
	golden(t, "compare.xml", ju.Bytes())
	if !strings.HasPrefix(txt.String(), "verdict: regressed (exit 1): p99, rps, gbps at 3 point(s)") {
		t.Errorf("text starts %q", strings.SplitN(txt.String(), "\n", 2)[0])
	}
	if !strings.Contains(md.String(), "| **regressed** |") || !strings.Contains(md.String(), "|---|---|") {
		t.Error("markdown lacks a bold regression or the table rule")
	}
	var j struct {
		Verdict  string
		ExitCode int `json:"exit_code"`
		Points   []struct {
			Metrics []struct {
				Metric  string
				Verdict string
				Low     *float64 `json:"interval_low_pct"`
				High    *float64 `json:"interval_high_pct"`
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &j); err != nil || j.Verdict != "regressed" || j.ExitCode != 1 || len(j.Points) != 3 ||
		j.Points[0].Metrics[0].Metric != "p99" || j.Points[0].Metrics[0].Low == nil || !(*j.Points[0].Metrics[0].Low > 10) {
		t.Errorf("json: %v %+v", err, j)
	}
	var x struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(ju.Bytes(), &x); err != nil || x.Tests != 9 || x.Failures == 0 {
		t.Errorf("junit: %v %+v", err, x)
	}
}

// quickRun is a run of one point with only what Compare reads: p50, p99 and RPC/s of a
// server whose speed varies from run to run, bimodally, as on a shared machine.
func quickRun(rng *rand.Rand, scale, noise float64, bimodal bool) *results.Run {
	speed := scale * math.Exp(noise*rng.NormFloat64())
	if bimodal && rng.IntN(4) == 0 {
		speed *= 3 // a run that shared its CPU
	}
	p50, p99 := int64(15000*speed), int64(60000*speed*math.Exp(0.2*rng.NormFloat64()))
	return &results.Run{Status: results.Status{State: results.StateComplete}, Points: []results.Point{{
		Params: testParams[0], Complete: true,
		RTT:        results.Summary{Count: 10000, P50: &p50, P99: &p99},
		Throughput: results.Throughput{RPCs: 10000, RPCPerSec: 1e9 / (float64(p50) * 1.1)},
	}}}
}

// The gate's false alarms are a property of the method: over 1000 comparisons of 5 v 5 runs
// drawn from one distribution (bimodal, or not), default metrics and tolerances, at most 5%
// exit 1. A 20% slowdown never passes, and is caught as often as the noise and the runs allow.
func TestCompareFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	const trials = 1000
	trial := func(n int, slow, noise float64, bimodal bool) map[results.Verdict]int {
		draw := func(scale float64) []*results.Run {
			var rs []*results.Run
			for range n {
				rs = append(rs, quickRun(rng, scale, noise, bimodal))
			}
			return rs
		}
		count := map[results.Verdict]int{}
		for range trials {
			c, err := results.Compare(draw(1), draw(slow), results.CompareConfig{})
			if err != nil {
				t.Fatal(err)
			}
			count[c.Verdict]++
		}
		return count
	}
	for _, noise := range []struct {
		sigma   float64
		bimodal bool
	}{{0.1, true}, {0.05, false}} {
		count := trial(5, 1, noise.sigma, noise.bimodal)
		t.Logf("same distribution (noise %g, bimodal %v), %d comparisons of 5 v 5: %v", noise.sigma, noise.bimodal, trials, count)
		if f := float64(count[results.Regressed]) / trials; f > 0.05 {
			t.Errorf("false regressions %.3f, want <= 0.05", f)
		}
		if count[results.OK] == 0 {
			t.Error("never ok: the gate cannot pass")
		}
	}
	// Power grows with runs: 5 a side catch a 20% slowdown through 2% noise, 10 through 5%.
	for _, p := range []struct {
		n            int
		noise, power float64
	}{{5, 0.02, 0.9}, {5, 0.05, 0.5}, {10, 0.05, 0.9}} {
		count := trial(p.n, 1.2, p.noise, false)
		t.Logf("20%% slower (noise %g), %d comparisons of %d v %d: %v", p.noise, trials, p.n, p.n, count)
		if count[results.OK] > 0 {
			t.Errorf("a 20%% slowdown passed %d times", count[results.OK])
		}
		if f := float64(count[results.Regressed]) / trials; f < p.power {
			t.Errorf("a 20%% slowdown caught in %.3f, want >= %g", f, p.power)
		}
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
	if c.Verdict != results.Failed || c.ExitCode() != results.ExitFailed {
		t.Errorf("a lost point must fail the gate as a failed measurement, verdict %v exit %d", c.Verdict, c.ExitCode())
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

// --under-load: with every process disturbed on both sides under comparable load, a change
// far beyond the tolerance regresses and none is ok within it; loads far apart, or one side
// disturbed alone, still decide nothing.
func TestCompareUnderLoad(t *testing.T) {
	cfg := results.CompareConfig{Metrics: []results.Metric{results.MetricP50}, UnderLoad: true}
	for _, tc := range []struct {
		name              string
		scale             float64
		baseLoad, curLoad float64
		want              results.Verdict
		reason, note      string
	}{
		{"comparable, slower", 3, 40, 45, results.Regressed, "judged under comparable load", "both sides ran under comparable load"},
		{"comparable, same", 1, 40, 45, results.OK, "judged under comparable load", "both sides ran under comparable load"},
		{"loads apart", 3, 20, 60, results.Inconclusive, "it would be regressed, but rests on", "the sides ran under different loads"},
		{"one side disturbed", 3, 2, 40, results.Inconclusive, "it would be regressed, but rests on", "the sides ran under different loads"},
	} {
		base, cur := runs(t, 1, 6, 1), runs(t, 2, 6, tc.scale)
		for _, r := range base {
			disturb(r, tc.baseLoad)
		}
		for _, r := range cur {
			disturb(r, tc.curLoad)
		}
		c, err := results.Compare(base, cur, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := c.Points[0].Metrics[0]
		if r.Verdict != tc.want || !strings.Contains(r.Reason, tc.reason) || !strings.Contains(strings.Join(c.Notes, "\n"), tc.note) {
			t.Errorf("%s: %v %q\n%s", tc.name, r.Verdict, r.Reason, compareText(c))
		}
	}
}

// probe gives every point of rs the host-speed reading compute ns, copy per KiB.
func probe(rs []*results.Run, compute, copyNs float64) {
	for _, r := range rs {
		for i := range r.Points {
			r.Points[i].Host = &results.HostSpeed{ComputeNs: compute, CopyNsPerKiB: copyNs, CPUs: 2}
		}
	}
}

// A host that slowed as much as the transport seems to have cannot give a regression, nor
// one that sped up an ok: either is withheld with the host's change and the next step; a
// steady host, or the check turned off, leaves the verdict alone.
func TestCompareWithholdsWhatTheHostMade(t *testing.T) {
	base, slow, same := runs(t, 1, 6, 1), runs(t, 2, 6, 1.2), runs(t, 3, 6, 1)
	probe(base, 2.8, 25)
	probe(same, 2.8, 25.5)
	probe(slow, 2.8, 25)
	c, _ := results.Compare(base, slow, results.CompareConfig{})
	if c.Verdict != results.Regressed || c.Points[0].Host.Figure == "" || math.Abs(c.Points[0].Host.Ratio-1) > 1e-9 {
		t.Fatalf("steady host: %v %+v\n%s", c.Verdict, c.Points[0].Host, compareText(c))
	}
	probe(slow, 3.3, 25) // the clock 18% slower
	c, _ = results.Compare(base, slow, results.CompareConfig{})
	r := c.Points[0].Metrics[0]
	if c.Verdict != results.Inconclusive || c.ExitCode() != results.ExitInconclusive || !r.HostWithheld || r.Leaning != results.Regressed ||
		r.Reason != "it would be regressed, but the host ran 18% slower than for the baseline (compute probe)" {
		t.Fatalf("slower host: %v withheld %v leaning %v %q\n%s", c.Verdict, r.HostWithheld, r.Leaning, r.Reason, compareText(c))
	}
	if head := compareText(c); !strings.Contains(head, "leaning regressed: ") || !strings.Contains(head, "on a slower host") ||
		!strings.Contains(head, "for the current side the host ran 18% slower (compute probe, the most of 3 point(s) beyond the host tolerance: 5%, the round trip's 10 times as much)") ||
		!strings.Contains(c.Next(), "withheld because the host itself ran at another speed than for the baseline") {
		t.Errorf("slower host's headline and next step:\n%s", head)
	}
	var js bytes.Buffer
	if err := results.WriteCompareJSON(&js, c); err != nil || !strings.Contains(js.String(), `"host_figure": "compute"`) ||
		!strings.Contains(js.String(), `"host_withheld": true`) {
		t.Errorf("JSON lacks the host's change (%v):\n%s", err, js.String())
	}
	c, _ = results.Compare(base, slow, results.CompareConfig{HostTolerance: -1})
	if c.Verdict != results.Regressed {
		t.Errorf("check off: %v", c.Verdict)
	}
	c, _ = results.Compare(base, slow, results.CompareConfig{HostTolerance: 20})
	if c.Verdict != results.Regressed {
		t.Errorf("18%% within a 20%% host tolerance: %v", c.Verdict)
	}
	// The same transport on a host 10% faster: ok would be the host's doing.
	probe(same, 2.5, 25)
	c, _ = results.Compare(base, same, results.CompareConfig{})
	if r := c.Points[0].Metrics[0]; c.Verdict != results.Inconclusive || r.Leaning != results.OK ||
		r.Reason != "it would be ok, but the host ran 12% faster than for the baseline (compute probe)" {
		t.Errorf("faster host: %v %q", c.Verdict, r.Reason)
	}
	// A regression on a faster host stands: the host would have hidden it, not made it.
	probe(slow, 2.5, 25)
	if c, _ = results.Compare(base, slow, results.CompareConfig{}); c.Verdict != results.Regressed {
		t.Errorf("regression on a faster host: %v", c.Verdict)
	}
	// A chain as noisy between the base's processes as its move is no evidence: 10% slower in
	// current, within three median absolute deviations of the base's (2.4 to 3.4 ns).
	probe(slow, 3.2, 25)
	for i, r := range base {
		for j := range r.Points {
			r.Points[j].Host.ComputeNs = 2.4 + 0.2*float64(i)
		}
	}
	if c, _ = results.Compare(base, slow, results.CompareConfig{}); c.Verdict != results.Regressed || c.Points[0].Host.Beyond {
		t.Errorf("a chain within the base's spread: %v %+v", c.Verdict, c.Points[0].Host)
	}
	// The copy drifts with the host's caches by more than the transport's figures move, and
	// the cache line's round trip with where the host places the CPUs: the copy is recorded
	// only, the round trip held to 10 times the tolerance. A round trip a third slower
	// withholds nothing; 4.6 times slower (the host that slowed every process by 40%) does.
	probe(base, 2.8, 25)
	probe(slow, 2.8, 40)
	pingpong := func(rs []*results.Run, ns float64) {
		for _, r := range rs {
			for j := range r.Points {
				r.Points[j].Host.PingPongNs = ns
			}
		}
	}
	pingpong(base, 60)
	pingpong(slow, 80)
	if c, _ = results.Compare(base, slow, results.CompareConfig{}); c.Verdict != results.Regressed {
		t.Errorf("copy 60%% and round trip 33%% slower: %v %+v", c.Verdict, c.Points[0].Host)
	}
	pingpong(slow, 276)
	c, _ = results.Compare(base, slow, results.CompareConfig{})
	if r := c.Points[0].Metrics[0]; !r.HostWithheld ||
		r.Reason != "it would be regressed, but the host passed cache lines between its CPUs 4.6 times slower than for the baseline (pingpong probe)" {
		t.Errorf("round trip 4.6 times slower: %v %q", r.Verdict, r.Reason)
	}
	// One side not probed (an older file): nothing to check.
	probe(slow, 0, 0)
	for _, r := range slow {
		for i := range r.Points {
			r.Points[i].Host = nil
		}
	}
	if c, _ = results.Compare(base, slow, results.CompareConfig{}); c.Verdict != results.Regressed || c.Points[0].Host.Figure != "" {
		t.Errorf("no probe on one side: %v %+v", c.Verdict, c.Points[0].Host)
	}
}

// The help texts read the defaults from the table, so that they cannot drift from it.
func TestDefaultTolerancesText(t *testing.T) {
	want := "p50 +10%, p90 +15%, p99 +30%, p99.9 +30%, mean +10%, rps -10%, gbps -10%, jain -5%, slowest -10%"
	if got := results.DefaultTolerances(); got != want {
		t.Errorf("DefaultTolerances() = %q, want %q", got, want)
	}
}
