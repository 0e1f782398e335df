package soft

import (
	"sync/atomic"
	"time"
)

// slowdown is Config.CompletionDelay and Config.Bandwidth at work: a test instrument that
// makes a known effect (for measuring how well a regression gate detects one), not a model
// of any hardware. Every provider instance has at most one; nil when both are off, which
// costs the hot path one nil check per post, push and poll.
type slowdown struct {
	delay     int64   // nanoseconds added to every completion
	nsPerByte float64 // the link's time per byte; 0: no bandwidth cap
	// busy is when the link has carried every byte posted so far (nanotime).
	busy atomic.Int64
}

func newSlowdown(delay time.Duration, bitsPerSecond float64) *slowdown {
	if delay <= 0 && bitsPerSecond <= 0 {
		return nil
	}
	s := &slowdown{delay: max(0, int64(delay))}
	if bitsPerSecond > 0 {
		s.nsPerByte = 8e9 / bitsPerSecond
	}
	return s
}

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
