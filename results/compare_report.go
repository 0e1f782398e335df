package results

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// fmtMetric formats a value of m for reports: latencies with a time unit, RPC/s with an SI
// prefix, Gb/s with 3 decimals, Jain's index with 4.
func fmtMetric(m Metric, v float64) string {
	if math.IsNaN(v) {
		return Missing
	}
	switch m {
	case MetricRPS, MetricSlowest:
		switch {
		case v >= 1e6:
			return strconv.FormatFloat(v/1e6, 'f', 3, 64) + "M"
		case v >= 1e3:
			return strconv.FormatFloat(v/1e3, 'f', 2, 64) + "k"
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	case MetricGbps:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case MetricJain:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 3, 64) + "ms"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 2, 64) + "µs"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "ns"
}

// fmtChange writes a ratio as a signed percentage change: 1.2 is +20.0%.
func fmtChange(ratio float64) string {
	switch {
	case math.IsNaN(ratio):
		return Missing
	case math.IsInf(ratio, 1):
		return "+inf"
	}
	return fmt.Sprintf("%+.1f%%", (ratio-1)*100)
}

// fmtInterval writes an interval of ratios as changes: "[+12.0%, +25.3%]", or "none" when the
// samples were too few for one.
func fmtInterval(e Estimate) string {
	if !e.Bounded() {
		return "none"
	}
	return "[" + fmtChange(e.Lo) + ", " + fmtChange(e.Hi) + "]"
}

// fmtTolerance writes a metric's tolerance as --threshold takes it.
func fmtTolerance(m Metric, pct float64, explicit bool) string {
	sign := "+"
	if m.HigherIsBetter() {
		sign = "-"
	}
	s := sign + strconv.FormatFloat(pct, 'g', -1, 64) + "%"
	if !explicit {
		s += " (default)"
	}
	return s
}

