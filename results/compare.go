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
	MetricP50     Metric = iota // RTT p50
	MetricP90                   // RTT p90
	MetricP99                   // RTT p99
	MetricP999                  // RTT p99.9
	MetricMean                  // mean RTT
	MetricRPS                   // RPC/s
	MetricGbps                  // payload Gb/s
	MetricJain                  // Jain's fairness index over a fan-in's client ranks
	MetricSlowest               // the RPC/s of a fan-in's slowest client rank
	NumMetrics
)

var metricNames = [NumMetrics]string{"p50", "p90", "p99", "p99.9", "mean", "rps", "gbps", "jain", "slowest"}

func (m Metric) String() string {
	if m < NumMetrics {
		return metricNames[m]
	}
	return "metric(" + strconv.Itoa(int(m)) + ")"
}

// HigherIsBetter reports whether an increase of m is an improvement (throughput) rather than
// a regression (latency).
func (m Metric) HigherIsBetter() bool {
	return m == MetricRPS || m == MetricGbps || m == MetricJain || m == MetricSlowest
}

// Fairness reports whether m judges how evenly a fan-in's client ranks ran: it is judged at
// the points that are fan-ins on both sides only.
func (m Metric) Fairness() bool { return m == MetricJain || m == MetricSlowest }

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
	case MetricJain:
		return p.FanIn.Jain, p.FanIn != nil && len(p.FanIn.Ranks) > 0
	case MetricSlowest:
		return p.FanIn.Slowest(), p.FanIn != nil && len(p.FanIn.Ranks) > 0
	}
	if v == nil {
		return 0, false
	}
	return float64(*v), true
}

// Thresholds are the changes tolerated per metric, in percent, in the metric's bad direction
// (a rise of a latency, a fall of a throughput); always >= 0. Compare uses DefaultTolerance
// for a judged metric with no entry.
type Thresholds map[Metric]float64

// DefaultMetrics are the metrics Compare judges when the configuration names none, and
// FairnessMetrics with them at the points that are fan-ins on both sides.
var (
	DefaultMetrics  = []Metric{MetricP50, MetricP99, MetricRPS}
	FairnessMetrics = []Metric{MetricJain, MetricSlowest}
)

// DefaultTolerance is the tolerance, in percent, of a judged metric the thresholds do not
// name: about what the noise between processes of a quiet machine leaves undecidable
// anyway, tails looser than medians. p99's 30%: ten 500 ms processes resolved it to ±13%
// (median of the baselines in docs/gate-results.md), and beyond ±20% in one in seven.
var DefaultTolerance = [NumMetrics]float64{MetricP50: 10, MetricP90: 15, MetricP99: 30, MetricP999: 30,
	MetricMean: 10, MetricRPS: 10, MetricGbps: 10, MetricJain: 5, MetricSlowest: 10}

// DefaultTolerances lists every metric's default tolerance in the bad direction, as help
// texts say it: "p50 +10%, p90 +15%, ..., slowest -10%".
func DefaultTolerances() string {
	parts := make([]string, 0, NumMetrics)
	for m := range NumMetrics {
		sign := "+"
		if m.HigherIsBetter() {
			sign = "-"
		}
		parts = append(parts, fmt.Sprintf("%s %s%g%%", m, sign, DefaultTolerance[m]))
	}
	return strings.Join(parts, ", ")
}

// metric groups ParseThresholds accepts besides the metric names.
var thresholdGroups = map[string][]Metric{
	"latency":    {MetricP50, MetricP90, MetricP99, MetricP999, MetricMean},
	"throughput": {MetricRPS, MetricGbps},
	"fairness":   {MetricJain, MetricSlowest},
	"all":        {MetricP50, MetricP90, MetricP99, MetricP999, MetricMean, MetricRPS, MetricGbps},
	"p999":       {MetricP999},
	"rtt":        {MetricMean},
}

// ParseThresholds parses a comma-separated list of NAME=CHANGE% tokens, such as
// "p99=+10%,throughput=-5%". NAME is a metric (p50, p90, p99, p99.9 or p999, mean or rtt, rps,
// gbps, jain, slowest) or a group (latency: the RTT metrics; throughput: rps and gbps;
// fairness: jain and slowest; all: latency and throughput). CHANGE is the
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
			return nil, bad("unknown metric %q (want p50, p90, p99, p99.9, mean, rps, gbps, jain, slowest, latency, throughput, fairness or all)", name)
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

