package workloads

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// maxWait bounds one Waiter.Wait of an event or hybrid Driver, and so how late it notices a
// stop.
const maxWait = 10 * time.Millisecond

// Stats are what one Driver counted. Counts are of measured RPCs (sent at or after the end of
// the warm-up) unless the name says otherwise. Merge adds another poller's.
type Stats struct {
	// Sent is the number of measured RPCs submitted.
	Sent uint64 `json:"sent"`
	// Completed is the number that succeeded; each one's round trip went to the Recorder.
	Completed uint64 `json:"completed"`
	// Errors is the number that completed with an error; FirstErr is the first of them.
	Errors   uint64 `json:"errors"`
	FirstErr error  `json:"-"`
	// Procs counts completed RPCs by procedure.
	Procs [rpcproto.MaxProcs]uint64 `json:"procs"`
	// Classes counts completed RPCs by RPCClass; CallClasses and ReplyClasses by the class of
	// each direction.
	Classes      [rpcproto.NumKinds]uint64 `json:"classes"`
	CallClasses  [rpcproto.NumKinds]uint64 `json:"call_classes"`
	ReplyClasses [rpcproto.NumKinds]uint64 `json:"reply_classes"`
	// CallBytes and ReplyBytes are the payload bytes of completed RPCs (headers excluded).
	CallBytes  uint64 `json:"call_bytes"`
	ReplyBytes uint64 `json:"reply_bytes"`
	// WarmupCompleted counts the RPCs finished in the discarded warm-up.
	WarmupCompleted uint64 `json:"warmup_completed"`
	// Late (open loop) counts RPCs sent after a poll iteration in which they were already
	// due: held back by Depth or a busy Client. Their latency counts from the intended time.
	Late uint64 `json:"late"`
	// Missed (open loop) counts intended sends of the measured phase never sent before it
	// ended: the backlog a too-slow server left. Each would have had a latency of at least
	// the time from its intended send to the end of the run.
	Missed uint64 `json:"missed"`
	// Abandoned counts RPCs still outstanding when draining timed out or was skipped.
	Abandoned uint64 `json:"abandoned"`
	// DrainSkipped is set when Driver.Hurry ended the drain before it was done.
	DrainSkipped bool `json:"drain_skipped,omitempty"`
	// Interrupted is set when the cancellation of Run's context ended the run.
	Interrupted bool `json:"interrupted,omitempty"`
	// Start and End bound the measured phase on the Driver's clock (nanoseconds): Start is
	// the end of the warm-up, End the last completion (or the stop, if none came after).
	Start int64 `json:"-"`
	End   int64 `json:"-"`
	// Usage is what the kernel accounted to the poller's thread from the start of the
	// measured phase to its end (the drain excluded): CPU time and context switches.
	// UsageWall is that interval on the Driver's clock; UsageErr why Usage is missing.
	Usage     datapath.ThreadUsage `json:"-"`
	UsageWall time.Duration        `json:"-"`
	UsageErr  error                `json:"-"`
	// Turnaround is what the Client's turnaround probe (datapath.TurnaroundProber) measured
	// over the same interval as Usage: how long this side took from a completion to the
	// posts it caused. HasTurnaround says the Client had a probe switched on.
	Turnaround    datapath.Turnaround `json:"-"`
	HasTurnaround bool                `json:"-"`
}

// Elapsed is the length of the measured phase.
func (s *Stats) Elapsed() time.Duration {
	if s.End <= s.Start {
		return 0
	}
	return time.Duration(s.End - s.Start)
}

