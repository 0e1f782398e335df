package results_test

import (
	"time"

	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Merging the summaries of parts gives what recording every sample in one place gives: the
// same count, extremes and histogram, so the same percentiles; mean and stdev pooled.
var zeroTime time.Time

func TestMergeSummariesIsExact(t *testing.T) {
	all := results.NewRecorder()
	var sums []results.Summary
	var hists []string
	for part := range 3 {
		r := results.NewRecorder()
		for i := range 5000 * (part + 1) {
			v := int64(1000*(part+1) + (i*7919)%(3000*(part+1)))
			r.Record(rpcproto.Short, rpcproto.Short, v, 0)
			all.Record(rpcproto.Short, rpcproto.Short, v, 0)
		}
		p, err := results.Summarize(results.Params{}, zeroTime, zeroTime, r)
		if err != nil {
			t.Fatal(err)
		}
		sums, hists = append(sums, p.RTT), append(hists, p.Histogram)
	}
	want, err := results.Summarize(results.Params{}, zeroTime, zeroTime, all)
	if err != nil {
		t.Fatal(err)
	}
	got, hist, err := results.MergeSummaries(sums, hists)
	if err != nil {
		t.Fatal(err)
	}
	if hist != want.Histogram {
		t.Error("merged histogram differs from the histogram of all samples")
	}
	eq := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	if got.Count != want.RTT.Count || !eq(got.Min, want.RTT.Min) || !eq(got.Max, want.RTT.Max) || !eq(got.P50, want.RTT.P50) ||
		!eq(got.P99, want.RTT.P99) || !eq(got.P999, want.RTT.P999) || !eq(got.P9999, want.RTT.P9999) {
		t.Errorf("merged %+v, want %+v", got, want.RTT)
	}
	if d := *got.Mean - *want.RTT.Mean; d < -1 || d > 1 {
		t.Errorf("mean %d, want %d", *got.Mean, *want.RTT.Mean)
	}
	if d := *got.Stdev - *want.RTT.Stdev; d < -1 || d > 1 {
		t.Errorf("stdev %d, want %d", *got.Stdev, *want.RTT.Stdev)
	}
	if _, _, err := results.MergeSummaries(sums[:1], hists[1:2]); err == nil {
		t.Error("a histogram whose count is not its summary's merged")
	}
}