// ParseMetrics parses a comma-separated list of metric names (p50, p90, p99, p99.9 or p999,
// mean, rps, gbps, jain, slowest), as Metric.String writes them. Errors name the bad token.
func ParseMetrics(s string) ([]Metric, error) {
	var ms []Metric
	for _, tok := range strings.Split(s, ",") {
		name := strings.TrimSpace(tok)
		if name == "p999" {
			name = "p99.9"
		}
		i := slices.Index(metricNames[:], name)
		if i < 0 {
			return nil, fmt.Errorf("unknown metric %q (want p50, p90, p99, p99.9, mean, rps, gbps, jain or slowest)", tok)
		}
		ms = append(ms, Metric(i))
	}
	return ms, nil
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

// CompareConfig configures Compare. The zero value judges DefaultMetrics with their
// DefaultTolerance at a family-wise error rate of 0.05.
type CompareConfig struct {
	// Alpha is the family-wise error rate: the probability that any conclusive verdict of
	// the comparison is wrong is at most Alpha. Default 0.05.
	Alpha float64
	// Thresholds are the tolerated changes; see Thresholds.
	Thresholds Thresholds
	// Metrics are the metrics judged; nil means the metrics Thresholds names, or
	// DefaultMetrics and FairnessMetrics when it names none. A fairness metric is judged at
	// the points that are fan-ins on both sides only.
	Metrics []Metric
	// UnderLoad judges a verdict that rests on disturbed processes when both sides ran
	// under comparable load (ComparableLoad), instead of leaving it inconclusive; a side
	// disturbed alone still decides nothing.
	UnderLoad bool
	// HostTolerance is how far apart, in percent, the sides' host-speed probes (Point.Host)
	// may be before a verdict the host's change could have made is withheld: a regression on
	// a host that ran slower, an ok on one that ran faster. 0 means DefaultHostTolerance; a
	// negative value turns the check off (sides measured on different machines on purpose).
	HostTolerance float64
}

// DefaultHostTolerance is CompareConfig.HostTolerance's default, percent: the probe's chain
// reads the same to 0.1% between processes on a steady host, and the tolerances it guards
// are 10% and more.
const DefaultHostTolerance = 5.0

// ComparableLoad is how far apart, in percentage points of the host's CPU time, the median
// loads of other processes on the two sides may be for CompareConfig.UnderLoad to judge
// them as ran under the same steady load.
const ComparableLoad = 10.0

// Verdict is the outcome of judging one metric, one point, or everything.
type Verdict uint8

const (
	// OK: the change's interval lies within the tolerance (an improvement included).
	OK Verdict = iota
	// Inconclusive: the interval straddles the tolerance, or there is no interval (too few
	// runs, a value one side lacks): more runs may decide.
	Inconclusive
	// Regressed: the interval lies beyond the tolerance in the bad direction.
	Regressed
	// Failed: the measurement failed, not the transport: a base point is missing in
	// current (a comparison's verdict only, when nothing regressed).
	Failed
)

var verdictNames = [...]string{"ok", "inconclusive", "regressed", "failed"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Exit codes of the gate (compare, and a measuring command that judges itself): the CLI
// returns Comparison.ExitCode, ExitBadInput when Compare, ParseThresholds or reading a file
// failed, ExitFailed when the measurement failed. Each asks a pipeline for something else:
// 1 a look at the change, 3 more rounds or a quieter runner, 4 a look at the infrastructure.
const (
	ExitOK           = 0 // every judged metric is within its tolerance
	ExitRegression   = 1 // a metric regressed beyond its tolerance
	ExitBadInput     = 2 // unreadable files, bad thresholds, nothing to compare
	ExitInconclusive = 3 // no regression, but some metric could not be decided
	ExitFailed       = 4 // the measurement failed: a run failed or was interrupted, a base point is missing in current
)

// MetricResult judges one metric of one point.
type MetricResult struct {
	Metric Metric
	// Base and Current are the samples judged: the metric's value in each run of the point
	// (disturbed runs left out when Excluded > 0).
	Base, Current []float64
	// BaseMedian and CurrentMedian are the samples' medians.
	BaseMedian, CurrentMedian float64
	// BaseProcesses and CurrentProcesses count the processes the samples came from: the
	// units of the interval, each one the median of its rounds.
	BaseProcesses, CurrentProcesses int
	// Change is the Hodges-Lehmann estimate of the ratio current/base (1.2: 20% higher) over
	// the processes, with its confidence interval at the comparison's Confidence; Lo 0 and
	// Hi +Inf when the processes are too few for it.
	Change Estimate
	// P is the p-value of the claim the verdict makes or would make (regressed, or within
	// the tolerance), the one Holm's procedure ranks.
	P float64
	// Noise is the metric's variance components at this point, both sides pooled.
	Noise VarianceComponents
	// Resolution is the half-width, in percent, of the interval the baseline gives against
	// itself at the comparison's Bonferroni level: about the smallest change it can tell
	// from none; NaN when it gives none.
	Resolution float64
	// Leaning is what the evidence points to when the verdict is inconclusive: Regressed
	// when the estimate lies beyond the tolerance in the bad direction and the regression's
	// own p-value (PRegressed, before the adjustment for the judgements' number) is at most
	// the comparison's alpha, or the processes are too few for any interval; OK when the
	// estimate lies within the tolerance; Inconclusive (no lean) else.
	Leaning    Verdict
	PRegressed float64
	// Tolerance is the tolerated change in percent (bad direction) and Explicit whether the
	// user gave it (else DefaultTolerance).
	Tolerance float64
	Explicit  bool
	Verdict   Verdict
	// Improved: the whole interval lies on the good side of no change.
	Improved bool
	// Reason says why an inconclusive verdict could not be decided.
	Reason string
	// Disturbed counts the disturbed runs among the samples (the verdict rests on them);
	// Excluded the disturbed runs left out because enough undisturbed ones remained.
	Disturbed, Excluded int
	// HostWithheld: the verdict was withheld because the host's speed changed between the
	// sides (PointResult.Host, CompareConfig.HostTolerance).
	HostWithheld bool
}

// String is the verdict with its qualification, as reports print it.
func (r *MetricResult) String() string {
	s := r.Verdict.String()
	if r.Verdict == OK && r.Improved {
		s += " (improved)"
	}
	return s
}

// PointResult judges one point.
type PointResult struct {
	Params  Params
	Metrics []MetricResult
	// Host is how the host's speed differed between the sides while they measured the point.
	Host HostChange
	// Verdict is the worst of the metrics' verdicts.
	Verdict Verdict
}

// Comparison is Compare's result.
type Comparison struct {
	// Alpha is the family-wise error rate; Judged the number of judgements it is spread
	// over (point and metric pairs with values on both sides), Decided those that reached
	// ok or regressed (by Holm's step-down procedure, and not resting on disturbed
	// processes), and Confidence each interval's level, 1 - 2*level with
	// level the one Holm stopped at, Alpha/(Judged-Decided): the intervals then exclude
	// the tolerance exactly where a verdict was reached.
	Alpha      float64
	Judged     int
	Decided    int
	Confidence float64
	// Metrics are the judged metrics and Tolerances their tolerances (percent, bad
	// direction), Explicit those the user gave.
	Metrics    []Metric
	Tolerances Thresholds
	Explicit   Thresholds
	// BaseRuns and CurrentRuns count the results files compared; BaseRounds and
	// CurrentRounds the most rounds of a point, BaseProcesses and CurrentProcesses the
	// most processes a point's rounds ran in.
	BaseRuns, CurrentRuns           int
	BaseRounds, CurrentRounds       int
	BaseProcesses, CurrentProcesses int
	// Points are the points present on both sides, in base order.
	Points []PointResult
	// MissingInCurrent are base points the current runs lack (a regression: the gate must
	// not pass because a measurement vanished); NewInCurrent are points only current has.
	MissingInCurrent, NewInCurrent []Params
	// Notes explain what was excluded, how good the data was, what could not be decided.
	Notes []string
	// BaselineUnfit says why the base runs are unfit as a baseline (BaselineFitness), ""
	// when they are fit or were not checked.
	BaselineUnfit string
	// Verdict is Regressed if any metric regressed, else Failed if a base point is missing,
	// else Inconclusive if any metric is, else OK.
	Verdict Verdict
}

// Conclusive reports whether every judged metric was decided (ok or regressed): a runner
// that adds rounds until the verdict is conclusive stops here.
func (c *Comparison) Conclusive() bool {
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			if r.Verdict == Inconclusive {
				return false
			}
		}
	}
	return true
}

