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

// summary is the verdict line the text and Markdown reports start with: the verdict, what
// the evidence leans to when it is inconclusive, and the counts.
func (c *Comparison) summary() string {
	counts := map[Verdict]int{}
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			counts[r.Verdict]++
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
	head := c.Verdict.String()
	if c.Verdict == Inconclusive {
		head += ", " + c.leaning()
	}
	s := fmt.Sprintf("verdict: %s (exit %d): %s at %d point(s): %s", head, c.ExitCode(), strings.Join(names, ", "), len(c.Points), strings.Join(parts, ", "))
	if n := len(c.MissingInCurrent); n > 0 {
		s += fmt.Sprintf("; %d base point(s) missing in current", n)
	}
	return s
}

// leaning says what an inconclusive comparison's evidence points to (MetricResult.Leaning):
// regressed, naming the undecided metric with the strongest evidence of a regression and,
// among equals, the largest change ("leaning regressed: rps -69.0% at KEY on disturbed
// processes"); ok when every undecided estimate lies within its tolerance; else neither.
func (c *Comparison) leaning() string {
	var worst *MetricResult
	var at Params
	neither := false
	for _, p := range c.Points {
		for i := range p.Metrics {
			r := &p.Metrics[i]
			if r.Verdict != Inconclusive {
				continue
			}
			neither = neither || r.Leaning == Inconclusive
			if r.Leaning != Regressed {
				continue
			}
			if worst == nil || r.PRegressed < worst.PRegressed ||
				r.PRegressed == worst.PRegressed && math.Abs(math.Log(r.Change.Est)) > math.Abs(math.Log(worst.Change.Est)) {
				worst, at = r, p.Params
			}
		}
	}
	switch {
	case worst == nil && neither:
		return "leaning neither way"
	case worst == nil:
		return "leaning ok"
	}
	s := fmt.Sprintf("leaning regressed: %s %s at %s", worst.Metric, fmtChange(worst.Change.Est), at.Key())
	if worst.Disturbed > 0 {
		s += " on disturbed processes"
	}
	if worst.HostWithheld {
		s += " on a slower host"
	}
	return s
}

// Next is what a pipeline or its user should do about the verdict: nothing when ok; for an
// inconclusive verdict what would decide it (a quieter runner, more rounds, a tolerance the
// baseline resolves).
func (c *Comparison) Next() string {
	switch c.Verdict {
	case OK:
		return ""
	case Regressed:
		return "next: the regressed rows name the point and metric; the change under test is the cause unless the runner changed"
	case Failed:
		return "next: the measurement failed, not the transport: a point of the baseline was not measured (see the run's log)"
	}
	host, disturbed, few, unresolved := 0, 0, 0, 0
	for _, p := range c.Points {
		for _, r := range p.Metrics {
			switch {
			case r.Verdict != Inconclusive:
			case r.HostWithheld:
				host++
			case r.Disturbed > 0:
				disturbed++
			case !r.Change.Bounded():
				few++
			case !math.IsNaN(r.Resolution) && r.Resolution > r.Tolerance:
				unresolved++
			}
		}
	}
	var steps []string
	if c.BaselineUnfit != "" {
		steps = append(steps, "remake the baseline on a quiet runner, in more processes: it is unfit ("+c.BaselineUnfit+")")
	}
	if host > 0 {
		steps = append(steps, fmt.Sprintf("%d judgement(s) withheld because the host itself ran at another speed than for the baseline (its speed probe): measure a fresh baseline on this runner now", host))
	}
	if disturbed > 0 {
		steps = append(steps, fmt.Sprintf("%d undecided judgement(s) rest on processes other work disturbed: measure again with the runner to itself", disturbed))
	}
	if few > 0 {
		steps = append(steps, fmt.Sprintf("%d have too few processes for an interval: more rounds (--repeat auto:N), each in a fresh process", few))
	}
	if unresolved > 0 {
		steps = append(steps, fmt.Sprintf("%d have a tolerance below what the baseline resolves: a looser --threshold, or a baseline of more processes", unresolved))
	}
	if len(steps) == 0 {
		steps = append(steps, "the intervals straddle the tolerances: a larger --repeat auto budget narrows them")
	}
	return "next: " + strings.Join(steps, "; ")
}

