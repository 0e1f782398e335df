package results

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// ThresholdMetrics are the metrics BestThresholds ranks thresholds by.
var ThresholdMetrics = []Metric{MetricP50, MetricP99, MetricRPS}

// ThresholdCandidate is one threshold's runs of a metric at a point.
type ThresholdCandidate struct {
	// Threshold is the inline threshold in bytes, Median the metric's median over its runs
	// and N their number.
	Threshold int
	Median    float64
	N         int
	vals      []float64
}

// ThresholdChoice is, for one point with its inline threshold left out (a size, or a mix)
// and one metric, the thresholds measured and whether one of them is best beyond noise.
type ThresholdChoice struct {
	// Params are the point's parameters with InlineThreshold 0; Label names them.
	Params Params
	Label  string
	Metric Metric
	// Compared counts the thresholds that had a value for the metric; Candidates are they,
	// the best median first (lowest latency, highest RPC/s; a tie to the smaller threshold).
	Compared   int
	Candidates []ThresholdCandidate
	// Versus[i] is the ratio of Candidates[i+1] to the best (1.2: 20% higher) with its
	// interval at Confidence.
	Versus []Estimate
	// Bounded says whether the runs were enough for intervals at Confidence, NeedRuns how
	// many runs per threshold would be.
	Bounded  bool
	NeedRuns int
	// Clear says that every other threshold is worse than the best beyond noise: its
	// interval lies wholly on the worse side of no change. Tied are the thresholds not clearly
	// worse than the best, the best first.
	Clear bool
	Tied  []int
	// Alpha is the family-wise error rate over every comparison of the call that made the
	// choice, and Confidence each interval's level (Bonferroni, as Compare).
	Alpha, Confidence float64
	// Disturbed counts the disturbed runs the choice rests on, Excluded those left out
	// because enough undisturbed ones remained.
	Disturbed, Excluded int
}

// Verdict is the answer in words: the winner, no clear winner among some, or why it cannot
// tell.
func (c *ThresholdChoice) Verdict() string {
	var s string
	switch {
	case c.Compared < 2:
		s = "only one threshold measured"
	case !c.Bounded:
		n := c.Candidates[0].N
		for _, k := range c.Candidates {
			n = min(n, k.N)
		}
		s = fmt.Sprintf("cannot tell: %d run(s) of a threshold; need >= %d each", n, c.NeedRuns)
	case c.Clear:
		s = sizeText(c.Candidates[0].Threshold) + ", beyond noise"
	default:
		var ts []string
		for _, t := range c.Tied {
			ts = append(ts, sizeText(t))
		}
		s = "no clear winner among " + strings.Join(ts, ", ")
	}
	if c.Disturbed > 0 {
		s += fmt.Sprintf(" (rests on %d disturbed run(s))", c.Disturbed)
	}
	return s
}