// ExitCode maps the overall verdict to ExitOK, ExitRegression, ExitFailed or
// ExitInconclusive.
func (c *Comparison) ExitCode() int {
	switch c.Verdict {
	case Regressed:
		return ExitRegression
	case Failed:
		return ExitFailed
	case Inconclusive:
		return ExitInconclusive
	}
	return ExitOK
}

// HostChange is how the host-speed probe (Point.Host) differed between the sides at a point,
// by the judged figure that moved most: Figure names it ("compute", "pingpong"; "" when a side
// was not probed), Ratio is current/base of the sides' medians over their processes (1.1: 10%
// slower for the current side), and Beyond says the move exceeds the figure's tolerance and
// three median absolute deviations of the base's processes, so that a figure as noisy as
// the move is not taken for one.
type HostChange struct {
	Figure string
	Ratio  float64
	Beyond bool
}

// hostFigures are the HostSpeed figures a verdict is withheld on, each with its tolerance in
// multiples of CompareConfig.HostTolerance. On one quiet host the chain read the same to
// 0.1%, the cache line's round trip drifted by a third over half an hour while RPC/s held,
// and it went 4 to 5 times slower when the host slowed every process by 40% (the chain did
// not move). The copy is not judged: it drifted by 11% with no effect on the transport.
var hostFigures = []struct {
	name, what string
	scale      float64
	f          func(*HostSpeed) float64
}{
	{"compute", "the host ran", 1, func(h *HostSpeed) float64 { return h.ComputeNs }},
	{"pingpong", "the host passed cache lines between its CPUs", 10, func(h *HostSpeed) float64 { return h.PingPongNs }},
}

