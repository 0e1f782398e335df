package results

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// ThresholdMetrics are the metrics BestThresholds ranks thresholds by.
var ThresholdMetrics = []Metric{MetricP50, MetricP99, MetricRPS}

// ThresholdChoice is, for one point with its inline threshold left out (a size, or a mix)
// and one metric, the threshold that did best and the one that came second.
type ThresholdChoice struct {
	// Params are the point's parameters with InlineThreshold 0; Label names them.
	Params Params
	Label  string
	Metric Metric
	// Compared counts the thresholds that had a value for the metric.
	Compared int
	// Best and RunnerUp are thresholds in bytes (RunnerUp 0 when only one was measured);
	// BestMedian and RunnerUpMedian their medians over the runs; BestN and RunnerUpN the
	// numbers of runs.
	Best, RunnerUp             int
	BestMedian, RunnerUpMedian float64
	BestN, RunnerUpN           int
	// Diff is how much worse the runner-up is, in percent of the best (>= 0).
	Diff float64
	// NoiseEstimate says whether the runs were enough for the U test to ever reach Alpha; P is
	// its p-value (NaN without an estimate) and Beyond whether P < Alpha.
	NoiseEstimate bool
	P             float64
	Beyond        bool
	Alpha         float64
}

// Verdict says whether the best threshold's lead is beyond noise, in words.
func (c *ThresholdChoice) Verdict() string {
	switch {
	case c.Compared < 2:
		return "only one threshold measured"
	case !c.NoiseEstimate:
		return fmt.Sprintf("no noise estimate (%d and %d runs; need %d each)", c.BestN, c.RunnerUpN, runsNeeded(c.Alpha))
	case c.Beyond:
		return fmt.Sprintf("yes (p=%.3g)", c.P)
	}
	return fmt.Sprintf("no (p=%.3g)", c.P)
}

// thresholdLabel names a point without its threshold: "MIX:nfs-like depth 16",
// "ECHO 4k/4k depth 1 conns 2 class long".
func thresholdLabel(p Params) string {
	var b strings.Builder
	b.WriteString(p.Procedure)
	if p.CallBytes != 0 || p.ReplyBytes != 0 {
		fmt.Fprintf(&b, " %s/%s", sizeText(p.CallBytes), sizeText(p.ReplyBytes))
	}
	fmt.Fprintf(&b, " depth %d", p.Depth)
	if p.Connections > 1 {
		fmt.Fprintf(&b, " conns %d", p.Connections)
	}
	if p.Class != "" && p.Class != "auto" {
		fmt.Fprintf(&b, " class %s", p.Class)
	}
	if p.RateRPS != 0 {
		fmt.Fprintf(&b, " rate %g", p.RateRPS)
	}
	return b.String()
}

// sizeText writes a byte count the way the CLI takes it: 4k, 1m, 100.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "m"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "k"
	}
	return strconv.Itoa(n)
}

