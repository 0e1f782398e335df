package plots

import (
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

func labels(ts []plot.Tick) []string {
	var out []string
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func TestSizeTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{64, 1 << 20, "64 256 1K 4K 16K 64K 256K 1M"},
		{64, 4096, "64 128 256 512 1K 2K 4K"},
		{1, 1 << 30, "1 32 1K 32K 1M 32M 1G"},
		{0.5, 2, "0.5 1 2"},
		{0, 8, ""},
	} {
		if got := strings.Join(labels(sizeTicks(tc.lo, tc.hi)), " "); got != tc.want {
			t.Errorf("sizeTicks(%v, %v) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
	// On the chart's log2 axis the ticks sit at the exponents.
	ts := logged(plot.TickerFunc(sizeTicks), 2).Ticks(6, 10)
	if ts[0].Value != 6 || ts[len(ts)-1].Value != 10 {
		t.Errorf("logged ticks %v, want 6..10", ts)
	}
}

func TestPercentileTicks(t *testing.T) {
	got := strings.Join(labels(logged(plot.TickerFunc(percentileTicks), 10).Ticks(0, 5.2)), " ")
	if want := "0% 90% 99% 99.9% 99.99% 99.999%"; got != want {
		t.Errorf("percentile ticks %q, want %q", got, want)
	}
	got = strings.Join(labels(logged(plot.TickerFunc(percentileTicks), 10).Ticks(0, 2.1)), " ")
	if want := "0% 50% 80% 90% 95% 98% 99%"; got != want {
		t.Errorf("short axis: percentile ticks %q, want %q", got, want)
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{2, 5000, "10 100 1000"},
		{3, 80, "5 10 20 50"},
		{3, 8, "3 4 5 6 7 8"},
		{3.1, 3.9, "3.1 3.2 3.3 3.4 3.5 3.6 3.7 3.8 3.9"},
	} {
		if got := strings.Join(labels(logTicks(trimFloat)(tc.lo, tc.hi)), " "); got != tc.want {
			t.Errorf("logTicks(%v, %v) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestLinearTicks(t *testing.T) {
	for _, tc := range []struct{ lo, hi float64 }{{0, 1}, {0, 150}, {0, 297e3}, {0, 7.3}, {-3, 3}, {5, 5}} {
		ts := linearTicks(trimFloat)(tc.lo, tc.hi)
		ls := labels(ts)
		if tc.lo == tc.hi {
			if len(ls) != 1 {
				t.Errorf("empty range: %v", ts)
			}
			continue
		}
		if len(ls) < 4 || len(ls) > 11 {
			t.Errorf("linearTicks(%v, %v): %d labels %v, want 4 to 11", tc.lo, tc.hi, len(ls), ls)
		}
		for _, tk := range ts {
			if tk.Value < tc.lo-1e-9 || tk.Value > tc.hi+1e-9 {
				t.Errorf("linearTicks(%v, %v): tick %v outside", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label != "" {
				if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(v)) {
					t.Errorf("label %q for tick at %v", tk.Label, tk.Value)
				}
			}
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{bytesLabel(64), "64"}, {bytesLabel(1024), "1K"}, {bytesLabel(1536), "1536"},
		{bytesLabel(1 << 20), "1M"}, {bytesLabel(3 << 30), "3G"}, {bytesLabel(0), "0"},
		{trimFloat(12.345), "12.3"}, {trimFloat(0.05), "0.05"}, {trimFloat(2111.4), "2111"},
		{trimFloat(0), "0"}, {trimFloat(100), "100"},
		{siLabel(950), "950"}, {siLabel(1500), "1.5k"}, {siLabel(250e3), "250k"}, {siLabel(2e6), "2M"},
		{siLabel(999.7), "1k"},
		{percentileName(99.9), "p99.9"}, {percentileName(50), "p50"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestImports keeps the package away from the providers (ARCHITECTURE.md: plots never
// imports datapath). It reaches datapath's types only through package results.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasSuffix(path, "/datapath") || strings.Contains(path, "/datapath/") || path == "C" {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
	if !slices.Contains(files, "render.go") {
		t.Fatalf("test runs outside the package directory: %v", files)
	}
}

func TestSeriesLabels(t *testing.T) {
	pt := func(proc string, call, reply, thr, depth int) results.Point {
		return results.Point{Params: results.Params{Procedure: proc, Class: "auto", CallBytes: call, ReplyBytes: reply,
			InlineThreshold: thr, Depth: depth, Connections: 1}}
	}
	r := &results.Run{Points: []results.Point{
		pt("ECHO", 64, 64, 4096, 1), pt("ECHO", 4096, 4096, 4096, 1),
		pt("SOURCE", 8, 64, 4096, 1), pt("SOURCE", 8, 65536, 4096, 1),
		pt("SINK", 65536, 0, 1024, 1), pt("SINK", 65536, 0, 1024, 4),
	}}
	refs, err := collect([]*results.Run{r})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range group(refs, []*results.Run{r}) {
		got = append(got, s.label+" ("+strconv.Itoa(len(s.refs))+")")
	}
	want := []string{
		"ECHO · call=reply · depth 1 · inline 4K (2)",
		"SINK · reply 0 · depth 1 · inline 1K (1)",
		"SINK · reply 0 · depth 4 · inline 1K (1)",
		"SOURCE · call 8 · depth 1 · inline 4K (2)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("labels\n%q\nwant\n%q", got, want)
	}
	if l := pointLabel(refs[3], refs, []*results.Run{r}); l != "64K B · SOURCE · call 8 · depth 1 · inline 4K" {
		t.Errorf("point label %q", l)
	}
}
