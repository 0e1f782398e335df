package workloads_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads/workloadstest"
)

// samples is a Recorder keeping every sample in a preallocated slice.
type samples struct {
	s     []workloads.Sample
	fails int
}

func (r *samples) Record(s workloads.Sample) {
	if len(r.s) < cap(r.s) {
		r.s = append(r.s, s)
	}
}

func (r *samples) Fail(p int, err error) { r.fails++ }

func normalized(t testing.TB, c workloads.Config) workloads.Config {
	t.Helper()
	c, err := c.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runOnClock runs a Driver for c over client, on clock, to its end, and returns its Stats.
func runOnClock(t *testing.T, c workloads.Config, client workloads.Client, clock *workloadstest.Clock, live *workloads.Live) workloads.Stats {
	t.Helper()
	d, err := workloads.NewDriver(c, 0, client, nil, live)
	if err != nil {
		t.Fatal(err)
	}
	d.Clock = clock.Now
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// fakeRun builds a Fake on a manual clock and a Driver over it.
func fakeRun(t testing.TB, c workloads.Config, latency, tick time.Duration) (*workloadstest.Fake, *workloads.Driver, *samples) {
	t.Helper()
	c = normalized(t, c)
	f := workloadstest.New(1 << 16)
	f.Clock = new(workloadstest.Clock)
	f.Latency, f.Tick = latency, tick
	rec := &samples{s: make([]workloads.Sample, 0, 1<<20)}
	d, err := workloads.NewDriver(c, 0, f, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Clock = f.Clock.Now
	d.IdleSleep = -1
	return f, d, rec
}

func TestClosedLoopKeepsDepthOutstanding(t *testing.T) {
	const depth = 8
	c := workloads.Config{Prog: benchprog.Prog,
		Mix: workloads.Only("echo", workloads.Fixed(64)), Depth: depth,
		Duration: workloads.Duration(10 * time.Millisecond), Warmup: workloads.Duration(time.Millisecond),
	}
	f, d, rec := fakeRun(t, c, 10*time.Microsecond, time.Microsecond)
	end := int64(11 * time.Millisecond)
	calls, wrong := 0, 0
	f.Observe = func(f *workloadstest.Fake) {
		// Progress is called after the submit phase: before the deadline the queue must be
		// full every time.
		if f.Clock.Now() < end {
			calls++
			if f.Outstanding() != depth {
				wrong++
			}
		}
	}
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || wrong != 0 {
		t.Fatalf("%d of %d polls saw a queue not at depth %d", wrong, calls, depth)
	}
	if f.MaxOutstanding() != depth {
		t.Fatalf("max outstanding %d, want %d", f.MaxOutstanding(), depth)
	}
	// Each RPC takes exactly 10 µs (latency, polled every 1 µs) with 8 in flight: 8 per 10 µs
	// over 10 ms is 8000, give or take the queue in flight at each edge.
	if st.Completed < 8000-depth || st.Completed > 8000+depth {
		t.Fatalf("completed %d, want 8000±%d", st.Completed, depth)
	}
	if st.WarmupCompleted < 800-depth || st.WarmupCompleted > 800+depth {
		t.Fatalf("warm-up completed %d, want 800±%d", st.WarmupCompleted, depth)
	}
	if uint64(len(rec.s)) != st.Completed || st.Completed != st.Sent || st.Abandoned != 0 {
		t.Fatalf("recorded %d, completed %d, sent %d, abandoned %d", len(rec.s), st.Completed, st.Sent, st.Abandoned)
	}
	for _, s := range rec.s {
		if s.RTT != 10*time.Microsecond || s.Proc != benchprog.ProcEcho || s.Call != rpcproto.Short || s.Reply != rpcproto.Short || s.Payload != 128 {
			t.Fatalf("sample %+v, want echo/short/10µs", s)
		}
	}
	if st.Procs[benchprog.ProcEcho] != st.Completed || st.Classes[rpcproto.Short] != st.Completed {
		t.Fatalf("procs %v classes %v", st.Procs, st.Classes)
	}
	if st.CallBytes != 64*st.Completed || st.ReplyBytes != 64*st.Completed {
		t.Fatalf("bytes %d/%d for %d RPCs of 64", st.CallBytes, st.ReplyBytes, st.Completed)
	}
	if el := st.Elapsed(); el < 10*time.Millisecond || el > 10*time.Millisecond+20*time.Microsecond {
		t.Fatalf("elapsed %v", el)
	}
}

// A poll iteration that falls just after the end of the measured phase, with a send due
// before it, sends it late instead of counting it missed: polls 1.3 ms apart at 1000 RPC/s
// straddle the deadline with the send due at 99 ms not yet sent, and none is lost.
func TestOpenLoopSendsWhatWasDueBeforeTheEnd(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog,
		Mix: workloads.Only("null", workloads.Sizes{}), Depth: 8, Rate: 1000,
		Duration: workloads.Duration(100 * time.Millisecond), Warmup: workloads.Duration(-1),
	}
	_, d, _ := fakeRun(t, c, 20*time.Microsecond, 1300*time.Microsecond)
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Missed != 0 || st.Sent != 100 {
		t.Fatalf("sent %d, missed %d: want 100 sent, none missed", st.Sent, st.Missed)
	}
}

// A server that stalls for 100 ms in an open-loop run at 1000 RPC/s must show up as ~100
// late RPCs with latencies up to the stall, not as a handful of slow ones: latency counts
// from the intended send time (coordinated omission corrected).
func TestOpenLoopMeasuresFromIntendedTime(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog,
		Mix: workloads.Only("null", workloads.Sizes{}), Depth: 4, Rate: 1000,
		Duration: workloads.Duration(time.Second), Warmup: workloads.Duration(-1),
	}
	f, d, rec := fakeRun(t, c, 20*time.Microsecond, 10*time.Microsecond)
	f.StallFrom, f.StallUntil = int64(200*time.Millisecond), int64(300*time.Millisecond)
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent != 1000 || st.Completed != 1000 || st.Missed != 0 {
		t.Fatalf("sent %d completed %d missed %d, want 1000/1000/0", st.Sent, st.Completed, st.Missed)
	}
	var slow, max time.Duration
	nslow := 0
	for _, s := range rec.s {
		if s.RTT >= 50*time.Millisecond {
			nslow++
		}
		max = maxDur(max, s.RTT)
		if s.RTT > 100*time.Millisecond+100*time.Microsecond {
			slow = s.RTT
		}
	}
	// Intended sends at 200..249 ms all wait until 300 ms: 50 RPCs at >= 50 ms. Only the 4
	// sent before the stall filled the queue would show without the correction.
	if nslow < 50 || nslow > 52 {
		t.Fatalf("%d RPCs at >= 50 ms, want ~50 (coordinated omission)", nslow)
	}
	if max < 99*time.Millisecond || slow != 0 {
		t.Fatalf("max RTT %v, want ~100 ms and no more", max)
	}
	if st.Late < 90 {
		t.Fatalf("late %d, want ~96 held back by depth 4", st.Late)
	}
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

func TestOpenLoopPacesAtRate(t *testing.T) {
	for _, arrival := range []string{"constant", "poisson"} {
		t.Run(arrival, func(t *testing.T) {
			c := workloads.Config{Prog: benchprog.Prog,
				Mix: workloads.Only("null", workloads.Sizes{}), Depth: 64, Rate: 50000,
				Arrival: arrival, Duration: workloads.Duration(200 * time.Millisecond), Warmup: workloads.Duration(-1),
			}
			f, d, _ := fakeRun(t, c, 5*time.Microsecond, time.Microsecond)
			st, err := d.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// 50k/s for 0.2 s = 10000; Poisson within 3 sigma (sqrt(10000) = 100).
			if st.Sent < 9700 || st.Sent > 10300 {
				t.Fatalf("sent %d, want ~10000", st.Sent)
			}
			if arrival == "constant" && st.Sent != 10000 {
				t.Fatalf("constant arrivals sent %d, want exactly 10000", st.Sent)
			}
			// Poisson arrivals bunch up; constant ones 20 µs apart never overlap a 5 µs RPC.
			if want := map[string]int{"constant": 1, "poisson": 8}[arrival]; f.MaxOutstanding() > want {
				t.Fatalf("max outstanding %d: a fast server should keep up", f.MaxOutstanding())
			}
		})
	}
}

func TestOpenLoopCountsMissedSends(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog,
		Mix: workloads.Only("null", workloads.Sizes{}), Depth: 1, Rate: 10000,
		Duration: workloads.Duration(10 * time.Millisecond), Warmup: workloads.Duration(-1),
	}
	// One RPC at a time, 1 ms each: 10 get through in 10 ms of 100 intended.
	_, d, _ := fakeRun(t, c, time.Millisecond, 10*time.Microsecond)
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent+st.Missed != 100 || st.Sent > 11 {
		t.Fatalf("sent %d + missed %d, want 100 with ~10 sent", st.Sent, st.Missed)
	}
}

func TestMissedIsArithmetic(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog,
		Mix: workloads.Only("null", workloads.Sizes{}), Depth: 1, Rate: 1e9,
		Duration: workloads.Duration(time.Hour), Warmup: workloads.Duration(time.Second),
	}
	// An hour at a billion RPC/s, one RPC taking an hour: the run ends on the deadline with
	// 3.6e12 sends missed, counted without walking the schedule.
	_, d, _ := fakeRun(t, c, 2*time.Hour, time.Hour)
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(3600e9); st.Missed+st.Sent != want {
		t.Fatalf("missed %d + sent %d, want %d", st.Missed, st.Sent, want)
	}
}

