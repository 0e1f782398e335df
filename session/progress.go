package session

import (
	"fmt"
	"io"
	"os"
	"strings"
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

// Display shows a running point (Config.Progress). The session reads the pollers' Live
// counters on one ticker, for the point's Intervals and for the display: it calls Update
// about every Every (0: never), never concurrently, and End once the point is over.
type Display interface {
	Every() time.Duration
	Update(now int64)
	End()
}

// Progress is the Display of a terminal or a log: its Header, then elapsed time, RPC/s and
// p50 over the last interval. On a terminal it rewrites one line in place several times a
// second, the header included, and erases it at the end, so that a sweep of any length
// takes one line; elsewhere (a CI log, a pipe) it prints the header and a plain line every
// few seconds, so logs stay readable. It reads only the pollers' Live counters, never their
// Recorders, so it costs the hot path nothing but the atomic adds Live already does. It
// writes to stderr, keeping stdout for results.
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

	prev     workloads.LiveHist
	prevDone uint64
	prevAt   int64
}

var _ Display = (*Progress)(nil)

// NewProgress is a Progress for the point label whose pollers count in lives, timed by clock
// (workloads.Now); Start shows it, End erases the line.
func NewProgress(w io.Writer, label string, lives []*workloads.Live, clock func() int64) *Progress {
	p := &Progress{w: w, tty: IsTerminal(w), label: label, lives: lives, clock: clock}
	p.every = 5 * time.Second
	if p.tty {
		p.every = 250 * time.Millisecond
	}
	return p
}

// Start shows the header; the interval of the first Update starts here.
func (p *Progress) Start() {
	switch {
	case p.Header != "" && p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K%s", p.Header)
	case p.Header != "":
		fmt.Fprintln(p.w, p.Header)
	}
	if p.clock != nil {
		p.prevAt = p.clock()
	}
}

func (p *Progress) Every() time.Duration { return p.every }

// Update shows the interval since the last Update (or Start) ending at now.
func (p *Progress) Update(now int64) {
	var h workloads.LiveHist
	var done uint64
	for _, l := range p.lives {
		l.AddTo(&h)
		done += l.Done.Load()
	}
	d := h.Sub(&p.prev)
	line := p.line(now, done-p.prevDone, time.Duration(now-p.prevAt), &d)
	p.prev, p.prevDone, p.prevAt = h, done, now
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
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

// End erases the line on a terminal.
func (p *Progress) End() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
