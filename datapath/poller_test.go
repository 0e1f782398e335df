package datapath

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

// fakeCQ is an in-memory CQ: Push queues completions (from any goroutine), Poll drains them,
// Wait blocks until something is pushed. It allocates nothing per Poll.
type fakeCQ struct {
	mu      sync.Mutex
	q       []Completion
	head    int
	sig     chan struct{}
	timer   *time.Timer
	pollErr error
	waitErr error
}

var _ CQ = (*fakeCQ)(nil)

func newFakeCQ() *fakeCQ {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &fakeCQ{q: make([]Completion, 0, 1024), sig: make(chan struct{}, 1), timer: t}
}

func (f *fakeCQ) Push(wcs ...Completion) {
	f.mu.Lock()
	f.q = append(f.q, wcs...)
	f.mu.Unlock()
	select {
	case f.sig <- struct{}{}:
	default:
	}
}

func (f *fakeCQ) Poll(wcs []Completion) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pollErr != nil {
		return 0, f.pollErr
	}
	n := copy(wcs, f.q[f.head:])
	f.head += n
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	}
	return n, nil
}

func (f *fakeCQ) Wait(timeout time.Duration) error {
	if f.waitErr != nil {
		return f.waitErr
	}
	f.mu.Lock()
	pending := f.head < len(f.q)
	f.mu.Unlock()
	if pending {
		return nil
	}
	f.timer.Reset(timeout)
	defer f.timer.Stop()
	select {
	case <-f.sig:
		return nil
	case <-f.timer.C:
		return ErrTimeout
	}
}

func (f *fakeCQ) Close() error { return nil }

// emptyCQ never has a completion: the cost of the loop itself.
type emptyCQ struct{}

func (emptyCQ) Poll([]Completion) (int, error) { return 0, nil }
func (emptyCQ) Wait(time.Duration) error       { return ErrTimeout }
func (emptyCQ) Close() error                   { return nil }

// recorder is a Handler that records what it saw and stops after want completions.
type recorder struct {
	ids       []uint64
	idles     int
	want      int
	onFirst   func()
	handleErr error
}

func (r *recorder) Handle(wcs []Completion) error {
	if r.onFirst != nil {
		r.onFirst()
		r.onFirst = nil
	}
	for _, wc := range wcs {
		r.ids = append(r.ids, wc.ID)
	}
	if r.handleErr != nil {
		return r.handleErr
	}
	if r.want > 0 && len(r.ids) >= r.want {
		return ErrStopPoller
	}
	return nil
}

func (r *recorder) Idle() error { r.idles++; return nil }

func completions(from, n int) []Completion {
	wcs := make([]Completion, n)
	for i := range wcs {
		wcs[i] = Completion{ID: uint64(from + i), Op: OpRecv}
	}
	return wcs
}

func TestPollerDeliversInOrderInBatches(t *testing.T) {
	for _, mode := range []PollMode{PollBusy, PollEvent, PollHybrid} {
		t.Run(mode.String(), func(t *testing.T) {
			cq := newFakeCQ()
			const total = 500
			h := &recorder{want: total, ids: make([]uint64, 0, total)}
			p := NewPoller(PollerConfig{Poll: Poll{Mode: mode}, Batch: 7})
			p.Start(cq, h)
			for i := 0; i < total; i += 50 {
				cq.Push(completions(i, 50)...)
				runtime.Gosched()
			}
			if err := p.Wait(); err != nil {
				t.Fatalf("Run = %v, want nil after ErrStopPoller", err)
			}
			for i, id := range h.ids {
				if id != uint64(i) {
					t.Fatalf("completion %d has id %d: out of order or lost", i, id)
				}
			}
			if len(h.ids) != total {
				t.Fatalf("handled %d completions, want %d", len(h.ids), total)
			}
			s := p.Stats()
			if s.Completions != total || s.Iterations < s.EmptyPolls+(total+6)/7 {
				t.Fatalf("stats %+v for %d completions in batches of at most 7", s, total)
			}
			if s.EmptyPolls != uint64(h.idles) || s.CPU != -1 {
				t.Fatalf("stats %+v, handler saw %d idles", s, h.idles)
			}
			// A busy poller never waits; an event poller waits after every empty poll.
			if mode == PollBusy && s.Waits != 0 || mode == PollEvent && s.Waits != s.EmptyPolls {
				t.Fatalf("%s poller: %d waits for %d empty polls", mode, s.Waits, s.EmptyPolls)
			}
		})
	}
}

