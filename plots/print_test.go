package plots

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

// Charts of several runs are named after the files they came from; two runs of one file name
// fall back to their numbers; a heatmap per run is named after its run.
func TestChartsNamedAfterTheirFiles(t *testing.T) {
	s, x := testRuns(t)
	a, b := clone(s), clone(s)
	a.Source, b.Source = "sweeps/echo.json", "sweeps/source.json"
	b.Environment.Hostname = "elsewhere" // another setup, not a repeat of a
	x = clone(x)
	x.Source = "other/echo.json"
	dir := t.TempDir()
	paths, err := Render([]*results.Run{a, b}, dir, "svg")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".svg"))
	}
	for _, want := range []string{"timeline-rpcs-echo", "timeline-rpcs-source", "heatmap-echo", "heatmap-source"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s among %q", want, names)
		}
	}
	for _, n := range names {
		if strings.Contains(n, "run1") || strings.Contains(n, "run-1") {
			t.Errorf("%s is named by number", n)
		}
	}
	if got := runName(0, []*results.Run{a, x}); got != "run 1" {
		t.Errorf("two echo.json: %q, want run 1", got)
	}
}

// A run of one size and one threshold gets no heatmap: its one cell is trivially the best.
func TestNoHeatmapOfOneThreshold(t *testing.T) {
	r := resultstest.Sweep{Seed: 3, Thresholds: []int{4096}, Sizes: []int{64}, RPCs: 1000, Intervals: 2}.Run(t)
	cs, err := Charts([]*results.Run{r})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if strings.HasPrefix(c.Name, "heatmap") {
			t.Errorf("chart %s of a single threshold", c.Name)
		}
	}
}

// The device's max inline data (a NIC limit) is not in the caption beside the RPC-over-RDMA
// inline thresholds; the Gb/s axis says it counts call and reply.
func TestCaptionAndGbpsAxis(t *testing.T) {
	_, x := testRuns(t)
	if x.Environment.Device == nil || x.Environment.Device.MaxInlineData == 0 {
		t.Fatal("the rxe run's device has no max inline data to leave out")
	}
	c, err := Throughput([]*results.Run{x}, Gbps)
	if err != nil {
		t.Fatal(err)
	}
	if cap := strings.Join(c.Caption, "\n"); strings.Contains(cap, "max inline") {
		t.Errorf("caption names the device's max inline data:\n%s", cap)
	}
	if !strings.Contains(c.Plot.Y.Label.Text, "call + reply") {
		t.Errorf("y axis %q", c.Plot.Y.Label.Text)
	}
}

// Every chart of disturbed points carries the data-quality note; charts of undisturbed ones
// do not.
func TestDataQualityOnCharts(t *testing.T) {
	s, _ := testRuns(t)
	d := clone(s)
	for i := range d.Points {
		d.Points[i].Disturbed = []string{"other processes used 40% of the host CPU time"}
	}
	cs, err := Charts([]*results.Run{d})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if !slices.ContainsFunc(c.Caption, func(l string) bool {
			return strings.HasPrefix(l, "data quality: ") && strings.Contains(l, "point(s) disturbed: other processes")
		}) {
			t.Errorf("%s: no data-quality line in %q", c.Name, c.Caption)
		}
	}
	cs, _ = Charts([]*results.Run{s})
	for _, c := range cs {
		if slices.ContainsFunc(c.Caption, func(l string) bool { return strings.HasPrefix(l, "data quality") }) {
			t.Errorf("%s of an undisturbed run has a data-quality line", c.Name)
		}
	}
}

// No two lines of a chart share a colour and a dash pattern, however many keys and runs
// there are (beyond seven keys the colours repeat).
func TestStylesDistinct(t *testing.T) {
	st := newStyler()
	seen := map[string]string{}
	for run := range 2 {
		for key := range 10 {
			ls, _ := st.style(key, run)
			id := fmt.Sprint(ls.Color, ls.Dashes)
			if prev, ok := seen[id]; ok {
				t.Errorf("key %d run %d looks like %s", key, run, prev)
			}
			seen[id] = fmt.Sprintf("key %d run %d", key, run)
		}
	}
}

// Points whose size was drawn per RPC (run --sizes 64,4k) are charted against the threshold,
// as mixes are, named by their sizes: never as 0-byte points.
func TestVariedSizesCharted(t *testing.T) {
	s, _ := testRuns(t)
	r := clone(s)
	n := 0
	for i := range r.Points {
		if q := &r.Points[i].Params; q.CallBytes == 4096 {
			q.CallBytes, q.ReplyBytes, q.CallSizes, q.ReplySizes = 0, 0, "64,4k", "64,4k"
			n++
		}
	}
	if n < 2 {
		t.Fatalf("%d points of 4 KiB to vary", n)
	}
	c, err := Threshold([]*results.Run{r}, ThresholdP50)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Legend) != 1 || !strings.Contains(c.Legend[0].Label, "64,4k") {
		t.Errorf("legend %v", c.Legend)
	}
	l, err := Latency([]*results.Run{r}, 50)
	if err != nil {
		t.Fatal(err)
	}
	if cap := strings.Join(l.Caption, "\n"); !strings.Contains(cap, "sizes drawn per RPC") || strings.Contains(cap, "0-byte") {
		t.Errorf("latency caption:\n%s", cap)
	}
}
