package results_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

// thresholdRuns are n runs of 4 KiB ECHOs at 1 KiB (chunked: slower) and 16 KiB (short) and
// of 64 B ECHOs, short at both.
func thresholdRuns(t *testing.T, n int) []*results.Run {
	var runs []*results.Run
	for i := range n {
		runs = append(runs, resultstest.Sweep{Seed: uint64(i + 1), Thresholds: []int{1024, 16384}, Sizes: []int{64, 4096}, RPCs: 2000}.Run(t))
	}
	return runs
}

func TestBestThresholds(t *testing.T) {
	cs := results.BestThresholds(thresholdRuns(t, 5), 0)
	if len(cs) != 2*len(results.ThresholdMetrics) {
		t.Fatalf("%d choices, want a choice per size and metric: %+v", len(cs), cs)
	}
	for _, c := range cs {
		if c.Compared != 2 || c.BestN != 5 || c.RunnerUpN != 5 || !c.NoiseEstimate || c.Params.InlineThreshold != 0 {
			t.Errorf("%s %s: %+v", c.Label, c.Metric, c)
		}
		if c.Params.CallBytes != 4096 {
			continue
		}
		// Short at 16k beats chunked at 1k, clearly, in every run.
		if c.Best != 16384 || c.RunnerUp != 1024 || !c.Beyond || !(c.Diff > 0) || !strings.HasPrefix(c.Verdict(), "yes (p=") {
			t.Errorf("4 KiB %s: best %d runner-up %d beyond %v diff %v verdict %q", c.Metric, c.Best, c.RunnerUp, c.Beyond, c.Diff, c.Verdict())
		}
		if c.Label != "ECHO 4k/4k depth 1" {
			t.Errorf("label %q", c.Label)
		}
	}
	// One run per threshold cannot tell noise from a difference: it says so.
	for _, c := range results.BestThresholds(thresholdRuns(t, 1), 0) {
		if c.NoiseEstimate || c.Beyond || !strings.HasPrefix(c.Verdict(), "no noise estimate (1 and 1 runs; need 4 each)") {
			t.Errorf("%s %s with one run: %q", c.Label, c.Metric, c.Verdict())
		}
	}
	var b bytes.Buffer
	if err := results.WriteThresholds(&b, cs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ECHO 4k/4k depth 1") || !strings.Contains(b.String(), "best threshold") ||
		strings.Count(b.String(), "\n") != 2+1+len(cs) {
		t.Errorf("table:\n%s", b.String())
	}
}