// Merge adds o into s. The merged phase runs from the earliest Start to the latest End, which
// is right for pollers that run side by side on one clock.
func (s *Stats) Merge(o *Stats) {
	if s.Start == 0 && s.End == 0 {
		s.Start, s.End = o.Start, o.End
	} else {
		s.Start, s.End = min(s.Start, o.Start), max(s.End, o.End)
	}
	s.Sent += o.Sent
	s.Completed += o.Completed
	s.Errors += o.Errors
	if s.FirstErr == nil {
		s.FirstErr = o.FirstErr
	}
	for i := range s.Procs {
		s.Procs[i] += o.Procs[i]
	}
	for i := range s.Classes {
		s.Classes[i] += o.Classes[i]
		s.CallClasses[i] += o.CallClasses[i]
		s.ReplyClasses[i] += o.ReplyClasses[i]
	}
	s.CallBytes += o.CallBytes
	s.ReplyBytes += o.ReplyBytes
	s.WarmupCompleted += o.WarmupCompleted
	s.Late += o.Late
	s.Missed += o.Missed
	s.Abandoned += o.Abandoned
	s.Usage.CPU += o.Usage.CPU
	s.Usage.Involuntary += o.Usage.Involuntary
	s.Usage.Voluntary += o.Usage.Voluntary
	s.UsageWall = max(s.UsageWall, o.UsageWall)
	if s.UsageErr == nil {
		s.UsageErr = o.UsageErr
	}
	if o.HasTurnaround {
		s.Turnaround.Add(&o.Turnaround)
		s.HasTurnaround = true
	}
	s.Interrupted = s.Interrupted || o.Interrupted
	s.DrainSkipped = s.DrainSkipped || o.DrainSkipped
}

// Driver runs one poller's share of a workload against a Client. Create it with NewDriver
// on any goroutine, then call Run on the goroutine that owns the Client.
type Driver struct {
	// Clock returns monotonic nanoseconds. Defaults to Now; tests
	// replace it to simulate time. It is read once per poll iteration.
	Clock func() int64
	// Drain bounds how long Run waits for outstanding RPCs after the measured phase or a stop
	// (0: DrainFor the longest round trip this Run observed).
	Drain time.Duration
	// IdleSleep is the shortest open-loop gap, with nothing outstanding, that Run sleeps
	// through instead of spinning (default 2ms; negative: always spin; it sleeps the gap less
	// 1ms, to wake up in time). Shorter gaps are paced by spinning on the schedule, because a
	// sleep costs tens of microseconds of timer slack per RPC, more than the gap at high
	// rates, while the spinning poller needs no syscall and sends within one poll iteration
	// of the intended time.
	IdleSleep time.Duration
	// Hurry, once done (nil: never), ends a stopped Run's drain at once: the RPCs still
	// outstanding are abandoned (a second interrupt).
	Hurry context.Context

	client Client
	rec    Recorder
	live   *Live
	poll   datapath.Poll

	table []Request
	mask  int
	gaps  []float64
	gap   float64 // constant open-loop gap in ns; 0: closed loop

	warmup, duration int64
	count            int64 // measured sends allowed (0: unbounded)

	free  []uint32 // free slot stack
	reqs  []Request
	start []int64
	busy  []bool
	done  []Completed
	fin   []finished // done's RPCs, freed and waiting to be recorded

	stop atomic.Bool // set when Run's context is done
	r    run         // the state of the Run in progress, kept here so Run allocates nothing
}

// finished is a completed RPC between freeing its slot and recording it: its slot may
// already carry the next RPC by then.
type finished struct {
	t0, rtt             int64
	err                 error
	proc                int
	callSize, replySize uint32
	call, reply         rpcproto.Kind
}

