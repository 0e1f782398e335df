package results

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Metric is a quantity Compare compares, one value per point per run.
type Metric uint8

const (
	MetricP50  Metric = iota // RTT p50
	MetricP90                // RTT p90
	MetricP99                // RTT p99
	MetricP999               // RTT p99.9
	MetricMean               // mean RTT
	MetricRPS                // RPC/s
	MetricGbps               // payload Gb/s
	NumMetrics
)

var metricNames = [NumMetrics]string{"p50", "p90", "p99", "p99.9", "mean", "rps", "gbps"}

func (m Metric) String() string {
	if m < NumMetrics {
		return metricNames[m]
	}
	return "metric(" + strconv.Itoa(int(m)) + ")"
}

// HigherIsBetter reports whether an increase of m is an improvement (throughput) rather than
// a regression (latency).
func (m Metric) HigherIsBetter() bool { return m == MetricRPS || m == MetricGbps }

// value is m's value for p, false if p does not have it (an unsupported percentile).
func (m Metric) value(p *Point) (float64, bool) {
	var v *int64
	switch m {
	case MetricP50:
		v = p.RTT.P50
	case MetricP90:
		v = p.RTT.P90
	case MetricP99:
		v = p.RTT.P99
	case MetricP999:
		v = p.RTT.P999
	case MetricMean:
		v = p.RTT.Mean
	case MetricRPS:
		return p.Throughput.RPCPerSec, p.Throughput.RPCs > 0
	case MetricGbps:
		return p.Throughput.PayloadGbps, p.Throughput.RPCs > 0
	}
	if v == nil {
		return 0, false
	}
	return float64(*v), true
}

// Thresholds are the changes tolerated per metric, in percent, in the metric's bad direction
// (a rise of a latency, a fall of a throughput); always >= 0. A metric with no entry
// tolerates 0%: any change in the bad direction that is beyond noise is a regression.
type Thresholds map[Metric]float64

// metric groups ParseThresholds accepts besides the metric names.
var thresholdGroups = map[string][]Metric{
	"latency":    {MetricP50, MetricP90, MetricP99, MetricP999, MetricMean},
	"throughput": {MetricRPS, MetricGbps},
	"all":        {MetricP50, MetricP90, MetricP99, MetricP999, MetricMean, MetricRPS, MetricGbps},
	"p999":       {MetricP999},
	"rtt":        {MetricMean},
}

// ParseThresholds parses a comma-separated list of NAME=CHANGE% tokens, such as
// "p99=+10%,throughput=-5%". NAME is a metric (p50, p90, p99, p99.9 or p999, mean or rtt, rps,
// gbps) or a group (latency: the RTT metrics; throughput: rps and gbps; all). CHANGE is the
// tolerated change in the bad direction: "+N" for latencies, "-N" for throughputs, or an
// unsigned N for either (and the only form for "all"). Later tokens override earlier ones, so
// "all=5%,p99.9=20%" works. An empty string gives no thresholds. Errors name the bad token.
func ParseThresholds(s string) (Thresholds, error) {
	t := Thresholds{}
	if strings.TrimSpace(s) == "" {
		return t, nil
	}
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		bad := func(format string, args ...any) error {
			return fmt.Errorf("threshold %q: %s", tok, fmt.Sprintf(format, args...))
		}
		name, val, ok := strings.Cut(tok, "=")
		if !ok || !strings.HasSuffix(val, "%") {
			return nil, bad("want NAME=CHANGE%% (for example p99=+10%% or throughput=-5%%)")
		}
		var ms []Metric
		if g, ok := thresholdGroups[name]; ok {
			ms = g
		} else if i := slices.Index(metricNames[:], name); i >= 0 {
			ms = []Metric{Metric(i)}
		} else {
			return nil, bad("unknown metric %q (want p50, p90, p99, p99.9, mean, rps, gbps, latency, throughput or all)", name)
		}
		num := strings.TrimSuffix(val, "%")
		sign := byte(0)
		if num != "" && (num[0] == '+' || num[0] == '-') {
			sign, num = num[0], num[1:]
		}
		pct, err := strconv.ParseFloat(num, 64)
		if err != nil || num == "" || num[0] == '+' || num[0] == '-' || math.IsNaN(pct) || math.IsInf(pct, 0) {
			return nil, bad("%q is not a percentage", val)
		}
		for _, m := range ms {
			switch {
			case sign == '-' && !m.HigherIsBetter():
				return nil, bad("%s regresses by rising: write +%s%%", m, num)
			case sign == '+' && m.HigherIsBetter():
				return nil, bad("%s regresses by falling: write -%s%%", m, num)
			}
		}
		for _, m := range ms {
			t[m] = pct
		}
	}
	return t, nil
}