func TestCountEndsRun(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog, Depth: 4, Count: 1234, Warmup: workloads.Duration(-1)}
	f, d, rec := fakeRun(t, c, 3*time.Microsecond, time.Microsecond)
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent != 1234 || st.Completed != 1234 || len(rec.s) != 1234 || f.Submitted() != 1234 {
		t.Fatalf("sent %d completed %d recorded %d submitted %d, want 1234", st.Sent, st.Completed, len(rec.s), f.Submitted())
	}
	var byClass uint64
	for _, n := range st.Classes {
		byClass += n
	}
	if byClass != 1234 || st.Classes[rpcproto.Short] == 0 || st.Classes[rpcproto.Chunked] == 0 || st.Classes[rpcproto.Long] == 0 {
		t.Fatalf("classes %v: the NFS mix must hit short, chunked and long", st.Classes)
	}
}

func TestStopFlagDrainsAndMarksInterrupted(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("echo", workloads.Fixed(8)), Depth: 16, Warmup: workloads.Duration(-1)}
	f, d, _ := fakeRun(t, c, 50*time.Microsecond, time.Microsecond)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	polls := 0
	f.Observe = func(*workloadstest.Fake) {
		if polls++; polls == 1000 {
			stop()
		}
	}
	st, err := d.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Interrupted || st.Abandoned != 0 || f.Outstanding() != 0 || st.Sent != st.Completed {
		t.Fatalf("interrupted %v abandoned %d outstanding %d sent %d completed %d", st.Interrupted, st.Abandoned, f.Outstanding(), st.Sent, st.Completed)
	}
}