// NewDriver prepares poller's share of workload c (normalized) over cl, recording into rec
// (nil: Discard) and publishing progress to live (nil: none): it serves c.PollerShare(poller)
// connections, so it keeps up to Depth × that many RPCs outstanding, runs its share of Rate
// and Count, and draws its Table.
func NewDriver(c Config, poller int, cl Client, rec Recorder, live *Live) (*Driver, error) {
	if poller < 0 || poller >= c.Pollers {
		return nil, fmt.Errorf("workloads: poller %d of %d", poller, c.Pollers)
	}
	if c.TableSize == 0 || c.TableSize&(c.TableSize-1) != 0 || len(c.Mix) == 0 {
		return nil, errors.New("workloads: NewDriver needs a normalized Config")
	}
	if rec == nil {
		rec = Discard
	}
	depth := c.Depth * c.PollerShare(poller)
	d := &Driver{
		client:   cl,
		rec:      rec,
		live:     live,
		poll:     c.Poll,
		table:    Table(c, poller),
		mask:     c.TableSize - 1,
		warmup:   max(0, int64(c.Warmup)),
		duration: int64(c.Duration),
		Drain:    time.Duration(max(0, c.Drain)),
		free:     make([]uint32, depth),
		reqs:     make([]Request, depth),
		start:    make([]int64, depth),
		busy:     make([]bool, depth),
		done:     make([]Completed, min(depth, 64)),
		fin:      make([]finished, min(depth, 64)),
	}
	if c.Count > 0 {
		d.count = c.Count / int64(c.Pollers)
		if int64(poller) < c.Count%int64(c.Pollers) {
			d.count++
		}
		if d.count == 0 {
			return nil, fmt.Errorf("workloads: count %d leaves poller %d nothing to send", c.Count, poller)
		}
	}
	if c.Rate > 0 {
		rate := c.Rate / float64(c.Pollers)
		d.gap = 1e9 / rate
		d.gaps = Gaps(c, poller, rate)
	}
	for i := range d.free {
		// Pop order hands out slot 0 first; only tests care.
		d.free[i] = uint32(depth - 1 - i)
	}
	return d, nil
}

// Drain defaults: the wait for outstanding RPCs is DrainRTTs times the longest round trip
// observed, and never less than MinDrain, which covers a few retransmission timeouts of a
// lossy RDMA link (soft-RoCE's and RoCE NICs' ack timeouts are hundreds of milliseconds to
// seconds, and a retransmitted RPC may need several): an RPC that is merely late must not
// be counted lost. The drain ends as soon as nothing is outstanding, so a long bound costs
// only a run that really lost RPCs.
const (
	MinDrain  = 10 * time.Second
	DrainRTTs = 20
)

// DrainFor is the default drain after a phase whose longest round trip was maxRTT.
func DrainFor(maxRTT time.Duration) time.Duration {
	return max(MinDrain, DrainRTTs*maxRTT)
}

// Depth is the most RPCs this Driver keeps outstanding.
func (d *Driver) Depth() int { return len(d.reqs) }

var epoch = time.Now()

// Now is the Drivers' default clock: monotonic nanoseconds since the process started, the
// scale of Stats.Start/End and Live.Begin/Measure.
func Now() int64 { return int64(time.Since(epoch)) }

// Time converts a reading of Now to a time.Time that keeps the monotonic reading, so that
// Sub between two converted readings is exact.
func Time(ns int64) time.Time { return epoch.Add(time.Duration(ns)) }

// missed counts the intended send times of the schedule from next on (gap apart: exactly for
// constant arrivals, on average for Poisson ones) that lie in [measure, end). It is
// arithmetic rather than a walk along the schedule because an overloaded run can leave a
// backlog of billions.
func missed(next float64, measure, end int64, gap float64, poisson bool) uint64 {
	lo, hi := next, float64(end)
	if lo < float64(measure) {
		if poisson {
			lo = float64(measure)
		} else {
			lo += math.Ceil((float64(measure)-lo)/gap) * gap
		}
	}
	if hi <= lo {
		return 0
	}
	return uint64(math.Ceil((hi - lo) / gap))
}

// errThreadMoved: a Driver's goroutine was not locked to its thread, so the thread's usage
// says nothing about it.
var errThreadMoved = errors.New("workloads: the driver's goroutine changed threads (not locked to one): no thread usage")

// Errors that end a run because the Client broke its contract.
var (
	ErrBadTag   = errors.New("workloads: client completed an RPC that is not outstanding")
	ErrOverrun  = errors.New("workloads: client reported more completions than the slice holds")
	ErrBadClass = errors.New("workloads: client completed an RPC without a known message class")
)