// String writes t in the form ParseThresholds reads, metrics in order.
func (t Thresholds) String() string {
	var parts []string
	for m := range NumMetrics {
		if v, ok := t[m]; ok {
			sign := "+"
			if m.HigherIsBetter() {
				sign = "-"
			}
			parts = append(parts, fmt.Sprintf("%s=%s%s%%", m, sign, strconv.FormatFloat(v, 'g', -1, 64)))
		}
	}
	return strings.Join(parts, ",")
}

// CompareConfig configures Compare. The zero value compares every metric at alpha 0.05 with
// no tolerance.
type CompareConfig struct {
	// Alpha is the significance level of the U test: a difference is beyond noise when
	// p < Alpha. Default 0.05, as benchstat.
	Alpha float64
	// Thresholds are the tolerated changes; see Thresholds.
	Thresholds Thresholds
	// Metrics are the metrics compared; nil means all.
	Metrics []Metric
}

// Verdict is the outcome of comparing one metric, one point, or everything.
type Verdict uint8

const (
	// OK: no change beyond noise and threshold in the bad direction.
	OK Verdict = iota
	// Improved: better beyond noise (and beyond the threshold's size).
	Improved
	// NoEstimate: too few runs to estimate noise and no threshold given to judge the change
	// by; nothing can be concluded.
	NoEstimate
	// NotCompared: one side has no value (a percentile its sample count cannot support, a
	// point without successful RPCs).
	NotCompared
	// Regressed: worse beyond noise and beyond the threshold.
	Regressed
)

