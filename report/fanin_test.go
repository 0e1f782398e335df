package report

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

// A fan-in's page shows, per point, the fairness line and a row per client rank, in the HTML
// and the Markdown; a run that is not a fan-in has no such section.
func TestFanInRanks(t *testing.T) {
	r := resultstest.FanIn{Sweep: resultstest.Sweep{Seed: 5, RPCs: 1000}, Slow: []float64{1, 1, 3}}.Run(t)
	f := r.Points[0].FanIn
	if f.SlowestRank != 3 || f.Jain > 0.95 {
		t.Fatalf("fixture: slowest rank %d, Jain %v", f.SlowestRank, f.Jain)
	}
	dir := t.TempDir()
	h, m, err := Write([]*results.Run{r}, dir, Config{NoCharts: true})
	if err != nil {
		t.Fatal(err)
	}
	q := &f.Ranks[2].Point
	line := fmt.Sprintf("3 client rank(s); Jain's index %.4f, slowest rank 3 (%.0f RPC/s); p50 %s–%s µs, p99 %s–%s µs across ranks; skew 1.50 µs, overlap 100.0%%; failed ranks: none",
		f.Jain, q.Throughput.RPCPerSec, micros(&f.P50Spread[0]), micros(&f.P50Spread[1]), micros(&f.P99Spread[0]), micros(&f.P99Spread[1]))
	row := fmt.Sprintf("| 3 | node3 | node0:20049 | 1 | 1000 | %s | %s | %s | %.0f | 0 | 0.00 ± 0.00 |",
		micros(q.RTT.P50), micros(q.RTT.P99), micros(q.RTT.Max), q.Throughput.RPCPerSec)
	md, html := read(t, m), read(t, h)
	for _, want := range []string{"### Client ranks", "**point 1 (ECHO 64/64 B, inline 4096, depth 1 × 3 connections)**: " + line, row} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{`id="run-1-ranks"`, strings.ReplaceAll(line, "'", "&#39;"), "<td>node3</td>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	s, _ := testRuns(t)
	_, m, err = Write([]*results.Run{s}, dir, Config{NoCharts: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(m); strings.Contains(string(b), "Client ranks") {
		t.Error("a run that is not a fan-in has a client ranks section")
	}
}
