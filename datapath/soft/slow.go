package soft

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// slowdown is Config.CompletionDelay, Config.Bandwidth and Config.PostCost at work: a test
// instrument that makes a known effect (for measuring how well a regression gate detects
// one), not a model of any hardware. Every provider instance has at most one; nil when all
// are off, which costs the hot path one nil check per post, push and poll.
type slowdown struct {
	delay     int64   // nanoseconds added to every completion
	nsPerByte float64 // the link's time per byte; 0: no bandwidth cap
	postSteps int     // chain steps the poster runs per send queue work request
	// busy is when the link has carried every byte posted so far (nanotime).
	busy atomic.Int64
}

func newSlowdown(delay time.Duration, bitsPerSecond float64, postCost time.Duration) *slowdown {
	if delay <= 0 && bitsPerSecond <= 0 && postCost <= 0 {
		return nil
	}
	s := &slowdown{delay: max(0, int64(delay))}
	if postCost > 0 {
		s.postSteps = max(1, int(math.Round(float64(postCost)*stepsPerNs())))
	}
	if bitsPerSecond > 0 {
		s.nsPerByte = 8e9 / bitsPerSecond
	}
	return s
}

// holds says whether the slowdown holds completions back (a delay or a link), so that CQs
// must stamp and check them; a post cost alone leaves the CQs as they are.
func (s *slowdown) holds() bool { return s != nil && (s.delay > 0 || s.nsPerByte > 0) }

// spin is the post cost of n work requests: the poster runs the host probe's dependent
// chain (datapath.Chain) that long, as a slower driver or adapter would take per post. The
// added time is the poster's own, so the effect on a pipeline bound by its pollers grows in
// proportion, where a held completion's effect depends on what else the poller had to do
// meanwhile. A chain, not the clock: two clock reads would cost more than the smallest cost
// asked.
func (s *slowdown) spin(n int) {
	if s.postSteps == 0 || n == 0 {
		return
	}
	spinSink.Store(datapath.Chain(n * s.postSteps))
}

// spinSink keeps the chain's result, so that the compiler cannot drop it.
var spinSink atomic.Uint64

// stepsPerNs is how many chain steps this machine runs per nanosecond, measured once per
// process: the fastest of 5 runs of 2^18 steps (a millisecond or so).
var stepsPerNs = sync.OnceValue(func() float64 { return 1 / datapath.ChainStepNs(1<<18, 5) })

// charge puts n bytes posted now on the link: it carries them after what it already has.
func (s *slowdown) charge(n int) {
	if s.nsPerByte == 0 || n == 0 {
		return
	}
	d := int64(float64(n) * s.nsPerByte)
	for {
		b := s.busy.Load()
		if s.busy.CompareAndSwap(b, max(b, nanotime())+d) {
			return
		}
	}
}

// due is when a completion pushed now may be polled: once the link has carried every byte
// posted before it, and the delay after that.
func (s *slowdown) due() int64 { return max(nanotime(), s.busy.Load()) + s.delay }

var epoch = time.Now()

// nanotime is the slowdown's monotonic clock (a variable for tests).
var nanotime = func() int64 { return int64(time.Since(epoch)) }
