package session

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

func TestProgressLine(t *testing.T) {
	var l workloads.Live
	l.Begin.Store(0)
	l.Measure.Store(int64(time.Second))
	p := NewProgress(&bytes.Buffer{}, "[1/4]", []*workloads.Live{&l}, nil)
	if p.tty {
		t.Fatal("a buffer is not a terminal")
	}
	var h workloads.LiveHist
	line := p.line(int64(500*time.Millisecond), 1000, 250*time.Millisecond, &h)
	if !strings.HasPrefix(line, "[1/4]  warm-up    0.5s") || !strings.Contains(line, "4000 RPC/s") || !strings.HasSuffix(line, "p50 -") {
		t.Fatalf("line %q", line)
	}
	if line := p.line(int64(2*time.Second), 0, time.Second, &h); !strings.Contains(line, "measure") {
		t.Fatalf("line %q", line)
	}
	// Three more points of 6 s after this one, 2 s into its 6: 4 s + 18 s to go.
	p.Point, p.After = 6*time.Second, 18*time.Second
	if line := p.line(int64(2*time.Second), 0, time.Second, &h); !strings.Contains(line, "measure    2.0s  ETA 22s") {
		t.Fatalf("line %q", line)
	}
}

// IsTerminal tells a pseudo-terminal from a pipe.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) || IsTerminal(&bytes.Buffer{}) {
		t.Fatal("a pipe or a buffer taken for a terminal")
	}
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	if !IsTerminal(ptmx) {
		t.Fatal("the pty master is not taken for a terminal")
	}
}

// On a terminal a sweep takes one line: each point's header is written in place and erased
// with its progress, never followed by a newline; elsewhere the header is a line of the log.
func TestProgressHeaderInPlace(t *testing.T) {
	var l workloads.Live
	for _, tty := range []bool{true, false} {
		var b bytes.Buffer
		for i := range 3 {
			p := NewProgress(&b, "[1/3]", []*workloads.Live{&l}, workloads.Now)
			p.tty = tty
			p.Header = "sweep point [" + string(rune('1'+i)) + "/3]: no warm-up, then 1s"
			p.Start()
			p.End()
		}
		switch out := b.String(); {
		case tty && (strings.Contains(out, "\n") || strings.Count(out, "\r\x1b[K") != 6 || !strings.HasSuffix(out, "\r\x1b[K")):
			t.Errorf("terminal: %q", out)
		case !tty && strings.Count(out, "\n") != 3:
			t.Errorf("log: %q", out)
		}
	}
}