// method is the line under the summary that says how the verdicts were reached.
func (c *Comparison) method() string {
	var tols []string
	for _, m := range c.Metrics {
		_, explicit := c.Explicit[m]
		tols = append(tols, m.String()+" "+fmtTolerance(m, c.Tolerances[m], explicit))
	}
	return fmt.Sprintf("base %s, current %s; change: Hodges-Lehmann ratio current/base over processes (each the median of its rounds), "+
		"intervals at %s confidence (Holm over %d judgement(s), %d decided, family-wise error %.3g); tolerances %s",
		sideText(c.BaseRounds, c.BaseProcesses, c.BaseRuns), sideText(c.CurrentRounds, c.CurrentProcesses, c.CurrentRuns),
		fmtConfidence(c.Confidence), c.Judged, c.Decided, c.Alpha, strings.Join(tols, ", "))
}

// sideText counts a side: "10 rounds in 10 processes (1 file)".
func sideText(rounds, procs, files int) string {
	return fmt.Sprintf("%d round(s) in %d process(es) (%d file(s))", rounds, procs, files)
}

// noise is the line that shows the variance components of each metric, the median over
// the points that have them: which level of noise dominates ("-": one round a process, the
// first figure then includes the rounds' noise; "?": one process a side, whose rounds alone
// cannot measure the level between processes). "" when no point has either.
func (c *Comparison) noise() string {
	var parts []string
	unmeasured := false
	for _, m := range c.Metrics {
		var proc, round []float64
		for _, p := range c.Points {
			for _, r := range p.Metrics {
				if r.Metric != m {
					continue
				}
				if !math.IsNaN(r.Noise.Process) {
					proc = append(proc, r.Noise.Process)
				}
				if !math.IsNaN(r.Noise.Round) {
					round = append(round, r.Noise.Round)
				}
			}
		}
		if len(proc) == 0 && len(round) == 0 {
			continue
		}
		pl, rl := "?", "-"
		if len(proc) > 0 {
			pl = fmt.Sprintf("%.1f%%", median(proc))
		} else {
			unmeasured = true
		}
		if len(round) > 0 {
			rl = fmt.Sprintf("%.1f%%", median(round))
		}
		parts = append(parts, fmt.Sprintf("%s %s / %s", m, pl, rl))
	}
	if len(parts) == 0 {
		return ""
	}
	legend := "median over points"
	if unmeasured {
		legend += "; ?: one process a side, unmeasured"
	}
	return "noise, sd between processes / between rounds of one process (" + legend + "): " + strings.Join(parts, ", ")
}

// head is the lines above the table: the verdict, the next step, how it was reached, the
// noise.
func (c *Comparison) head() []string {
	lines := []string{c.summary()}
	if n := c.Next(); n != "" {
		lines = append(lines, n)
	}
	lines = append(lines, c.method())
	if n := c.noise(); n != "" {
		lines = append(lines, n)
	}
	return lines
}

