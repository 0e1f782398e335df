package datapathtest

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// The peer process protocol: one line per message, each starting with "DPT ", on the peer's
// stdin (from the test) and stdout (to the test); other stdout lines are passed through:
//
//	test → peer   RUN <case>        listen afresh and run the case's passive half
//	peer → test   ADDR <addr>       the case's listener address
//	both ways     X <hex>           one side-channel exchange message
//	test → peer   END               the active half returned: pending exchanges fail
//	peer → test   RESULT ok | RESULT skip <msg> | RESULT fail <quoted error>
//
// When its stdin closes the peer closes its device (its leak check) and reports a last
// RESULT.
const (
	peerEnv    = "DATAPATHTEST_PEER"
	linePrefix = "DPT "
)

// ServePeer makes this process a conformance peer if the test started it as one (the
// DATAPATHTEST_PEER environment variable names the Env), and then exits. Otherwise it
// returns at once. Call it first thing in TestMain.
func ServePeer(lookup func(name string) (Env, bool)) {
	name := os.Getenv(peerEnv)
	if name == "" {
		return
	}
	env, found := lookup(name)
	if !found {
		fmt.Fprintf(os.Stderr, "datapathtest peer: no Env named %q\n", name)
		os.Exit(2)
	}
	env.PeerName = ""
	os.Exit(servePeer(env, os.Stdin, os.Stdout))
}

type peerCase struct {
	x   chan []byte
	end chan struct{}
}

// syncWriter serialises protocol lines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) line(parts ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := io.WriteString(s.w, linePrefix+strings.Join(parts, " ")+"\n")
	return err
}

func servePeer(env Env, in io.Reader, out io.Writer) int {
	w := &syncWriter{w: out}
	dev, err := env.Provider.Open(env.Device)
	if err != nil {
		w.line("RESULT", "fail", strconv.Quote(err.Error()))
		return 1
	}
	var cur *peerCase
	var running sync.WaitGroup
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line, _ := strings.CutPrefix(sc.Text(), linePrefix)
		verb, arg, _ := strings.Cut(line, " ")
		switch verb {
		case "RUN":
			tc, found := caseByName(arg)
			if !found {
				w.line("RESULT", "fail", strconv.Quote("no case "+arg))
				continue
			}
			ln, err := dev.Listen(env.ListenAddr)
			if err != nil {
				w.line("RESULT", "fail", strconv.Quote("Listen: "+err.Error()))
				continue
			}
			cur = &peerCase{x: make(chan []byte, 4), end: make(chan struct{})}
			h := &half{name: "passive", dev: dev, ln: ln, deadline: time.Now().Add(env.timeout()),
				xch: &procX{w: w, in: cur.x, other: cur.end}}
			w.line("ADDR", ln.Addr())
			running.Add(1)
			go func() {
				defer running.Done()
				err := h.run(tc.passive)
				ln.Close()
				switch {
				case err != nil:
					w.line("RESULT", "fail", strconv.Quote(err.Error()))
				case h.skipMsg != "":
					w.line("RESULT", "skip", h.skipMsg)
				default:
					w.line("RESULT", "ok")
				}
			}()
		case "X":
			b, err := hex.DecodeString(arg)
			if cur != nil && err == nil {
				cur.x <- b
			}
		case "END":
			if cur != nil {
				close(cur.end)
				cur = nil
			}
		}
	}
	running.Wait()
	if err := dev.Close(); err != nil {
		w.line("RESULT", "fail", strconv.Quote("closing the device: "+err.Error()))
		return 1
	}
	w.line("RESULT", "ok")
	return 0
}

func caseByName(name string) (tcase, bool) {
	if name == killCase.name {
		return killCase, true
	}
	for _, tc := range cases {
		if tc.name == name {
			return tc, true
		}
	}
	return tcase{}, false
}

// procX is the side channel across processes.
type procX struct {
	w     *syncWriter
	in    <-chan []byte
	other <-chan struct{}
}

func (x *procX) exchange(b []byte, deadline time.Time) ([]byte, error) {
	if err := x.w.line("X", hex.EncodeToString(b)); err != nil {
		return nil, err
	}
	return await(x.in, x.other, deadline)
}

// peer is the test's handle on a peer process.
type peer struct {
	t      *testing.T
	cmd    *exec.Cmd
	w      *syncWriter
	stdin  io.Closer
	addr   chan string
	x      chan []byte
	result chan string
	exited chan struct{}
	killed bool
}

func startPeer(t *testing.T, env Env) *peer {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), peerEnv+"="+env.PeerName)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the peer process: %v", err)
	}
	p := &peer{t: t, cmd: cmd, w: &syncWriter{w: stdin}, stdin: stdin, addr: make(chan string, 1),
		x: make(chan []byte, 4), result: make(chan string, 1), exited: make(chan struct{})}
	go p.read(stdout)
	return p
}