func TestPollerEventModeBlocks(t *testing.T) {
	// With nothing to do for a while, an event poller sleeps in Wait; a busy one would spin
	// through thousands of empty polls. Counting waits (not time) shows the difference.
	cq := newFakeCQ()
	h := &recorder{want: 1}
	p := NewPoller(PollerConfig{Poll: Poll{Mode: PollEvent}, EventTimeout: time.Hour})
	p.Start(cq, h)
	time.Sleep(20 * time.Millisecond)
	cq.Push(Completion{ID: 9})
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.EmptyPolls > 2 || s.Waits != s.EmptyPolls || s.Completions != 1 {
		t.Fatalf("event poller with one hour timeout: %+v; want at most 2 empty polls, each followed by a wait", s)
	}
}

func TestPollerStop(t *testing.T) {
	for _, mode := range []PollMode{PollBusy, PollEvent, PollHybrid} {
		p := NewPoller(PollerConfig{Poll: Poll{Mode: mode}, EventTimeout: time.Millisecond})
		h := &recorder{}
		p.Start(emptyCQ{}, h)
		for p.Stats().Iterations == 0 {
			runtime.Gosched()
		}
		if err := p.Stop(); err != nil {
			t.Fatalf("%s: Stop = %v", mode, err)
		}
		if s := p.Stats(); s.Iterations == 0 || s.Iterations != s.EmptyPolls || s.EmptyPolls != uint64(h.idles) {
			t.Fatalf("%s: after Stop, stats %+v and %d idles; final counters must be published", mode, s, h.idles)
		}
		if err := p.Run(emptyCQ{}, h); !errors.Is(err, errPollerUsed) {
			t.Fatalf("%s: second Run = %v", mode, err)
		}
	}
}

func TestPollerErrors(t *testing.T) {
	boom := errors.New("boom")
	cq := newFakeCQ()
	cq.Push(Completion{ID: 1})
	p := NewPoller(PollerConfig{})
	if err := runInGoroutine(p, cq, &recorder{handleErr: boom}); err != boom {
		t.Fatalf("handler error: Run = %v, want it unchanged", err)
	}

	cq = newFakeCQ()
	cq.pollErr = errors.New("cq overrun")
	var oe *OpError
	if err := runInGoroutine(NewPoller(PollerConfig{}), cq, &recorder{}); !errors.As(err, &oe) || oe.Op != "poll cq" || oe.Err != cq.pollErr {
		t.Fatalf("poll error: Run = %v", err)
	}

	cq = newFakeCQ()
	cq.waitErr = ErrClosed
	if err := runInGoroutine(NewPoller(PollerConfig{Poll: Poll{Mode: PollEvent}}), cq, &recorder{}); !errors.As(err, &oe) || oe.Op != "wait cq" || !errors.Is(err, ErrClosed) {
		t.Fatalf("wait error: Run = %v", err)
	}
}

// runInGoroutine runs p in a goroutine of its own (Run locks its thread for good) and returns
// Run's result.
func runInGoroutine(p *Poller, cq CQ, h Handler) error {
	errc := make(chan error, 1)
	go func() { errc <- p.Run(cq, h) }()
	return <-errc
}

// countingHandler is the hot-path shape: handle in place, no retained state.
type countingHandler struct{ sum, idles uint64 }

func (c *countingHandler) Handle(wcs []Completion) error {
	for i := range wcs {
		c.sum += wcs[i].ID
	}
	return nil
}
func (c *countingHandler) Idle() error { c.idles++; return nil }