// hostChange reads HostChange from the points of each side, a process's value the median of
// its rounds', against the tolerance tol (percent, negative: none): the figure that moved most
// beyond its tolerance, else the one that moved most for its tolerance.
func hostChange(bp, cp []*Point, bu, cu map[*Point]int, tol float64) HostChange {
	perProcess := func(ps []*Point, units map[*Point]int, f func(*HostSpeed) float64) []float64 {
		var procs []float64
		for _, g := range byProcess(ps, units, func(p *Point) (float64, bool) { return hostValue(p, f) }) {
			procs = append(procs, median(g.all))
		}
		return procs
	}
	h, worst := HostChange{Ratio: math.NaN()}, 0.0
	for _, fig := range hostFigures {
		b, c := perProcess(bp, bu, fig.f), perProcess(cp, cu, fig.f)
		if len(b) == 0 || len(c) == 0 {
			continue
		}
		mb, mc := median(b), median(c)
		dev := make([]float64, len(b))
		for i, v := range b {
			dev[i] = math.Abs(v - mb)
		}
		r := mc / mb
		// How far the move goes, in the figure's own tolerances (1: at the tolerance).
		excess := math.Abs(math.Log(r)) / math.Log1p(max(tol, 0)*fig.scale/100)
		beyond := tol >= 0 && excess > 1 && math.Abs(mc-mb) > 3*median(dev)
		if h.Figure == "" || beyond && !h.Beyond || beyond == h.Beyond && excess > worst {
			h, worst = HostChange{fig.name, r, beyond}, excess
		}
	}
	return h
}

// hostValue is figure f of p's host probe; false when p was not probed.
func hostValue(p *Point, f func(*HostSpeed) float64) (float64, bool) {
	if p.Host == nil {
		return 0, false
	}
	return f(p.Host), true
}

// withholds says why r's verdict cannot stand on a host that changed beyond its tolerance
// ("" when it stands): a regression when the host ran slower for the current side, an ok
// when it ran faster; either is what the host alone would have made.
func (h HostChange) withholds(r *MetricResult) string {
	switch {
	case !h.Beyond:
	case r.Verdict == Regressed && h.Ratio > 1:
		return "it would be regressed, but " + h.String() + " than for the baseline (" + h.Figure + " probe)"
	case r.Verdict == OK && h.Ratio < 1:
		return "it would be ok, but " + h.String() + " than for the baseline (" + h.Figure + " probe)"
	}
	return ""
}

// String says how the figure moved: "the host ran 18% slower".
func (h HostChange) String() string {
	what := h.Figure
	for _, f := range hostFigures {
		if f.name == h.Figure {
			what = f.what
		}
	}
	r, dir := h.Ratio, "slower"
	if r < 1 {
		r, dir = 1/r, "faster"
	}
	how := fmt.Sprintf("%.0f%% %s", (r-1)*100, dir)
	if r >= 2 {
		how = fmt.Sprintf("%.1f times %s", r, dir)
	}
	return what + " " + how
}

// ErrNothingToCompare is wrapped by Compare's error when the inputs have nothing in common.
var ErrNothingToCompare = errors.New("nothing to compare")

// Disturbed reports whether something outside the configuration under test may have set p's
// numbers: a neighbour took CPU time, a garbage collection ran (see Disturbances). Reasons
// that belong to the configuration itself (its pollers outnumber the CPUs, or share a CPU
// with the tool's other threads) hold for every run of it alike: they are noted, but leaving
// such runs out would leave nothing to judge.
func Disturbed(p *Point) bool {
	for _, d := range p.Disturbed {
		if !configurational(d) {
			return true
		}
	}
	return false
}

