package verbs

import (
	"math"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Turnaround is what one CQ's turnaround probe (Config.Turnarounds) measured. A turnaround
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
	// Hist counts them in buckets of HistBucket (Hist[i]: from i to i+1 buckets); the last
	// bucket also holds all longer ones.
	Hist [HistBuckets]uint64
}

// The turnaround histogram's shape: fine enough to tell a hot turnaround of a few hundred
// nanoseconds from a disturbed one, up to 25.6 µs.
const (
	HistBuckets = 256
	HistBucket  = 100 * time.Nanosecond
)

// Quantile is the turnaround that a fraction q of them did not exceed, to HistBucket (the
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
			return time.Duration(i+1) * HistBucket
		}
	}
	return HistBuckets * HistBucket
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

// Mean is the mean turnaround (0 when none was measured).
func (t Turnaround) Mean() time.Duration {
	if t.Count == 0 {
		return 0
	}
	return t.Total / time.Duration(t.Count)
}

// turnarounder is the verbs CQ's view of its probe.
type turnarounder interface {
	turnarounds() (Turnaround, bool)
}

// Turnarounds returns what cq's turnaround probe measured; ok is false when cq is not a
// verbs CQ or its probe is off. Call it while no goroutine polls cq.
func Turnarounds(cq datapath.CQ) (t Turnaround, ok bool) {
	q, ok := cq.(turnarounder)
	if !ok {
		return Turnaround{}, false
	}
	return q.turnarounds()
}
