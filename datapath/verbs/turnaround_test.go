package verbs

import (
	"testing"
	"time"
)

func TestTurnaroundQuantileSub(t *testing.T) {
	var was, now Turnaround
	if now.Quantile(0.5) != 0 || now.Mean() != 0 {
		t.Fatalf("empty: quantile %v, mean %v; want 0", now.Quantile(0.5), now.Mean())
	}
	was.Hist[3] = 5 // measured before: must not count
	now.Hist[3] = 5
	now.Hist[2] = 1 // 200 to 300 ns
	now.Hist[7] = 2 // 700 to 800 ns
	now.Hist[HistBuckets-1] = 1
	now.Count, now.Total = 9, 9*time.Microsecond
	was.Count, was.Total = 5, 2*time.Microsecond
	d := now.Sub(was)
	if d.Count != 4 || d.Total != 7*time.Microsecond || d.Mean() != 1750*time.Nanosecond {
		t.Fatalf("Sub: count %d, total %v, mean %v; want 4, 7µs, 1.75µs", d.Count, d.Total, d.Mean())
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0, 300 * time.Nanosecond},
		{0.25, 300 * time.Nanosecond},
		{0.5, 800 * time.Nanosecond},
		{0.75, 800 * time.Nanosecond},
		{0.76, HistBuckets * HistBucket},
		{1, HistBuckets * HistBucket},
	} {
		if got := d.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
}
