package session

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

func TestSamplerIntervals(t *testing.T) {
	short, long := rpcproto.Short, rpcproto.Long
	cls := func(s, l uint64) (c [rpcproto.NumKinds]uint64) { c[short], c[long] = s, l; return c }
	// Readings at 40 (warm-up: nothing measured yet), 140, 240 and, after the phase
	// [100, 250] and its drain, at 400. The first interval starts with the phase, not at
	// the first reading inside it; the drain's RPCs count in the last.
	series := func(every time.Duration) []results.Interval {
		var l workloads.Live
		now := int64(0)
		s := newSampler([]*workloads.Live{&l}, func() int64 { return now }, every)
		s.samples = []sample{{t: 40}, {t: 140, done: 10, bytes: 1000, classes: cls(10, 0)},
			{t: 240, done: 30, bytes: 3000, errs: 1, classes: cls(22, 7)}, {t: 300, done: 33, bytes: 3300, errs: 1, classes: cls(25, 7)}}
		now = 400
		l.MDone.Store(35)
		l.MBytes.Store(3500)
		l.MErrors.Store(1)
		l.MClasses[short].Store(26)
		l.MClasses[long].Store(8)
		l.Done.Store(1000) // warm-up included: not the series' business
		return s.end(100, 250)
	}
	// Sampled every 20 ns: the last interval (10 ns) stands as it is.
	want := []results.Interval{
		{OffsetNs: 0, DurationNs: 40, RPCs: 10, PayloadBytes: 1000, Classes: map[string]uint64{"short": 10}},
		{OffsetNs: 40, DurationNs: 100, RPCs: 20, PayloadBytes: 2000, Errors: 1, Classes: map[string]uint64{"short": 12, "long": 7}},
		{OffsetNs: 140, DurationNs: 10, RPCs: 5, PayloadBytes: 500, Classes: map[string]uint64{"short": 4, "long": 1}},
	}
	if got := series(20); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// Sampled every 100 ns: a last interval under half of that joins the one before, so
	// that it does not draw as a spike; the counts still add up.
	want = []results.Interval{
		{OffsetNs: 0, DurationNs: 40, RPCs: 10, PayloadBytes: 1000, Classes: map[string]uint64{"short": 10}},
		{OffsetNs: 40, DurationNs: 110, RPCs: 25, PayloadBytes: 2500, Errors: 1, Classes: map[string]uint64{"short": 16, "long": 8}},
	}
	if got := series(100); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

type kindErr struct{}

func (kindErr) Error() string { return "k" }

func (kindErr) Kind() string { return "custom" }

func TestErrorKind(t *testing.T) {
	// The transport's failures say their kind, also when wrapped; anything else is "rpc".
	broken := &rpcrdma.ConnError{Op: "receive", Err: errors.New("peer disconnected")}
	for err, want := range map[error]string{
		rpcrdma.ErrVerify: "verify", fmt.Errorf("rpc 7: %w", rpcrdma.ErrVerify): "verify",
		rpcrdma.ErrChunkRejected: "err_chunk", rpcrdma.ErrVersionRejected: "err_vers", rpcrdma.ErrBadReply: "bad_reply",
		&rpcrdma.ReplyError{What: "bad discriminator"}: "bad_reply", rpcrdma.ErrRPCRejected: "rpc_rejected",
		rpcrdma.ErrSourceTooBig: "source_too_big", broken: "broken", fmt.Errorf("x: %w", broken): "broken",
		kindErr{}: "custom", errors.New("x"): "rpc",
	} {
		if got := ErrorKind(err); got != want {
			t.Errorf("ErrorKind(%v) = %q, want %q", err, got, want)
		}
	}
}

// countDisplay counts its Updates and says when each came.
type countDisplay struct {
	every   time.Duration
	updates atomic.Int32
	updated chan struct{}
}

func (d *countDisplay) Every() time.Duration { return d.every }
func (d *countDisplay) Update(int64) {
	d.updates.Add(1)
	select {
	case d.updated <- struct{}{}:
	default:
	}
}
func (d *countDisplay) End() {}

// One ticker serves the sampler and the display, each at its own period; once stopped,
// neither is read again.
func TestWatchServesSamplerAndDisplay(t *testing.T) {
	var l workloads.Live
	s := newSampler([]*workloads.Live{&l}, workloads.Now, time.Millisecond)
	d := &countDisplay{every: 4 * time.Millisecond, updated: make(chan struct{}, 1)}
	stop := watch(s, d, workloads.Now)
	for range 3 {
		select {
		case <-d.updated:
		case <-time.After(10 * time.Second):
			stop()
			t.Fatal("the display was never updated")
		}
	}
	stop()
	n, u := len(s.samples), d.updates.Load()
	if n == 0 || u < 3 {
		t.Fatalf("%d readings, %d updates", n, u)
	}
	time.Sleep(20 * time.Millisecond)
	if len(s.samples) != n || d.updates.Load() != u {
		t.Fatalf("read after stop: %d readings (was %d), %d updates (was %d)", len(s.samples), n, d.updates.Load(), u)
	}
	// Neither reader: no goroutine, and stop still returns.
	watch(nil, nil, workloads.Now)()
}
