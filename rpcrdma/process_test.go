package rpcrdma

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// Conformance cases with the peer in another OS process, over the soft provider's TCP wire:
// the test binary runs itself as the peer (TestPeerProcess with RPCRDMA_TEST_PEER set). The
// side whose behaviour a case checks runs in the test; the other side, in the peer, plays the
// part that provokes it. The peer takes commands, one per line, on its standard input and
// answers on its standard output:
//
//	peer → test   ADDR <addr>                  a responder peer's listener
//	test → peer   MANGLE <name>                (responder) mangle the next reply's header
//	test → peer   CALL <proc> <size> <class>   (requester) one call; answers RES ok <class> | RES err <text>
//	test → peer   LOAD <n>                     (requester) n Reply-chunk ECHOs at depth 64; answers LOADED ok | LOADED err <text>
//	test → peer   SUPPRESS <0|1>               (requester) send no RDMA_DONE
//	test → peer   DONE <xid>                   (requester) send RDMA_DONE for xid now
//	test → peer   OVERSPEND <n> <proc> <size>  (requester) post n calls at once, ignoring its credits; answers OK
//	test → peer   HOG <proc> <size> <class>    (requester) from now on keep every credit busy with such calls; answers OK
//	test → peer   END                          close and exit; answers BYE
const peerEnvVar = "RPCRDMA_TEST_PEER"

// peerManglers are the reply header manglings of TestBadReplyFailsRPC, by name.
var peerManglers = map[string]func([]byte){
	"discriminator": func(b []byte) { binary.BigEndian.PutUint32(b[16:], 7) },
	"procedure":     func(b []byte) { binary.BigEndian.PutUint32(b[12:], 9) },
	"unpullable":    func(b []byte) { binary.BigEndian.PutUint32(b[28:], 1<<30) },
}

// TestPeerProcess is the peer when the test binary runs as one; otherwise it does nothing.
func TestPeerProcess(t *testing.T) {
	spec := os.Getenv(peerEnvVar)
	if spec == "" {
		return
	}
	role, rest, _ := strings.Cut(spec, " ")
	var cfg Config
	if err := json.Unmarshal([]byte(rest), &cfg); err != nil {
		fmt.Printf("FATAL config: %v\n", err)
		os.Exit(2)
	}
	if err := runPeer(role, cfg, os.Stdin, os.Stdout); err != nil {
		fmt.Printf("FATAL %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runPeer(role string, cfg Config, in io.Reader, out io.Writer) error {
	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		return err
	}
	defer dev.Close()
	cmds := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			cmds <- sc.Text()
		}
		close(cmds)
	}()
	var c *Conn
	switch role {
	case "rspfail":
		// A responder whose device cannot register memory: it refuses the connection.
		l, err := dev.Listen("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer l.Close()
		fmt.Fprintf(out, "ADDR %s\n", l.Addr())
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		_, err = Accept(ctx, failRegDev{dev}, l, cfg)
		return err
	case "rsp":
		l, err := dev.Listen("127.0.0.1:0")
		if err != nil {
			return err
		}
		defer l.Close()
		fmt.Fprintf(out, "ADDR %s\n", l.Addr())
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		if c, err = Accept(ctx, dev, l, cfg); err != nil {
			return err
		}
	case "req":
		if c, err = Dial(context.Background(), dev, os.Getenv(peerEnvVar+"_ADDR"), cfg); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	defer c.Close()
	var res [64]Result
	var hog *Call
	for {
		select {
		case cmd, ok := <-cmds:
			if !ok || cmd == "END" {
				fmt.Fprintln(out, "BYE")
				return nil
			}
			if arg, ok := strings.CutPrefix(cmd, "HOG "); ok {
				var call Call
				if _, err := fmt.Sscan(arg, &call.Proc, &call.Size, &call.Class); err != nil {
					fmt.Fprintln(out, "ERR "+err.Error())
					continue
				}
				hog = &call
				fmt.Fprintln(out, "OK")
				continue
			}
			fmt.Fprintln(out, peerCommand(c, cmd))
		default:
			for hog != nil && c.Submit(*hog) == nil {
			}
			if n, _ := c.Progress(res[:]); n == 0 && hog != nil {
				time.Sleep(time.Millisecond) // a hog waits on the server, not on the CPU
			}
		}
	}
}

// peerCommand runs one command on the peer's connection and returns its answer line.
func peerCommand(c *Conn, cmd string) string {
	verb, arg, _ := strings.Cut(cmd, " ")
	switch verb {
	case "MANGLE":
		faults(c).mangleReply = peerManglers[arg]
		return "OK"
	case "SUPPRESS":
		faults(c).suppressDone = arg == "1"
		return "OK"
	case "DONE":
		xid, err := strconv.ParseUint(arg, 10, 32)
		if err != nil {
			return "ERR " + err.Error()
		}
		c.cl.sendDone(nil, uint32(xid), 0, false)
		c.Idle()
		return "OK"
	case "CALL":
		f := strings.Fields(arg)
		if len(f) != 3 {
			return "RES err bad CALL"
		}
		proc, _ := strconv.Atoi(f[0])
		size, _ := strconv.Atoi(f[1])
		class, _ := strconv.Atoi(f[2])
		r := callAndWait(c, Call{Proc: proc, Size: size, Class: rpcproto.Class(class), Tag: 1})
		if r.Err != nil {
			return "RES err " + r.Err.Error()
		}
		return "RES ok " + strconv.Itoa(int(r.ReplyClass))
	case "OVERSPEND":
		var n, proc, size int
		if _, err := fmt.Sscan(arg, &n, &proc, &size); err != nil {
			return "ERR " + err.Error()
		}
		if err := overspend(c, n, Call{Proc: proc, Size: size}); err != nil {
			return "ERR " + err.Error()
		}
		return "OK"
	case "LOAD":
		n, _ := strconv.Atoi(arg)
		if err := peerLoad(c, n); err != nil {
			return "LOADED err " + err.Error()
		}
		return "LOADED ok"
	}
	return "ERR unknown command " + strconv.Quote(cmd)
}

// callAndWait makes one call on c, whose peer progresses on its own, and waits (up to the
// hang guard) for its result.
func callAndWait(c *Conn, call Call) Result {
	var res [8]Result
	deadline := time.Now().Add(hangGuard)
	for {
		err := c.Submit(call)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrNoCredit) || time.Now().After(deadline) {
			return Result{Err: err}
		}
		c.Progress(res[:0])
	}
	for time.Now().Before(deadline) {
		n, err := c.Progress(res[:])
		for _, r := range res[:n] {
			if r.Tag == call.Tag {
				return r
			}
		}
		if err != nil {
			return Result{Err: err}
		}
	}
	return Result{Err: errors.New("no result")}
}

