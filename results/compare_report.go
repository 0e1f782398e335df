package results

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// fmtMetric formats a value of m for reports: latencies with a time unit, RPC/s with an SI
// prefix, Gb/s with 3 decimals.
func fmtMetric(m Metric, v float64) string {
	if math.IsNaN(v) {
		return Missing
	}
	switch m {
	case MetricRPS:
		switch {
		case v >= 1e6:
			return strconv.FormatFloat(v/1e6, 'f', 3, 64) + "M"
		case v >= 1e3:
			return strconv.FormatFloat(v/1e3, 'f', 2, 64) + "k"
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	case MetricGbps:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 3, 64) + "ms"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 2, 64) + "µs"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "ns"
}

func fmtDelta(d float64) string {
	if math.IsNaN(d) {
		return Missing
	}
	return fmt.Sprintf("%+.1f%%", d)
}

func fmtP(p float64) string {
	if math.IsNaN(p) {
		return Missing
	}
	return fmt.Sprintf("%.3f", p)
}

func fmtThreshold(r *MetricResult) string {
	sign := "+"
	if r.Metric.HigherIsBetter() {
		sign = "-"
	}
	s := sign + strconv.FormatFloat(r.Threshold, 'g', -1, 64) + "%"
	if !r.Explicit {
		s += " (default)"
	}
	return s
}

// summary is the verdict line both report forms start with.
func (c *Comparison) summary() string {
	counts := map[Verdict]int{}
	total := 0
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			counts[r.Verdict]++
			total++
		}
	}
	var parts []string
	for _, v := range []Verdict{Regressed, Improved, OK, NoEstimate, NotCompared} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	s := fmt.Sprintf("verdict: %s (exit %d): %d metrics over %d points: %s", c.Verdict, c.ExitCode(), total, len(c.Points), strings.Join(parts, ", "))
	if n := len(c.MissingInCurrent); n > 0 {
		s += fmt.Sprintf("; %d base point(s) missing in current", n)
	}
	if w := c.Warning(); w != "" {
		s += "\n" + w
	}
	return s
}

// Warning is a loud line for a comparison whose verdicts lack a noise estimate, "" if every
// verdict had one: unjudged metrics (no estimate, no threshold) would otherwise pass the gate
// silently however far they moved, and verdicts on thresholds alone can be noise.
func (c *Comparison) Warning() string {
	var unjudged, alone int
	var worst *MetricResult
	var worstKey string
	for i := range c.Points {
		for j := range c.Points[i].Metrics {
			r := &c.Points[i].Metrics[j]
			if r.NoiseEstimate || r.Verdict == NotCompared {
				continue
			}
			if r.Verdict == NoEstimate {
				unjudged++
			} else {
				alone++
			}
			bad := r.Delta
			if r.Metric.HigherIsBetter() {
				bad = -bad
			}
			if !math.IsNaN(bad) && (worst == nil || bad > worstBad(worst)) {
				worst, worstKey = r, c.Points[i].Params.Key()
			}
		}
	}
	if unjudged == 0 && alone == 0 {
		return ""
	}
	var parts []string
	if unjudged > 0 {
		parts = append(parts, fmt.Sprintf("%d metric(s) NOT JUDGED (no noise estimate and no --threshold)", unjudged))
	}
	if alone > 0 {
		parts = append(parts, fmt.Sprintf("%d verdict(s) on thresholds alone", alone))
	}
	w := "WARNING: " + strings.Join(parts, ", ")
	if worst != nil {
		w += fmt.Sprintf("; the worst change is %s %s at %s", worst.Metric, fmtDelta(worst.Delta), worstKey)
	}
	return w + fmt.Sprintf("; need >= %d runs per side for a noise estimate", runsNeeded(c.Alpha))
}

// worstBad is r's change in its bad direction, in percent.
func worstBad(r *MetricResult) float64 {
	if r.Metric.HigherIsBetter() {
		return -r.Delta
	}
	return r.Delta
}

type compareRow [9]string

func (c *Comparison) rows() []compareRow {
	var rows []compareRow
	for _, p := range c.Points {
		key := p.Params.Key()
		for i := range p.Metrics {
			r := &p.Metrics[i]
			rows = append(rows, compareRow{key, r.Metric.String(), fmtMetric(r.Metric, r.BaseMedian),
				fmtMetric(r.Metric, r.CurrentMedian), fmtDelta(r.Delta), fmtP(r.P),
				fmt.Sprintf("%d/%d", len(r.Base), len(r.Current)), fmtThreshold(r), r.String()})
		}
	}
	return rows
}

var compareHeader = compareRow{"point", "metric", "base", "current", "delta", "p", "n", "threshold", "verdict"}

func (c *Comparison) trailer() []string {
	var lines []string
	for _, p := range c.MissingInCurrent {
		lines = append(lines, "missing in current: "+p.Key())
	}
	for _, p := range c.NewInCurrent {
		lines = append(lines, "only in current (not compared): "+p.Key())
	}
	lines = append(lines, c.Notes...)
	return lines
}

// WriteCompareText writes c as an aligned table: one row per point and metric with both
// medians, the change, the U test's p-value ("-": no noise estimate), the sample counts, the
// threshold and the verdict; then the points that did not match and any notes.
func WriteCompareText(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "%s\nbase %d runs, current %d runs, alpha %g, thresholds %q\n\n", c.summary(), c.BaseRuns, c.CurrentRuns, c.Alpha, c.Thresholds.String())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range append([]compareRow{compareHeader}, c.rows()...) {
		fmt.Fprintln(tw, strings.Join(r[:], "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range c.trailer() {
		fmt.Fprintln(w, l)
	}
	return nil
}

// WriteCompareMarkdown writes c as GitHub-flavoured Markdown (for a CI job summary or a pull
// request comment): the verdict, a table like WriteCompareText's with regressions in bold,
// and the notes as a list.
func WriteCompareMarkdown(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "**%s**\n\nbase %d runs, current %d runs, alpha %g, thresholds `%s`\n\n", c.summary(), c.BaseRuns, c.CurrentRuns, c.Alpha, c.Thresholds.String())
	esc := strings.NewReplacer("|", `\|`)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(compareHeader[:], " | "), strings.Repeat("---|", len(compareHeader)))
	for _, r := range c.rows() {
		for i := range r {
			r[i] = esc.Replace(r[i])
		}
		if strings.HasPrefix(r[8], "regressed") {
			r[8] = "**" + r[8] + "**"
		}
		r[0] = "`" + r[0] + "`"
		fmt.Fprintf(w, "| %s |\n", strings.Join(r[:], " | "))
	}
	if t := c.trailer(); len(t) > 0 {
		fmt.Fprintln(w)
		for _, l := range t {
			fmt.Fprintf(w, "- %s\n", l)
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}
