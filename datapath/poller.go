package datapath

import (
	"errors"
	"runtime"
	"sync/atomic"
	"time"
)

// PollerConfig configures a Poller. The zero value is a busy, unpinned poller with the
// default batch.
type PollerConfig struct {
	// Pin pins the poller's OS thread to CPU with sched_setaffinity. Without it the thread is
	// still locked to the poller's goroutine but the kernel places it. Pinning is Linux only;
	// elsewhere Run fails with an error wrapping ErrNotSupported. See CPUPicker for choosing
	// CPUs.
	Pin bool
	// CPU is the CPU to pin to when Pin is set, as numbered in /proc/cpuinfo.
	CPU int
	// Poll is how the poller waits when its CQ is empty (zero value: busy).
	Poll Poll
	// Batch is how many completions one Poll may return (default DefaultPollBatch).
	Batch int
	// EventTimeout bounds each CQ.Wait in event and hybrid modes (default
	// DefaultEventTimeout), and so how long Stop can take to be noticed there.
	EventTimeout time.Duration
}

// Defaults for zero PollerConfig fields.
const (
	DefaultPollBatch    = 32
	DefaultEventTimeout = 10 * time.Millisecond
)

// Handler consumes a poller's completions. Its methods run on the poller's locked thread, one
// at a time, and post follow-up work (receives to replace consumed ones, replies, the next
// requests) to the connections the poller owns. Like the poller, they must not block, take
// contended locks or allocate per call.
type Handler interface {
	// Handle processes a batch of completions in place. wcs belongs to the poller and is
	// overwritten by the next poll: copy what must outlive the call. An error stops the
	// poller and Run returns it (ErrStopPoller stops it cleanly).
	Handle(wcs []Completion) error
	// Idle is called after every poll that found nothing, before an event-mode poller
	// blocks: the place to flush batched posts or notice work that does not come from the
	// CQ (an open-loop workload's next arrival). Errors are treated as in Handle.
	Idle() error
}

// ErrStopPoller, returned by a Handler, ends Run with a nil error.
var ErrStopPoller = errors.New("datapath: stop poller")

var errPollerUsed = errors.New("datapath: poller already started (a Poller runs once)")

// PollerStats are a poller's counters. Pollers publish them every statsEvery iterations,
// before every CQ.Wait and when they stop, so a running busy poller's figures lag by at most
// statsEvery iterations.
type PollerStats struct {
	// CPU is the CPU the thread is pinned to, or -1 when unpinned or not yet running.
	CPU int `json:"cpu"`
	// Iterations counts polls.
	Iterations uint64 `json:"iterations"`
	// EmptyPolls counts polls that found no completion.
	EmptyPolls uint64 `json:"empty_polls"`
	// Completions counts completions handed to the Handler.
	Completions uint64 `json:"completions"`
	// Waits counts CQ.Wait calls (event and hybrid modes only).
	Waits uint64 `json:"waits"`
	// Turnaround is what the CQ's turnaround probe (TurnaroundProber) measured, read when
	// Run returned; HasTurnaround says the probe was on.
	Turnaround    Turnaround `json:"-"`
	HasTurnaround bool       `json:"-"`
}

const statsEvery = 1024

// counters are the poller thread's own: plain fields, no atomic traffic per iteration.
type counters struct {
	iterations, empty, completions, waits uint64
}

// Poller runs poll → handle → post on one locked, optionally pinned, OS thread. A Poller runs
// once: create one per polling goroutine.
//
// Run (or Start) locks the goroutine to its thread and never unlocks it: the thread may be
// pinned, and a pinned thread must not go back to the scheduler to run other goroutines.
// (An unpinned event or hybrid poller is not locked: it blocks when idle, and the runtime
// wakes a parked goroutine far more cheaply than a locked thread.)
// When the poller's goroutine exits, the runtime discards the thread. So call Run from a
// goroutine dedicated to the poller that exits when Run returns, or use Start.
type Poller struct {
	cfg   PollerConfig
	wcs   []Completion
	c     counters
	idle  Idler
	state atomic.Uint32 // 0 new, 1 started
	stop  atomic.Bool
	bg    atomic.Bool // started by Start
	done  chan struct{}
	err   error // Run's result when started by Start; read after done closes

	cpu                                   atomic.Int32
	iterations, empty, completions, waits atomic.Uint64
	// turn is the CQ's turnaround probe as Run left it (written before done closes, or
	// before Run returns to its caller).
	turn    Turnaround
	hasTurn atomic.Bool
}

// NewPoller returns a poller configured by cfg.
func NewPoller(cfg PollerConfig) *Poller {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultPollBatch
	}
	if cfg.EventTimeout <= 0 {
		cfg.EventTimeout = DefaultEventTimeout
	}
	cfg.Poll = cfg.Poll.Normalized()
	p := &Poller{cfg: cfg, wcs: make([]Completion, cfg.Batch), done: make(chan struct{}), idle: NewIdler(cfg.Poll, nil)}
	p.cpu.Store(-1)
	return p
}

// Config is the configuration in effect, defaults filled in.
func (p *Poller) Config() PollerConfig { return p.cfg }