func TestPollerIterationZeroAllocs(t *testing.T) {
	for _, mode := range []PollMode{PollBusy, PollEvent, PollHybrid} {
		cq := newFakeCQ()
		p := NewPoller(PollerConfig{Poll: Poll{Mode: mode}, Batch: 4, EventTimeout: time.Microsecond})
		h := &countingHandler{}
		batch := completions(0, 6)
		i := 0
		allocs := testing.AllocsPerRun(2000, func() {
			// Alternate full, partial and empty polls (empty ones wait in event mode).
			if i%3 == 0 {
				cq.Push(batch...)
			}
			i++
			if err := p.step(cq, h); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Fatalf("%s: a poll loop iteration allocates %v times", mode, allocs)
		}
		if h.idles == 0 || h.sum == 0 {
			t.Fatalf("%s: the iterations measured never idled (%d) or handled (%d)", mode, h.idles, h.sum)
		}
	}
}

// allocHandler counts heap allocations over windows of iterations inside Run, on the
// poller's own locked thread.
type allocHandler struct {
	calls, window int
	mallocs       [5]uint64
	cq            *fakeCQ
	refill        []Completion
}

func (a *allocHandler) Handle([]Completion) error { return a.tick() }
func (a *allocHandler) Idle() error {
	a.cq.Push(a.refill...)
	return a.tick()
}

func (a *allocHandler) tick() error {
	a.calls++
	if a.calls%a.window != 0 {
		return nil
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	k := a.calls/a.window - 1
	a.mallocs[k] = ms.Mallocs
	if k == len(a.mallocs)-1 {
		return ErrStopPoller
	}
	return nil
}

func TestPollerRunZeroAllocs(t *testing.T) {
	cq := newFakeCQ()
	h := &allocHandler{window: 50000, cq: cq, refill: completions(0, 3)}
	p := NewPoller(PollerConfig{Batch: 2})
	p.Start(cq, h)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	// MemStats counts the whole process, and the runtime allocates now and then in the
	// background (a goroutine for a GC worker), so one window clean of allocations is the
	// proof: an allocation per iteration would put tens of thousands in every window.
	var counts []uint64
	for k := 1; k < len(h.mallocs); k++ {
		n := h.mallocs[k] - h.mallocs[k-1]
		if n == 0 {
			return
		}
		counts = append(counts, n)
	}
	t.Fatalf("heap allocations in windows of %d poll loop iterations: %v", h.window, counts)
}

func TestCPUPickerRoundRobin(t *testing.T) {
	c, err := NewCPUPicker(3, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for i := 0; i < 7; i++ {
		got = append(got, c.Next())
	}
	want := []int{3, 5, 7, 3, 5, 7, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("picked %v, want %v", got, want)
		}
	}
	if _, err := NewCPUPicker(-1); err == nil {
		t.Fatal("a negative CPU was accepted")
	}
}

func BenchmarkPollerStepEmpty(b *testing.B) {
	p := NewPoller(PollerConfig{})
	h := &countingHandler{}
	var cq CQ = emptyCQ{}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.step(cq, h)
	}
}

// stopAfter stops the poller after n empty iterations: the whole Run loop, stop flag and
// stats publication included.
type stopAfter struct{ n, i int }

func (s *stopAfter) Handle([]Completion) error { return nil }
func (s *stopAfter) Idle() error {
	s.i++
	if s.i >= s.n {
		return ErrStopPoller
	}
	return nil
}

func benchmarkRunEmpty(b *testing.B, cfg PollerConfig) {
	b.ReportAllocs()
	p := NewPoller(cfg)
	h := &stopAfter{n: b.N}
	b.ResetTimer()
	p.Start(emptyCQ{}, h)
	if err := p.Wait(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(p.Stats().Iterations)/float64(b.N), "polls/op")
}

func BenchmarkPollerRunEmpty(b *testing.B) { benchmarkRunEmpty(b, PollerConfig{}) }

// fullCQ always has a full batch: the loop's cost per completion when busy.
type fullCQ struct{ next uint64 }

func (f *fullCQ) Poll(wcs []Completion) (int, error) {
	for i := range wcs {
		wcs[i] = Completion{ID: f.next, Op: OpRecv}
		f.next++
	}
	return len(wcs), nil
}
func (f *fullCQ) Wait(time.Duration) error { return nil }
func (f *fullCQ) Close() error             { return nil }

func BenchmarkPollerStepFullBatch(b *testing.B) {
	p := NewPoller(PollerConfig{})
	h := &countingHandler{}
	cq := &fullCQ{}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.step(cq, h)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*p.cfg.Batch), "ns/completion")
}

// probedCQ is an empty CQ with a turnaround probe; polled records the goroutine's reads.
type probedCQ struct {
	emptyCQ
	reads int
}

func (q *probedCQ) Turnarounds() (Turnaround, bool) {
	q.reads++
	return Turnaround{Count: 7, Total: 7 * time.Microsecond}, true
}

// A poller reads its CQ's turnaround probe once, when Run ends, and reports it in Stats.
func TestPollerReportsTurnarounds(t *testing.T) {
	q := &probedCQ{}
	p := NewPoller(PollerConfig{})
	p.Start(q, &recorder{})
	if s := p.Stats(); s.HasTurnaround {
		t.Fatal("turnarounds reported while running")
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	s := p.Stats()
	if !s.HasTurnaround || s.Turnaround.Count != 7 || q.reads != 1 {
		t.Fatalf("after Stop: %+v (probe read %d times); want the probe's 7 turnarounds, read once", s, q.reads)
	}

	p = NewPoller(PollerConfig{})
	p.Start(emptyCQ{}, &recorder{})
	if err := p.Stop(); err != nil || p.Stats().HasTurnaround {
		t.Fatalf("a CQ without a probe: %+v, %v", p.Stats(), err)
	}
}