// Run drives the workload until the measured phase ends (Duration or Count), ctx is done or
// the Client fails, then drains outstanding RPCs for up to Drain. It returns the Stats so far
// in every case; err is the Client's error or a contract violation. It allocates nothing
// per RPC. Run may run again (a fresh phase over the same Client) only after a Run that
// returned no error and abandoned nothing, so that no slot is still outstanding.
//
// The loop sees ctx through an atomic flag that context.AfterFunc sets, loaded once per
// iteration: on the polling path a flag costs one load, a channel receive far more.
func (d *Driver) Run(ctx context.Context) (Stats, error) {
	d.stop.Store(false)
	if ctx.Done() != nil {
		if ctx.Err() != nil {
			d.stop.Store(true)
		}
		unhook := context.AfterFunc(ctx, d.cancel)
		defer func() {
			if !unhook() {
				// d.cancel is running: let it store before the next Run clears the flag.
				for !d.stop.Load() {
					runtime.Gosched()
				}
			}
		}()
	}
	r := &d.r
	r.start(d)
	err := r.loop()
	return r.st, err
}

func (d *Driver) cancel() { d.stop.Store(true) }

// run is the state of one Run; its methods are the steps of the loop.
type run struct {
	d      *Driver
	clock  func() int64
	waiter Waiter
	idler  datapath.Idler
	hurry  <-chan struct{} // Driver.Hurry's Done (nil: never)
	st     Stats

	drain    int64 // the drain's bound (0 until the stop: DrainFor the longest round trip)
	idle     int64 // the shortest open-loop gap slept through
	measure  int64 // the end of the warm-up
	deadline int64 // the end of the measured phase (MaxInt64: none)

	now, prev int64   // this and the previous iteration's clock reading
	next      float64 // open loop: intended time of the next send
	ti, gi    int     // next table and gap index
	gmask     int
	open      bool
	stopping  bool
	drainEnd  int64
	lastDone  int64
	maxRTT    int64 // the longest round trip so far, for the default drain
	inflight  int
	nfin      int // RPCs in d.fin

	// The thread's usage is read on the thread itself at the edges of the measured phase,
	// and so is the turnaround probe, by the goroutine that polls its CQ.
	measuring bool
	usage0    datapath.ThreadUsage
	usageAt   int64
	usageTID  int
	turn0     datapath.Turnaround
	prober    datapath.TurnaroundProber
}

// start resets r for a Run of d beginning now.
func (r *run) start(d *Driver) {
	clock := d.Clock
	if clock == nil {
		clock = Now
	}
	*r = run{d: d, clock: clock, drain: int64(d.Drain), idle: int64(d.IdleSleep), gmask: len(d.gaps) - 1, open: d.gap > 0}
	switch {
	case r.idle == 0:
		r.idle = int64(2 * time.Millisecond)
	case r.idle < 0:
		r.idle = math.MaxInt64
	}
	r.waiter, _ = d.client.(Waiter)
	r.prober, _ = d.client.(datapath.TurnaroundProber)
	r.idler = datapath.NewIdler(d.poll, clock)
	if d.Hurry != nil {
		r.hurry = d.Hurry.Done()
	}
	r.now = clock()
	r.prev = r.now
	r.next = float64(r.now)
	r.measure = r.now + d.warmup
	r.deadline = math.MaxInt64
	if d.duration > 0 {
		r.deadline = r.measure + d.duration
	}
	r.st.Start = r.measure
	if d.live != nil {
		d.live.begin(r.now, r.measure)
	}
}

// loop is Run's loop: one iteration sends what it may, then polls once.
func (r *run) loop() error {
	for {
		r.startUsage()
		if !r.stopping {
			r.checkStop()
		}
		if !r.stopping {
			if err := r.send(); err != nil {
				return r.fail(err)
			}
		}
		if !r.stopping && r.open && r.inflight == 0 {
			slept, err := r.sleepUntilDue()
			if err != nil {
				return r.fail(err)
			}
			if slept {
				continue
			}
		}
		if r.stopping {
			done, err := r.drainStep()
			if err != nil {
				return r.fail(err)
			}
			if done {
				break
			}
		}
		if err := r.poll(); err != nil {
			return err
		}
	}
	r.st.End = r.lastDone
	if r.st.End == 0 {
		r.st.End = min(r.now, r.deadline)
	}
	return nil
}

