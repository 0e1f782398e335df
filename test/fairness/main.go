// Command fairness measures how a running `rpcrdma-bench server` shares its poller's sink
// pool: a well-behaved client's SINK rate and p50 alone and beside one or more misbehaving
// peers, alternated (alone, beside, alone, beside, ...), -runs times for each kind of peer and
// number of them, at each pool size of -pools. For each pool it starts the server itself
// (`--responder-read`, `--sink-buffers` N, the server's default for 0), on a loopback port of
// its own. The peers are the rpcrdma package's test binary in its peer mode (TestPeerProcess,
// driven over its standard input), each in a process of its own:
//
//	slowread  keeps its 64 credits busy with SINKs through a relay that delays everything it
//	          sends to the server by -delay, so every RDMA Read is answered that late
//	nodone    keeps its credits busy with SOURCEs answered in responder-provided Read chunks
//	          and never sends RDMA_DONE, so each reply holds a buffer for DoneTimeout
//
// scripts/fairness.sh builds both binaries and runs it. It prints one FAIRNESS line per
// measurement (with each run's longest time without a completion, gap_ms) and one
// FAIRNESS-SUMMARY line per pool, peer kind and count: the medians, their
// beside/alone ratios, and the median of the runs' own beside/alone ratios (paired_ratio).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

type options struct {
	server, peer string
	peerDir      string
	pools        []int
	counts       []int
	runs         int
	duration     time.Duration
	settle       time.Duration
	size, depth  int
	delay        time.Duration
}

func main() {
	var o options
	var pools, counts string
	flag.StringVar(&o.server, "server", "", "the rpcrdma-bench binary")
	flag.StringVar(&o.peer, "peer", "", "the rpcrdma package's test binary (go test -c ./rpcrdma)")
	flag.StringVar(&o.peerDir, "peer-dir", "rpcrdma", "the directory the test binary runs in (its package's, for testdata)")
	flag.StringVar(&pools, "pools", "2,8,0", "the server's --sink-buffers values, comma-separated (0: its default)")
	flag.StringVar(&counts, "peers", "1,2", "how many misbehaving peers at once, comma-separated")
	flag.IntVar(&o.runs, "runs", 3, "alternated runs per pool, peer kind and count")
	flag.DurationVar(&o.duration, "duration", 3*time.Second, "measured time per run")
	flag.DurationVar(&o.settle, "settle", 1500*time.Millisecond, "wait after the peers start (they take what they may) and after they stop")
	flag.IntVar(&o.size, "size", 16<<10, "SINK payload bytes (a Read chunk)")
	flag.IntVar(&o.depth, "depth", 4, "the well-behaved client's calls outstanding")
	flag.DurationVar(&o.delay, "delay", 200*time.Millisecond, "how late slowread answers each RDMA Read")
	flag.Parse()
	var err error
	if o.pools, err = ints("-pools", pools, 0); err == nil {
		o.counts, err = ints("-peers", counts, 1)
	}
	if err == nil {
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fairness:", err)
		os.Exit(1)
	}
}

// ints parses a comma-separated list of integers of at least least.
func ints(name, list string, least int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < least {
			return nil, fmt.Errorf("%s: %q is not an integer of at least %d", name, f, least)
		}
		out = append(out, n)
	}
	return out, nil
}

const maxPayload = 64 << 10

func run(o options) error {
	if o.server == "" || o.peer == "" {
		return errors.New("-server and -peer are required")
	}
	for _, pool := range o.pools {
		if err := runPool(o, pool); err != nil {
			return fmt.Errorf("pool %s: %w", poolName(pool), err)
		}
	}
	return nil
}

func poolName(pool int) string {
	if pool == 0 {
		return "default"
	}
	return strconv.Itoa(pool)
}

