package datapath

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
	now.Hist[TurnaroundBuckets-1] = 1
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
		{0.76, TurnaroundBuckets * TurnaroundBucket},
		{1, TurnaroundBuckets * TurnaroundBucket},
	} {
		if got := d.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
}

func TestTurnaroundAdd(t *testing.T) {
	var sum Turnaround
	a := Turnaround{Count: 2, Total: 3 * time.Microsecond, Min: time.Microsecond, Max: 2 * time.Microsecond, Post: time.Microsecond}
	a.Hist[10], a.Hist[20] = 1, 1
	b := Turnaround{Count: 1, Total: 500 * time.Nanosecond, Min: 500 * time.Nanosecond, Max: 500 * time.Nanosecond}
	b.Hist[5] = 1
	sum.Add(&a)
	sum.Add(&Turnaround{}) // a CQ that measured nothing changes nothing, its Min included
	sum.Add(&b)
	if sum.Count != 3 || sum.Total != 3500*time.Nanosecond || sum.Min != 500*time.Nanosecond || sum.Max != 2*time.Microsecond ||
		sum.Post != time.Microsecond || sum.Hist[5] != 1 || sum.Hist[10] != 1 || sum.Hist[20] != 1 {
		t.Fatalf("sum %+v", sum)
	}
	if q := sum.Quantile(0.5); q != 1100*time.Nanosecond {
		t.Fatalf("median of the sum %v, want 1.1µs", q)
	}
}