func TestDrainTimeoutAbandons(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("null", workloads.Sizes{}), Depth: 4,
		Duration: workloads.Duration(time.Millisecond), Warmup: workloads.Duration(-1)}
	f, d, _ := fakeRun(t, c, 10*time.Microsecond, time.Microsecond)
	f.StallFrom, f.StallUntil = int64(500*time.Microsecond), 1<<62 // never answers again
	d.Drain = 5 * time.Millisecond
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Abandoned != 4 {
		t.Fatalf("abandoned %d, want the 4 outstanding", st.Abandoned)
	}
}

// Hurry (a second interrupt) ends a drain that would otherwise wait an hour: the RPCs still
// outstanding are abandoned and the drain marked skipped, what completed is kept.
func TestHurryEndsTheDrain(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("null", workloads.Sizes{}), Depth: 4, Warmup: workloads.Duration(-1)}
	f, d, _ := fakeRun(t, c, 10*time.Microsecond, time.Microsecond)
	f.StallFrom, f.StallUntil = int64(500*time.Microsecond), 1<<62 // never answers again
	d.Drain = time.Hour
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	hurry, hasten := context.WithCancel(context.Background())
	defer hasten()
	d.Hurry = hurry
	polls := 0
	f.Observe = func(*workloadstest.Fake) {
		switch polls++; polls {
		case 1000:
			stop()
		case 1010:
			hasten()
		}
	}
	st, err := d.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Interrupted || !st.DrainSkipped || st.Abandoned != 4 || st.Completed == 0 {
		t.Fatalf("interrupted %v, drain skipped %v, abandoned %d (want the 4 outstanding), completed %d", st.Interrupted, st.DrainSkipped, st.Abandoned, st.Completed)
	}
}

