package plots

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// The synthetic runs are built once: recording a sweep is the slow part of these tests.
var (
	runsOnce        sync.Once
	softRun, rxeRun *results.Run
)

func testRuns(t testing.TB) (*results.Run, *results.Run) {
	runsOnce.Do(func() {
		softRun, rxeRun = soft.Run(t), rxe.Run(t)
	})
	return softRun, rxeRun
}

// clone copies a run deeply enough for a test to change its points.
func clone(r *results.Run) *results.Run {
	c := *r
	c.Points = slices.Clone(r.Points)
	for i := range c.Points {
		c.Points[i].Intervals = slices.Clone(c.Points[i].Intervals)
	}
	return &c
}

func svg(t *testing.T, c *Chart) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := c.Encode(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGoldenSVG(t *testing.T) {
	s, x := testRuns(t)
	one := []*results.Run{s}
	thr4K := func(p results.Params) bool { return p.InlineThreshold == 4096 }
	rounds, mixes := []*results.Run{roundsRun(t)}, []*results.Run{mixRounds(t)}
	cases := []struct {
		name  string
		build func() (*Chart, error)
	}{
		{"latency-p50", func() (*Chart, error) { return Latency(one, 50) }},
		{"latency-p999", func() (*Chart, error) { return Latency(one, 99.9) }},
		{"latency-p50-two-runs", func() (*Chart, error) { return Latency([]*results.Run{s, x}, 50) }},
		{"spectrum-inline4K", func() (*Chart, error) { return Spectrum(one, thr4K) }},
		{"throughput-rpcs", func() (*Chart, error) { return Throughput(one, RPCRate) }},
		{"throughput-gbps", func() (*Chart, error) { return Throughput(one, Gbps) }},
		{"heatmap", func() (*Chart, error) { return Heatmap(one, nil) }},
		{"timeline-rpcs", func() (*Chart, error) { return Timeline(s, RPCRate) }},
		{"latency-p50-rounds", func() (*Chart, error) { return Latency(rounds, 50) }},
		{"throughput-rpcs-rounds", func() (*Chart, error) { return Throughput(rounds, RPCRate) }},
		{"heatmap-rounds", func() (*Chart, error) { return Heatmap(rounds, nil) }},
		{"threshold-p50-rounds", func() (*Chart, error) { return Threshold(mixes, ThresholdP50) }},
		{"threshold-rpcs-rounds", func() (*Chart, error) { return Threshold(mixes, ThresholdRPCRate) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			got := svg(t, c)
			// Deterministic: a chart built again from the same runs encodes to the same bytes.
			c2, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			if again := svg(t, c2); !bytes.Equal(got, again) {
				t.Fatal("two encodings of the same chart differ")
			}
			golden(t, tc.name+".svg", got)
		})
	}
}

// checkPNG decodes a chart's PNG and checks it is the documented size and really shows data:
// plenty of non-white pixels and coloured ones (lines, cells), not just black text and axes.
func checkPNG(t *testing.T, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode png: %v", err)
	}
	wantW, wantH := int(Width/vg.Inch*DPI), int(Height/vg.Inch*DPI)
	if r := img.Bounds(); r.Dx() != wantW || r.Dy() != wantH {
		t.Fatalf("png is %dx%d, want %dx%d", r.Dx(), r.Dy(), wantW, wantH)
	}
	st := pixelStats(img)
	n := float64(wantW * wantH)
	if st.ink/n < 0.02 {
		t.Errorf("only %.2f%% of pixels are not white: blank chart?", 100*st.ink/n)
	}
	if st.colour < 500 {
		t.Errorf("only %v coloured pixels: no data drawn?", st.colour)
	}
	if st.variance < 100 {
		t.Errorf("luminance variance %.1f: blank chart?", st.variance)
	}
}

type stats struct{ ink, colour, variance float64 }

func pixelStats(img image.Image) stats {
	var s stats
	var sum, sq, n float64
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			R, G, B := float64(cr>>8), float64(cg>>8), float64(cb>>8)
			l := 0.299*R + 0.587*G + 0.114*B
			sum += l
			sq += l * l
			n++
			if l < 245 {
				s.ink++
			}
			if max(R, G, B)-min(R, G, B) > 60 {
				s.colour++
			}
		}
	}
	mean := sum / n
	s.variance = sq/n - mean*mean
	return s
}