// peerLoad keeps up to 64 Reply-chunk ECHOs outstanding until n completed.
func peerLoad(c *Conn, n int) error {
	var res [64]Result
	sent, done, out := 0, 0, 0
	deadline := time.Now().Add(time.Minute)
	for done < n {
		for sent < n && out < 64 {
			err := c.Submit(Call{Proc: benchprog.ProcEcho, Size: 64 + sent%512, Class: rpcproto.ClassReplyChunk, Tag: uint64(sent)})
			if errors.Is(err, ErrNoCredit) {
				break
			}
			if err != nil {
				return err
			}
			sent++
			out++
		}
		k, err := c.Progress(res[:])
		for _, r := range res[:k] {
			if r.Err != nil {
				return fmt.Errorf("call %d: %w", r.Tag, r.Err)
			}
		}
		done, out = done+k, out-k
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("the load did not finish in a minute")
		}
	}
	return nil
}

// peerProc is a peer process and the connection to it from this test.
type peerProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	local  *Conn
	stderr strings.Builder
}

// startPeer starts the peer process in role ("rsp" or "req") with cfg and connects the local
// end configured by local: the test's requester dials a responder peer, the test's responder
// accepts a requester peer.
func startPeer(t *testing.T, role string, cfg, local Config) *peerProc {
	t.Helper()
	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	var l datapath.Listener
	addr := ""
	if role == "req" {
		if l, err = dev.Listen("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		addr = l.Addr()
	}
	p := spawnPeer(t, role, cfg, addr)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if role == "rsp" {
		line := p.next("ADDR")
		if p.local, err = Dial(ctx, dev, strings.TrimPrefix(line, "ADDR "), local); err != nil {
			t.Fatalf("dial the peer: %v", err)
		}
	} else if p.local, err = Accept(ctx, dev, l, local); err != nil {
		t.Fatalf("accept the peer: %v", err)
	}
	t.Cleanup(func() { p.local.Close() })
	return p
}

// spawnPeer starts the peer process in role with cfg; a requester peer dials addr.
func spawnPeer(t *testing.T, role string, cfg Config, addr string) *peerProc {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a peer process")
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &peerProc{t: t, lines: make(chan string, 16)}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestPeerProcess$", "-test.count=1")
	p.cmd.Env = append(os.Environ(), peerEnvVar+"="+role+" "+string(b))
	if role == "req" {
		p.cmd.Env = append(p.cmd.Env, peerEnvVar+"_ADDR="+addr)
	}
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.in.Close()
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(hangGuard):
			p.cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p
}

// next progresses the local end until the peer prints a line starting with prefix, and
// returns it; a FATAL line, the peer's exit or the hang guard fails the test.
func (p *peerProc) next(prefix string) string {
	p.t.Helper()
	var res [16]Result
	deadline := time.Now().Add(2 * hangGuard)
	for time.Now().Before(deadline) {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("the peer exited waiting for %s; its stderr:\n%s", prefix, p.stderr.String())
			}
			if strings.HasPrefix(line, "FATAL") {
				p.t.Fatalf("peer: %s", line)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		default:
			if p.local != nil {
				p.local.Progress(res[:])
			}
		}
	}
	p.t.Fatalf("the peer never answered %s", prefix)
	return ""
}