// runPool measures every peer kind and count against a server whose pool is pool buffers.
func runPool(o options, pool int) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	args := []string{"server", "--provider", "soft", "--listen", addr, "--responder-read", "--max-payload", fmt.Sprint(maxPayload)}
	if pool > 0 {
		args = append(args, "--sink-buffers", fmt.Sprint(pool))
	}
	srv := exec.Command(o.server, args...)
	srv.Stdout, srv.Stderr = os.Stderr, os.Stderr
	if err := srv.Start(); err != nil {
		return fmt.Errorf("start the server: %w", err)
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	}()
	relay, err := startRelay(addr, o.delay)
	if err != nil {
		return err
	}
	defer relay.Close()

	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		return err
	}
	defer dev.Close()
	var c *rpcrdma.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err = rpcrdma.Dial(context.Background(), dev, addr, rpcrdma.Config{Credits: o.depth, MaxPayload: maxPayload})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dial the server: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer c.Close()

	type cell struct {
		kind string
		n    int
	}
	var cells []cell
	for _, kind := range []string{"slowread", "nodone"} {
		for _, n := range o.counts {
			cells = append(cells, cell{kind, n})
		}
	}
	alone, beside := map[cell][]result{}, map[cell][]result{}
	for r := 1; r <= o.runs; r++ {
		for _, cl := range cells {
			a, err := measure(c, o)
			if err != nil {
				return fmt.Errorf("alone: %w", err)
			}
			var peers []*peer
			for range cl.n {
				p, err := startPeer(o, cl.kind, addr, relay.Addr().String())
				if err != nil {
					stopAll(peers)
					return fmt.Errorf("%s: %w", cl.kind, err)
				}
				peers = append(peers, p)
			}
			time.Sleep(o.settle) // the peers take what they may
			b, err := measure(c, o)
			stopAll(peers)
			if err != nil {
				return fmt.Errorf("beside %d %s: %w", cl.n, cl.kind, err)
			}
			fmt.Printf("FAIRNESS pool=%s peer=%s peers=%d run=%d alone_rps=%.0f alone_p50_us=%.0f alone_gap_ms=%.0f beside_rps=%.0f beside_p50_us=%.0f beside_gap_ms=%.0f\n",
				poolName(pool), cl.kind, cl.n, r, a.rate, a.p50, a.gap, b.rate, b.p50, b.gap)
			alone[cl] = append(alone[cl], a)
			beside[cl] = append(beside[cl], b)
			// What the peers held comes back when their connections close.
			time.Sleep(o.settle)
		}
	}
	for _, cl := range cells {
		med := func(s []result, f func(result) float64) float64 {
			v := make([]float64, len(s))
			for i := range s {
				v[i] = f(s[i])
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		rate := func(s result) float64 { return s.rate }
		p50 := func(s result) float64 { return s.p50 }
		ar, br := med(alone[cl], rate), med(beside[cl], rate)
		ap, bp := med(alone[cl], p50), med(beside[cl], p50)
		// Each beside run over the alone run just before it: the two saw the same host.
		pairs := make([]result, len(alone[cl]))
		for i := range pairs {
			pairs[i].rate = beside[cl][i].rate / alone[cl][i].rate
		}
		fmt.Printf("FAIRNESS-SUMMARY pool=%s peer=%s peers=%d runs=%d alone_rps=%.0f beside_rps=%.0f rate_ratio=%.2f paired_ratio=%.2f alone_p50_us=%.0f beside_p50_us=%.0f p50_ratio=%.2f\n",
			poolName(pool), cl.kind, cl.n, o.runs, ar, br, br/ar, med(pairs, rate), ap, bp, bp/ap)
	}
	return nil
}

func stopAll(peers []*peer) {
	for _, p := range peers {
		p.stop()
	}
}

// result is what measure saw: the rate (RPC/s), the median latency (µs; +Inf when none
// completed) and the longest time without a completion (ms), which tells a stall of the
// whole host (seen alone too) from one behind a peer's buffers (200 ms or 1 s, beside only).
type result struct{ rate, p50, gap float64 }

// measure keeps depth SINKs outstanding on c for the duration.
func measure(c *rpcrdma.Conn, o options) (result, error) {
	sent := make([]time.Time, 1024)
	var lat []time.Duration
	res := make([]rpcrdma.Result, 64)
	tag := uint64(0)
	start := time.Now()
	end := start.Add(o.duration)
	n := 0
	last, gap := start, time.Duration(0)
	for outstanding := 0; ; {
		now := time.Now()
		for now.Before(end) && outstanding < o.depth {
			err := c.Submit(rpcrdma.Call{Proc: benchprog.ProcSink, Size: o.size, Tag: tag})
			if errors.Is(err, rpcrdma.ErrNoCredit) {
				break
			}
			if err != nil {
				return result{}, err
			}
			sent[tag%uint64(len(sent))] = now
			tag++
			outstanding++
		}
		k, err := c.Progress(res)
		done := time.Now()
		if k > 0 && done.Before(end) {
			gap, last = max(gap, done.Sub(last)), done
		}
		for _, r := range res[:k] {
			if r.Err != nil {
				return result{}, r.Err
			}
			outstanding--
			if done.Before(end) {
				n++
				lat = append(lat, done.Sub(sent[r.Tag%uint64(len(sent))]))
			}
		}
		if err != nil {
			return result{}, err
		}
		if !done.Before(end) && outstanding == 0 {
			break
		}
		if done.Sub(end) > 10*time.Second {
			return result{}, fmt.Errorf("%d calls still outstanding 10 s after the run", outstanding)
		}
	}
	gap = max(gap, end.Sub(last))
	r := result{rate: float64(n) / o.duration.Seconds(), p50: math.Inf(1), gap: float64(gap.Milliseconds())}
	if len(lat) > 0 { // else no call completed: no latency to report
		slices.Sort(lat)
		r.p50 = float64(lat[len(lat)/2].Microseconds())
	}
	return r, nil
}

// peer is a misbehaving peer process.
type peer struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startPeer(o options, kind, addr, relay string) (*peer, error) {
	cfg := rpcrdma.Config{Credits: 64, MaxPayload: maxPayload}
	cmds := []string{fmt.Sprintf("HOG %d %d 0", benchprog.ProcSink, o.size)}
	if kind == "slowread" {
		addr = relay
	} else {
		cfg.ResponderRead = true
		cmds = []string{"SUPPRESS 1", fmt.Sprintf("HOG %d %d %d", benchprog.ProcSource, o.size, rpcproto.ClassResponderRead)}
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	p := &peer{cmd: exec.Command(o.peer, "-test.run=^TestPeerProcess$", "-test.count=1"), lines: make(chan string, 16)}
	p.cmd.Dir = o.peerDir
	p.cmd.Env = append(os.Environ(), "RPCRDMA_TEST_PEER=req "+string(b), "RPCRDMA_TEST_PEER_ADDR="+addr)
	p.cmd.Stderr = os.Stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	for _, cmd := range cmds {
		fmt.Fprintln(p.in, cmd)
		select {
		case line, ok := <-p.lines:
			if !ok || line != "OK" {
				p.stop()
				return nil, fmt.Errorf("peer answered %q to %s", line, cmd)
			}
		case <-time.After(10 * time.Second):
			p.stop()
			return nil, fmt.Errorf("peer never answered %s", cmd)
		}
	}
	return p, nil
}

func (p *peer) stop() {
	p.in.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// startRelay forwards TCP connections to addr, delaying what the client sends by delay.
func startRelay(addr string, delay time.Duration) (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			go func() { io.Copy(in, out); in.Close() }()
			go delayCopy(out, in, delay)
		}
	}()
	return l, nil
}

// delayCopy copies src to dst, each chunk delay after it was read.
func delayCopy(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 64<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{time.Now().Add(delay), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