// note is what a row says beside its verdict: why it is inconclusive, what disturbed runs
// did to it.
func (r *MetricResult) note() string {
	var parts []string
	if r.Reason != "" {
		parts = append(parts, r.Reason)
	}
	if r.Disturbed > 0 {
		parts = append(parts, fmt.Sprintf("rests on %d disturbed process(es)", r.Disturbed))
	}
	if r.Excluded > 0 {
		parts = append(parts, fmt.Sprintf("%d disturbed process(es) left out", r.Excluded))
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
	fmt.Fprintf(w, "%s\n\n", strings.Join(c.head(), "\n"))
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
	h := c.head()
	fmt.Fprintf(w, "**%s**\n\n%s\n\n", h[0], strings.Join(h[1:], "\n\n"))
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
	Verdict          string             `json:"verdict"`
	Headline         string             `json:"headline"`
	Next             string             `json:"next,omitempty"`
	ExitCode         int                `json:"exit_code"`
	Conclusive       bool               `json:"conclusive"`
	Alpha            float64            `json:"alpha"`
	Judged           int                `json:"judged"`
	Decided          int                `json:"decided"`
	Confidence       float64            `json:"interval_confidence"`
	BaseRuns         int                `json:"base_runs"`
	CurrentRuns      int                `json:"current_runs"`
	BaseRounds       int                `json:"base_rounds"`
	CurrentRounds    int                `json:"current_rounds"`
	BaseProcesses    int                `json:"base_processes"`
	CurrentProcesses int                `json:"current_processes"`
	Points           []pointJSON        `json:"points"`
	Missing          []Params           `json:"missing_in_current"`
	New              []Params           `json:"only_in_current"`
	Notes            []string           `json:"notes"`
	Tolerances       map[string]float64 `json:"tolerances_pct"`
}

type pointJSON struct {
	Key     string       `json:"key"`
	Params  Params       `json:"params"`
	Verdict string       `json:"verdict"`
	Metrics []metricJSON `json:"metrics"`
	// HostFigure and HostChangePct: the host-speed figure that moved most between the
	// sides and by how much (positive: slower for current); absent without a probe.
	HostFigure    string   `json:"host_figure,omitempty"`
	HostChangePct *float64 `json:"host_change_pct,omitempty"`
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
	Leaning          string    `json:"leaning,omitempty"`
	P                float64   `json:"p_value"`
	ProcessSDPct     *float64  `json:"process_sd_pct"`
	RoundSDPct       *float64  `json:"round_sd_pct"`
	ResolutionPct    *float64  `json:"baseline_resolution_pct"`
	DisturbedUsed    int       `json:"disturbed_processes_used,omitempty"`
	DisturbedLeftOut int       `json:"disturbed_processes_left_out,omitempty"`
	HostWithheld     bool      `json:"host_withheld,omitempty"`
}

// WriteCompareJSON writes c as one JSON object for CI systems: the verdict, exit code and
// whether it is conclusive; per point and metric the samples, medians, the estimated change
// and its interval in percent (null: none), the tolerance and the verdict with its reason.
// Values are in the results file's units (ns, RPC/s, Gb/s).
func WriteCompareJSON(w io.Writer, c *Comparison) error {
	out := compareJSON{Verdict: c.Verdict.String(), Headline: c.summary(), Next: c.Next(), ExitCode: c.ExitCode(), Conclusive: c.Conclusive(), Alpha: c.Alpha,
		Judged: c.Judged, Decided: c.Decided, Confidence: c.Confidence, BaseRuns: c.BaseRuns, CurrentRuns: c.CurrentRuns,
		BaseRounds: c.BaseRounds, CurrentRounds: c.CurrentRounds, BaseProcesses: c.BaseProcesses, CurrentProcesses: c.CurrentProcesses,
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
		pj := pointJSON{Key: p.Params.Key(), Params: p.Params, Verdict: p.Verdict.String(), HostFigure: p.Host.Figure}
		if p.Host.Figure != "" {
			pj.HostChangePct = jsonPct(p.Host.Ratio)
		}
		for _, r := range p.Metrics {
			pj.Metrics = append(pj.Metrics, metricJSON{Metric: r.Metric.String(), Verdict: r.Verdict.String(), Improved: r.Improved,
				BaseMedian: jsonNum(r.BaseMedian), CurrentMedian: jsonNum(r.CurrentMedian), ChangePct: jsonPct(r.Change.Est),
				LowPct: jsonPct(r.Change.Lo), HighPct: jsonPct(r.Change.Hi), TolerancePct: r.Tolerance, ToleranceDefault: !r.Explicit,
				Base: nonNil(r.Base), Current: nonNil(r.Current), Reason: r.Reason, DisturbedUsed: r.Disturbed, DisturbedLeftOut: r.Excluded,
				P: r.P, ProcessSDPct: jsonNum(r.Noise.Process), RoundSDPct: jsonNum(r.Noise.Round), ResolutionPct: jsonNum(r.Resolution), HostWithheld: r.HostWithheld})
			if r.Verdict == Inconclusive {
				pj.Metrics[len(pj.Metrics)-1].Leaning = map[Verdict]string{OK: "ok", Regressed: "regressed", Inconclusive: "neither"}[r.Leaning]
			}
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
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Cases     []junitCase `xml:"testcase"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Failure *junitMessage `xml:"failure,omitempty"`
	Error   *junitMessage `xml:"error,omitempty"`
}

type junitMessage struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
}

// WriteCompareJUnit writes c as JUnit XML, which most CI systems display: one test case per
// point and metric, a failure for a regression, an error for an inconclusive verdict (type
// "inconclusive": not a pass, and CI pages show skipped cases green) and for a base point
// missing in current (type "missing"); the verdict, next step and notes go to system-out.
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
				tc.Failure = &junitMessage{"regressed", msg}
				s.Failures++
			case Inconclusive:
				tc.Error = &junitMessage{"inconclusive", msg}
				s.Errors++
			}
			s.Cases = append(s.Cases, tc)
		}
	}
	for _, p := range c.MissingInCurrent {
		s.Cases = append(s.Cases, junitCase{Class: p.Key(), Name: "present", Error: &junitMessage{"missing", "base point missing in current: the measurement failed"}})
		s.Errors++
	}
	s.Tests = len(s.Cases)
	s.SystemOut = strings.Join(append(c.head(), c.trailer()...), "\n")
	out := junitSuites{Name: s.Name, Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Suites: []junitSuite{s}}
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