func TestClientFailureEndsRunKeepingStats(t *testing.T) {
	broken := errors.New("connection broken")
	c := workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("null", workloads.Sizes{}), Depth: 2, Warmup: workloads.Duration(-1)}
	f, d, _ := fakeRun(t, c, time.Microsecond, time.Microsecond)
	f.FailAfter, f.Err = 100, broken
	st, err := d.Run(context.Background())
	if !errors.Is(err, broken) {
		t.Fatalf("err %v, want %v", err, broken)
	}
	if st.Completed != 100 {
		t.Fatalf("completed %d, want the 100 before the break", st.Completed)
	}
}

func TestFailedRPCsAreCountedNotTimed(t *testing.T) {
	bad := errors.New("reply checksum mismatch")
	c := workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("source", workloads.Fixed(1<<20)), Depth: 4, Count: 1000, Warmup: workloads.Duration(-1)}
	f, d, rec := fakeRun(t, c, 5*time.Microsecond, time.Microsecond)
	f.FailEvery, f.RPCErr = 10, bad
	st, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Errors != 100 || st.Completed != 900 || len(rec.s) != 900 || rec.fails != 100 || st.FirstErr != bad {
		t.Fatalf("errors %d completed %d recorded %d fails %d first %v", st.Errors, st.Completed, len(rec.s), rec.fails, st.FirstErr)
	}
	if st.ReplyClasses[rpcproto.Chunked] != 900 || st.ReplyBytes != 900<<20 {
		t.Fatalf("reply classes %v bytes %d", st.ReplyClasses, st.ReplyBytes)
	}
}

// classless completes every RPC without saying which class it used.
type classless struct{ tags []uint64 }

func (c *classless) Submit(r *workloads.Request) error { c.tags = append(c.tags, r.Tag); return nil }
func (c *classless) Progress(done []workloads.Completed) (int, error) {
	n := copy(done, make([]workloads.Completed, len(c.tags)))
	for i := range n {
		done[i].Tag = c.tags[i]
	}
	c.tags = c.tags[n:]
	return n, nil
}

// badTag completes a tag that was never submitted.
type badTag struct{ sent bool }

func (b *badTag) Submit(*workloads.Request) error { b.sent = true; return nil }
func (b *badTag) Progress(done []workloads.Completed) (int, error) {
	done[0] = workloads.Completed{Tag: 1 << 40}
	return 1, nil
}