// fail ends the Run with err at the current clock reading.
func (r *run) fail(err error) error {
	r.st.End = r.now
	return err
}

// startUsage reads the thread's usage and turnarounds as the measured phase begins.
func (r *run) startUsage() {
	if r.measuring || r.stopping || r.now < r.measure || r.st.UsageWall != 0 {
		return
	}
	r.measuring, r.usageAt, r.usageTID = true, r.now, datapath.Gettid()
	r.usage0, r.st.UsageErr = datapath.SelfThreadUsage()
	if r.prober != nil {
		r.turn0, r.st.HasTurnaround = r.prober.Turnarounds()
	}
}

// endUsage takes the thread's usage and turnarounds since startUsage into the Stats.
func (r *run) endUsage() {
	if !r.measuring {
		return
	}
	r.measuring = false
	u, err := datapath.SelfThreadUsage()
	if err == nil && datapath.Gettid() != r.usageTID {
		// The goroutine moved to another thread: it was not locked to one (tests).
		err = errThreadMoved
	}
	if r.st.UsageErr == nil {
		r.st.UsageErr = err
	}
	if err == nil && r.st.UsageErr == nil {
		r.st.Usage, r.st.UsageWall = u.Sub(r.usage0), time.Duration(r.now-r.usageAt)
	}
	if r.st.HasTurnaround {
		t, _ := r.prober.Turnarounds()
		r.st.Turnaround = t.Sub(r.turn0)
	}
}

// checkStop starts stopping when Run's context is done or, in closed loop, at the deadline.
func (r *run) checkStop() {
	switch {
	case r.d.stop.Load():
		r.st.Interrupted = true
		r.stopping = true
	case r.now >= r.deadline && !r.open:
		r.stopping = true
	}
	// In open loop send first sends what was due before the deadline (late, timed from its
	// intended start): a poll iteration that happens to fall just after the deadline must
	// not turn a due send into a missed one.
	if r.stopping && r.open {
		// Intended sends that never went out were measured as nothing; count them so a
		// backlog shows.
		r.st.Missed += missed(r.next, r.measure, min(r.now, r.deadline), r.d.gap, r.d.gaps != nil)
	}
}

// send submits RPCs while slots are free and, in open loop, while they are due. It starts
// stopping at the end of the measured phase.
func (r *run) send() error {
	d := r.d
	for len(d.free) > 0 {
		t := r.now
		if r.open {
			t = int64(r.next)
			if t > r.now {
				break
			}
			if t >= r.deadline {
				r.stopping = true
				break
			}
		}
		measured := t >= r.measure
		if measured && d.count > 0 && int64(r.st.Sent) >= d.count {
			r.stopping = true
			break
		}
		slot := d.free[len(d.free)-1]
		req := &d.reqs[slot]
		*req = d.table[r.ti&d.mask]
		req.Tag = uint64(slot)
		if err := d.client.Submit(req); err != nil {
			if err == ErrBusy || errors.Is(err, ErrBusy) {
				break
			}
			return err
		}
		d.free = d.free[:len(d.free)-1]
		d.busy[slot] = true
		d.start[slot] = t
		r.inflight++
		r.ti++
		if measured {
			r.st.Sent++
			if r.open && t < r.prev {
				r.st.Late++
			}
		}
		if r.open {
			r.advance()
		}
	}
	if r.open && !r.stopping && r.now >= r.deadline {
		// What was due before the deadline and could not go (no free slot, a busy client)
		// never will: the backlog a too-slow server left.
		r.stopping = true
		r.st.Missed += missed(r.next, r.measure, r.deadline, r.d.gap, r.d.gaps != nil)
	}
	return nil
}

