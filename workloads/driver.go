package workloads

import (
	"errors"
	"fmt"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"math"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
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
	// DrainSkipped is set when the Hurry flag ended the drain before it was done.
	DrainSkipped bool `json:"drain_skipped,omitempty"`
	// Interrupted is set when the stop flag ended the run.
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
	// Hurry, when set (nil: never), ends a stopped Run's drain at once: the RPCs still
	// outstanding are abandoned (a second interrupt).
	Hurry *atomic.Bool

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

// Run drives the workload until the measured phase ends (Duration or Count), stop is set or
// the Client fails, then drains outstanding RPCs for up to Drain. It returns the Stats so far
// in every case; err is the Client's error or a contract violation. It allocates nothing
// per RPC. Run may run again (a fresh phase over the same Client) only after a Run that
// returned no error and abandoned nothing, so that no slot is still outstanding.
func (d *Driver) Run(stop *atomic.Bool) (Stats, error) {
	clock := d.Clock
	if clock == nil {
		clock = Now
	}
	drain := int64(d.Drain)
	var maxRTT int64 // the longest round trip so far, for the default drain
	idle := int64(d.IdleSleep)
	switch {
	case idle == 0:
		idle = int64(2 * time.Millisecond)
	case idle < 0:
		idle = math.MaxInt64
	}

	waiter, _ := d.client.(Waiter)
	idler := datapath.NewIdler(d.poll, clock)

	var st Stats
	now := clock()
	measure := now + d.warmup
	deadline := int64(math.MaxInt64)
	if d.duration > 0 {
		deadline = measure + d.duration
	}
	st.Start = measure
	if d.live != nil {
		d.live.begin(now, measure)
	}

	var (
		ti       int     // next table index
		gi       int     // next gap index
		next     float64 // open loop: intended time of the next send
		prev     = now   // the previous iteration's clock reading
		stopping bool
		drainEnd int64
		lastDone int64
		gmask    = len(d.gaps) - 1
		open     = d.gap > 0
		inflight = 0
		nfin     = 0 // RPCs in d.fin
	)
	next = float64(now)
	advance := func() {
		if d.gaps != nil {
			next += d.gaps[gi&gmask]
			gi++
		} else {
			next += d.gap
		}
	}

	// The thread's usage is read on the thread itself at the edges of the measured phase,
	// and so is the turnaround probe, by the goroutine that polls its CQ.
	var (
		measuring bool
		usage0    datapath.ThreadUsage
		usageAt   int64
		usageTID  int
		turn0     datapath.Turnaround
	)
	prober, _ := d.client.(datapath.TurnaroundProber)
	endUsage := func() {
		if !measuring {
			return
		}
		measuring = false
		u, err := datapath.SelfThreadUsage()
		if err == nil && datapath.Gettid() != usageTID {
			// The goroutine moved to another thread: it was not locked to one (tests).
			err = errThreadMoved
		}
		if st.UsageErr == nil {
			st.UsageErr = err
		}
		if err == nil && st.UsageErr == nil {
			st.Usage, st.UsageWall = u.Sub(usage0), time.Duration(now-usageAt)
		}
		if st.HasTurnaround {
			t, _ := prober.Turnarounds()
			st.Turnaround = t.Sub(turn0)
		}
	}

	// record takes the finished RPCs, already freed, into the Stats, the Recorder and Live.
	// It runs after the Progress that follows the sends their slots made room for: at depth
	// 1 the recording is then not between a completion and the next call going out, which
	// is what a round trip measures.
	record := func() error {
		if nfin == 0 {
			return nil
		}
		var liveBytes, liveErrs, mDone, mBytes, mErrs uint64
		var mClasses [rpcproto.NumKinds]uint64
		fin := d.fin[:nfin]
		nfin = 0
		for i := range fin {
			f := &fin[i]
			if f.err != nil {
				liveErrs++
				if f.t0 >= measure {
					mErrs++
					st.Errors++
					if st.FirstErr == nil {
						st.FirstErr = f.err
					}
					d.rec.Fail(f.proc, f.err)
				}
				continue
			}
			if f.call == rpcproto.Auto || f.reply == rpcproto.Auto || f.call >= rpcproto.NumKinds || f.reply >= rpcproto.NumKinds {
				return ErrBadClass
			}
			cls := max(f.call, f.reply)
			maxRTT = max(maxRTT, f.rtt)
			if d.live != nil {
				d.live.record(f.rtt)
				liveBytes += uint64(f.callSize) + uint64(f.replySize)
			}
			if f.t0 < measure {
				st.WarmupCompleted++
				continue
			}
			lastDone = max(lastDone, f.t0+f.rtt)
			mDone++
			mClasses[cls]++
			mBytes += uint64(f.callSize) + uint64(f.replySize)
			st.Completed++
			st.Procs[f.proc]++
			st.Classes[cls]++
			st.CallClasses[f.call]++
			st.ReplyClasses[f.reply]++
			st.CallBytes += uint64(f.callSize)
			st.ReplyBytes += uint64(f.replySize)
			d.rec.Record(Sample{Proc: f.proc, Call: f.call, Reply: f.reply, RTT: time.Duration(f.rtt), Payload: int(f.callSize) + int(f.replySize)})
		}
		if d.live != nil && len(fin) > 0 {
			d.live.Done.Add(uint64(len(fin)))
			d.live.Bytes.Add(liveBytes)
			if liveErrs > 0 {
				d.live.Errors.Add(liveErrs)
			}
			if mDone > 0 {
				d.live.MDone.Add(mDone)
				d.live.MBytes.Add(mBytes)
				for k, v := range mClasses {
					if v > 0 {
						d.live.MClasses[k].Add(v)
					}
				}
			}
			if mErrs > 0 {
				d.live.MErrors.Add(mErrs)
			}
		}
		return nil
	}

	for {
		if !measuring && !stopping && now >= measure && st.UsageWall == 0 {
			measuring, usageAt, usageTID = true, now, datapath.Gettid()
			usage0, st.UsageErr = datapath.SelfThreadUsage()
			if prober != nil {
				turn0, st.HasTurnaround = prober.Turnarounds()
			}
		}
		if !stopping {
			switch {
			case stop.Load():
				st.Interrupted = true
				stopping = true
			case now >= deadline && !open:
				stopping = true
			}
			// In open loop the send loop below first sends what was due before the deadline
			// (late, timed from its intended start): a poll iteration that happens to fall
			// just after the deadline must not turn a due send into a missed one.
			if stopping && open {
				// Intended sends that never went out were measured as nothing; count them
				// so a backlog shows.
				st.Missed += missed(next, measure, min(now, deadline), d.gap, d.gaps != nil)
			}
		}
		if !stopping {
			for len(d.free) > 0 {
				t := now
				if open {
					t = int64(next)
					if t > now {
						break
					}
					if t >= deadline {
						stopping = true
						break
					}
				}
				measured := t >= measure
				if measured && d.count > 0 && int64(st.Sent) >= d.count {
					stopping = true
					break
				}
				slot := d.free[len(d.free)-1]
				r := &d.reqs[slot]
				*r = d.table[ti&d.mask]
				r.Tag = uint64(slot)
				if err := d.client.Submit(r); err != nil {
					if err == ErrBusy || errors.Is(err, ErrBusy) {
						break
					}
					st.End = now
					return st, err
				}
				d.free = d.free[:len(d.free)-1]
				d.busy[slot] = true
				d.start[slot] = t
				inflight++
				ti++
				if measured {
					st.Sent++
					if open && t < prev {
						st.Late++
					}
				}
				if open {
					advance()
				}
			}
			if open && !stopping && now >= deadline {
				// What was due before the deadline and could not go (no free slot, a busy
				// client) never will: the backlog a too-slow server left.
				stopping = true
				st.Missed += missed(next, measure, deadline, d.gap, d.gaps != nil)
			}
		}
		if !stopping {
			if open && inflight == 0 && !stopping {
				if wait := int64(next) - now; wait >= idle {
					if err := record(); err != nil {
						st.End = now
						return st, err
					}
					time.Sleep(time.Duration(wait - int64(time.Millisecond)))
					prev, now = now, clock()
					continue
				}
			}
		}
		if stopping {
			endUsage()
			if err := record(); err != nil {
				st.End = now
				return st, err
			}
			if inflight == 0 {
				break
			}
			if d.Hurry != nil && d.Hurry.Load() {
				st.Abandoned, st.DrainSkipped = uint64(inflight), true
				break
			}
			if drainEnd == 0 {
				if drain <= 0 {
					drain = int64(DrainFor(time.Duration(maxRTT)))
				}
				drainEnd = now + drain
			} else if now >= drainEnd {
				st.Abandoned = uint64(inflight)
				break
			}
		}

		n, perr := d.client.Progress(d.done)
		// The RPCs the previous Progress returned are recorded only now. Submit may only
		// have staged the RPCs sent in their place (a deferring datapath), which this
		// Progress's poll put on the wire: recording before it would sit on their round
		// trips.
		if err := record(); err != nil {
			st.End = now
			return st, err
		}
		if n == 0 && perr == nil && waiter != nil && idler.ShouldWait() {
			// Never past the end of the phase, nor past an open-loop send.
			t := maxWait
			if !stopping {
				t = min(t, time.Duration(deadline-now))
				if open {
					t = min(t, time.Duration(int64(next)-now))
				}
			}
			if t > 0 {
				if err := waiter.Wait(t); err != nil && !errors.Is(err, datapath.ErrTimeout) {
					st.End = now
					return st, err
				}
				n, perr = d.client.Progress(d.done)
			}
		}
		if n > 0 {
			idler.Active()
		}
		prev, now = now, clock()
		if n > len(d.done) || n < 0 {
			st.End = now
			return st, ErrOverrun
		}
		// Free the slots now, so that the next RPCs go out first; record them after that.
		for i := range n {
			c := &d.done[i]
			slot := c.Tag
			if slot >= uint64(len(d.busy)) || !d.busy[slot] {
				// Keep what came before it in the batch.
				st.End = now
				if err := record(); err != nil {
					return st, err
				}
				return st, ErrBadTag
			}
			d.busy[slot] = false
			d.free = append(d.free, uint32(slot))
			inflight--
			t0 := d.start[slot]
			r := &d.reqs[slot]
			d.fin[nfin] = finished{t0: t0, rtt: now - t0, err: c.Err, proc: r.Proc, callSize: r.CallSize, replySize: r.ReplySize, call: c.CallClass, reply: c.ReplyClass}
			nfin++
		}
		if perr != nil {
			if err := record(); err != nil {
				st.End = now
				return st, err
			}
			st.End = max(lastDone, min(now, deadline))
			return st, perr
		}
	}
	st.End = lastDone
	if st.End == 0 {
		st.End = min(now, deadline)
	}
	return st, nil
}