func TestRender(t *testing.T) {
	s, x := testRuns(t)
	dir := t.TempDir()
	paths, err := Render([]*results.Run{s}, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		if filepath.Dir(p) != dir {
			t.Errorf("%s not in %s", p, dir)
		}
		names = append(names, filepath.Base(p))
	}
	var want []string
	for _, n := range []string{"latency-p50", "latency-p99", "latency-p999", "spectrum-inline1K",
		"spectrum-inline4K", "spectrum-inline16K", "throughput-rpcs", "throughput-gbps", "heatmap",
		"timeline-rpcs"} {
		want = append(want, n+".png", n+".svg")
	}
	if !slices.Equal(names, want) {
		t.Fatalf("Render wrote\n%v\nwant\n%v", names, want)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(p) {
		case ".png":
			t.Run(filepath.Base(p), func(t *testing.T) { checkPNG(t, b) })
		case ".svg":
			if !bytes.HasPrefix(b, []byte("<?xml")) || !bytes.Contains(b, []byte("</svg>")) {
				t.Errorf("%s is not a complete SVG document", p)
			}
		}
	}

	// Two runs: p99.9 still applies (soft supports it), a timeline per run, one heatmap (the
	// second run measured one threshold, which is trivially the best), and the 4K spectrum
	// (12 lines) split in two.
	paths, err = Render([]*results.Run{s, x}, filepath.Join(dir, "two"), "svg")
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	want = []string{"latency-p50.svg", "latency-p99.svg", "latency-p999.svg", "spectrum-inline1K.svg",
		"spectrum-inline4K-1.svg", "spectrum-inline4K-2.svg", "spectrum-inline16K.svg",
		"throughput-rpcs.svg", "throughput-gbps.svg", "heatmap.svg",
		"timeline-rpcs-run-1.svg", "timeline-rpcs-run-2.svg"}
	if !slices.Equal(names, want) {
		t.Fatalf("Render of two runs wrote\n%v\nwant\n%v", names, want)
	}

	if _, err := Render([]*results.Run{s}, dir, "pdf"); err == nil || !strings.Contains(err.Error(), `"pdf"`) {
		t.Errorf("Render to pdf: got %v, want an unknown format error", err)
	}
}

func TestSpectrumSplitKeepsSizesTogether(t *testing.T) {
	s, x := testRuns(t)
	refs, err := collect([]*results.Run{s, x})
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range spectrumSets(refs) {
		if len(set.refs) > maxSpectrumLines {
			t.Errorf("%s has %d lines, more than %d", set.name, len(set.refs), maxSpectrumLines)
		}
		if set.name != "spectrum-inline4K-1" {
			continue
		}
		// Both runs measured 64, 512 and 4K at inline 4K: those six lines share the chart.
		for _, f := range set.refs {
			if size(f.p.Params) > 4096 {
				t.Errorf("%s holds %s", set.name, f.name())
			}
		}
	}
}

func TestLatencyOmitsUnsupported(t *testing.T) {
	_, x := testRuns(t)
	c, err := Latency([]*results.Run{x}, 99)
	if err != nil {
		t.Fatal(err)
	}
	// The rxe run's 1M point has a few hundred samples at most: no p99 (it needs 1000).
	var omitted int
	for _, p := range x.Points {
		if !results.Supports(p.RTT.Count, 99) {
			omitted++
		}
	}
	if omitted == 0 {
		t.Fatal("test data: every rxe point supports p99")
	}
	note := strings.Join(c.Caption, "\n")
	if !strings.Contains(note, "not drawn: too few samples for p99") {
		t.Errorf("caption does not say points were left out:\n%s", note)
	}
	if _, err := Latency([]*results.Run{x}, 99.99); !errors.Is(err, ErrNoData) {
		t.Errorf("p99.99 of 200 ms points: got %v, want ErrNoData", err)
	}
}

func TestCaption(t *testing.T) {
	s, _ := testRuns(t)
	c, err := Latency([]*results.Run{s}, 50)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(c.Caption, "\n")
	for _, want := range []string{"provider soft", "device soft0", "fw 1.0", "MTU 4096",
		"inline send/recv 1K/1K, 4K/4K, 8K/8K", "credits granted 64 of 128", "remote invalidation on",
		"ECHO", "depth 1", "closed loop"} {
		if !strings.Contains(text, want) {
			t.Errorf("caption lacks %q:\n%s", want, text)
		}
	}
}

func TestSpectrumSupports(t *testing.T) {
	h := results.NewHistogram()
	for v := int64(1); v <= 1000; v++ {
		if err := h.RecordValue(v * 1000); err != nil {
			t.Fatal(err)
		}
	}
	xys := spectrum(h)
	if len(xys) < 10 {
		t.Fatalf("only %d points", len(xys))
	}
	if xys[0].X != 0 || math.Abs(xys[0].Y-1) > 0.01 {
		t.Errorf("first point %v, want the minimum (1 µs) at 0%%", xys[0])
	}
	// 1000 samples support p99 (10 beyond it) and nothing past it.
	last := xys[len(xys)-1]
	if p := 100 - 100/math.Pow(10, last.X); !results.Supports(1000, p*(1-1e-12)) || p > 99+1e-9 {
		t.Errorf("last point at p%v, want at most p99", p)
	}
	if last.X < 1.9 {
		t.Errorf("last point at x=%v: stops well before p99", last.X)
	}
	for i := 1; i < len(xys); i++ {
		if xys[i].X <= xys[i-1].X || xys[i].Y < xys[i-1].Y {
			t.Fatalf("not monotonic at %d: %v after %v", i, xys[i], xys[i-1])
		}
	}
}