func (p *peer) read(r io.Reader) {
	defer close(p.exited)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line, ours := strings.CutPrefix(sc.Text(), linePrefix)
		if !ours {
			fmt.Fprintln(os.Stderr, "peer:", sc.Text())
			continue
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch verb {
		case "ADDR":
			p.addr <- arg
		case "X":
			if b, err := hex.DecodeString(arg); err == nil {
				p.x <- b
			}
		case "RESULT":
			p.result <- arg
		}
	}
}

// runCase runs tc's active half here and its passive half in the peer.
func (p *peer) runCase(t *testing.T, env *Env, tc tcase, dev datapath.Device) {
	if err := p.w.line("RUN", tc.name); err != nil {
		t.Fatalf("peer: %v", err)
	}
	deadline := time.Now().Add(env.timeout())
	var addr string
	select {
	case addr = <-p.addr:
	case res := <-p.result:
		t.Fatalf("peer did not start the case: %s", res)
	case <-p.exited:
		t.Fatal("peer process exited")
	case <-time.After(env.timeout()):
		t.Fatal("peer did not answer")
	}
	pDone := make(chan struct{})
	var res string
	go func() {
		select {
		case res = <-p.result:
		case <-p.exited:
			res = "fail " + strconv.Quote("peer process exited")
		case <-time.After(env.timeout() + 5*time.Second):
			res = "fail " + strconv.Quote("no result from the peer")
		}
		close(pDone)
	}()
	active := &half{name: "active", dev: dev, addr: addr, deadline: deadline,
		xch: &procX{w: p.w, in: p.x, other: pDone}}
	if tc.name == killCase.name {
		active.kill = func() error {
			p.killed = true
			return p.cmd.Process.Kill()
		}
	}
	aerr := active.run(tc.active)
	p.w.line("END") //nolint:errcheck // a killed peer cannot read it
	<-pDone
	var perr error
	skip := active.skipMsg
	switch verb, arg, _ := strings.Cut(res, " "); verb {
	case "ok":
	case "skip":
		skip = arg
	default:
		if p.killed {
			break
		}
		msg, err := strconv.Unquote(arg)
		if err != nil {
			msg = arg
		}
		perr = errors.New(msg)
	}
	// Drain side-channel messages the active half did not read.
	for len(p.x) > 0 {
		<-p.x
	}
	report(t, aerr, perr, skip)
}

// close ends the peer and checks its final report.
func (p *peer) close() {
	p.stdin.Close()
	if !p.killed {
		select {
		case res := <-p.result:
			if res != "ok" {
				p.t.Errorf("peer at exit: %s", res)
			}
		case <-time.After(10 * time.Second):
			p.t.Error("peer did not exit")
			p.cmd.Process.Kill()
		}
	}
	p.cmd.Wait()
}

func runRemote(t *testing.T, env Env) {
	dev, err := env.Provider.Open(env.Device)
	if err != nil {
		t.Fatalf("Open(%q): %v", env.Device, err)
	}
	p := startPeer(t, env)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { p.runCase(t, &env, tc, dev) })
	}
	p.close()
	t.Run(killCase.name, func(t *testing.T) {
		p := startPeer(t, env)
		defer p.close()
		p.runCase(t, &env, killCase, dev)
	})
	if err := dev.Close(); err != nil {
		t.Errorf("closing the device: %v", err)
	}
}

// killCase: the peer process dies (SIGKILL) with work outstanding on both sides; the
// survivor's outstanding work requests are flushed and its connection reports broken.
var killCase = tcase{"PeerKilled", killedActive, killedPassive}

func killedActive(h *half) {
	cfg, cq := h.qp(0, 0)
	c := h.connect(cfg, nil)
	buf := h.reg(64, rw, 0)
	h.postRecv(c, datapath.RecvWR{ID: 50, SGL: []datapath.SGE{sge(buf, 0, 64)}})
	h.sync()
	h.must(h.kill(), "kill the peer")
	h.pollOne(cq, c, 50, recv, datapath.StatusFlushed)
	h.broken(c, cq)
}

func killedPassive(h *half) {
	cfg, _ := h.qp(0, 0)
	c, _ := h.accept(cfg, nil)
	buf := h.reg(64, rw, 0)
	h.postRecv(c, datapath.RecvWR{ID: 1, SGL: []datapath.SGE{sge(buf, 0, 64)}})
	h.sync()
	h.sync() // never answered: the process dies here
}

var errTimeout = errors.New("timed out waiting for the other half")