// sample is one process's value of a metric at a point: the median of its rounds (of its
// undisturbed rounds when it has any), disturbed when every round was; logs are the logs of
// the rounds' values.
type sample struct {
	v         float64
	disturbed bool
	logs      []float64
}

// Compare judges repeated runs of a current version against repeated runs of a base one; it
// is the whole judgement, so a runner that repeats rounds calls it again with the runs so far
// and stops when the result is Conclusive (each look is a chance to err: a runner spends
// Alpha over its looks, see the session package).
//
// Points are matched by Params.Key. The unit of every interval is a process of the tool (a
// results file, or a Point.Process within one): its rounds share its thread placement,
// memory layout and connections, so they vary less than processes do, and an interval
// over rounds would be too narrow exactly where it matters. A process's value is the median
// of its rounds. For every judged metric it estimates the ratio current/base by
// Hodges-Lehmann on the logarithms of the processes' values, with the Mann-Whitney
// confidence interval (distribution-free: it assumes only that the change is a shift of log
// values), and the p-value of the claim a verdict would make (beyond the tolerance in the bad
// direction: regressed; within it: ok). Holm's step-down procedure over all judgements
// decides which claims hold, so that the chance of any wrong conclusive verdict is at most
// Alpha; the intervals are at the level Holm stopped at. One process a side never decides:
// it cannot tell a change from a difference between processes. The variance components
// (process, round) of each judgement are estimated where the rounds allow. Disturbed
// processes (see Disturbed) are left out of a metric's samples when the others still give
// an interval; otherwise they are kept and the result counts them. An error (wrapping
// ErrNothingToCompare) means bad input: no runs on a side or no point in common.
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
			if _, ok := cfg.Thresholds[m]; ok {
				metrics = append(metrics, m)
			}
		}
	}
	if len(metrics) == 0 {
		metrics = slices.Concat(DefaultMetrics, FairnessMetrics)
	}
	c := &Comparison{Alpha: cfg.Alpha, Metrics: metrics, Tolerances: Thresholds{}, Explicit: Thresholds{},
		BaseRuns: len(base), CurrentRuns: len(current)}
	for _, m := range metrics {
		if v, ok := cfg.Thresholds[m]; ok {
			c.Tolerances[m], c.Explicit[m] = v, v
		} else {
			c.Tolerances[m] = DefaultTolerance[m]
		}
	}
	if bs, cs := setups(base), setups(current); bs != cs {
		c.Notes = append(c.Notes, fmt.Sprintf("the sides ran on different setups: base %s, current %s", bs, cs))
	}
	if bp, cp := probed(base), probed(current); bp != cp {
		c.Notes = append(c.Notes, fmt.Sprintf("the turnaround probe (--turnarounds) was %s in base and %s in current: its clock reads are on the measured path, so the sides differ by more than the change under test", bp, cp))
	}
	bu, cu := processesOf(base), processesOf(current)
	hostTol := cfg.HostTolerance
	if hostTol == 0 {
		hostTol = DefaultHostTolerance
	}
	b, bOrder := c.collect("base", base)
	cur, cOrder := c.collect("current", current)
	for _, k := range cOrder {
		if _, ok := b[k]; !ok {
			c.NewInCurrent = append(c.NewInCurrent, cur[k][0].Params)
		}
	}
	for _, k := range bOrder {
		c.BaseRounds, c.BaseProcesses = max(c.BaseRounds, len(b[k])), max(c.BaseProcesses, countUnits(b[k], bu))
		c.CurrentRounds, c.CurrentProcesses = max(c.CurrentRounds, len(cur[k])), max(c.CurrentProcesses, countUnits(cur[k], cu))
	}
	type pending struct{ base, cur []sample }
	var work [][]pending
	for _, k := range bOrder {
		bp, cp := b[k], cur[k]
		if len(cp) == 0 {
			c.MissingInCurrent = append(c.MissingInCurrent, bp[0].Params)
			continue
		}
		pr := PointResult{Params: bp[0].Params, Host: hostChange(bp, cp, bu, cu, hostTol)}
		var pw []pending
		fanin := !slices.ContainsFunc(slices.Concat(bp, cp), func(p *Point) bool { return p.FanIn == nil })
		for _, m := range metrics {
			if m.Fairness() && !fanin {
				continue
			}
			_, explicit := c.Explicit[m]
			pr.Metrics = append(pr.Metrics, MetricResult{Metric: m, Tolerance: c.Tolerances[m], Explicit: explicit})
			w := pending{samples(m, bp, bu), samples(m, cp, cu)}
			if len(w.base) > 0 && len(w.cur) > 0 {
				c.Judged++
			}
			pw = append(pw, w)
		}
		c.Points = append(c.Points, pr)
		work = append(work, pw)
	}
	if len(c.Points) == 0 {
		return nil, fmt.Errorf("results: %w: no point of the base runs is in the current runs", ErrNothingToCompare)
	}
	c.dropUnjudgedFairness(cfg)
	bonferroni := c.Alpha / float64(max(c.Judged, 1))
	var ps []float64
	var rs []*MetricResult
	for i := range c.Points {
		p := &c.Points[i]
		for j := range p.Metrics {
			r := &p.Metrics[j]
			prepare(r, work[i][j].base, work[i][j].cur, bonferroni)
			if len(r.Base) > 0 && len(r.Current) > 0 {
				ps, rs = append(ps, r.P), append(rs, r)
			}
		}
	}
	decided, level := Holm(ps, c.Alpha)
	comparable := cfg.UnderLoad && comparableLoad(base, current)
	c.Confidence = 1 - 2*level
	disturbed, excluded, oneProcess := 0, 0, 0
	for i := range c.Points {
		p := &c.Points[i]
		for j := range p.Metrics {
			r := &p.Metrics[j]
			k := slices.Index(rs, r)
			finish(r, k >= 0 && decided[k], comparable, level, c.Judged, c.Alpha)
			if why := p.Host.withholds(r); why != "" {
				// Withholding only removes claims Holm made: the family's error stays within alpha.
				r.Verdict, r.Leaning, r.Reason, r.HostWithheld = Inconclusive, r.Verdict, why, true
			}
			if r.Verdict != Inconclusive {
				c.Decided++
			}
			p.Verdict = max(p.Verdict, r.Verdict)
			disturbed += min(r.Disturbed, 1)
			excluded += min(r.Excluded, 1)
			if r.BaseProcesses == 1 && r.CurrentProcesses == 1 {
				oneProcess++
			}
		}
		c.Verdict = max(c.Verdict, p.Verdict)
	}
	if len(c.MissingInCurrent) > 0 && c.Verdict != Regressed {
		c.Verdict = Failed
	}
	if oneProcess > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d judgement(s) have one process a side: a difference between two processes of one configuration "+
			"is not told from a change; measure rounds in fresh processes (--rounds-per-process 1, the default with --repeat)", oneProcess))
	}
	if excluded > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d judgement(s) left disturbed processes out (enough undisturbed ones remained)", excluded))
	}
	if disturbed > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d verdict(s) rest on disturbed processes (too few undisturbed ones for an interval): the scheduler, not the transport, may have set those numbers", disturbed))
	}
	c.Notes = append(c.Notes, c.resolutionNotes()...)
	if n := c.hostNote(hostTol); n != "" {
		c.Notes = append(c.Notes, n)
	}
	if cfg.UnderLoad && disturbed > 0 {
		bl, cl := otherLoad(base), otherLoad(current)
		if comparable {
			c.Notes = append(c.Notes, fmt.Sprintf("both sides ran under comparable load (other processes: median %.0f%% of the host CPU in base, %.0f%% in current): "+
				"verdicts resting on disturbed processes are judged (--under-load)", bl, cl))
		} else {
			c.Notes = append(c.Notes, fmt.Sprintf("--under-load: the sides ran under different loads (other processes: median %.0f%% of the host CPU in base, %.0f%% in current, more than %.0f points apart): "+
				"verdicts resting on disturbed processes stay inconclusive", bl, cl, ComparableLoad))
		}
	}
	for _, side := range []struct {
		name string
		runs []*Run
	}{{"base", base}, {"current", current}} {
		if q := Quality(side.runs); q != "" {
			c.Notes = append(c.Notes, side.name+" "+q)
		}
	}
	return c, nil
}

