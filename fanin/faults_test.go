package fanin_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// strayEnv makes the test binary a stray process instead: it connects to the port it names.
const strayEnv = "FANIN_TEST_STRAY_PORT"

func TestMain(m *testing.M) {
	if port := os.Getenv(strayEnv); port != "" {
		if err := strays("127.0.0.1:" + port); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// strayConns is how many connections strays makes.
const strayConns = 7

// strays connects to a coordinator at addr as a process outside the job would: hellos for
// client rank 1 and server rank 0 without the secret, one with a wrong secret, one for a rank
// not in the job, a first message that is not a hello, a 256 MiB frame header, and a
// connection that says nothing.
func strays(addr string) error {
	frame := func(s string) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(s))), s...) }
	for _, b := range [][]byte{
		frame(`{"kind":"hello","rank":1,"host":"stray","role":"client"}`),
		frame(`{"kind":"hello","rank":0,"host":"stray","role":"server"}`),
		frame(`{"kind":"hello","rank":2,"host":"stray","role":"client","secret":"0123456789abcdef"}`),
		frame(`{"kind":"hello","rank":99,"host":"stray","role":"client"}`),
		frame(`{"kind":"result","rank":1}`),
		{0x0f, 0xff, 0xff, 0xff},
		nil,
	} {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return fmt.Errorf("stray: %w", err)
		}
		c.Write(b)
		time.Sleep(50 * time.Millisecond)
		c.Close()
	}
	return nil
}

// runStrays runs strays in another process, against port.
func runStrays(t *testing.T, port int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), strayEnv+"="+strconv.Itoa(port))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("stray process: %v: %s", err, out)
	}
}

// listening is the TCP ports this process listens on (its sockets in /proc/net/tcp*).
func listening(t *testing.T) []int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			if p, err := strconv.ParseInt(f[1][strings.LastIndexByte(f[1], ':')+1:], 16, 32); err == nil {
				ports = append(ports, int(p))
			}
		}
	}
	return ports
}

// heldComm holds its rank's first barrier until hold is closed: the job's ranks wait for it
// after rank 0's coordinator listens and before any rank joins it.
type heldComm struct {
	fanin.Comm
	hold <-chan struct{}
	once sync.Once
}

func (c *heldComm) Barrier() error {
	c.once.Do(func() { <-c.hold })
	return c.Comm.Barrier()
}

// syncBuffer is a log several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Stray connections from another process, before any rank joined (a hello naming a rank
// first) and while the ranks measure (hellos naming ranks that joined, a wrong secret, a
// 256 MiB frame header, no hello): every one is refused, the job completes with every real
// rank's point, and rank 0 says what it refused.
func TestFanInRefusesStrays(t *testing.T) {
	out := filepath.Join(t.TempDir(), "strays.json")
	c := config(t, out, time.Second, plain)
	hold, measuring := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var log syncBuffer
	comms := fanin.NewLocal(4, "localhost")
	comms[1] = &heldComm{Comm: comms[1], hold: hold}
	var strayed sync.WaitGroup
	strayed.Add(1)
	go func() {
		defer strayed.Done()
		defer close(hold)
		var ports []int
		for deadline := time.Now().Add(10 * time.Second); len(ports) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			ports = listening(t)
		}
		if len(ports) != 1 {
			t.Errorf("rank 0's coordinator: listening on ports %v, want one", ports)
			return
		}
		runStrays(t, ports[0]) // before any rank joined
		strayed.Add(1)
		go func() {
			defer strayed.Done()
			select {
			case <-measuring:
				time.Sleep(200 * time.Millisecond)
				runStrays(t, ports[0]) // while the ranks measure
			case <-time.After(30 * time.Second):
				t.Error("no rank started measuring")
			}
		}()
	}()
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cf := c(i)
			cf.Comm = comms[i]
			if i == 0 {
				cf.Log = &log
			}
			measure := cf.Measure
			cf.Measure = func(ctx, hurry context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
				once.Do(func() { close(measuring) })
				return measure(ctx, hurry, addr, wrap)
			}
			_, errs[i] = fanin.Run(context.Background(), cf)
		}()
	}
	wg.Wait()
	strayed.Wait()
	f := succeeded(t, errs, out)
	fi := f.Points[0].FanIn
	if f.Status.State != results.StateComplete || len(fi.Ranks) != 3 || fi.ServerRanks[0].CPU == nil {
		t.Fatalf("status %+v, %d client ranks, server rank %+v: want a complete run of 3 client ranks", f.Status, len(fi.Ranks), fi.ServerRanks[0])
	}
	if fi.RefusedCount != 2*strayConns || len(fi.Refused) != 2*strayConns {
		t.Errorf("refused %d connections (%d listed), want %d: %+v", fi.RefusedCount, len(fi.Refused), 2*strayConns, fi.Refused)
	}
	var causes []string
	for _, r := range fi.Refused {
		causes = append(causes, r.Cause)
	}
	for _, want := range []string{"a hello for rank 1 without the job's secret", "a hello for rank 0 without the job's secret",
		"its first message is \"result\", not a hello", "message of 268435455 bytes, at most 4096", "closed before it said hello"} {
		if !strings.Contains(strings.Join(causes, "\n"), want) {
			t.Errorf("no refusal says %q: %q", want, causes)
		}
	}
	if !strings.Contains(log.String(), "refused a connection from 127.0.0.1:") {
		t.Errorf("rank 0's log does not say what it refused:\n%s", log.String())
	}
	var text bytes.Buffer
	if err := results.WriteText(&text, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "  refused: a connection from 127.0.0.1:") {
		t.Errorf("the text report does not list the refusals:\n%s", text.String())
	}
}

// A client rank that hangs after its point (alive, its heartbeat going, but never reporting)
// is given up at the point's deadline, by name and host; the others keep their points, and
// rank 0's error says a rank still holds the job.
func TestFanInHungRankMissesDeadline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "hung.json")
	c := config(t, out, 300*time.Millisecond, plain)
	release := make(chan struct{})
	comms := fanin.NewLocal(4, "localhost")
	errs := make([]error, 4)
	rank0 := make(chan struct{})
	var wg sync.WaitGroup
	for i := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cf := c(i)
			cf.Comm, cf.PointGrace = comms[i], 2*time.Second
			if i == 3 {
				measure := cf.Measure
				cf.Measure = func(ctx, hurry context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
					r, err := measure(ctx, hurry, addr, wrap)
					<-release // a deadlock after the point
					return r, err
				}
			}
			_, errs[i] = fanin.Run(context.Background(), cf)
			if i == 0 {
				close(rank0)
			}
		}()
	}
	defer wg.Wait()
	defer close(release)
	select {
	case <-rank0:
	case <-time.After(30 * time.Second):
		t.Fatal("rank 0 still waits for the hung rank 30 s on: no deadline")
	}
	if !errors.Is(errs[0], fanin.ErrGaveUp) || !strings.Contains(errs[0].Error(), "rank 3 (host localhost): point 1 did not end within its deadline") {
		t.Fatalf("rank 0: %v, want rank 3 given up at point 1's deadline", errs[0])
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Points[0]
	if f.Status.State != results.StateFailed || len(p.FanIn.Ranks) != 2 || p.FanIn.Ranks[0].Rank != 1 || p.FanIn.Ranks[1].Rank != 2 || p.RTT.Count == 0 {
		t.Errorf("status %+v, ranks %d: want rank 1's and 2's points", f.Status, len(p.FanIn.Ranks))
	}
}