func TestContractViolations(t *testing.T) {
	c := normalized(t, workloads.Config{Prog: benchprog.Prog, Depth: 1, Warmup: workloads.Duration(-1)})
	d, err := workloads.NewDriver(c, 0, &badTag{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Run(context.Background()); !errors.Is(err, workloads.ErrBadTag) {
		t.Fatalf("err %v, want ErrBadTag", err)
	}
	d, err = workloads.NewDriver(c, 0, &classless{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Run(context.Background()); !errors.Is(err, workloads.ErrBadClass) {
		t.Fatalf("err %v, want ErrBadClass", err)
	}
}

func TestDriverAllocatesNothingPerRPC(t *testing.T) {
	for _, rate := range []float64{0, 1e6} {
		c := workloads.Config{Prog: benchprog.Prog, Depth: 32, Count: 20000, Rate: rate, Arrival: "poisson", Warmup: workloads.Duration(-1)}
		f, d, _ := fakeRun(t, c, 2*time.Microsecond, 500*time.Nanosecond)
		d.Clock = f.Clock.Now
		var st workloads.Stats
		allocs := testing.AllocsPerRun(3, func() {
			st, _ = d.Run(context.Background())
		})
		if st.Completed != 20000 {
			t.Fatalf("rate %g: completed %d", rate, st.Completed)
		}
		if allocs != 0 {
			t.Fatalf("rate %g: %v allocations per run of 20000 RPCs", rate, allocs)
		}
	}
}

// benchRun runs d for its b.N RPCs, timed from here.
func benchRun(b *testing.B, d *workloads.Driver) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	st, err := d.Run(context.Background())
	if err != nil || st.Completed != uint64(b.N) {
		b.Fatal(err, st.Completed)
	}
}

func BenchmarkDriverClosedLoop(b *testing.B) {
	c := workloads.Config{Prog: benchprog.Prog, Depth: 32, Count: int64(b.N), Warmup: workloads.Duration(-1)}
	f, d, _ := fakeRun(b, c, 2*time.Microsecond, 500*time.Nanosecond)
	d.Clock = f.Clock.Now
	benchRun(b, d)
}

func TestLiveCountsMatchStats(t *testing.T) {
	c := normalized(t, workloads.Config{Prog: benchprog.Prog, Depth: 8, Count: 5000, Warmup: workloads.NoWarmup})
	f := workloadstest.New(64)
	f.Clock, f.Latency, f.Tick = new(workloadstest.Clock), 3*time.Microsecond, time.Microsecond
	f.FailEvery, f.RPCErr = 7, errors.New("bad reply")
	var live workloads.Live
	st := runOnClock(t, c, f, f.Clock, &live)
	if live.Done.Load() != st.Completed+st.Errors || live.Bytes.Load() != st.CallBytes+st.ReplyBytes || live.Errors.Load() != st.Errors || st.Errors == 0 {
		t.Fatalf("live %d/%d/%d, stats %d+%d RPCs, %d bytes", live.Done.Load(), live.Bytes.Load(), live.Errors.Load(), st.Completed, st.Errors, st.CallBytes+st.ReplyBytes)
	}
	for k := range live.MClasses {
		if got := live.MClasses[k].Load(); got != st.Classes[k] {
			t.Fatalf("live counts %d measured %s RPCs, stats %d", got, rpcproto.Kind(k), st.Classes[k])
		}
	}
	var h workloads.LiveHist
	live.AddTo(&h)
	if p50, ok := h.Quantile(0.5); !ok || p50 < 2*time.Microsecond || p50 > 4*time.Microsecond {
		t.Fatalf("live p50 %v", p50)
	}
}

func BenchmarkDriverOpenLoop(b *testing.B) {
	c := workloads.Config{Prog: benchprog.Prog, Depth: 32, Count: int64(b.N), Rate: 2e6, Arrival: "poisson", Warmup: workloads.NoWarmup}
	f, d, _ := fakeRun(b, c, 2*time.Microsecond, 100*time.Nanosecond)
	d.Clock = f.Clock.Now
	benchRun(b, d)
}

// BenchmarkDriverDepth1 is the Driver's own work around one RPC as the tool's latency runs
// use it: depth 1, one procedure, the real clock, Live counters on. The fake client answers
// each call at the next Progress, so ns/op is one pass of the Driver's loop (the clock read,
// the slot, the next Submit, the recording) plus the fake's few nanoseconds: what the
// workload Driver adds to the client's side of a round trip. The VM suite runs it on the
// emulated CPU, where that share is priced against the round trip.
func BenchmarkDriverDepth1(b *testing.B) {
	c := normalized(b, workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("null", workloads.Sizes{}), Depth: 1, Count: int64(b.N), Warmup: workloads.NoWarmup})
	f := workloadstest.New(4)
	f.Clock = new(workloadstest.Clock) // the fake's own: due at once, and no second real clock read
	d, err := workloads.NewDriver(c, 0, f, workloads.Discard, new(workloads.Live))
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, d)
}

// BenchmarkNow is one reading of the Driver's clock (the runtime's monotonic clock, through
// the vDSO on Linux), which the Driver takes once per pass of its loop: on an emulated CPU
// it is a visible part of BenchmarkDriverDepth1.
func BenchmarkNow(b *testing.B) {
	var t int64
	for b.Loop() {
		t += workloads.Now()
	}
	if t == 0 {
		b.Fatal("the clock did not move")
	}
}

// The same with a Live attached, as the CLI runs it: the price of the progress display's
// atomic counters.
func BenchmarkDriverClosedLoopLive(b *testing.B) {
	c := normalized(b, workloads.Config{Prog: benchprog.Prog, Depth: 32, Count: int64(b.N), Warmup: workloads.NoWarmup})
	f := workloadstest.New(64)
	f.Clock, f.Latency, f.Tick = new(workloadstest.Clock), 2*time.Microsecond, 500*time.Nanosecond
	d, err := workloads.NewDriver(c, 0, f, workloads.Discard, new(workloads.Live))
	if err != nil {
		b.Fatal(err)
	}
	d.Clock = f.Clock.Now
	benchRun(b, d)
}

// waitingFake is a Fake that can block: Wait jumps the fake clock ahead by the RPC latency,
// as a CQ wait ends with the next completion.
type waitingFake struct {
	*workloadstest.Fake
	waits int
}

func (w *waitingFake) Wait(timeout time.Duration) error {
	w.waits++
	w.Clock.Advance(min(timeout, w.Latency))
	return nil
}

// waitingRun builds a Driver for c over a waitingFake on a manual clock.
func waitingRun(t *testing.T, c workloads.Config, latency, tick time.Duration) (*waitingFake, *workloads.Driver) {
	t.Helper()
	c = normalized(t, c)
	f := workloadstest.New(1 << 16)
	f.Clock = new(workloadstest.Clock)
	f.Latency, f.Tick = latency, tick
	w := &waitingFake{Fake: f}
	d, err := workloads.NewDriver(c, 0, w, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Clock = f.Clock.Now
	return w, d
}

func TestPollModesWaitOnlyWhenIdle(t *testing.T) {
	for _, tc := range []struct {
		poll      datapath.Poll
		wantWaits bool
	}{
		{datapath.Poll{Mode: datapath.PollBusy}, false},
		{datapath.Poll{Mode: datapath.PollEvent}, true},
		// A spin longer than the RPC latency never gives up on a closed loop.
		{datapath.Poll{Mode: datapath.PollHybrid, Spin: time.Millisecond}, false},
		{datapath.Poll{Mode: datapath.PollHybrid, Spin: time.Microsecond}, true},
	} {
		c := workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("null", workloads.Sizes{}), Depth: 1,
			Count: 2000, Warmup: workloads.Duration(-1), Poll: tc.poll}
		w, d := waitingRun(t, c, 100*time.Microsecond, 100*time.Nanosecond)
		st, err := d.Run(context.Background())
		if err != nil || st.Completed != 2000 {
			t.Fatalf("%s: completed %d, err %v", tc.poll, st.Completed, err)
		}
		if got := w.waits > 0; got != tc.wantWaits {
			t.Errorf("%s: %d waits for %d RPCs", tc.poll, w.waits, st.Completed)
		}
		if tc.poll.Mode == datapath.PollEvent && w.waits < 2000 {
			t.Errorf("event: %d waits for 2000 RPCs that each took 100 µs; want one per RPC at least", w.waits)
		}
	}
}

// The Driver reads its thread's usage at the edges of the measured phase: a busy poller
// spinning for the measured time shows CPU time for it.
func TestDriverRecordsThreadUsage(t *testing.T) {
	c := normalized(t, workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("echo", workloads.Fixed(64)), Depth: 4,
		Duration: workloads.Duration(50 * time.Millisecond), Warmup: workloads.Duration(10 * time.Millisecond)})
	f := workloadstest.New(64)
	f.Latency = 20 * time.Microsecond
	d, err := workloads.NewDriver(c, 0, f, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var st workloads.Stats
	done := make(chan struct{})
	go func() {
		// As the Runner does: the usage is the thread's, so the goroutine keeps it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		st, err = d.Run(context.Background())
		close(done)
	}()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "linux" {
		if st.UsageErr == nil {
			t.Fatal("thread usage claimed where it is not supported")
		}
		return
	}
	if st.UsageErr != nil {
		t.Fatal(st.UsageErr)
	}
	if st.UsageWall <= 0 || st.Usage.CPU <= 0 || st.UsageWall > st.Elapsed()+time.Millisecond {
		t.Fatalf("usage %+v over %v of a %v phase; want CPU time over the measured phase", st.Usage, st.UsageWall, st.Elapsed())
	}
}

// Without a Drain, the wait for outstanding RPCs follows the observed RTTs with a floor that
// rides out link retransmissions: RPCs held up for 3 s (longer than the old fixed 2 s) are
// waited for, not counted lost; RPCs that never come back are abandoned after the default.
// Config.Drain overrides it.
func TestDefaultDrainFollowsRTTs(t *testing.T) {
	c := workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("null", workloads.Sizes{}), Depth: 4,
		Duration: workloads.Duration(10 * time.Millisecond), Warmup: workloads.Duration(-1)}
	run := func(c workloads.Config, stallUntil int64) (workloads.Stats, int64) {
		f, d, _ := fakeRun(t, c, time.Millisecond, 100*time.Microsecond)
		f.StallFrom, f.StallUntil = int64(9*time.Millisecond), stallUntil
		st, err := d.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st, f.Clock.Now()
	}
	// Retransmitted late: completed in the drain.
	st, _ := run(c, int64(3*time.Second))
	if st.Abandoned != 0 || st.Sent != st.Completed {
		t.Fatalf("late RPCs: abandoned %d, sent %d, completed %d", st.Abandoned, st.Sent, st.Completed)
	}
	// Lost: abandoned once the default drain (RTT ~1 ms: the floor) has passed.
	st, end := run(c, 1<<62)
	if st.Abandoned == 0 {
		t.Fatal("lost RPCs not abandoned")
	}
	if gave := time.Duration(end) - 10*time.Millisecond; gave < workloads.MinDrain || gave > workloads.MinDrain+time.Millisecond {
		t.Fatalf("drained for %v, want the default %v", gave, workloads.MinDrain)
	}
	// --drain 1s: abandoned after 1 s.
	c.Drain = workloads.Duration(time.Second)
	st, end = run(c, 1<<62)
	if gave := time.Duration(end) - 10*time.Millisecond; st.Abandoned == 0 || gave < time.Second || gave > time.Second+time.Millisecond {
		t.Fatalf("drain 1s: abandoned %d after %v", st.Abandoned, gave)
	}
	if d := workloads.DrainFor(time.Second); d != workloads.DrainRTTs*time.Second {
		t.Fatalf("DrainFor(1s) = %v, want %d RTTs", d, workloads.DrainRTTs)
	}
	if _, err := (workloads.Config{Prog: benchprog.Prog, Drain: -1}).Normalized(); err == nil || !strings.Contains(err.Error(), "drain") {
		t.Fatalf("negative drain: %v", err)
	}
}