var verdictNames = [...]string{"ok", "improved", "no-noise-estimate", "n/a", "regressed"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Exit codes for a compare command: the CLI returns Comparison.ExitCode, or ExitBadInput when
// Compare, ParseThresholds or reading a file failed.
const (
	ExitOK         = 0 // no regression (improvements and undecidable metrics included)
	ExitRegression = 1 // a metric regressed or a base point is missing from current
	ExitBadInput   = 2 // unreadable files, bad thresholds, nothing to compare
)

// MetricResult compares one metric of one point.
type MetricResult struct {
	Metric Metric
	// Base and Current are the samples: the metric's value in each run (each complete point).
	Base, Current []float64
	// BaseMedian and CurrentMedian are the samples' medians; Delta is the change from base to
	// current in percent of BaseMedian (NaN when BaseMedian is 0).
	BaseMedian, CurrentMedian float64
	Delta                     float64
	// P is the U test's p-value; NaN when there is no noise estimate.
	P float64
	// NoiseEstimate is false when the sample counts are too small for any outcome to reach
	// Alpha (MinP > Alpha): then the verdict rests on the threshold alone.
	NoiseEstimate bool
	// Threshold is the tolerated change in percent (bad direction) and Explicit whether the
	// user gave it.
	Threshold float64
	Explicit  bool
	Verdict   Verdict
}

// String is the verdict with its qualification, as reports print it.
func (r *MetricResult) String() string {
	s := r.Verdict.String()
	if !r.NoiseEstimate && (r.Verdict == OK || r.Verdict == Improved || r.Verdict == Regressed) {
		s += " (no noise estimate)"
	}
	return s
}

// PointResult compares one point.
type PointResult struct {
	Params  Params
	Metrics []MetricResult
	// Verdict is the worst of the metrics' verdicts (Regressed over everything else).
	Verdict Verdict
}

// Comparison is Compare's result.
type Comparison struct {
	Alpha      float64
	Thresholds Thresholds
	// BaseRuns and CurrentRuns count the runs compared.
	BaseRuns, CurrentRuns int
	// Points are the points present on both sides, in base order.
	Points []PointResult
	// MissingInCurrent are base points the current runs lack (a regression: the gate must
	// not pass because a measurement vanished); NewInCurrent are points only current has.
	MissingInCurrent, NewInCurrent []Params
	// Notes explain what was excluded or could not be decided.
	Notes []string
	// Verdict is Regressed if any metric regressed or a base point is missing, else
	// Improved if any metric improved, else NoEstimate if no metric could be decided, else OK.
	Verdict Verdict
}

// ExitCode maps the overall verdict to ExitOK or ExitRegression.
func (c *Comparison) ExitCode() int {
	if c.Verdict == Regressed {
		return ExitRegression
	}
	return ExitOK
}

// ErrNothingToCompare is wrapped by Compare's error when the inputs have nothing in common.
var ErrNothingToCompare = errors.New("nothing to compare")

// Compare compares repeated runs of a base version with repeated runs of a current one.
// Points are matched by Params; each run contributes one sample per complete point (a run
// that repeats a point contributes several). For every metric it computes both medians, the
// change in percent, and, when each side has enough runs, the Mann-Whitney U test's p-value,
// as benchstat does. A metric regressed when it is worse by more than its threshold and the
// difference is beyond noise (p < alpha). With too few runs for the test to ever reach alpha
// (fewer than 4 a side at alpha 0.05), there is no noise estimate: an explicit threshold is
// then applied to the medians alone and the verdict says so; without one the metric is
// NoEstimate. An error (wrapping ErrNothingToCompare) means bad input: no runs on a side or no
// point in common.
func Compare(base, current []*Run, cfg CompareConfig) (*Comparison, error) {
	if cfg.Alpha == 0 {
		cfg.Alpha = 0.05
	}
	if !(cfg.Alpha > 0 && cfg.Alpha < 1) {
		return nil, fmt.Errorf("results: alpha %v is not in (0, 1)", cfg.Alpha)
	}
	if len(base) == 0 || len(current) == 0 {
		return nil, fmt.Errorf("results: %w: %d base runs and %d current runs", ErrNothingToCompare, len(base), len(current))
	}
	metrics := cfg.Metrics
	if metrics == nil {
		for m := range NumMetrics {
			metrics = append(metrics, m)
		}
	}
	c := &Comparison{Alpha: cfg.Alpha, Thresholds: cfg.Thresholds, BaseRuns: len(base), CurrentRuns: len(current)}
	if bs, cs := setups(base), setups(current); bs != cs {
		c.Notes = append(c.Notes, fmt.Sprintf("the sides ran on different setups: base %s, current %s", bs, cs))
	}
	if bp, cp := probed(base), probed(current); bp != cp {
		c.Notes = append(c.Notes, fmt.Sprintf("the turnaround probe (--turnarounds) was %s in base and %s in current: its clock reads are on the measured path, so the sides differ by more than the change under test", bp, cp))
	}
	b, bOrder := c.collect("base", base)
	cur, cOrder := c.collect("current", current)
	for _, k := range cOrder {
		if _, ok := b[k]; !ok {
			c.NewInCurrent = append(c.NewInCurrent, cur[k][0].Params)
		}
	}
	for _, k := range bOrder {
		bp, cp := b[k], cur[k]
		if len(cp) == 0 {
			c.MissingInCurrent = append(c.MissingInCurrent, bp[0].Params)
			continue
		}
		pr := PointResult{Params: bp[0].Params}
		for _, m := range metrics {
			r := compareMetric(m, bp, cp, cfg)
			pr.Metrics = append(pr.Metrics, r)
			pr.Verdict = worse(pr.Verdict, r.Verdict)
		}
		c.Points = append(c.Points, pr)
	}
	if len(c.Points) == 0 {
		return nil, fmt.Errorf("results: %w: no point of the base runs is in the current runs", ErrNothingToCompare)
	}

	decided, improved := false, false
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			switch r.Verdict {
			case Regressed:
				c.Verdict = Regressed
			case Improved:
				improved = true
				decided = true
			case OK:
				decided = true
			}
		}
	}
	if len(c.MissingInCurrent) > 0 {
		c.Verdict = Regressed
	}
	if c.Verdict != Regressed {
		switch {
		case improved:
			c.Verdict = Improved
		case !decided:
			c.Verdict = NoEstimate
		}
	}
	switch nb, nc := minSamples(c); {
	case MinP(c.BaseRuns, c.CurrentRuns) > cfg.Alpha:
		c.Notes = append(c.Notes, fmt.Sprintf("too few runs for a noise estimate: need >= %d runs per side to detect a difference at alpha %g (have %d base and %d current runs); verdicts rest on the thresholds alone",
			runsNeeded(cfg.Alpha), cfg.Alpha, c.BaseRuns, c.CurrentRuns))
	case MinP(nb, nc) > cfg.Alpha:
		c.Notes = append(c.Notes, fmt.Sprintf("some metrics have too few values for a noise estimate (as few as %d base and %d current, of %d and %d runs: a percentile a run's sample count cannot support, or a point incomplete in some runs); those verdicts rest on the thresholds alone",
			nb, nc, c.BaseRuns, c.CurrentRuns))
	}
	return c, nil
}

