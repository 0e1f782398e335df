package session

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// IsTerminal reports whether w is a terminal (a TCGETS ioctl succeeds on it).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Progress shows a running point: its Header, then elapsed time, RPC/s and p50 over the last
// interval. On a terminal it rewrites one line in place several times a second, the header
// included, and erases it at the end, so that a sweep of any length takes one line; elsewhere
// (a CI log, a pipe) it prints the header and a plain line every few seconds, so logs stay
// readable. It reads only the
// pollers' Live counters, never their Recorders, so it costs the hot path nothing but the
// atomic adds Live already does. It writes to stderr, keeping stdout for results.
type Progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	label string
	lives []*workloads.Live
	clock func() int64
	// Point is this point's planned time, After that of the points still to run once it
	// ends: the ETA (Point 0: not known).
	Point, After time.Duration
	// Header is the point's line ("sweep point [3/30] ...: 100ms warm-up, then 300ms"),
	// shown as Start is called ("": none).
	Header string

	stop chan struct{}
	wg   sync.WaitGroup
}

// NewProgress is a Progress for the point label whose pollers count in lives, timed by clock
// (workloads.Now); Start shows it, End erases the line and returns once it is no longer written.
func NewProgress(w io.Writer, label string, lives []*workloads.Live, clock func() int64) *Progress {
	p := &Progress{w: w, tty: IsTerminal(w), label: label, lives: lives, clock: clock, stop: make(chan struct{})}
	p.every = 5 * time.Second
	if p.tty {
		p.every = 250 * time.Millisecond
	}
	return p
}

func (p *Progress) Start() {
	switch {
	case p.Header != "" && p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K%s", p.Header)
	case p.Header != "":
		fmt.Fprintln(p.w, p.Header)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(p.every)
		defer t.Stop()
		var prev workloads.LiveHist
		var prevDone uint64
		prevAt := p.clock()
		for {
			select {
			case <-p.stop:
				if p.tty {
					fmt.Fprint(p.w, "\r\x1b[K")
				}
				return
			case <-t.C:
			}
			now := p.clock()
			var h workloads.LiveHist
			var done uint64
			for _, l := range p.lives {
				l.AddTo(&h)
				done += l.Done.Load()
			}
			d := h.Sub(&prev)
			line := p.line(now, done-prevDone, time.Duration(now-prevAt), &d)
			prev, prevDone, prevAt = h, done, now
			if p.tty {
				fmt.Fprintf(p.w, "\r\x1b[K%s", line)
			} else {
				fmt.Fprintln(p.w, line)
			}
		}
	}()
}

// line formats one progress report for n RPCs finished over interval dt.
func (p *Progress) line(now int64, n uint64, dt time.Duration, h *workloads.LiveHist) string {
	var b strings.Builder
	if p.label != "" {
		b.WriteString(p.label)
		b.WriteString("  ")
	}
	phase, since := "measure", int64(0)
	if len(p.lives) > 0 {
		begin, measure := p.lives[0].Begin.Load(), p.lives[0].Measure.Load()
		since = now - begin
		if now < measure {
			phase = "warm-up"
		}
	}
	fmt.Fprintf(&b, "%-7s %6.1fs", phase, time.Duration(since).Seconds())
	if p.Point > 0 {
		left := max(p.Point-time.Duration(since), 0) + p.After
		fmt.Fprintf(&b, "  ETA %v", left.Round(time.Second))
	}
	rate := 0.0
	if dt > 0 {
		rate = float64(n) / dt.Seconds()
	}
	fmt.Fprintf(&b, "  %10.0f RPC/s", rate)
	if p50, ok := h.Quantile(0.5); ok {
		fmt.Fprintf(&b, "  p50 %v", p50.Round(p50/1000+1))
	} else {
		b.WriteString("  p50 -")
	}
	return b.String()
}

func (p *Progress) End() {
	close(p.stop)
	p.wg.Wait()
}