// BestThresholds answers "which inline threshold?" from runs that measured the same points at
// several thresholds (a sweep, or several runs of one): for every point with the threshold
// left out and every metric of ThresholdMetrics, the threshold with the best median over the
// runs (lowest latency, highest RPC/s), the runner-up, and whether the lead is beyond noise by
// the Mann-Whitney U test Compare uses, at alpha (0: 0.05). Only complete points count.
// Points come in the order first seen.
func BestThresholds(runs []*Run, alpha float64) []ThresholdChoice {
	if alpha == 0 {
		alpha = 0.05
	}
	type group struct {
		params Params
		ths    []int
		by     map[int][]*Point
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range runs {
		for i := range r.Points {
			p := &r.Points[i]
			if !p.Complete {
				continue
			}
			gp := p.Params
			gp.InlineThreshold = 0
			k := gp.Key()
			g := groups[k]
			if g == nil {
				g = &group{params: gp, by: map[int][]*Point{}}
				groups[k] = g
				order = append(order, k)
			}
			t := p.Params.InlineThreshold
			if _, ok := g.by[t]; !ok {
				g.ths = append(g.ths, t)
			}
			g.by[t] = append(g.by[t], p)
		}
	}
	var out []ThresholdChoice
	for _, k := range order {
		g := groups[k]
		for _, m := range ThresholdMetrics {
			type cand struct {
				th     int
				vals   []float64
				median float64
			}
			var cs []cand
			for _, t := range g.ths {
				var v []float64
				for _, p := range g.by[t] {
					if x, ok := m.value(p); ok {
						v = append(v, x)
					}
				}
				if len(v) > 0 {
					cs = append(cs, cand{t, v, median(v)})
				}
			}
			if len(cs) == 0 {
				continue
			}
			slices.SortStableFunc(cs, func(a, b cand) int {
				if m.HigherIsBetter() {
					a, b = b, a
				}
				switch {
				case a.median < b.median:
					return -1
				case a.median > b.median:
					return 1
				}
				return a.th - b.th // a tie goes to the smaller threshold: less memory per receive
			})
			c := ThresholdChoice{Params: g.params, Label: thresholdLabel(g.params), Metric: m, Compared: len(cs),
				Best: cs[0].th, BestMedian: cs[0].median, BestN: len(cs[0].vals), P: math.NaN(), Diff: math.NaN(), Alpha: alpha}
			if len(cs) > 1 {
				r := cs[1]
				c.RunnerUp, c.RunnerUpMedian, c.RunnerUpN = r.th, r.median, len(r.vals)
				if c.BestMedian != 0 {
					c.Diff = math.Abs(r.median-c.BestMedian) / c.BestMedian * 100
				}
				c.NoiseEstimate = MinP(c.BestN, c.RunnerUpN) <= alpha
				if c.NoiseEstimate {
					c.P = UTest(cs[0].vals, r.vals)
					c.Beyond = c.P < alpha
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// thresholdValue formats a metric's median: microseconds for latencies, RPC/s for rps.
func thresholdValue(m Metric, v float64) string {
	if m.HigherIsBetter() {
		return strconv.FormatFloat(v, 'f', 0, 64) + " RPC/s"
	}
	return strconv.FormatFloat(v/1e3, 'f', 2, 64) + " µs"
}

// Row is one choice as the cells of WriteThresholds' table: point, metric, best
// threshold, its median, runner-up, its median, how much worse, beyond noise.
func (c *ThresholdChoice) Row() []string {
	ru, rv, diff := "-", "-", "-"
	if c.Compared > 1 {
		ru, rv = sizeText(c.RunnerUp), thresholdValue(c.Metric, c.RunnerUpMedian)
		if !math.IsNaN(c.Diff) {
			diff = fmt.Sprintf("%.1f%% worse", c.Diff)
		}
	}
	return []string{c.Label, c.Metric.String(), sizeText(c.Best), thresholdValue(c.Metric, c.BestMedian), ru, rv, diff, c.Verdict()}
}

// ThresholdHeader names the columns of Row.
var ThresholdHeader = []string{"point", "metric", "best threshold", "median", "runner-up", "median", "runner-up is", "beyond noise"}

// WriteThresholds writes choices as an aligned table under a line saying how to read it.
func WriteThresholds(w io.Writer, choices []ThresholdChoice) error {
	if len(choices) == 0 {
		_, err := fmt.Fprintln(w, "best inline threshold: no complete point to rank")
		return err
	}
	fmt.Fprintf(w, "best inline threshold per point and metric (median over runs; lowest RTT, highest RPC/s;\n"+
		"beyond noise: Mann-Whitney U test of best vs runner-up at alpha %g, which needs repeated runs)\n", choices[0].Alpha)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(ThresholdHeader, "\t"))
	for i := range choices {
		fmt.Fprintln(tw, strings.Join(choices[i].Row(), "\t"))
	}
	return tw.Flush()
}
