package workloads

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"math/bits"
	"sync/atomic"
	"time"
)

// Live is what a running Driver publishes for a progress display: a completion counter and a
// coarse latency histogram (8 buckets per power of two, about 12% wide), updated with atomic
// adds on the Driver's goroutine and read from any other. It is for watching a run, not for
// results: the numbers that count come from the Recorder's HDR histogram. The zero value is
// ready; one Live per Driver keeps the cache lines uncontended.
type Live struct {
	// Done counts finished RPCs (warm-up included, errors included), Bytes the payload of
	// the successful ones, Errors the failed ones; each is added to once per poll iteration.
	Done, Bytes, Errors atomic.Uint64
	// MDone, MBytes and MErrors count the same of the measured RPCs only (sent at or after
	// the end of the warm-up), as Stats does: a throughput time series built from them
	// starts with the measured phase and adds up to the point's totals.
	MDone, MBytes, MErrors atomic.Uint64
	// MClasses counts the measured successful RPCs by message class (RPCClass of the call's
	// and the reply's), for per-class throughput series of mixed workloads.
	MClasses [rpcproto.NumKinds]atomic.Uint64
	// Begin and Measure are the clock readings (ns) when the run began and when its measured
	// phase begins.
	Begin, Measure atomic.Int64
	hist           [liveBuckets]atomic.Uint64
}

const liveBuckets = 16 + 60*8

func (l *Live) begin(now, measure int64) {
	l.Begin.Store(now)
	l.Measure.Store(measure)
}

func (l *Live) record(ns int64) { l.hist[liveBucket(ns)].Add(1) }

func liveBucket(ns int64) int {
	if ns < 16 {
		if ns < 0 {
			return 0
		}
		return int(ns)
	}
	shift := bits.Len64(uint64(ns)) - 4
	return 16 + (shift-1)*8 + int(uint64(ns)>>shift) - 8
}

// liveValue is the middle of bucket i.
func liveValue(i int) int64 {
	if i < 16 {
		return int64(i)
	}
	shift := (i-16)/8 + 1
	lo := int64(8+(i-16)%8) << shift
	return lo + (int64(1)<<shift)/2
}

// LiveHist is a snapshot of Live histograms, for quantiles over an interval.
type LiveHist [liveBuckets]uint64

// AddTo adds l's histogram into h.
func (l *Live) AddTo(h *LiveHist) {
	for i := range l.hist {
		h[i] += l.hist[i].Load()
	}
}

// Sub returns h - o: the RTTs recorded between snapshot o and snapshot h.
func (h *LiveHist) Sub(o *LiveHist) LiveHist {
	var d LiveHist
	for i := range h {
		d[i] = h[i] - o[i]
	}
	return d
}

// Quantile returns the approximate q-quantile (0 < q <= 1) and whether there were samples.
func (h *LiveHist) Quantile(q float64) (time.Duration, bool) {
	var total uint64
	for _, n := range h {
		total += n
	}
	if total == 0 {
		return 0, false
	}
	want := uint64(q*float64(total) + 0.5)
	want = max(want, 1)
	var cum uint64
	for i, n := range h {
		cum += n
		if cum >= want {
			return time.Duration(liveValue(i)), true
		}
	}
	return time.Duration(liveValue(liveBuckets - 1)), true
}