// hostNote says how far the host's speed moved between the sides where it moved beyond its
// tolerance.
func (c *Comparison) hostNote(tol float64) string {
	var worst HostChange
	beyond := 0
	for _, p := range c.Points {
		h := p.Host
		if !h.Beyond {
			continue
		}
		beyond++
		if worst.Figure == "" || math.Abs(math.Log(h.Ratio)) > math.Abs(math.Log(worst.Ratio)) {
			worst = h
		}
	}
	if beyond == 0 {
		return ""
	}
	return fmt.Sprintf("for the current side %s (%s probe, the most of %d point(s) beyond the host tolerance: %g%%, the round trip's 10 times as much): "+
		"verdicts its change could have made are withheld", worst, worst.Figure, beyond, tol)
}

// resolutionNotes warn of tolerances below what the baseline can resolve: such a metric
// cannot be ok whatever the current side measures.
func (c *Comparison) resolutionNotes() []string {
	var notes []string
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			if r.Verdict == Inconclusive && !math.IsNaN(r.Resolution) && r.Resolution > r.Tolerance {
				notes = append(notes, fmt.Sprintf("%s at %s: the tolerance %s is below what the baseline resolves (±%.0f%%): expect inconclusive; "+
					"give a looser --threshold or a baseline of more processes", r.Metric, p.Params.Key(), fmtTolerance(r.Metric, r.Tolerance, r.Explicit), r.Resolution))
			}
		}
	}
	return notes
}

