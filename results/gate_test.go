package results_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// twoLevel is a run of one point whose p50 has two levels of noise: each of procs
// processes draws its own offset (lognormal sigma procSD), each of its rounds adds its own
// (roundSD), around scale µs. fresh records each point's process; otherwise the file is
// one process as far as it says.
func twoLevel(rng *rand.Rand, procs, rounds int, scale, procSD, roundSD float64, fresh bool) *results.Run {
	r := &results.Run{SchemaVersion: results.SchemaVersion, Status: results.Status{State: results.StateComplete}}
	for p := range procs {
		off := procSD * rng.NormFloat64()
		for k := range rounds {
			v := int64(scale * 1000 * math.Exp(off+roundSD*rng.NormFloat64()))
			pt := results.Point{Params: results.Params{Procedure: "ECHO", CallBytes: 64, ReplyBytes: 64, InlineThreshold: 4096, Depth: 16, Connections: 1},
				Complete: true, Round: p*rounds + k + 1}
			pt.RTT.P50 = &v
			if fresh {
				pt.Process = p + 1
			}
			r.Points = append(r.Points, pt)
		}
	}
	return r
}

var p50Only = results.CompareConfig{Metrics: []results.Metric{results.MetricP50}}

// On two-level data with no change and the process level dominant, the interval over
// processes covers no change at its nominal rate (90% at alpha 0.05, one judgement), and
// so never claims more than alpha's share of false changes; an interval that took every
// round for a unit (every round its own process) would miss far more often.
func TestProcessIntervalsCoverAtTheNominalRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const trials = 400
	covered, roundsCovered := 0, 0
	for range trials {
		base := twoLevel(rng, 6, 3, 10, 0.05, 0.01, true)
		cur := twoLevel(rng, 6, 3, 10, 0.05, 0.01, true)
		c, err := results.Compare([]*results.Run{base}, []*results.Run{cur}, p50Only)
		if err != nil {
			t.Fatal(err)
		}
		if r := c.Points[0].Metrics[0]; r.Change.Lo <= 1 && 1 <= r.Change.Hi {
			covered++
		}
		// The same data with every round a process of its own.
		for _, run := range []*results.Run{base, cur} {
			for i := range run.Points {
				run.Points[i].Process = run.Points[i].Round
			}
		}
		c, _ = results.Compare([]*results.Run{base}, []*results.Run{cur}, p50Only)
		if r := c.Points[0].Metrics[0]; r.Change.Lo <= 1 && 1 <= r.Change.Hi {
			roundsCovered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.87 {
		t.Errorf("intervals over processes covered no change in %.1f%% of %d trials, want >= 87%% (nominal 90%%)", rate*100, trials)
	}
	if rate := float64(roundsCovered) / trials; rate > 0.7 {
		t.Errorf("intervals over rounds covered %.1f%%: the test data does not have the process level dominant", rate*100)
	}
}

// Two processes of one configuration that differ by 35% (one process a side) give no
// confident verdict: an interval cannot hold the difference between processes.
func TestOneProcessASideNeverDecides(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := twoLevel(rng, 1, 10, 10, 0, 0.01, false)
	cur := twoLevel(rng, 1, 10, 13.5, 0, 0.01, false)
	c, err := results.Compare([]*results.Run{base}, []*results.Run{cur}, p50Only)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Points[0].Metrics[0]
	if c.Verdict != results.Inconclusive || r.Verdict != results.Inconclusive || r.Leaning != results.Regressed || !strings.Contains(r.Reason, "one process a side") {
		t.Errorf("verdict %v (%v, leaning %v, %q), want inconclusive leaning regressed", c.Verdict, r.Verdict, r.Leaning, r.Reason)
	}
	var text bytes.Buffer
	results.WriteCompareText(&text, c)
	if !strings.Contains(text.String(), "verdict: inconclusive, leaning regressed: p50 +3") || !strings.Contains(text.String(), "next: ") ||
		!strings.Contains(text.String(), "base 10 round(s) in 1 process(es) (1 file(s))") {
		t.Errorf("headline:\n%s", text.String())
	}
	// The rounds' noise shows, and the level between processes is said to be unmeasured,
	// not left out: the sides differ by 35% where rounds of a process vary by 1%.
	m := regexp.MustCompile(`noise, sd between processes / between rounds of one process \(median over points; \?: one process a side, unmeasured\): p50 \? / ([0-9.]+)%`).FindStringSubmatch(text.String())
	if m == nil {
		t.Fatalf("noise line:\n%s", text.String())
	}
	if sd, _ := strconv.ParseFloat(m[1], 64); sd < 0.5 || sd > 1.5 {
		t.Errorf("between rounds %v%%, want about the 1%% drawn", sd)
	}
}

// The variance components show in the verdict where processes have several rounds.
func TestVerdictShowsTheNoiseLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	c, err := results.Compare([]*results.Run{twoLevel(rng, 8, 3, 10, 0.05, 0.01, true)}, []*results.Run{twoLevel(rng, 8, 3, 10, 0.05, 0.01, true)}, p50Only)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	results.WriteCompareText(&text, c)
	if !strings.Contains(text.String(), "noise, sd between processes / between rounds of one process (median over points): p50 ") {
		t.Errorf("no noise line:\n%s", text.String())
	}
	if r := c.Points[0].Metrics[0]; !(r.Noise.Process > 2*r.Noise.Round) {
		t.Errorf("components %+v: the process level should dominate", r.Noise)
	}
	var js bytes.Buffer
	results.WriteCompareJSON(&js, c)
	var out struct {
		Points []struct {
			Metrics []struct {
				ProcessSD *float64 `json:"process_sd_pct"`
				RoundSD   *float64 `json:"round_sd_pct"`
			} `json:"metrics"`
		} `json:"points"`
		BaseProcesses int `json:"base_processes"`
		BaseRounds    int `json:"base_rounds"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil || out.Points[0].Metrics[0].ProcessSD == nil || out.BaseProcesses != 8 || out.BaseRounds != 24 {
		t.Errorf("JSON: %v %+v", err, out)
	}
}

// An inconclusive verdict is an error in JUnit, never a skipped (green) case; a missing
// point is an error too and exits 4, apart from a regression's 1.
func TestJUnitInconclusiveIsNotGreen(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := twoLevel(rng, 1, 5, 10, 0, 0.01, false)
	cur := twoLevel(rng, 1, 5, 10, 0, 0.01, false)
	c, err := results.Compare([]*results.Run{base}, []*results.Run{cur}, p50Only)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := results.WriteCompareJUnit(&b, c); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Errors  int `xml:"errors,attr"`
		Skipped int `xml:"skipped,attr"`
		Suite   struct {
			Cases []struct {
				Error *struct {
					Type string `xml:"type,attr"`
				} `xml:"error"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Errors != 1 || doc.Skipped != 0 || doc.Suite.Cases[0].Error == nil || doc.Suite.Cases[0].Error.Type != "inconclusive" || doc.Suite.Cases[0].Skipped != nil {
		t.Errorf("JUnit:\n%s", b.String())
	}
	if c.ExitCode() != results.ExitInconclusive {
		t.Errorf("exit %d", c.ExitCode())
	}
}

// BMF: one benchmark per point, a measure per metric with the median over processes and
// the least and greatest process as bounds; compare's BMF bounds the current value by the
// interval of the change.
func TestBMF(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	run := twoLevel(rng, 6, 2, 10, 0.03, 0.01, true)
	var b bytes.Buffer
	if err := results.WriteBMF(&b, []*results.Run{run}); err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]struct {
		Value float64  `json:"value"`
		Lower *float64 `json:"lower_value"`
		Upper *float64 `json:"upper_value"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	m, ok := out[run.Points[0].Params.Key()]["p50"]
	if len(out) != 1 || !ok || m.Lower == nil || m.Upper == nil || !(*m.Lower <= m.Value && m.Value <= *m.Upper) || m.Value < 9000 || m.Value > 11000 {
		t.Errorf("BMF:\n%s", b.String())
	}
	c, err := results.Compare([]*results.Run{run}, []*results.Run{twoLevel(rng, 6, 2, 12, 0.03, 0.01, true)}, p50Only)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := results.WriteCompareBMF(&b, c); err != nil {
		t.Fatal(err)
	}
	out = nil
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	r := c.Points[0].Metrics[0]
	m = out[c.Points[0].Params.Key()]["p50"]
	if m.Value != r.CurrentMedian || m.Lower == nil || math.Abs(*m.Lower-r.BaseMedian*r.Change.Lo) > 1e-6 {
		t.Errorf("compare BMF %+v, comparison %+v", m, r)
	}
}

// A baseline is fit when its processes resolve the tolerances and other work left it
// alone; one process, or most processes disturbed, make it unfit and say why.
func TestBaselineFitness(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	good := twoLevel(rng, 10, 1, 10, 0.01, 0.005, true)
	if lines, unfit := results.BaselineFitness([]*results.Run{good}, p50Only); unfit != "" || !strings.Contains(strings.Join(lines, "\n"), "fit for a baseline") {
		t.Errorf("good baseline: %q\n%s", unfit, strings.Join(lines, "\n"))
	}
	one := twoLevel(rng, 1, 10, 10, 0.01, 0.005, false)
	if _, unfit := results.BaselineFitness([]*results.Run{one}, p50Only); !strings.Contains(unfit, "1 process(es) a point") {
		t.Errorf("one process: %q", unfit)
	}
	other := 60.0
	for i := range good.Points {
		good.Points[i].HostOtherCPU = &other
		good.Points[i].Disturbed = results.Disturbances(nil, 0, 2, &other)
	}
	if _, unfit := results.BaselineFitness([]*results.Run{good}, p50Only); !strings.Contains(unfit, "other work disturbed 10 of 10 processes") {
		t.Errorf("disturbed: %q", unfit)
	}
}