// Run polls cq and hands completions to h until Stop is called, h returns an error, or the
// CQ fails. It blocks in the calling goroutine, which it locks to its OS thread for good
// (see Poller). It returns nil after Stop or ErrStopPoller, the handler's error, or an
// *OpError for pinning or CQ failures.
func (p *Poller) Run(cq CQ, h Handler) error {
	if !p.state.CompareAndSwap(0, 1) {
		return errPollerUsed
	}
	if p.cfg.Pin || p.cfg.Poll.Mode == PollBusy {
		// Never unlocked: see Poller. An unpinned poller that blocks when idle stays an
		// ordinary goroutine, which the runtime wakes far more cheaply than a locked thread.
		runtime.LockOSThread()
	}
	if p.cfg.Pin {
		if err := PinThread(p.cfg.CPU); err != nil {
			return err
		}
		p.cpu.Store(int32(p.cfg.CPU))
	}
	var err error
	for !p.stop.Load() {
		if err = p.step(cq, h); err != nil {
			break
		}
		if p.c.iterations%statsEvery == 0 {
			p.publish()
		}
	}
	p.publish()
	// The probe is read by the goroutine that polled, once, at the end: reading it on the
	// way would put the reading on some round trip.
	if t, ok := Turnarounds(cq); ok {
		p.turn = t
		p.hasTurn.Store(true)
	}
	if errors.Is(err, ErrStopPoller) {
		err = nil
	}
	return err
}

// step is one iteration: poll, then handle or idle (and wait, as the Poll policy says).
func (p *Poller) step(cq CQ, h Handler) error {
	n, err := cq.Poll(p.wcs)
	p.c.iterations++
	if err != nil {
		return &OpError{Op: "poll cq", Err: err}
	}
	if n > 0 {
		p.c.completions += uint64(n)
		p.idle.Active()
		return h.Handle(p.wcs[:n])
	}
	p.c.empty++
	if err := h.Idle(); err != nil {
		return err
	}
	if p.idle.ShouldWait() {
		p.c.waits++
		p.publish() // about to sleep: keep Stats current for whoever watches meanwhile
		if err := cq.Wait(p.cfg.EventTimeout); err != nil && !errors.Is(err, ErrTimeout) {
			return &OpError{Op: "wait cq", Err: err}
		}
	}
	return nil
}

func (p *Poller) publish() {
	p.iterations.Store(p.c.iterations)
	p.empty.Store(p.c.empty)
	p.completions.Store(p.c.completions)
	p.waits.Store(p.c.waits)
}

// Start runs the poller in a new goroutine; Stop or Wait collect its result.
func (p *Poller) Start(cq CQ, h Handler) {
	p.bg.Store(true)
	go func() {
		p.err = p.Run(cq, h)
		close(p.done)
		// Returning here with the thread still locked makes the runtime discard it.
	}()
}

// Stop asks the poller to end after its current iteration. For a poller started with Start
// it waits for the end and returns Run's result; otherwise it returns nil at once and Run
// returns in the goroutine running it. Stop must not be called from the Handler (return
// ErrStopPoller instead).
func (p *Poller) Stop() error {
	p.stop.Store(true)
	if !p.bg.Load() {
		return nil
	}
	<-p.done
	return p.err
}

// Wait waits for a poller started with Start to end by itself (a handler error, a CQ failure)
// and returns Run's result.
func (p *Poller) Wait() error {
	<-p.done
	return p.err
}

// Stats returns the poller's counters; safe to call from any goroutine. The turnaround
// probe's reading is there once Run returned.
func (p *Poller) Stats() PollerStats {
	s := PollerStats{
		CPU:         int(p.cpu.Load()),
		Iterations:  p.iterations.Load(),
		EmptyPolls:  p.empty.Load(),
		Completions: p.completions.Load(),
		Waits:       p.waits.Load(),
	}
	if p.hasTurn.Load() {
		s.Turnaround, s.HasTurnaround = p.turn, true
	}
	return s
}

// CPUPicker hands out CPUs round-robin from a set, by default the CPUs this process may run
// on, so that pollers spread one per CPU before any two share one. Safe for concurrent use.
type CPUPicker struct {
	cpus []int
	next atomic.Uint32
}

// NewCPUPicker picks from cpus, or from AllowedCPUs when cpus is empty.
func NewCPUPicker(cpus ...int) (*CPUPicker, error) {
	if len(cpus) == 0 {
		var err error
		if cpus, err = AllowedCPUs(); err != nil {
			return nil, err
		}
	}
	for _, c := range cpus {
		if c < 0 {
			return nil, &OpError{Op: "cpu picker", Err: errors.New("negative CPU number")}
		}
	}
	return &CPUPicker{cpus: append([]int(nil), cpus...)}, nil
}

// Next returns the next CPU in round-robin order.
func (c *CPUPicker) Next() int {
	i := c.next.Add(1) - 1
	return c.cpus[int(i%uint32(len(c.cpus)))]
}

// CPUs is the set picked from, in order.
func (c *CPUPicker) CPUs() []int { return append([]int(nil), c.cpus...) }