// advance moves the open-loop schedule to the next intended send.
func (r *run) advance() {
	if r.d.gaps != nil {
		r.next += r.d.gaps[r.gi&r.gmask]
		r.gi++
	} else {
		r.next += r.d.gap
	}
}

// sleepUntilDue sleeps through an open-loop gap of at least idle with nothing outstanding,
// waking 1ms early; it reports whether it slept.
func (r *run) sleepUntilDue() (bool, error) {
	wait := int64(r.next) - r.now
	if wait < r.idle {
		return false, nil
	}
	if err := r.record(); err != nil {
		return false, err
	}
	time.Sleep(time.Duration(wait - int64(time.Millisecond)))
	r.prev, r.now = r.now, r.clock()
	return true, nil
}

// drainStep is the stopping iteration's check: it reports whether the Run is over (nothing
// outstanding, Hurry, or the drain's bound passed).
func (r *run) drainStep() (bool, error) {
	r.endUsage()
	if err := r.record(); err != nil {
		return false, err
	}
	if r.inflight == 0 {
		return true, nil
	}
	if r.hurried() {
		r.st.Abandoned, r.st.DrainSkipped = uint64(r.inflight), true
		return true, nil
	}
	if r.drainEnd == 0 {
		if r.drain <= 0 {
			r.drain = int64(DrainFor(time.Duration(r.maxRTT)))
		}
		r.drainEnd = r.now + r.drain
	} else if r.now >= r.drainEnd {
		r.st.Abandoned = uint64(r.inflight)
		return true, nil
	}
	return false, nil
}

// hurried reports whether Driver.Hurry is done.
func (r *run) hurried() bool {
	select {
	case <-r.hurry:
		return true
	default:
		return false
	}
}

// poll asks the Client for completions (waiting for them when the poll mode says so), reads
// the clock and frees the completed slots. A Client error ends the Run with what finished
// before it recorded.
func (r *run) poll() error {
	d := r.d
	n, perr := d.client.Progress(d.done)
	// The RPCs the previous Progress returned are recorded only now. Submit may only have
	// staged the RPCs sent in their place (a deferring datapath), which this Progress's poll
	// put on the wire: recording before it would sit on their round trips.
	if err := r.record(); err != nil {
		return r.fail(err)
	}
	if n == 0 && perr == nil && r.waiter != nil && r.idler.ShouldWait() {
		var err error
		if n, perr, err = r.wait(); err != nil {
			return r.fail(err)
		}
	}
	if n > 0 {
		r.idler.Active()
	}
	r.prev, r.now = r.now, r.clock()
	if n > len(d.done) || n < 0 {
		return r.fail(ErrOverrun)
	}
	if err := r.free(n); err != nil {
		return err
	}
	if perr != nil {
		if err := r.record(); err != nil {
			return r.fail(err)
		}
		r.st.End = max(r.lastDone, min(r.now, r.deadline))
		return perr
	}
	return nil
}

// wait blocks in the Client for up to maxWait, never past the end of the phase nor past an
// open-loop send, then polls again: n and perr are that Progress's, err the Wait's failure.
func (r *run) wait() (n int, perr, err error) {
	t := maxWait
	if !r.stopping {
		t = min(t, time.Duration(r.deadline-r.now))
		if r.open {
			t = min(t, time.Duration(int64(r.next)-r.now))
		}
	}
	if t <= 0 {
		return 0, nil, nil
	}
	if err := r.waiter.Wait(t); err != nil && !errors.Is(err, datapath.ErrTimeout) {
		return 0, nil, err
	}
	n, perr = r.d.client.Progress(r.d.done)
	return n, perr, nil
}