func TestDriverAllocatesNothingPerRPCWhenWaiting(t *testing.T) {
	// Depth 1 and RPCs of 50 µs: the poller idles between completions, so both modes wait.
	for _, poll := range []datapath.Poll{{Mode: datapath.PollEvent}, {Mode: datapath.PollHybrid, Spin: time.Microsecond}} {
		c := workloads.Config{Prog: benchprog.Prog, Depth: 1, Count: 20000, Warmup: workloads.Duration(-1), Poll: poll}
		w, d := waitingRun(t, c, 50*time.Microsecond, 500*time.Nanosecond)
		var st workloads.Stats
		allocs := testing.AllocsPerRun(3, func() { st, _ = d.Run(context.Background()) })
		if st.Completed != 20000 || w.waits == 0 {
			t.Fatalf("%s: completed %d with %d waits", poll, st.Completed, w.waits)
		}
		if allocs != 0 {
			t.Fatalf("%s: %v allocations per run of 20000 RPCs", poll, allocs)
		}
	}
}

// orderLog is a Client and a Recorder that log, in one sequence, each Submit (the request's
// procedure and payload), each Progress and each recorded sample; every RPC completes at the
// first Progress after its Submit.
type orderLog struct {
	events []string
	due    []uint64
}

func (o *orderLog) Submit(r *workloads.Request) error {
	o.events = append(o.events, fmt.Sprintf("submit %d/%d", r.Proc, r.CallSize+r.ReplySize))
	o.due = append(o.due, r.Tag)
	return nil
}

