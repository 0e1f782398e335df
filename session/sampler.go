package session

import (
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// sampler records a point's throughput time series (results.Point.Intervals) from the
// pollers' Live counters of measured RPCs: the point's ticker (watch) takes a reading every
// interval, and the series keeps the differences. Like the progress display it never
// touches the hot path beyond Live's atomics. The series starts at the measured phase's
// start and its counts add up to the point's: warm-up RPCs are not in the measured
// counters, and what completes while draining counts in the last interval.
type sampler struct {
	lives   []*workloads.Live
	clock   func() int64
	every   time.Duration
	samples []sample
}

// sample is one reading of the summed measured counters at clock time t: successful RPCs,
// their payload bytes, failed RPCs.
type sample struct {
	t                 int64
	done, bytes, errs uint64
	classes           [rpcproto.NumKinds]uint64
}

func newSampler(lives []*workloads.Live, clock func() int64, every time.Duration) *sampler {
	return &sampler{lives: lives, clock: clock, every: every}
}

func (s *sampler) read() sample {
	r := sample{t: s.clock()}
	for _, l := range s.lives {
		r.done += l.MDone.Load()
		r.bytes += l.MBytes.Load()
		r.errs += l.MErrors.Load()
		for k := range r.classes {
			r.classes[k] += l.MClasses[k].Load()
		}
	}
	return r
}

// take keeps a reading (watch's goroutine, until it stops).
func (s *sampler) take() { s.samples = append(s.samples, s.read()) }

// watch reads the pollers' Live counters for the sampler and the display (either may be
// nil) on one ticker at the shorter of their periods, in one goroutine, until the returned
// stop, which returns once the goroutine is done.
func watch(samp *sampler, d Display, clock func() int64) (stop func()) {
	var sEvery, dEvery time.Duration
	if samp != nil {
		sEvery = samp.every
	}
	if d != nil {
		dEvery = d.Every()
	}
	tick := sEvery
	if tick <= 0 || dEvery > 0 && dEvery < tick {
		tick = dEvery
	}
	if tick <= 0 {
		return func() {}
	}
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(tick)
		defer t.Stop()
		// Each reader runs at the first tick at least its period (less half a tick, for
		// the ticker's jitter) after its last run.
		sLast := clock()
		dLast := sLast
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			now := clock()
			if sEvery > 0 && now-sLast >= int64(sEvery-tick/2) {
				samp.take()
				sLast = now
			}
			if dEvery > 0 && now-dLast >= int64(dEvery-tick/2) {
				d.Update(now)
				dLast = now
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// end takes a last reading (once watch stopped) and returns the intervals of the measured phase
// [from, to] (clock ns), with offsets relative to from: the first starts at from, each
// reading inside the phase ends one, and the last ends at to with everything measured since
// the reading before (the drain included), so the counts add up to the last reading's.
func (s *sampler) end(from, to int64) []results.Interval {
	last := s.read()
	out := []results.Interval{}
	if to <= from && last.done == 0 && last.errs == 0 {
		return out
	}
	iv := func(a, b sample, end int64) results.Interval {
		r := results.Interval{OffsetNs: a.t - from, DurationNs: end - a.t,
			RPCs: b.done - a.done, PayloadBytes: b.bytes - a.bytes, Errors: b.errs - a.errs}
		for k := range b.classes {
			if n := b.classes[k] - a.classes[k]; n > 0 {
				if r.Classes == nil {
					r.Classes = map[string]uint64{}
				}
				r.Classes[rpcproto.Kind(k).String()] = n
			}
		}
		return r
	}
	prev := sample{t: from} // the measured counters are zero until the phase begins
	for _, r := range s.samples {
		if r.t <= prev.t || r.t >= to {
			continue
		}
		out = append(out, iv(prev, r, r.t))
		prev = r
	}
	out = append(out, iv(prev, last, max(to, prev.t)))
	// A last interval much shorter than the others (the phase rarely ends on a tick) would
	// draw as a spike of a few RPCs over a few microseconds: it joins the one before.
	if n := len(out); n >= 2 && out[n-1].DurationNs < int64(s.every)/2 {
		a, b := &out[n-2], out[n-1]
		a.DurationNs += b.DurationNs
		a.RPCs += b.RPCs
		a.PayloadBytes += b.PayloadBytes
		a.Errors += b.Errors
		for k, v := range b.Classes {
			if a.Classes == nil {
				a.Classes = map[string]uint64{}
			}
			a.Classes[k] += v
		}
		out = out[:n-1]
	}
	return out
}
