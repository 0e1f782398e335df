package workloads

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// Opener opens the Client of one poller, serving conns connections, on that poller's own
// goroutine (locked to its thread and pinned), so that the engine's per-poller state is
// created where it runs. The Client belongs to that goroutine. If it implements io.Closer,
// Run closes it there when the poller is done.
type Opener func(ctx context.Context, poller, conns int) (Client, error)

// Runner runs a workload on Config.Pollers pinned pollers, one Driver and Client each.
type Runner struct {
	// Config is the workload; Run normalizes it.
	Config Config
	// Open makes each poller's Client.
	Open Opener
	// Recorder returns poller i's Recorder (nil function or nil result: Discard). Each poller
	// gets its own, so nothing is shared on the hot path; the caller merges them afterwards.
	Recorder func(poller int) Recorder
	// Live, when it has Config.Pollers entries, receives each poller's progress.
	Live []*Live
	// Clock overrides the Drivers' clock (tests).
	Clock func() int64
	// Hurry, once done (nil: never), makes the Drivers of a stopped run skip the rest of
	// their drain (Driver.Hurry).
	Hurry context.Context
}

// PollerResult is what one poller did.
type PollerResult struct {
	Poller int `json:"poller"`
	// CPU is the CPU the poller was pinned to, -1 if unpinned.
	CPU   int   `json:"cpu"`
	Stats Stats `json:"stats"`
	Err   error `json:"-"`
}

// Result is a finished (or failed, or interrupted) run.
type Result struct {
	// Config is the normalized workload.
	Config  Config         `json:"config"`
	Pollers []PollerResult `json:"pollers"`
	// Total merges every poller's Stats.
	Total Stats `json:"total"`
}

// RunError is a run that ended because a poller failed: which one, at which step, and why.
type RunError struct {
	Poller int
	Op     string // "open", "pin", "run", "close"
	Err    error
}

func (e *RunError) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Op+" ") {
		// "pin poller to cpu 3: ..." says the step already.
		return fmt.Sprintf("poller %d: %s", e.Poller, msg)
	}
	return fmt.Sprintf("poller %d: %s: %s", e.Poller, e.Op, msg)
}
func (e *RunError) Unwrap() error { return e.Err }

// Run opens every poller's Client, starts the Drivers together (so their warm-ups line up)
// and waits for them. Cancelling ctx ends the run cleanly (drained, Stats.Interrupted); a
// poller that fails ends the others too. The Result holds everything measured, also when err
// is not nil: the first poller error, as a *RunError.
func (r *Runner) Run(ctx context.Context) (Result, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	c, err := r.Config.Normalized()
	if err != nil {
		return Result{Config: r.Config}, err
	}
	if r.Open == nil {
		return Result{Config: c}, errors.New("workloads: Runner without an Opener")
	}
	res := Result{Config: c, Pollers: make([]PollerResult, c.Pollers)}
	var (
		opened  sync.WaitGroup // every poller has its Client (or failed)
		done    sync.WaitGroup
		failed  atomic.Bool
		startCh = make(chan struct{})
	)
	opened.Add(c.Pollers)
	done.Add(c.Pollers)
	for i := range c.Pollers {
		cpu := -1
		if len(c.CPUs) > 0 {
			cpu = c.CPUs[i%len(c.CPUs)]
		}
		pr := &res.Pollers[i]
		pr.Poller, pr.CPU = i, cpu
		go func() {
			defer done.Done()
			fail := func(op string, err error) {
				pr.Err = &RunError{Poller: i, Op: op, Err: err}
				failed.Store(true)
				stop()
			}
			if err := lockAndPin(cpu, c.Poll); err != nil {
				fail("pin", err)
				opened.Done()
				return
			}
			cl, err := r.Open(ctx, i, c.PollerShare(i))
			if err != nil {
				fail("open", err)
				opened.Done()
				return
			}
			defer func() {
				if cl, ok := cl.(io.Closer); ok {
					if err := cl.Close(); err != nil && pr.Err == nil {
						fail("close", err)
					}
				}
			}()
			var rec Recorder
			if r.Recorder != nil {
				rec = r.Recorder(i)
			}
			var live *Live
			if len(r.Live) == c.Pollers {
				live = r.Live[i]
			}
			d, err := NewDriver(c, i, cl, rec, live)
			opened.Done()
			if err != nil {
				fail("run", err)
				return
			}
			d.Clock = r.Clock
			d.Hurry = r.Hurry
			<-startCh
			if failed.Load() {
				return
			}
			st, err := d.Run(ctx)
			pr.Stats = st
			if err != nil {
				fail("run", err)
			}
		}()
	}
	opened.Wait()
	close(startCh)
	done.Wait()

	var first error
	for i := range res.Pollers {
		res.Total.Merge(&res.Pollers[i].Stats)
		if first == nil && res.Pollers[i].Err != nil {
			first = res.Pollers[i].Err
		}
	}
	if first != nil {
		// The others saw stop because this one failed, not because the user asked.
		res.Total.Interrupted = false
	}
	return res, first
}
