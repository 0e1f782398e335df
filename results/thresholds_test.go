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
		if c.Compared != 2 || c.Candidates[0].N != 5 || c.Candidates[1].N != 5 || !c.Bounded || c.Params.InlineThreshold != 0 || len(c.Versus) != 1 {
			t.Errorf("%s %s: %+v", c.Label, c.Metric, c)
		}
		// 6 comparisons at 0.05: each interval at 1 - 2*0.05/6.
		if c.Confidence < 0.983 || c.Confidence > 0.984 {
			t.Errorf("confidence %v", c.Confidence)
		}
		if c.Params.CallBytes != 4096 {
			// 64 B is short at both thresholds: the same thing measured twice, no winner.
			if c.Clear || !strings.HasPrefix(c.Verdict(), "no clear winner among ") || len(c.Tied) != 2 {
				t.Errorf("64 B %s: %q", c.Metric, c.Verdict())
			}
			continue
		}
		// Short at 16k beats chunked at 1k, clearly, in every run.
		v := c.Versus[0]
		worse := v.Lo > 1
		if c.Metric.HigherIsBetter() {
			worse = v.Hi < 1
		}
		if c.Candidates[0].Threshold != 16384 || c.Candidates[1].Threshold != 1024 || !c.Clear || !worse || c.Verdict() != "16k, beyond noise" {
			t.Errorf("4 KiB %s: %+v %q", c.Metric, c, c.Verdict())
		}
		if c.Label != "ECHO 4k/4k depth 1" {
			t.Errorf("label %q", c.Label)
		}
	}
	// One run per threshold cannot tell noise from a difference: it says so.
	for _, c := range results.BestThresholds(thresholdRuns(t, 1), 0) {
		if c.Bounded || c.Clear || c.Verdict() != "cannot tell: 1 run(s) of a threshold; need >= 5 each" {
			t.Errorf("%s %s with one run: %q", c.Label, c.Metric, c.Verdict())
		}
	}
	var b bytes.Buffer
	if err := results.WriteThresholds(&b, cs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ECHO 4k/4k depth 1") || !strings.Contains(b.String(), "runner-up vs best [interval]") ||
		!strings.Contains(b.String(), "at 98.33% confidence") || strings.Count(b.String(), "\n") != 1+1+len(cs) {
		t.Errorf("table:\n%s", b.String())
	}
}

// Disturbed runs count in the answer only when they must, and the answer says so.
func TestBestThresholdsDisturbed(t *testing.T) {
	runs := thresholdRuns(t, 5)
	for _, r := range runs {
		disturb(r, 60)
	}
	var b bytes.Buffer
	if err := results.WriteThresholdsOf(&b, runs, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "16k, beyond noise (rests on 10 disturbed run(s))") ||
		!strings.Contains(b.String(), "data quality: 20 of 20 point(s) disturbed: other processes used more than 10% of the CPUs (20); other processes used up to 60% of the host CPU time") {
		t.Errorf("all disturbed:\n%s", b.String())
	}
	runs = append(runs, thresholdRuns(t, 5)...) // 5 clean runs more: enough alone
	for _, c := range results.BestThresholds(runs, 0) {
		if c.Excluded != 10 || c.Disturbed != 0 || c.Candidates[0].N != 5 {
			t.Errorf("%s %s: excluded %d disturbed %d n %d", c.Label, c.Metric, c.Excluded, c.Disturbed, c.Candidates[0].N)
		}
	}
}