// worse orders verdicts for a point's summary: Regressed dominates, then n/a and
// no-estimate, then improved, then ok.
func worse(a, b Verdict) Verdict { return max(a, b) }

// minSamples is the smallest sample count per side over the compared metrics.
func minSamples(c *Comparison) (nb, nc int) {
	nb, nc = math.MaxInt, math.MaxInt
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			if len(r.Base) > 0 && len(r.Current) > 0 {
				nb, nc = min(nb, len(r.Base)), min(nc, len(r.Current))
			}
		}
	}
	if nb == math.MaxInt {
		return 0, 0
	}
	return nb, nc
}

// RunsNeeded is the number of runs per side a comparison needs for the U test to be able to
// reach alpha: 4 at 0.05, 5 at 0.01.
func RunsNeeded(alpha float64) int { return runsNeeded(alpha) }

// runsNeeded is the smallest n with MinP(n, n) <= alpha: 4 at 0.05, 5 at 0.01.
func runsNeeded(alpha float64) int {
	n := 1
	for MinP(n, n) > alpha && n < exactLimit/2 {
		n++
	}
	return n
}

// setups describes the providers and devices of runs ("soft/soft0"), for a note when base
// and current differ: a comparison across NICs is legitimate but should not pass for a
// regression test.
func setups(runs []*Run) string {
	var s []string
	for _, r := range runs {
		d := r.Environment.Provider
		if r.Environment.Device != nil {
			d += "/" + r.Environment.Device.Name
		}
		if !slices.Contains(s, d) {
			s = append(s, d)
		}
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}

// probed says whether runs measured with the turnaround probe: "on", "off" or "on in some".
func probed(runs []*Run) string {
	on, off := false, false
	for _, r := range runs {
		for i := range r.Points {
			for _, u := range r.Points[i].Pollers {
				if u.Turnaround != nil {
					on = true
				} else {
					off = true
				}
			}
		}
	}
	switch {
	case on && off:
		return "on in some runs"
	case on:
		return "on"
	}
	return "off"
}

// collect groups the complete points of runs by key, keeping first-seen order.
func (c *Comparison) collect(side string, runs []*Run) (map[string][]*Point, []string) {
	m := map[string][]*Point{}
	var order []string
	skipped, unfinished := 0, 0
	for _, r := range runs {
		if r.Status.State != StateComplete {
			unfinished++
		}
		for i := range r.Points {
			p := &r.Points[i]
			if !p.Complete {
				skipped++
				continue
			}
			k := p.Params.Key()
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] = append(m[k], p)
		}
	}
	if unfinished > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d %s run(s) did not complete; their complete points are compared", unfinished, side))
	}
	if skipped > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d incomplete %s point(s) left out", skipped, side))
	}
	return m, order
}

func compareMetric(m Metric, base, cur []*Point, cfg CompareConfig) MetricResult {
	r := MetricResult{Metric: m, Delta: math.NaN(), P: math.NaN(), BaseMedian: math.NaN(), CurrentMedian: math.NaN()}
	r.Threshold, r.Explicit = cfg.Thresholds[m]
	for _, p := range base {
		if v, ok := m.value(p); ok {
			r.Base = append(r.Base, v)
		}
	}
	for _, p := range cur {
		if v, ok := m.value(p); ok {
			r.Current = append(r.Current, v)
		}
	}
	if len(r.Base) == 0 || len(r.Current) == 0 {
		r.Verdict = NotCompared
		return r
	}
	r.BaseMedian, r.CurrentMedian = median(r.Base), median(r.Current)
	if r.BaseMedian != 0 {
		r.Delta = (r.CurrentMedian - r.BaseMedian) / r.BaseMedian * 100
	}
	// Change in the bad direction, in percent: positive is worse.
	bad := r.Delta
	if m.HigherIsBetter() {
		bad = -bad
	}
	beyond := !math.IsNaN(bad) && bad > r.Threshold
	better := !math.IsNaN(bad) && -bad > r.Threshold

	r.NoiseEstimate = MinP(len(r.Base), len(r.Current)) <= cfg.Alpha
	if r.NoiseEstimate {
		r.P = UTest(r.Base, r.Current)
		significant := r.P < cfg.Alpha
		switch {
		case significant && beyond:
			r.Verdict = Regressed
		case significant && better:
			r.Verdict = Improved
		default:
			r.Verdict = OK
		}
		return r
	}
	switch {
	case !r.Explicit:
		r.Verdict = NoEstimate
	case beyond:
		r.Verdict = Regressed
	case better:
		r.Verdict = Improved
	default:
		r.Verdict = OK
	}
	return r
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
