package plots

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// Every latency chart follows one axis rule, logarithmic, whatever its span: the p99.9 chart
// of a sweep whose p99.9 varies little is no longer linear next to a log p50 chart.
func TestLatencyChartsShareTheLogAxis(t *testing.T) {
	runs := []*results.Run{soft.Run(t)}
	for _, p := range []float64{50, 99, 99.9} {
		c, err := Latency(runs, p)
		if err != nil {
			t.Fatal(err)
		}
		hi := 0.0
		for _, r := range runs {
			for _, pt := range r.Points {
				if v, ok, _ := percentileNs(ref{p: &pt}, p); ok {
					hi = math.Max(hi, float64(v)/1e3)
				}
			}
		}
		// A linear axis runs from 0 to above the largest value; a log one holds log10s.
		if c.Plot.Y.Min == 0 || c.Plot.Y.Max > math.Log10(hi)+1 {
			t.Errorf("p%v: y axis %v..%v for values up to %v µs: not logarithmic", p, c.Plot.Y.Min, c.Plot.Y.Max, hi)
		}
	}
	// A narrow span (a factor of 2) is logarithmic too.
	var a = newPlot("", "", "").Y
	ty := setLatencyAxis(&a, 10, 20)
	if ty(100) != 2 {
		t.Errorf("narrow latency span: linear axis")
	}
}

// The size charts mark each point with its dominant class, so a class switch shows on the
// line, and say so in the caption.
func TestSizeChartsMarkClassSwitches(t *testing.T) {
	c, err := Latency([]*results.Run{soft.Run(t)}, 50)
	if err != nil {
		t.Fatal(err)
	}
	caption := strings.Join(c.Caption, "\n")
	if !strings.Contains(caption, "Markers: the message class") || !strings.Contains(caption, "▲ chunked") || !strings.Contains(caption, "● short") {
		t.Errorf("caption %q", caption)
	}
	if glyph := classGlyph("long"); glyph == classGlyph("short") || classGlyph("chunked") == classGlyph("short") {
		t.Errorf("classes share a marker")
	}
}

// mixRun is a threshold sweep over one mix: points of three classes each, no size.
func mixRun(t *testing.T) *results.Run {
	r := soft.Run(t)
	rng := rand.New(rand.NewPCG(3, 3))
	var pts []results.Point
	for _, thr := range []int{1024, 4096, 16384} {
		rec := results.NewRecorder()
		for i := range 3000 {
			c := []rpcproto.Kind{rpcproto.Short, rpcproto.Chunked, rpcproto.Long}[i%3]
			rec.Record(c, c, int64(5000*(int(c)+1))+rng.Int64N(3000), 4096)
		}
		start := r.Start.Add(time.Duration(len(pts)) * time.Second)
		p, err := results.Summarize(results.Params{Procedure: "MIX:nfs", Class: "auto", InlineThreshold: thr, Depth: 16, Connections: 1},
			start, start.Add(time.Second), rec)
		if err != nil {
			t.Fatal(err)
		}
		p.Complete = true
		pts = append(pts, p)
	}
	r.Points = pts
	if _, err := results.Marshal(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A mix's spectrum has a line per class, labelled with the mix's name, not "0 B"; it gets no
// one-column heatmap.
func TestMixCharts(t *testing.T) {
	runs := []*results.Run{mixRun(t)}
	cs, err := Charts(runs)
	if err != nil {
		t.Fatal(err)
	}
	var spectra []*Chart
	for _, c := range cs {
		if strings.HasPrefix(c.Name, "heatmap") {
			t.Errorf("a mix got a heatmap: %s", c.Name)
		}
		if strings.HasPrefix(c.Name, "spectrum") {
			spectra = append(spectra, c)
		}
	}
	if len(spectra) != 3 {
		t.Fatalf("%d spectra, want one per threshold", len(spectra))
	}
	spectrum := spectra[0]
	if len(spectrum.Legend) != 3 {
		t.Fatalf("%d spectrum lines, want one per class", len(spectrum.Legend))
	}
	for _, e := range spectrum.Legend {
		if strings.Contains(e.Label, "0 B") || !strings.Contains(e.Label, "MIX:nfs") ||
			!(strings.HasSuffix(e.Label, "· short") || strings.HasSuffix(e.Label, "· chunked") || strings.HasSuffix(e.Label, "· long")) {
			t.Errorf("legend %q", e.Label)
		}
	}
}

// A mix's timeline has a line per message class beside the point's own; a point of one
// class has none.
func TestTimelineClassLines(t *testing.T) {
	r := mixRun(t)
	for i := range r.Points {
		r.Points[i].Intervals = []results.Interval{
			{OffsetNs: 0, DurationNs: 5e8, RPCs: 1500, Classes: map[string]uint64{"short": 500, "chunked": 500, "long": 500}},
			{OffsetNs: 5e8, DurationNs: 5e8, RPCs: 1500, Classes: map[string]uint64{"short": 700, "chunked": 500, "long": 300}},
		}
	}
	c, err := Timeline(r, RPCRate)
	if err != nil {
		t.Fatal(err)
	}
	var classes []string
	for _, e := range c.Legend {
		if strings.HasSuffix(e.Label, " RPCs") {
			classes = append(classes, strings.TrimSuffix(e.Label, " RPCs"))
		}
	}
	if strings.Join(classes, ",") != "short,chunked,long" {
		t.Fatalf("class lines %v in legend %v, want short, chunked, long", classes, c.Legend)
	}
	for i := range r.Points {
		for k := range r.Points[i].Intervals {
			r.Points[i].Intervals[k].Classes = map[string]uint64{"short": 1500}
		}
	}
	if c, err = Timeline(r, RPCRate); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Legend {
		if strings.HasSuffix(e.Label, " RPCs") {
			t.Fatalf("a one-class point got class lines: %v", c.Legend)
		}
	}
}