// free releases the slots of the n completions in d.done, so that the next RPCs go out
// first, and queues them in d.fin for record.
func (r *run) free(n int) error {
	d := r.d
	for i := range n {
		c := &d.done[i]
		slot := c.Tag
		if slot >= uint64(len(d.busy)) || !d.busy[slot] {
			// Keep what came before it in the batch.
			r.st.End = r.now
			if err := r.record(); err != nil {
				return err
			}
			return ErrBadTag
		}
		d.busy[slot] = false
		d.free = append(d.free, uint32(slot))
		r.inflight--
		t0 := d.start[slot]
		req := &d.reqs[slot]
		d.fin[r.nfin] = finished{t0: t0, rtt: r.now - t0, err: c.Err, proc: req.Proc, callSize: req.CallSize, replySize: req.ReplySize, call: c.CallClass, reply: c.ReplyClass}
		r.nfin++
	}
	return nil
}

// record takes the finished RPCs, already freed, into the Stats, the Recorder and Live. It
// runs after the Progress that follows the sends their slots made room for: at depth 1 the
// recording is then not between a completion and the next call going out, which is what a
// round trip measures.
func (r *run) record() error {
	if r.nfin == 0 {
		return nil
	}
	var lc liveCounts
	fin := r.d.fin[:r.nfin]
	r.nfin = 0
	for i := range fin {
		if err := r.recordOne(&fin[i], &lc); err != nil {
			return err
		}
	}
	if r.d.live != nil {
		lc.publish(r.d.live, uint64(len(fin)))
	}
	return nil
}

// recordOne takes one finished RPC into the Stats and the Recorder, counting it in lc.
func (r *run) recordOne(f *finished, lc *liveCounts) error {
	st := &r.st
	if f.err != nil {
		lc.errs++
		if f.t0 >= r.measure {
			lc.mErrs++
			st.Errors++
			if st.FirstErr == nil {
				st.FirstErr = f.err
			}
			r.d.rec.Fail(f.proc, f.err)
		}
		return nil
	}
	if f.call == rpcproto.Auto || f.reply == rpcproto.Auto || f.call >= rpcproto.NumKinds || f.reply >= rpcproto.NumKinds {
		return ErrBadClass
	}
	cls := max(f.call, f.reply)
	r.maxRTT = max(r.maxRTT, f.rtt)
	if r.d.live != nil {
		r.d.live.record(f.rtt)
		lc.bytes += uint64(f.callSize) + uint64(f.replySize)
	}
	if f.t0 < r.measure {
		st.WarmupCompleted++
		return nil
	}
	r.lastDone = max(r.lastDone, f.t0+f.rtt)
	lc.mDone++
	lc.mClasses[cls]++
	lc.mBytes += uint64(f.callSize) + uint64(f.replySize)
	st.Completed++
	st.Procs[f.proc]++
	st.Classes[cls]++
	st.CallClasses[f.call]++
	st.ReplyClasses[f.reply]++
	st.CallBytes += uint64(f.callSize)
	st.ReplyBytes += uint64(f.replySize)
	r.d.rec.Record(Sample{Proc: f.proc, Call: f.call, Reply: f.reply, RTT: time.Duration(f.rtt), Payload: int(f.callSize) + int(f.replySize)})
	return nil
}

// liveCounts are one record's additions to Live, published with one atomic add each.
type liveCounts struct {
	bytes, errs, mDone, mBytes, mErrs uint64
	mClasses                          [rpcproto.NumKinds]uint64
}

// publish adds the counts of n recorded RPCs to l.
func (lc *liveCounts) publish(l *Live, n uint64) {
	if n == 0 {
		return
	}
	l.Done.Add(n)
	l.Bytes.Add(lc.bytes)
	if lc.errs > 0 {
		l.Errors.Add(lc.errs)
	}
	if lc.mDone > 0 {
		l.MDone.Add(lc.mDone)
		l.MBytes.Add(lc.mBytes)
		for k, v := range lc.mClasses {
			if v > 0 {
				l.MClasses[k].Add(v)
			}
		}
	}
	if lc.mErrs > 0 {
		l.MErrors.Add(lc.mErrs)
	}
}
