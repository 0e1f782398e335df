package plots

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

// A fan-in run gets the per-rank charts, as PNG and SVG files that open; a run that is not a
// fan-in gets none.
func TestRanksCharts(t *testing.T) {
	fan := resultstest.FanIn{Sweep: resultstest.Sweep{Seed: 3, Sizes: []int{64, 8192}, RPCs: 1000}, Slow: []float64{1, 1, 3}}.Run(t)
	dir := t.TempDir()
	paths, err := Render([]*results.Run{fan}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ranks-rpcs", "ranks-rtt"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatalf("%s.png not written (wrote %q): %v", name, paths, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil || img.Bounds().Dx() != 2700 {
			t.Errorf("%s.png does not open as a 2700-pixel PNG (9 inches at 300 dpi): %v", name, err)
		}
		s, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil || !bytes.Contains(s, []byte("<svg")) {
			t.Errorf("%s.svg: %v", name, err)
		}
	}
	c, err := Ranks(fan, RankRPCRate)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Legend) != 2 || !strings.Contains(c.Legend[0].Label, "all ranks "+siLabel(fan.Points[0].Throughput.RPCPerSec)+" RPC/s") {
		t.Errorf("legend %v: want a line per point naming its aggregate", c.Legend)
	}
	if c, err := Ranks(fan, RankRTT); err != nil || len(c.Legend) != 4 {
		t.Errorf("rtt chart: %v lines, %v; want p50 and p99 of 2 points", c, err)
	}

	plain := resultstest.Sweep{Seed: 3, RPCs: 1000}.Run(t)
	if _, err := Ranks(plain, RankRPCRate); !errors.Is(err, ErrNoData) {
		t.Errorf("a plain run's ranks chart: %v, want ErrNoData", err)
	}
	dir = t.TempDir()
	if _, err := Render([]*results.Run{plain}, dir); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "ranks-*")); len(m) > 0 {
		t.Errorf("a plain run has rank charts: %q", m)
	}
}