func (o *orderLog) Progress(done []workloads.Completed) (int, error) {
	o.events = append(o.events, "progress")
	n := 0
	for _, tag := range o.due {
		done[n] = workloads.Completed{Tag: tag, CallClass: rpcproto.Short, ReplyClass: rpcproto.Short}
		n++
	}
	o.due = o.due[:0]
	return n, nil
}

func (o *orderLog) Record(s workloads.Sample) {
	o.events = append(o.events, fmt.Sprintf("record %d/%d", s.Proc, s.Payload))
}

func (o *orderLog) Fail(int, error) {}

// At depth 1 an RPC is recorded only after the next one went out, and with the procedure and
// sizes it was sent with, although its slot already carries the next RPC. Going out is the
// Progress after the next Submit, not the Submit: a deferring datapath (verbs) only stages
// the Send in Submit and posts it in the next poll, so recording in between would be part of
// the next round trip.
func TestDriverSubmitsBeforeRecording(t *testing.T) {
	c := normalized(t, workloads.Config{Prog: benchprog.Prog, Depth: 1, Count: 50, Warmup: workloads.Duration(-1)})
	o := &orderLog{}
	d, err := workloads.NewDriver(c, 0, o, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Run(context.Background())
	if err != nil || st.Completed != 50 {
		t.Fatalf("completed %d, err %v; want 50, nil", st.Completed, err)
	}
	var sent []string
	records := 0
	polled := false // a Progress since the last Submit
	for i, e := range o.events {
		what, rpc, _ := strings.Cut(e, " ")
		switch what {
		case "submit":
			sent = append(sent, rpc)
			polled = false
			continue
		case "progress":
			polled = true
			continue
		}
		if !polled {
			t.Fatalf("event %d: RPC %d recorded between a Submit and the Progress that sends it:\n%s", i, records, strings.Join(o.events[max(0, i-6):i+1], "\n"))
		}
		if rpc != sent[records] {
			t.Fatalf("event %d: recorded %s as RPC %d, which was sent as %s", i, rpc, records, sent[records])
		}
		records++
		if records < 50 && len(sent) != records+1 {
			t.Fatalf("event %d: RPC %d recorded with %d sent; want the next one sent first:\n%s", i, records, len(sent), strings.Join(o.events[:i+1], "\n"))
		}
	}
	if records != 50 || len(sent) != 50 {
		t.Fatalf("%d recorded, %d sent; want 50", records, len(sent))
	}
}

// probingFake is a Fake whose CQ has a turnaround probe: one turnaround of 200 ns per
// Progress call.
type probingFake struct {
	*workloadstest.Fake
	progress uint64
}

func (p *probingFake) Progress(done []workloads.Completed) (int, error) {
	p.progress++
	return p.Fake.Progress(done)
}

func (p *probingFake) Turnarounds() (datapath.Turnaround, bool) {
	t := datapath.Turnaround{Count: p.progress, Total: time.Duration(p.progress) * 200 * time.Nanosecond}
	t.Hist[2] = p.progress
	return t, true
}

// The Driver reads its Client's turnaround probe at the edges of the measured phase, as it
// reads the thread's usage: the warm-up's turnarounds are not in Stats.
func TestDriverRecordsTurnarounds(t *testing.T) {
	c := normalized(t, workloads.Config{Prog: benchprog.Prog, Mix: workloads.Only("null", workloads.Sizes{}), Depth: 1,
		Count: 500, Warmup: workloads.Duration(100 * time.Microsecond)})
	f := workloadstest.New(1 << 10)
	f.Clock = new(workloadstest.Clock)
	f.Latency, f.Tick = time.Microsecond, 100*time.Nanosecond
	p := &probingFake{Fake: f}
	st := runOnClock(t, c, p, f.Clock, nil)
	ta := st.Turnaround
	if !st.HasTurnaround || ta.Count == 0 || ta.Count >= p.progress || ta.Hist[2] != ta.Count || ta.Mean() != 200*time.Nanosecond {
		t.Fatalf("turnaround %+v (probe on: %v) after %d polls, %d RPCs in the warm-up; want the measured phase's polls only",
			ta.Count, st.HasTurnaround, p.progress, st.WarmupCompleted)
	}
	if st.WarmupCompleted == 0 {
		t.Fatal("no warm-up: the test does not tell the phases apart")
	}

	// A Client without a probe: none.
	_, d2, _ := fakeRun(t, c, time.Microsecond, 100*time.Nanosecond)
	if st, err := d2.Run(context.Background()); err != nil || st.HasTurnaround {
		t.Fatalf("Client without a probe: HasTurnaround %v, err %v", st.HasTurnaround, err)
	}
}