// thresholdLabel names a point without its threshold: "MIX:nfs-like depth 16",
// "ECHO 4k/4k depth 1 conns 2 class long".
func thresholdLabel(p Params) string {
	var b strings.Builder
	b.WriteString(p.Procedure)
	switch {
	case p.CallSizes != "" || p.ReplySizes != "":
		fmt.Fprintf(&b, " %s/%s", p.CallLabel(), p.ReplyLabel())
	case p.CallBytes != 0 || p.ReplyBytes != 0:
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
// left out and every metric of ThresholdMetrics, the thresholds ranked by their median over
// the runs, and whether the best is better than each other beyond noise by the estimate and
// interval Compare uses (Hodges-Lehmann ratio, Mann-Whitney interval), Bonferroni-adjusted
// over all comparisons of the call so that the chance of naming any wrong winner is at most
// alpha (0: 0.05). Every complete point is a run of its key, whichever file it came from;
// disturbed ones are left out of a choice when the others still give intervals. A single run
// per threshold gives no interval: the answer then says it cannot tell. Points come in the
// order first seen.
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
	type pending struct {
		choice ThresholdChoice
		cands  map[int][]sample
		ths    []int
	}
	var work []pending
	comparisons := 0
	for _, k := range order {
		g := groups[k]
		for _, m := range ThresholdMetrics {
			w := pending{choice: ThresholdChoice{Params: g.params, Label: thresholdLabel(g.params), Metric: m, Alpha: alpha},
				cands: map[int][]sample{}}
			for _, t := range g.ths {
				if s := samples(m, g.by[t]); len(s) > 0 {
					w.cands[t] = s
					w.ths = append(w.ths, t)
				}
			}
			if len(w.ths) == 0 {
				continue
			}
			w.choice.Compared = len(w.ths)
			comparisons += len(w.ths) - 1
			work = append(work, w)
		}
	}
	tail := alpha / float64(max(comparisons, 1))
	need := MinRuns(comparisons, alpha)
	out := make([]ThresholdChoice, 0, len(work))
	for _, w := range work {
		c := w.choice
		c.Confidence, c.NeedRuns = 1-2*tail, need
		// Leave disturbed runs out when the undisturbed ones of the two smallest candidates
		// still give an interval: every pair then does.
		var clean []int
		nd := 0
		for _, t := range w.ths {
			n := count(w.cands[t], false)
			clean = append(clean, n)
			nd += len(w.cands[t]) - n
		}
		slices.Sort(clean)
		useAll := nd == 0 || len(clean) < 2 || !boundedAt(clean[0], clean[1], tail)
		if useAll {
			c.Disturbed = nd
		} else {
			c.Excluded = nd
		}
		for _, t := range w.ths {
			var v []float64
			for _, s := range w.cands[t] {
				if useAll || !s.disturbed {
					v = append(v, s.v)
				}
			}
			c.Candidates = append(c.Candidates, ThresholdCandidate{Threshold: t, Median: median(v), N: len(v), vals: v})
		}
		m := c.Metric
		slices.SortStableFunc(c.Candidates, func(a, b ThresholdCandidate) int {
			if m.HigherIsBetter() {
				a, b = b, a
			}
			switch {
			case a.Median < b.Median:
				return -1
			case a.Median > b.Median:
				return 1
			}
			if m.HigherIsBetter() {
				a, b = b, a
			}
			return a.Threshold - b.Threshold // a tie goes to the smaller threshold: less memory per receive
		})
		best := c.Candidates[0]
		c.Tied = []int{best.Threshold}
		c.Bounded = len(c.Candidates) > 1
		c.Clear = c.Bounded
		for _, o := range c.Candidates[1:] {
			e := RatioInterval(best.vals, o.vals, tail)
			c.Versus = append(c.Versus, e)
			worse := e.Lo > 1
			if m.HigherIsBetter() {
				worse = e.Hi < 1
			}
			c.Bounded = c.Bounded && e.Bounded()
			if !worse || !e.Bounded() {
				c.Clear = false
				c.Tied = append(c.Tied, o.Threshold)
			}
		}
		out = append(out, c)
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

// Row is one choice as the cells of WriteThresholds' table: point, metric, the best
// threshold by median and its median, the runner-up and its median, the runner-up's change
// from the best with its interval, and the answer.
func (c *ThresholdChoice) Row() []string {
	best := c.Candidates[0]
	ru, rv, vs := "-", "-", "-"
	if c.Compared > 1 {
		r := c.Candidates[1]
		ru, rv = sizeText(r.Threshold), thresholdValue(c.Metric, r.Median)
		vs = fmtChange(c.Versus[0].Est) + " " + fmtInterval(c.Versus[0])
		if !c.Versus[0].Bounded() {
			vs = fmtChange(c.Versus[0].Est) + " (no interval)"
		}
	}
	return []string{c.Label, c.Metric.String(), sizeText(best.Threshold), thresholdValue(c.Metric, best.Median), ru, rv, vs, c.Verdict()}
}

// ThresholdHeader names the columns of Row.
var ThresholdHeader = []string{"point", "metric", "best median", "median", "runner-up", "median", "runner-up vs best [interval]", "answer"}

// ThresholdsMethod says how to read the table of choices: what is ranked and how the answer
// is reached, with the confidence of the intervals.
func ThresholdsMethod(choices []ThresholdChoice) string {
	if len(choices) == 0 {
		return ""
	}
	c := choices[0]
	return fmt.Sprintf("Per point (the threshold left out) and metric: the threshold with the best median over the runs "+
		"(lowest RTT, highest RPC/s) and the runner-up's change from it (Hodges-Lehmann ratio) with its interval at %s confidence. "+
		"A winner is named only when every other threshold is worse beyond noise (family-wise error %g over all comparisons, "+
		"Bonferroni); that needs repeated runs: give the results files of several, or a file with repeated rounds.",
		fmtConfidence(c.Confidence), c.Alpha)
}

// WriteThresholds writes choices as an aligned table under a line saying how to read it.
func WriteThresholds(w io.Writer, choices []ThresholdChoice) error {
	if len(choices) == 0 {
		_, err := fmt.Fprintln(w, "best inline threshold: no complete point to rank")
		return err
	}
	if !slices.ContainsFunc(choices, func(c ThresholdChoice) bool { return c.Compared > 1 }) {
		// A row per point saying so would only repeat it.
		var ts []string
		for _, c := range choices {
			for _, k := range c.Candidates {
				if t := sizeText(k.Threshold); !slices.Contains(ts, t) {
					ts = append(ts, t)
				}
			}
		}
		_, err := fmt.Fprintf(w, "best inline threshold: only one threshold measured (%s); sweep two or more (--thresholds 1k,4k,...) to choose between them\n",
			strings.Join(ts, ", "))
		return err
	}
	fmt.Fprintln(w, "best inline threshold: "+ThresholdsMethod(choices))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(ThresholdHeader, "\t"))
	for i := range choices {
		fmt.Fprintln(tw, strings.Join(choices[i].Row(), "\t"))
	}
	return tw.Flush()
}

// WriteThresholdsOf writes the best thresholds of runs (BestThresholds at alpha) and, under
// them, the runs' data-quality note.
func WriteThresholdsOf(w io.Writer, runs []*Run, alpha float64) error {
	if err := WriteThresholds(w, BestThresholds(runs, alpha)); err != nil {
		return err
	}
	if q := Quality(runs); q != "" {
		_, err := fmt.Fprintln(w, q)
		return err
	}
	return nil
}