// fmtConfidence writes an interval's confidence level in percent, as precisely as it needs.
func fmtConfidence(c float64) string {
	s := strconv.FormatFloat(c*100, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// summary is the verdict line the text and Markdown reports start with.
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
	for _, v := range []Verdict{Regressed, Inconclusive, OK} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	var names []string
	for _, m := range c.Metrics {
		names = append(names, m.String())
	}
	s := fmt.Sprintf("verdict: %s (exit %d): %s at %d point(s): %s", c.Verdict, c.ExitCode(), strings.Join(names, ", "), len(c.Points), strings.Join(parts, ", "))
	if n := len(c.MissingInCurrent); n > 0 {
		s += fmt.Sprintf("; %d base point(s) missing in current", n)
	}
	return s
}

// method is the line under the summary that says how the verdicts were reached.
func (c *Comparison) method() string {
	var tols []string
	for _, m := range c.Metrics {
		_, explicit := c.Explicit[m]
		tols = append(tols, m.String()+" "+fmtTolerance(m, c.Tolerances[m], explicit))
	}
	return fmt.Sprintf("base %d run(s), current %d run(s); change: Hodges-Lehmann ratio current/base, interval at %s confidence "+
		"(%d judgement(s), family-wise error %g, Bonferroni); tolerances %s",
		c.BaseRuns, c.CurrentRuns, fmtConfidence(c.Confidence), c.Judged, c.Alpha, strings.Join(tols, ", "))
}

// note is what a row says beside its verdict: why it is inconclusive, what disturbed runs
// did to it.
func (r *MetricResult) note() string {
	var parts []string
	if r.Reason != "" {
		parts = append(parts, r.Reason)
	}
	if r.Disturbed > 0 {
		parts = append(parts, fmt.Sprintf("rests on %d disturbed run(s)", r.Disturbed))
	}
	if r.Excluded > 0 {
		parts = append(parts, fmt.Sprintf("%d disturbed run(s) left out", r.Excluded))
	}
	return strings.Join(parts, "; ")
}

type compareRow [10]string

func (c *Comparison) rows() []compareRow {
	var rows []compareRow
	for _, p := range c.Points {
		key := p.Params.Key()
		for i := range p.Metrics {
			r := &p.Metrics[i]
			rows = append(rows, compareRow{key, r.Metric.String(), fmtMetric(r.Metric, r.BaseMedian),
				fmtMetric(r.Metric, r.CurrentMedian), fmtChange(r.Change.Est), fmtInterval(r.Change),
				fmtTolerance(r.Metric, r.Tolerance, r.Explicit), fmt.Sprintf("%d/%d", len(r.Base), len(r.Current)), r.String(), r.note()})
		}
	}
	return rows
}

var compareHeader = compareRow{"point", "metric", "base", "current", "change", "interval", "tolerance", "n", "verdict", "note"}

func (c *Comparison) trailer() []string {
	var lines []string
	for _, p := range c.MissingInCurrent {
		lines = append(lines, "missing in current: "+p.Key())
	}
	for _, p := range c.NewInCurrent {
		lines = append(lines, "only in current (not compared): "+p.Key())
	}
	return append(lines, c.Notes...)
}

// WriteCompareText writes c as an aligned table: the verdict, how it was reached, then one
// row per point and judged metric with both medians, the estimated change and its interval,
// the tolerance, the sample counts, the verdict and why; then the points that did not match
// and the notes.
func WriteCompareText(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "%s\n%s\n\n", c.summary(), c.method())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range append([]compareRow{compareHeader}, c.rows()...) {
		fmt.Fprintln(tw, strings.TrimRight(strings.Join(r[:], "\t"), "\t"))
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
	fmt.Fprintf(w, "**%s**\n\n%s\n\n", c.summary(), c.method())
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

// jsonNum is a float that JSON cannot hold (NaN, an infinite bound) as null.
func jsonNum(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// jsonPct is a ratio as a percentage change, null when it has none.
func jsonPct(ratio float64) *float64 {
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) || ratio == 0 {
		return nil
	}
	return jsonNum((ratio - 1) * 100)
}

type compareJSON struct {
	Verdict     string             `json:"verdict"`
	ExitCode    int                `json:"exit_code"`
	Conclusive  bool               `json:"conclusive"`
	Alpha       float64            `json:"alpha"`
	Judged      int                `json:"judged"`
	Confidence  float64            `json:"interval_confidence"`
	BaseRuns    int                `json:"base_runs"`
	CurrentRuns int                `json:"current_runs"`
	Points      []pointJSON        `json:"points"`
	Missing     []Params           `json:"missing_in_current"`
	New         []Params           `json:"only_in_current"`
	Notes       []string           `json:"notes"`
	Tolerances  map[string]float64 `json:"tolerances_pct"`
}

type pointJSON struct {
	Key     string       `json:"key"`
	Params  Params       `json:"params"`
	Verdict string       `json:"verdict"`
	Metrics []metricJSON `json:"metrics"`
}

type metricJSON struct {
	Metric           string    `json:"metric"`
	Verdict          string    `json:"verdict"`
	Improved         bool      `json:"improved,omitempty"`
	BaseMedian       *float64  `json:"base_median"`
	CurrentMedian    *float64  `json:"current_median"`
	ChangePct        *float64  `json:"change_pct"`
	LowPct           *float64  `json:"interval_low_pct"`
	HighPct          *float64  `json:"interval_high_pct"`
	TolerancePct     float64   `json:"tolerance_pct"`
	ToleranceDefault bool      `json:"tolerance_default,omitempty"`
	Base             []float64 `json:"base"`
	Current          []float64 `json:"current"`
	Reason           string    `json:"reason,omitempty"`
	DisturbedUsed    int       `json:"disturbed_runs_used,omitempty"`
	DisturbedLeftOut int       `json:"disturbed_runs_left_out,omitempty"`
}

// WriteCompareJSON writes c as one JSON object for CI systems: the verdict, exit code and
// whether it is conclusive; per point and metric the samples, medians, the estimated change
// and its interval in percent (null: none), the tolerance and the verdict with its reason.
// Values are in the results file's units (ns, RPC/s, Gb/s).
func WriteCompareJSON(w io.Writer, c *Comparison) error {
	out := compareJSON{Verdict: c.Verdict.String(), ExitCode: c.ExitCode(), Conclusive: c.Conclusive(), Alpha: c.Alpha,
		Judged: c.Judged, Confidence: c.Confidence, BaseRuns: c.BaseRuns, CurrentRuns: c.CurrentRuns,
		Missing: c.MissingInCurrent, New: c.NewInCurrent, Notes: c.Notes, Points: []pointJSON{}, Tolerances: map[string]float64{}}
	if out.Missing == nil {
		out.Missing = []Params{}
	}
	if out.New == nil {
		out.New = []Params{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for _, m := range c.Metrics {
		out.Tolerances[m.String()] = c.Tolerances[m]
	}
	for _, p := range c.Points {
		pj := pointJSON{Key: p.Params.Key(), Params: p.Params, Verdict: p.Verdict.String()}
		for _, r := range p.Metrics {
			pj.Metrics = append(pj.Metrics, metricJSON{Metric: r.Metric.String(), Verdict: r.Verdict.String(), Improved: r.Improved,
				BaseMedian: jsonNum(r.BaseMedian), CurrentMedian: jsonNum(r.CurrentMedian), ChangePct: jsonPct(r.Change.Est),
				LowPct: jsonPct(r.Change.Lo), HighPct: jsonPct(r.Change.Hi), TolerancePct: r.Tolerance, ToleranceDefault: !r.Explicit,
				Base: nonNil(r.Base), Current: nonNil(r.Current), Reason: r.Reason, DisturbedUsed: r.Disturbed, DisturbedLeftOut: r.Excluded})
		}
		out.Points = append(out.Points, pj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func nonNil(v []float64) []float64 {
	if v == nil {
		return []float64{}
	}
	return v
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Cases     []junitCase `xml:"testcase"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Failure *junitMessage `xml:"failure,omitempty"`
	Skipped *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
}

// WriteCompareJUnit writes c as JUnit XML, which most CI systems display: one test case per
// point and metric, a failure for a regression (and for a base point missing in current), a
// skipped case for an inconclusive verdict; the summary and notes go to system-out.
func WriteCompareJUnit(w io.Writer, c *Comparison) error {
	s := junitSuite{Name: "rpcrdma-bench compare"}
	for _, p := range c.Points {
		key := p.Params.Key()
		for i := range p.Metrics {
			r := &p.Metrics[i]
			tc := junitCase{Class: key, Name: r.Metric.String()}
			msg := fmt.Sprintf("%s: change %s, interval %s, tolerance %s", r, fmtChange(r.Change.Est), fmtInterval(r.Change),
				fmtTolerance(r.Metric, r.Tolerance, r.Explicit))
			if n := r.note(); n != "" {
				msg += "; " + n
			}
			switch r.Verdict {
			case Regressed:
				tc.Failure = &junitMessage{msg}
				s.Failures++
			case Inconclusive:
				tc.Skipped = &junitMessage{msg}
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
		}
	}
	for _, p := range c.MissingInCurrent {
		s.Cases = append(s.Cases, junitCase{Class: p.Key(), Name: "present", Failure: &junitMessage{"base point missing in current"}})
		s.Failures++
	}
	s.Tests = len(s.Cases)
	s.SystemOut = strings.Join(append([]string{c.summary(), c.method()}, c.trailer()...), "\n")
	out := junitSuites{Name: s.Name, Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}