// do sends a command to the peer and returns its answer.
func (p *peerProc) do(cmd, answer string) string {
	p.t.Helper()
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		p.t.Fatal(err)
	}
	return p.next(answer)
}

// Item 1 across processes: a requester process keeps 64 Reply-chunk ECHOs outstanding, and
// this responder checks at every post of a batch holding a reply that the grant it carries is
// backed by receives.
func TestProcessGrantBackedByReceives(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.Credits, sc.Credits = 64, 64
	rc.MaxPayload, sc.MaxPayload = 16<<10, 16<<10
	p := startPeer(t, "req", rc, sc)
	g := checkGrants(p.local)
	if got := p.do("LOAD 3000", "LOADED"); got != "LOADED ok" {
		t.Fatal(got)
	}
	if g.checks == 0 || g.violations > 0 {
		t.Fatalf("%d of %d reply posts carried a grant not backed by receives; first: %s", g.violations, g.checks, g.first)
	}
}

// Item 4 across processes: a responder process gets calls whose reply resources are too
// small (this requester shrinks them) and must answer inline, in a responder-provided Read
// chunk, or ERR_CHUNK.
func TestProcessReplyResourcesTooSmall(t *testing.T) {
	for _, rr := range []bool{false, true} {
		t.Run(fmt.Sprintf("responderRead=%v", rr), func(t *testing.T) {
			cfg := testCfg(1024)
			cfg.ResponderRead = rr
			p := startPeer(t, "rsp", cfg, cfg)
			pr := &pair{t: t, req: p.local}
			long := rpcproto.ClassResponderRead
			if !rr {
				long = 0
			}
			for _, tc := range []struct {
				call   Call
				mangle func([]byte)
				want   rpcproto.Class
			}{
				{Call{Proc: benchprog.ProcEcho, Size: 500, Class: rpcproto.ClassReplyChunk}, shrinkReplyChunk(100), rpcproto.ClassShort},
				{Call{Proc: benchprog.ProcSource, Size: 3000, Class: rpcproto.ClassWriteChunk}, shrinkWriteChunk(100), long},
			} {
				faults(p.local).mangle = tc.mangle
				tc.call.Tag = 7
				r := pr.callRemote(p, tc.call)
				switch {
				case tc.want == 0 && !errors.Is(r.Err, ErrChunkRejected):
					t.Errorf("%+v: %v, want ErrChunkRejected", tc.call, r.Err)
				case tc.want != 0 && (r.Err != nil || r.ReplyClass != tc.want):
					t.Errorf("%+v: %v, reply class %s, want %s", tc.call, r.Err, r.ReplyClass, tc.want)
				}
			}
		})
	}
}

// Item 5 across processes: a hostile responder process mangles reply headers; the RPC fails
// at once with ErrBadReply, no RDMA_ERROR goes back, and the connection goes on.
func TestProcessBadReplyFailsRPC(t *testing.T) {
	for _, m := range badReplyModes {
		t.Run(m.name, func(t *testing.T) { processBadReply(t, m.mem, m.inv) })
	}
}