// dropUnjudgedFairness removes the fairness metrics from c.Metrics when no point is a fan-in
// on both sides, with a note if the user named one.
func (c *Comparison) dropUnjudgedFairness(cfg CompareConfig) {
	for _, p := range c.Points {
		if slices.ContainsFunc(p.Metrics, func(r MetricResult) bool { return r.Metric.Fairness() }) {
			return
		}
	}
	var named []string
	for _, m := range c.Metrics {
		if _, ok := cfg.Thresholds[m]; m.Fairness() && (ok || slices.Contains(cfg.Metrics, m)) {
			named = append(named, m.String())
		}
		if m.Fairness() {
			delete(c.Tolerances, m)
			delete(c.Explicit, m)
		}
	}
	c.Metrics = slices.DeleteFunc(slices.Clone(c.Metrics), Metric.Fairness)
	if len(named) > 0 {
		c.Notes = append(c.Notes, strings.Join(named, " and ")+" judge fan-in points (rpcrdma-bench fanin) only: no point is one on both sides")
	}
}

// processesOf numbers the processes of runs: a point's process is its run and its
// Point.Process (0 for a run measured in one process).
func processesOf(runs []*Run) map[*Point]int {
	u := map[*Point]int{}
	for i, r := range runs {
		for j := range r.Points {
			u[&r.Points[j]] = i<<20 | r.Points[j].Process
		}
	}
	return u
}

// countUnits counts the processes of ps.
func countUnits(ps []*Point, units map[*Point]int) int {
	seen := map[int]bool{}
	for _, p := range ps {
		seen[units[p]] = true
	}
	return len(seen)
}

// samples are m's values at the points ps, one per process (units: each point's process),
// in first-seen order. A value that is not positive (no RPCs) has no logarithm and is no
// sample.
func samples(m Metric, ps []*Point, units map[*Point]int) []sample {
	procs := byProcess(ps, units, m.value)
	out := make([]sample, 0, len(procs))
	for _, g := range procs {
		vals, disturbed := g.clean, false
		if len(vals) == 0 {
			vals, disturbed = g.all, true
		}
		out = append(out, sample{median(vals), disturbed, logs(vals)})
	}
	return out
}

// procValues are one process's positive values of a figure at a point: all of them, and
// those of its undisturbed rounds.
type procValues struct{ clean, all []float64 }

// byProcess groups the positive values value gives at the points ps by process (units), in
// first-seen order.
func byProcess(ps []*Point, units map[*Point]int, value func(*Point) (float64, bool)) []*procValues {
	var order []*procValues
	by := map[int]*procValues{}
	for _, p := range ps {
		v, ok := value(p)
		if !ok || v <= 0 {
			continue
		}
		g := by[units[p]]
		if g == nil {
			g = &procValues{}
			by[units[p]] = g
			order = append(order, g)
		}
		g.all = append(g.all, v)
		if !Disturbed(p) {
			g.clean = append(g.clean, v)
		}
	}
	return order
}

// prepare fills r from the samples (one per process): the undisturbed ones when they alone
// give an interval at tail, else all; its medians, variance components, the baseline's
// resolution at tail and the p-value of the claim its verdict would make.
func prepare(r *MetricResult, base, cur []sample, tail float64) {
	r.Change = Estimate{math.NaN(), 0, math.Inf(1)}
	r.BaseMedian, r.CurrentMedian, r.Resolution = math.NaN(), math.NaN(), math.NaN()
	r.Noise = VarianceComponents{math.NaN(), math.NaN()}
	r.Verdict, r.P, r.PRegressed = Inconclusive, 1, 1
	if len(base) == 0 || len(cur) == 0 {
		r.Reason = "no value on one side (a percentile the sample count cannot support, or no successful RPC)"
		return
	}
	cb, cc := count(base, false), count(cur, false)
	nd := len(base) + len(cur) - cb - cc
	useAll := nd == 0 || !boundedAt(cb, cc, tail)
	groups := make([][][]float64, 2)
	for i, side := range []struct {
		s   []sample
		out *[]float64
	}{{base, &r.Base}, {cur, &r.Current}} {
		for _, s := range side.s {
			if useAll || !s.disturbed {
				*side.out = append(*side.out, s.v)
				groups[i] = append(groups[i], s.logs)
			}
		}
	}
	if useAll {
		r.Disturbed = nd
	} else {
		r.Excluded = nd
	}
	r.BaseProcesses, r.CurrentProcesses = len(r.Base), len(r.Current)
	r.BaseMedian, r.CurrentMedian = median(r.Base), median(r.Current)
	r.Noise = varianceComponents(groups...)
	if self := RatioInterval(r.Base, r.Base, tail); self.Bounded() {
		r.Resolution = (self.Hi - 1) * 100
	}
	tol := r.Tolerance / 100
	lb, lc := logs(r.Base), logs(r.Current)
	if r.Metric.HigherIsBetter() {
		d := math.Log(1 - tol)
		r.PRegressed = shiftPValue(lb, lc, d, false)
		r.P = min(r.PRegressed, shiftPValue(lb, lc, d, true))
	} else {
		d := math.Log(1 + tol)
		r.PRegressed = shiftPValue(lb, lc, d, true)
		r.P = min(r.PRegressed, shiftPValue(lb, lc, d, false))
	}
}

