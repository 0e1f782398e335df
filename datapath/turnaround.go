package datapath

import (
	"math"
	"time"
)

// Turnaround is what one CQ's turnaround probe measured (TurnaroundProber). A turnaround
// starts when a poll returns completions and ends when the next poll finds work staged
// (datapath.Deferrer) and posts it: it is the time the caller spent, in Go, between seeing
// the completions and handing back what they caused, the cgo return and call included. For
// a depth-1 ping-pong it is each end's share of the round trip that is not the device's,
// the kernel's or the wire's.
type Turnaround struct {
	// Count is how many turnarounds were measured.
	Count uint64
	// Total, Min and Max are their sum, shortest and longest.
	Total, Min, Max time.Duration
	// Post is the time the posts that ended them took in C (ibv_post_recv and
	// ibv_post_send, the doorbell included), summed.
	Post time.Duration
	// Hist counts them in buckets of TurnaroundBucket (Hist[i]: from i to i+1 buckets); the last
	// bucket also holds all longer ones.
	Hist [TurnaroundBuckets]uint64
}

// The turnaround histogram's shape: fine enough to tell a hot turnaround of a few hundred
// nanoseconds from a disturbed one, up to 25.6 µs.
const (
	TurnaroundBuckets = 256
	TurnaroundBucket  = 100 * time.Nanosecond
)

// Quantile is the turnaround that a fraction q of them did not exceed, to TurnaroundBucket (the
// upper edge of its bucket); 0 when none was measured.
func (t Turnaround) Quantile(q float64) time.Duration {
	var n uint64
	for _, c := range t.Hist {
		n += c
	}
	if n == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(n)))
	var seen uint64
	for i, c := range t.Hist {
		if seen += c; seen >= max(want, 1) {
			return time.Duration(i+1) * TurnaroundBucket
		}
	}
	return TurnaroundBuckets * TurnaroundBucket
}

// Sub is what t measured since an earlier reading of the same CQ, was; Min and Max stay
// t's (they are not differences).
func (t Turnaround) Sub(was Turnaround) Turnaround {
	d := t
	d.Count -= was.Count
	d.Total -= was.Total
	d.Post -= was.Post
	for i := range d.Hist {
		d.Hist[i] -= was.Hist[i]
	}
	return d
}

// Add adds o into t, as for turnarounds of several CQs measured side by side.
func (t *Turnaround) Add(o *Turnaround) {
	if o.Count > 0 && (t.Count == 0 || o.Min < t.Min) {
		t.Min = o.Min
	}
	t.Max = max(t.Max, o.Max)
	t.Count += o.Count
	t.Total += o.Total
	t.Post += o.Post
	for i := range t.Hist {
		t.Hist[i] += o.Hist[i]
	}
}

// Mean is the mean turnaround (0 when none was measured).
func (t Turnaround) Mean() time.Duration {
	if t.Count == 0 {
		return 0
	}
	return t.Total / time.Duration(t.Count)
}

// TurnaroundProber is a CQ with a turnaround probe (the verbs provider's, switched on by its
// Config.Turnarounds). The probe costs two clock reads per turnaround, so it is off unless
// asked for, and figures taken with it are not mixed with those taken without.
type TurnaroundProber interface {
	// Turnarounds returns what the probe measured since the CQ was created; ok is false
	// when the probe is off. Call it from the goroutine that polls the CQ: the probe's
	// counters are written by the polls, without locks.
	Turnarounds() (t Turnaround, ok bool)
}

// Turnarounds returns what cq's turnaround probe measured; ok is false when cq has no probe
// or it is off. Call it from the goroutine that polls cq.
func Turnarounds(cq CQ) (t Turnaround, ok bool) {
	p, ok := cq.(TurnaroundProber)
	if !ok {
		return Turnaround{}, false
	}
	return p.Turnarounds()
}