func TestErrors(t *testing.T) {
	s, x := testRuns(t)
	empty := clone(s)
	empty.Points = nil
	empty.Status = results.Status{State: results.StateFailed, Message: "connect: refused"}

	noHist := clone(s)
	noHist.Points[2].Histogram = ""
	badHist := clone(s)
	badHist.Points[2].Histogram = "HISTFAAAAB"

	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no runs", errOf(Render(nil, t.TempDir())), "no runs"},
		{"nil run", errOf(Latency([]*results.Run{nil}, 50)), "run 1 is nil"},
		{"no points", errOf(Render([]*results.Run{empty}, t.TempDir())), "has no points (failed: connect: refused)"},
		{"percentile 0", errOf(Latency([]*results.Run{s}, 0)), "want 0 < p < 100"},
		{"percentile 100", errOf(Latency([]*results.Run{s}, 100)), "want 0 < p < 100"},
		{"percentile NaN", errOf(Latency([]*results.Run{s}, math.NaN())), "want 0 < p < 100"},
		{"missing histogram", errOf(Spectrum([]*results.Run{noHist}, nil)), "run 1 point 3 (ECHO 4096/4096 B inline 1024): rtt_histogram missing"},
		{"corrupt histogram", errOf(Spectrum([]*results.Run{badHist}, nil)), "run 1 point 3"},
		{"missing histogram, other percentile", errOf(Latency([]*results.Run{noHist}, 75)), "rtt_histogram missing"},
		{"same cell", errOf(Heatmap([]*results.Run{s, x}, nil)), "fall in the same cell"},
		{"rate", errOf(Throughput([]*results.Run{s}, Rate(7))), "unknown throughput rate"},
		{"timeline rate", errOf(Timeline(s, Rate(-1))), "unknown throughput rate"},
		{"timeline nil", errOf(Timeline(nil, RPCRate)), "run 1 is nil"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}

	// A bad histogram spoils only the charts that need it: Render writes the others and
	// reports the error.
	paths, err := Render([]*results.Run{noHist}, t.TempDir(), "svg")
	if err == nil || !strings.Contains(err.Error(), "rtt_histogram missing") {
		t.Errorf("Render with a missing histogram: got %v", err)
	}
	if len(paths) < 5 {
		t.Errorf("Render with a missing histogram wrote only %v", paths)
	}
}

func errOf[T any](_ T, err error) error { return err }

// odd are runs at the edges of what a results file may hold; nothing may panic on them.
func odd(t *testing.T) map[string]*results.Run {
	s, _ := testRuns(t)
	m := map[string]*results.Run{}

	one := clone(s)
	one.Points = one.Points[:1]
	m["one point"] = one

	zero := clone(s)
	zero.Points = zero.Points[:1]
	p := &zero.Points[0]
	h, err := results.EncodeHistogram(results.NewHistogram())
	if err != nil {
		t.Fatal(err)
	}
	p.RTT, p.Histogram, p.Classes = results.Summary{}, h, nil
	p.Throughput, p.Intervals, p.Complete = results.Throughput{}, nil, false
	zero.Status = results.Status{State: results.StateInterrupted, Message: "signal: interrupt"}
	m["zero samples"] = zero

	null := clone(s)
	for i := range null.Points {
		null.Points[i].Params.Procedure, null.Points[i].Params.CallBytes, null.Points[i].Params.ReplyBytes = "NULL", 0, 0
		null.Points[i].Params.InlineThreshold = 1024 << (i % 3)
		null.Points[i].Params.Depth = 1 + i/3 // one heatmap row per threshold, one map per depth
		null.Points[i].Negotiated = nil
	}
	null.Environment = results.Environment{}
	m["zero sizes, no negotiation, no environment"] = null

	few := clone(s)
	for i := range few.Points {
		q := &few.Points[i]
		q.RTT.P50, q.RTT.P90, q.RTT.P99, q.RTT.P999, q.RTT.P9999 = nil, nil, nil, nil, nil
		q.RTT.Count = 10
		for j := range q.Intervals {
			q.Intervals[j].DurationNs = 0
		}
	}
	m["no percentiles, empty intervals"] = few

	flat := clone(s)
	flat.Points = flat.Points[:2]
	for i := range flat.Points {
		v := int64(5000)
		flat.Points[i].RTT.P50 = &v
		flat.Points[i].Throughput.RPCPerSec = math.NaN()
		flat.Points[i].Throughput.PayloadGbps = math.Inf(1)
	}
	m["equal medians, NaN rates"] = flat
	return m
}