// otherLoad is the median share of the host's CPU time other processes used during the
// points of runs, NaN when no point recorded it.
func otherLoad(runs []*Run) float64 {
	var v []float64
	for _, r := range runs {
		for i := range r.Points {
			if o := r.Points[i].HostOtherCPU; o != nil {
				v = append(v, *o)
			}
		}
	}
	return median(v)
}

// comparableLoad says both sides were disturbed and ran under loads within ComparableLoad
// points of each other.
func comparableLoad(base, current []*Run) bool {
	anyDisturbed := func(runs []*Run) bool {
		for _, r := range runs {
			for i := range r.Points {
				if Disturbed(&r.Points[i]) {
					return true
				}
			}
		}
		return false
	}
	bl, cl := otherLoad(base), otherLoad(current)
	return anyDisturbed(base) && anyDisturbed(current) && math.Abs(bl-cl) <= ComparableLoad
}

// finish judges r at the level Holm stopped at: decided says Holm rejected the null of the
// claim r.P is for, so the interval at level lies beyond or within the tolerance;
// underLoad says a verdict resting on disturbed processes may stand (comparable loads).
func finish(r *MetricResult, decided, underLoad bool, level float64, judged int, alpha float64) {
	if len(r.Base) == 0 || len(r.Current) == 0 {
		return
	}
	r.Change = RatioInterval(r.Base, r.Current, level)
	lo, hi := r.Change.Lo, r.Change.Hi
	tol := r.Tolerance / 100
	regressed, within := lo > 1+tol, hi <= 1+tol
	r.Improved = hi < 1
	beyond := r.Change.Est > 1+tol
	if r.Metric.HigherIsBetter() {
		regressed, within = hi < 1-tol, lo >= 1-tol
		r.Improved = lo > 1
		beyond = r.Change.Est < 1-tol
	}
	switch {
	case !beyond:
		r.Leaning = OK
	case r.PRegressed <= alpha || !boundedAt(len(r.Base), len(r.Current), alpha):
		r.Leaning = Regressed
	default:
		r.Leaning = Inconclusive
	}
	switch {
	case r.BaseProcesses == 1 && r.CurrentProcesses == 1:
		r.Reason = "one process a side: no interval covers the difference between processes"
	case !r.Change.Bounded():
		r.Reason = fmt.Sprintf("too few processes for an interval: %d base and %d current; %d judgement(s) at alpha %g need >= %d per side",
			len(r.Base), len(r.Current), judged, alpha, MinRuns(judged, alpha))
	case r.Disturbed > 0 && decided && !underLoad:
		// A neighbour's load moves a round by more than any tolerance (a busy poller
		// that loses its CPU serves an order of magnitude slower): no verdict either way.
		would := OK
		if regressed {
			would = Regressed
		}
		r.Reason = fmt.Sprintf("it would be %s, but rests on %d disturbed process(es): measure again on a quieter machine", would, r.Disturbed)
	case decided && regressed:
		r.Verdict = Regressed
	case decided && within:
		r.Verdict = OK
	default:
		r.Reason = "the interval straddles the tolerance"
	}
	if r.Disturbed > 0 && r.Verdict != Inconclusive {
		r.Reason = "judged under comparable load"
	}
	if r.Verdict != Inconclusive {
		r.Leaning = r.Verdict
	}
}

func count(s []sample, disturbed bool) int {
	n := 0
	for _, x := range s {
		if x.disturbed == disturbed {
			n++
		}
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

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
