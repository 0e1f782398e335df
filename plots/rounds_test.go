package plots

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// roundSlows scale the RTTs of each round of the repeated runs: drift a chart must show as a
// band around the median, not as a line per round.
var roundSlows = []float64{1, 1.3, 0.9, 1.1}

// repeated is sw measured in len(slows) interleaved rounds, one run as --repeat writes it.
func repeated(t *testing.T, sw func() *results.Run, slows []float64) *results.Run {
	t.Helper()
	var out *results.Run
	for k := range slows {
		r := sw()
		if out == nil {
			out = clone(r)
			out.Points = nil
		}
		for _, p := range r.Points {
			p.Round = k + 1
			out.Points = append(out.Points, p)
		}
	}
	if _, err := results.Marshal(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// roundsRun is a soft sweep of three thresholds and three sizes in four rounds.
func roundsRun(t *testing.T) *results.Run {
	k := 0
	return repeated(t, func() *results.Run {
		sw := soft
		sw.Seed, sw.Slow = uint64(10+k), roundSlows[k]
		sw.Sizes, sw.Time, sw.Intervals, sw.FailSizes = []int{64, 4096, 65536}, 20*time.Millisecond, 0, nil
		k++
		return sw.Run(t)
	}, roundSlows)
}

// freshRounds is roundsRun in eight rounds, each in its own process, as --repeat measures
// by default.
func freshRounds(t *testing.T) *results.Run {
	slows := []float64{1, 1.3, 0.9, 1.1, 1.05, 0.95, 1.2, 1}
	k := 0
	r := repeated(t, func() *results.Run {
		sw := soft
		sw.Seed, sw.Slow = uint64(10+k), slows[k]
		sw.Sizes, sw.Time, sw.Intervals, sw.FailSizes = []int{64, 4096, 65536}, 20*time.Millisecond, 0, nil
		k++
		return sw.Run(t)
	}, slows)
	for i := range r.Points {
		r.Points[i].Process = r.Points[i].Round
	}
	return r
}

// p50us is the val of a latency chart, from the summary.
func p50us(f ref) (float64, string) {
	if f.p.RTT.P50 == nil {
		return 0, "no p50"
	}
	return float64(*f.p.RTT.P50) / 1e3, ""
}

// The size charts draw one line per threshold through the median of a point's rounds, with
// their min and max, whether the rounds are in one file or in repeated files of one setup.
func TestSizeChartsDrawTheMedianOfRounds(t *testing.T) {
	r := roundsRun(t)
	// The rounds of each point's p50, by threshold and size.
	want := map[[2]int][]float64{}
	for _, p := range r.Points {
		k := [2]int{p.Params.InlineThreshold, size(p.Params)}
		want[k] = append(want[k], float64(*p.RTT.P50)/1e3)
	}
	// The same rounds in two files (rounds 1-2 and 3-4) of one setup pool the same way.
	a, b := clone(r), clone(r)
	a.Points = slices.DeleteFunc(a.Points, func(p results.Point) bool { return p.Round > 2 })
	b.Points = slices.DeleteFunc(b.Points, func(p results.Point) bool { return p.Round <= 2 })
	for name, runs := range map[string][]*results.Run{"one file": {r}, "two files": {a, b}} {
		t.Run(name, func(t *testing.T) {
			refs, err := collect(runs)
			if err != nil {
				t.Fatal(err)
			}
			set := aggregate(group(refs, runs), sizeAxis, p50us)
			if len(set.lines) != 3 {
				t.Fatalf("%d lines, want one per threshold (3)", len(set.lines))
			}
			for _, l := range set.lines {
				if strings.Contains(l.label, "run") {
					t.Errorf("label %q names a run: repeats of one setup share the line", l.label)
				}
				if len(l.stats) != 3 {
					t.Fatalf("%s: %d x values, want 3 sizes", l.label, len(l.stats))
				}
				for _, s := range l.stats {
					v := slices.Clone(want[[2]int{l.key.threshold, int(math.Exp2(s.x))}])
					if s.n != len(roundSlows) || len(v) != len(roundSlows) {
						t.Fatalf("%s at %v: n %d from %d rounds, want %d", l.label, s.x, s.n, len(v), len(roundSlows))
					}
					slices.Sort(v)
					if med := (v[1] + v[2]) / 2; s.med != med || s.lo != v[0] || s.hi != v[3] {
						t.Errorf("%s at %v: median %v [%v, %v], want %v [%v, %v]", l.label, s.x, s.med, s.lo, s.hi, med, v[0], v[3])
					}
				}
			}
			c, err := Latency(runs, 50)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Legend) != 3 {
				t.Errorf("%d legend entries, want 3", len(c.Legend))
			}
			cap := strings.Join(c.Caption, "\n")
			if !strings.Contains(cap, "median over each point's repeats (4 each") || !strings.Contains(cap, "min-max range") {
				t.Errorf("caption does not say what the line and band are:\n%s", cap)
			}
		})
	}
}

// The heatmap marks a cell beyond noise exactly when report --format thresholds does on the
// same file: rounds of one process cannot tell (one process a threshold), the same rounds
// each in its own process can.
func TestHeatCellsFollowTheThresholdsRule(t *testing.T) {
	one, fresh := roundsRun(t), freshRounds(t)
	for _, tc := range []struct {
		name string
		run  *results.Run
		// judged: some non-best cell is judged (worse or not), none is unknown.
		judged bool
	}{{"one process", one, false}, {"fresh processes", fresh, true}} {
		t.Run(tc.name, func(t *testing.T) {
			refs, err := collect([]*results.Run{tc.run})
			if err != nil {
				t.Fatal(err)
			}
			var sizes, thrs []int
			for _, f := range refs {
				if !slices.Contains(sizes, size(f.p.Params)) {
					sizes = append(sizes, size(f.p.Params))
				}
				if !slices.Contains(thrs, f.p.Params.InlineThreshold) {
					thrs = append(thrs, f.p.Params.InlineThreshold)
				}
			}
			slices.Sort(sizes)
			slices.Sort(thrs)
			medians := make([][][]float64, len(sizes))
			at := make([][]*ref, len(sizes))
			for c := range sizes {
				medians[c], at[c] = make([][]float64, len(thrs)), make([]*ref, len(thrs))
			}
			for i := range refs {
				f := &refs[i]
				c, _ := slices.BinarySearch(sizes, size(f.p.Params))
				r, _ := slices.BinarySearch(thrs, f.p.Params.InlineThreshold)
				at[c][r] = f
				medians[c][r] = append(medians[c][r], float64(*f.p.RTT.P50)/1e3)
			}
			cells := heatCells(medians, at)
			table := map[string]*results.ThresholdChoice{}
			choices := results.BestThresholds([]*results.Run{tc.run}, 0)
			for i := range choices {
				if choices[i].Metric == results.MetricP50 {
					table[choices[i].Params.Key()] = &choices[i]
				}
			}
			unknown, judged := 0, 0
			for c := range cells {
				for r, cs := range cells[c] {
					if cs.n == 0 || cs.best {
						continue
					}
					gp := at[c][r].p.Params
					gp.InlineThreshold = 0
					ch := table[gp.Key()]
					k := slices.IndexFunc(ch.Candidates, func(x results.ThresholdCandidate) bool { return x.Threshold == thrs[r] })
					if k <= 0 {
						continue
					}
					e := ch.Versus[k-1]
					want := sigNone
					switch {
					case !e.Bounded():
						want = sigUnknown
					case e.Lo > 1:
						want = sigWorse
					}
					if cs.sig != want {
						t.Errorf("size %d threshold %d: chart says %v, the thresholds table %v (%v)", sizes[c], thrs[r], cs.sig, want, e)
					}
					if cs.sig == sigUnknown {
						unknown++
					} else {
						judged++
					}
				}
			}
			if tc.judged != (judged > 0 && unknown == 0) || !tc.judged && judged > 0 {
				t.Errorf("%d cells judged, %d unknown", judged, unknown)
			}
		})
	}
}

// The heatmap's colour scale is fixed: 8% of noise stays pale, whatever the data's spread;
// only a cell maxRatio times the best reaches the darkest colour.
func TestHeatmapScaleIsFixed(t *testing.T) {
	cm := ratioColours()
	cm.SetMin(0)
	cm.SetMax(math.Log2(maxRatio))
	lum := func(r float64) float64 {
		c, err := cm.At(math.Log2(r))
		if err != nil {
			t.Fatal(err)
		}
		R, G, B, _ := c.RGBA()
		return (0.299*float64(R) + 0.587*float64(G) + 0.114*float64(B)) / 0xffff
	}
	if l1, l108, l4 := lum(1), lum(1.08), lum(maxRatio); l1 < 0.9 || l108 < 0.8 || l4 > 0.3 {
		t.Errorf("luminance at 1×, 1.08×, %v×: %.2f %.2f %.2f; want pale, pale, dark", maxRatio, l1, l108, l4)
	}

	r := freshRounds(t)
	c, err := Heatmap([]*results.Run{r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(svg(t, c))
	for _, s := range []string{"best", "≈ ×", "8 rounds", "≥4×", "median RTT / best of the size"} {
		if !strings.Contains(got+strings.Join(c.Caption, " "), s) {
			t.Errorf("heatmap does not show %q", s)
		}
	}
}

// mixRounds is mixRun in four rounds whose RTTs drift by roundSlows.
func mixRounds(t *testing.T) *results.Run {
	k := 0
	return repeated(t, func() *results.Run {
		r := mixRun(t)
		for i := range r.Points {
			// Scale the summary the threshold charts read; the histogram stays the model's.
			p := &r.Points[i]
			scale := func(v *int64) *int64 {
				if v == nil {
					return nil
				}
				x := int64(float64(*v) * roundSlows[k] * (1 + 0.2*float64(i)))
				return &x
			}
			q := &p.RTT
			q.Min, q.Max, q.Mean, q.P50, q.P90, q.P99, q.P999, q.P9999 = scale(q.Min), scale(q.Max), scale(q.Mean), scale(q.P50), scale(q.P90), scale(q.P99), scale(q.P999), scale(q.P9999)
			p.Throughput.RPCPerSec /= roundSlows[k] * (1 + 0.2*float64(i))
		}
		k++
		return r
	}, roundSlows)
}

// A mix measured at several thresholds gets a chart per metric against the threshold: one
// line per mix through the median of the rounds.
func TestThresholdCharts(t *testing.T) {
	r := mixRounds(t)
	cs, err := Charts([]*results.Run{r})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		if strings.HasPrefix(c.Name, "threshold-") {
			names = append(names, c.Name)
			if len(c.Legend) != 1 || !strings.Contains(c.Legend[0].Label, "MIX:nfs") {
				t.Errorf("%s: legend %v, want the one mix", c.Name, c.Legend)
			}
			checkPNG(t, pngOf(t, c))
		}
	}
	if !slices.Equal(names, []string{"threshold-p50", "threshold-p99", "threshold-rpcs"}) {
		t.Errorf("threshold charts %v", names)
	}
	refs, err := collect([]*results.Run{r})
	if err != nil {
		t.Fatal(err)
	}
	set := aggregate(groupMixes(refs, []*results.Run{r}), thresholdAxis, p50us)
	if len(set.lines) != 1 || len(set.lines[0].stats) != 3 {
		t.Fatalf("want one line of 3 thresholds, got %+v", set.lines)
	}
	for i, s := range set.lines[0].stats {
		if s.n != 4 || math.Exp2(s.x) != float64([]int{1024, 4096, 16384}[i]) || !(s.lo < s.med && s.med < s.hi) {
			t.Errorf("threshold %d: %+v", i, s)
		}
	}
	// A sweep of sizes (no mix), or one threshold, has no threshold chart.
	s, _ := testRuns(t)
	if _, err := Threshold([]*results.Run{s}, ThresholdP50); err == nil || !strings.Contains(err.Error(), "nothing to plot") {
		t.Errorf("sized sweep: %v", err)
	}
	if _, err := Threshold([]*results.Run{r}, ThresholdMetric(9)); err == nil || !strings.Contains(err.Error(), "unknown threshold metric") {
		t.Errorf("bad metric: %v", err)
	}
}

func pngOf(t *testing.T, c *Chart) []byte {
	t.Helper()
	var b strings.Builder
	if err := c.Encode(&b, "png"); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

// A repeated point has one spectrum line, of its rounds' samples pooled, not one per round.
func TestSpectrumPoolsRounds(t *testing.T) {
	r := roundsRun(t)
	cs, err := Charts([]*results.Run{r})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		if !strings.HasPrefix(c.Name, "spectrum") {
			continue
		}
		names = append(names, c.Name)
		if len(c.Legend) != 3 {
			t.Errorf("%s: %d lines, want one per size (3)", c.Name, len(c.Legend))
		}
		for _, e := range c.Legend {
			if !strings.HasSuffix(e.Label, "· 4 rounds") {
				t.Errorf("%s: label %q does not say the line pools 4 rounds", c.Name, e.Label)
			}
		}
		if !strings.Contains(strings.Join(c.Caption, " "), "pooled") {
			t.Errorf("%s: caption does not say the rounds are pooled", c.Name)
		}
	}
	if !slices.Equal(names, []string{"spectrum-inline1K", "spectrum-inline4K", "spectrum-inline16K"}) {
		t.Errorf("spectra %v, want one per threshold", names)
	}
}