func TestOddInput(t *testing.T) {
	for name, r := range odd(t) {
		t.Run(name, func(t *testing.T) {
			charts, err := Charts([]*results.Run{r})
			if err != nil && !errors.Is(err, ErrNoData) {
				t.Logf("Charts: %v", err)
			}
			for _, c := range charts {
				var b bytes.Buffer
				if err := c.Encode(&b, "svg"); err != nil {
					t.Errorf("%s: %v", c.Name, err)
				}
			}
			switch name {
			case "one point":
				if len(charts) < 5 {
					t.Errorf("one point gave only %d charts", len(charts))
				}
				for _, c := range charts {
					if c.Name != "heatmap" {
						continue
					}
					var b bytes.Buffer
					if err := c.Encode(&b, "png"); err != nil {
						t.Fatal(err)
					}
					checkPNG(t, b.Bytes())
				}
			case "zero samples":
				if len(charts) != 0 || !errors.Is(err, ErrNoData) {
					t.Errorf("a point without samples: %d charts, error %v; want none and ErrNoData", len(charts), err)
				}
			}
		})
	}
}

func TestEncodeFormats(t *testing.T) {
	s, _ := testRuns(t)
	c, err := Throughput([]*results.Run{s}, Gbps)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.Encode(&b, "PNG"); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, b.Bytes())
	if err := c.Encode(&b, "gif"); err == nil {
		t.Error("gif: no error")
	}
	if err := c.Save(filepath.Join(t.TempDir(), "x.eps")); err == nil {
		t.Error("Save to .eps: no error")
	}
	if err := c.Save(filepath.Join(t.TempDir(), "missing", "x.svg")); err == nil {
		t.Error("Save into a missing directory: no error")
	}
}

// TestFromFile draws from a results file as the CLI does: writing a run and reading it back
// (results validates it strictly) must not change a single byte of any chart.
func TestFromFile(t *testing.T) {
	s, _ := testRuns(t)
	path := filepath.Join(t.TempDir(), "run.json")
	if err := results.WriteFile(path, s); err != nil {
		t.Fatal(err)
	}
	runs, err := results.ReadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Charts([]*results.Run{s})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Charts(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d charts from the file, %d from memory", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(svg(t, got[i]), svg(t, want[i])) {
			t.Errorf("%s drawn from the file differs from the one drawn from memory", got[i].Name)
		}
	}
}

func BenchmarkCharts(b *testing.B) {
	s, _ := testRuns(b)
	runs := []*results.Run{s}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Charts(runs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	s, _ := testRuns(b)
	c, err := Latency([]*results.Run{s}, 50)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range Formats {
		b.Run(f, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Encode(io.Discard, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The rounds of a repeated sweep (one run, each point once per round) share their heatmap
// cell, which shows their median; two different points in one cell stay an error.
func TestHeatmapTakesTheRoundsOfAPoint(t *testing.T) {
	r := soft.Run(t)
	n := len(r.Points)
	for i := range n {
		r.Points[i].Round = 1
		q := r.Points[i]
		q.Round = 2
		r.Points = append(r.Points, q)
	}
	if _, err := Heatmap([]*results.Run{r}, nil); err != nil {
		t.Fatalf("rounds of one point: %v", err)
	}
	r.Points[n].Params.Depth++ // another point, not a round of the first
	r.Points[n].Params.Procedure = r.Points[0].Params.Procedure
	if _, err := Heatmap([]*results.Run{r}, nil); err == nil || !strings.Contains(err.Error(), "same cell") {
		t.Fatalf("two points in one cell: %v", err)
	}
}

// A peer that caps an offer makes two points of one run with the same threshold in effect
// (knfsd caps 16k to 4k): they measured one setup, and every chart takes them as its repeats.
func TestCappedOfferSharesTheCell(t *testing.T) {
	s, _ := testRuns(t)
	r := clone(s)
	p := r.Points[0]
	p.Params.OfferedInlineThreshold = 4 * p.Params.InlineThreshold
	r.Points = append(r.Points, p)
	if _, err := Heatmap([]*results.Run{r}, nil); err != nil {
		t.Fatalf("heatmap: %v", err)
	}
	if _, err := Render([]*results.Run{r}, t.TempDir()); err != nil {
		t.Fatalf("render: %v", err)
	}
}