func processBadReply(t *testing.T, mem MemoryMode, inv bool) {
	cfg := testCfg(1024)
	cfg.ResponderRead = true
	cfg.Memory, cfg.RemoteInvalidate = mem, inv
	p := startPeer(t, "rsp", cfg, cfg)
	pr := &pair{t: t, req: p.local}
	for _, tc := range []struct {
		mangle string
		call   Call
	}{
		{"discriminator", Call{Proc: benchprog.ProcNull}},
		{"procedure", Call{Proc: benchprog.ProcEcho, Size: 10}},
		{"discriminator", Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassReplyChunk}},
		{"procedure", Call{Proc: benchprog.ProcSource, Size: 3000}},
		{"unpullable", Call{Proc: benchprog.ProcEcho, Size: 3000, Class: rpcproto.ClassResponderRead}},
	} {
		if got := p.do("MANGLE "+tc.mangle, "OK"); got != "OK" {
			t.Fatal(got)
		}
		sent := p.local.stats.ErrorsSent
		tc.call.Tag = 9
		r := pr.callRemote(p, tc.call)
		if !errors.Is(r.Err, ErrBadReply) || r.Err == ErrBadReply {
			t.Errorf("%s: %v, want ErrBadReply saying what was wrong", tc.mangle, r.Err)
		}
		if p.local.stats.ErrorsSent != sent {
			t.Errorf("%s: the requester answered the reply with RDMA_ERROR", tc.mangle)
		}
		if r := pr.callRemote(p, Call{Proc: benchprog.ProcEcho, Size: 3000, Tag: 10}); r.Err != nil {
			t.Fatalf("after %s: %v", tc.mangle, r.Err)
		}
	}
}

// Item 7 across processes: a requester process holds back the RDMA_DONE of a reply in a
// responder-provided Read chunk past DoneTimeout; this responder keeps the receive reserved
// until it comes.
func TestProcessLateDoneKeepsReservation(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.ResponderRead, sc.ResponderRead = true, true
	sc.Credits = 1
	// Long enough that the peer's late RDMA_DONE comes within doneReserve × DoneTimeout
	// (a hang guard, not a performance bound).
	sc.DoneTimeout = time.Second
	p := startPeer(t, "req", rc, sc)
	c := p.local
	sv := &c.sv
	if got := p.do("SUPPRESS 1", "OK"); got != "OK" {
		t.Fatal(got)
	}
	call := fmt.Sprintf("CALL %d 3000 %d", benchprog.ProcEcho, rpcproto.ClassResponderRead)
	if got := p.do(call, "RES"); got != fmt.Sprintf("RES ok %d", rpcproto.ClassResponderRead) {
		t.Fatal(got)
	}
	var res [4]Result
	for deadline := time.Now().Add(hangGuard); c.stats.DoneTimeouts != 1; {
		c.Progress(res[:])
		if time.Now().After(deadline) {
			t.Fatal("DoneTimeout never passed")
		}
	}
	if sv.pendingDone != 1 || len(sv.late) != 1 {
		t.Fatalf("after DoneTimeout %d receives reserved for RDMA_DONE, want 1 until it arrives", sv.pendingDone)
	}
	if got := p.do("SUPPRESS 0", "OK"); got != "OK" {
		t.Fatal(got)
	}
	if got := p.do(fmt.Sprintf("DONE %d", sv.late[0].xid), "OK"); got != "OK" {
		t.Fatal(got)
	}
	for deadline := time.Now().Add(hangGuard); sv.pendingDone != 0; {
		c.Progress(res[:])
		if time.Now().After(deadline) {
			t.Fatal("the late RDMA_DONE never ended the reservation")
		}
	}
	if st := c.stats; st.DoneLate != 1 || st.DoneStray != 0 {
		t.Fatalf("late RDMA_DONE counted %d late, %d stray; want 1, 0", st.DoneLate, st.DoneStray)
	}
}

// callRemote makes one call from the local requester to the peer responder and returns its
// result (the peer progresses on its own).
func (pr *pair) callRemote(p *peerProc, call Call) Result {
	pr.t.Helper()
	r := callAndWait(p.local, call)
	if r.Err != nil && errors.Is(r.Err, datapath.ErrBroken) {
		pr.t.Fatalf("connection to the peer broke: %v; peer stderr:\n%s", r.Err, p.stderr.String())
	}
	return r
}
