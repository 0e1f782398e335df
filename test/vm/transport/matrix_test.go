package transport

import (
	"context"
	"errors"
	"fmt"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/rpcrdmatest"
)

// Directions of a call.
const (
	fwd = iota // requester → responder
	rev        // responder → requester (RFC 8167)
	numDirs
)

var dirNames = [numDirs]string{"fwd", "rev"}

// The classes the table has rows for, in order.
var classes = []rpcproto.Class{rpcproto.ClassShort, rpcproto.ClassReadChunk, rpcproto.ClassPosZeroRead,
	rpcproto.ClassWriteChunk, rpcproto.ClassReplyChunk, rpcproto.ClassResponderRead}

var (
	thresholds = []int{1024, 4096, 65536}
	modes      = []rpcrdma.MemoryMode{rpcrdma.MemoryPreregistered, rpcrdma.MemoryWindows}
)

const (
	credits        = 8
	reverseCredits = 4
	runTimeout     = 3 * time.Minute
)

// count is a cell of the table: RPCs and how many of them failed or travelled in other
// classes than their case says.
type count struct{ rpcs, errs int }

// combo is one column of the table: a threshold and a memory mode.
type combo struct {
	th  int
	mem rpcrdma.MemoryMode
}

func (c combo) String() string {
	m := "prereg"
	if c.mem == rpcrdma.MemoryWindows {
		m = "windows"
	}
	return strconv.Itoa(c.th>>10) + "K/" + m
}

// reps is how many times each case of the matrix runs per direction and column: the VM runs
// under TCG, where a round trip costs a few hundred microseconds, so the default keeps the
// whole matrix to seconds. VMTEST_MATRIX_REPS overrides it.
func reps(t *testing.T) int {
	n := 8
	if s := os.Getenv("VMTEST_MATRIX_REPS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("VMTEST_MATRIX_REPS=%q: want a positive number", s)
		}
		n = v
	}
	return n
}

// setup opens the devices the requester (cdev) and the responder (sdev, listening on l) use:
// the first verbs device for both, talking to itself at its own address, as in the VM; or,
// where there is none, two soft provider devices in process, wrapped to refuse the work
// requests real devices refuse (strict), so that the test runs (quickly) on any machine. In the VM (VMTEST_REQUIRE_DEVICE set) a missing verbs
// device fails the test.
func setup(t testing.TB) (cdev, sdev datapath.Device, l datapath.Listener, provider string) {
	return setupVerbs(t, verbs.Config{})
}

// setupVerbs is setup with the verbs provider configured by vcfg.
func setupVerbs(t testing.TB, vcfg verbs.Config) (cdev, sdev datapath.Device, l datapath.Listener, provider string) {
	sdev, err := verbs.New(vcfg).Open("")
	if err == nil {
		cdev = sdev
	}
	provider, addr := "verbs", ":0"
	if err != nil {
		if os.Getenv("VMTEST_REQUIRE_DEVICE") != "" {
			t.Fatalf("no RDMA device, but VMTEST_REQUIRE_DEVICE is set: %v", err)
		}
		t.Logf("no RDMA device (%v): running over the soft provider in process", err)
		prov := soft.New(soft.Config{})
		if sdev, err = prov.Open(""); err == nil {
			cdev, err = prov.Open("")
		}
		if err != nil {
			t.Fatal(err)
		}
		// Refuse what real devices refuse (see strict).
		sdev, cdev = strict{sdev}, strict{cdev}
		t.Cleanup(func() { cdev.Close() })
		provider, addr = "soft", soft.InprocPrefix+"matrix"
	}
	t.Cleanup(func() { sdev.Close() })
	if l, err = sdev.Listen(addr); err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return cdev, sdev, l, provider
}

// TestIntegrationClassMatrix runs every case of rpcrdmatest.Cases (every message class,
// chosen automatically and forced, with responder-provided Read chunks) between this
// project's requester and responder on one verbs device talking to itself, forward and
// reverse, for every threshold and memory mode, with payload verification and remote
// invalidation on, and prints what ran as a table.
func TestIntegrationClassMatrix(t *testing.T) {
	cdev, sdev, l, provider := setup(t)
	for _, poll := range polls {
		t.Run(poll.String(), func(t *testing.T) { classMatrix(t, cdev, sdev, l, provider, poll) })
	}
}

// polls are the poll modes the matrix runs in: busy polling, and each end blocking in
// CQ.Wait (the completion channel) whenever it found nothing (event) or after a spin
// (hybrid), which proves that no completion is lost to notification re-arming.
var polls = []datapath.Poll{{Mode: datapath.PollBusy}, {Mode: datapath.PollEvent}, {Mode: datapath.PollHybrid}}

func classMatrix(t *testing.T, cdev, sdev datapath.Device, l datapath.Listener, provider string, poll datapath.Poll) {
	n := reps(t)
	var combos []combo
	for _, th := range thresholds {
		for _, mem := range modes {
			combos = append(combos, combo{th, mem})
		}
	}
	// table[class][dir][combo]
	table := make(map[rpcproto.Class]*[numDirs][]count)
	for _, c := range classes {
		table[c] = &[numDirs][]count{make([]count, len(combos)), make([]count, len(combos))}
	}
	var stats []string
	start := time.Now()
	for ci, co := range combos {
		t.Run(co.String(), func(t *testing.T) {
			stats = append(stats, runCombo(t, cdev, sdev, l, co, n, poll, func(dir int, c rpcproto.Class, bad bool) {
				cell := &table[c][dir][ci]
				cell.rpcs++
				if bad {
					cell.errs++
				}
			})...)
		})
	}
	elapsed := time.Since(start)

	// The table: RPCs/errors per class and direction (rows) and threshold/memory mode
	// (columns). An RPC counts once in the row of each non-short half (a Position Zero Read
	// call answered in a Reply chunk counts in both rows), in "short" when both are inline.
	fmt.Printf("MATRIX class matrix over %s (%s), poll %s, requester <-> responder: RPCs/errors, %d reps of %d cases per cell group, verify on, remote invalidation on, credits %d, reverse credits %d\n",
		provider, l.Addr(), poll, n, len(rpcrdmatest.Cases(1024, true)), credits, reverseCredits)
	var b strings.Builder
	fmt.Fprintf(&b, "MATRIX %-14s %-3s |", "class", "dir")
	for _, co := range combos {
		fmt.Fprintf(&b, " %11s", co)
	}
	fmt.Println(b.String())
	total := count{}
	for _, c := range classes {
		for dir := range numDirs {
			b.Reset()
			fmt.Fprintf(&b, "MATRIX %-14s %-3s |", c, dirNames[dir])
			for ci := range combos {
				cell := table[c][dir][ci]
				fmt.Fprintf(&b, " %11s", fmt.Sprintf("%d/%d", cell.rpcs, cell.errs))
				if cell.rpcs == 0 {
					t.Errorf("class %s %s at %s: no RPCs ran", c, dirNames[dir], combos[ci])
				}
			}
			fmt.Println(b.String())
		}
	}
	for _, s := range stats {
		fmt.Println("MATRIX " + s)
	}
	for _, c := range classes {
		for dir := range numDirs {
			for _, cell := range table[c][dir] {
				total.errs += cell.errs
			}
		}
	}
	fmt.Printf("MATRIX total (poll %s): %d columns x 2 directions in %.1f s, %d errors\n", poll, len(combos), elapsed.Seconds(), total.errs)
}

// runCombo connects a requester and a responder configured for co, runs the cases n times
// forward and then n times in reverse, checks every result and the counters, and returns a
// summary line per direction. tally is called once per RPC and class row.
func runCombo(t *testing.T, cdev, sdev datapath.Device, l datapath.Listener, co combo, n int, poll datapath.Poll, tally func(dir int, c rpcproto.Class, bad bool)) []string {
	cfg := rpcrdma.Config{
		SendSize: co.th, RecvSize: co.th,
		Credits: credits, ReverseCredits: reverseCredits,
		Memory: co.mem, RemoteInvalidate: true, ResponderRead: true,
		// Remote invalidation on both ends: RDMA_DONE goes by Send With Invalidate too.
		DoneInvalidate: true,
		// The largest case is a SINK of 2t+3 bytes.
		MaxPayload: 2*co.th + 4,
		Verify:     true,
	}
	p := connect(t, cdev, sdev, l, cfg)
	defer p.close()
	p.idle = datapath.NewIdler(poll, nil)

	prm := p.req.Params()
	if prm.Inline.SendSize != co.th || prm.Inline.RecvSize != co.th || !prm.ResponderRead || !prm.Reverse {
		t.Fatalf("negotiated %+v, want %d both ways, responder Read chunks and reverse calls", prm, co.th)
	}
	if want := co.mem == rpcrdma.MemoryWindows; prm.Inline.RemoteInvalidate != want {
		t.Errorf("remote invalidation negotiated %v, want %v in %s mode", prm.Inline.RemoteInvalidate, want, co.mem)
	}
	// The reverse direction opens with the requester's first forward call (RFC 8167
	// section 6: its receives are posted).
	if err := p.run(fwd, []rpcrdma.Call{{Proc: benchprog.ProcNull}}, 1, func(r rpcrdma.Result) {
		if r.Err != nil {
			t.Errorf("opening NULL: %v", r.Err)
		}
	}); err != nil {
		t.Fatalf("opening NULL: %v", err)
	}

	cases := rpcrdmatest.Cases(co.th, true)
	calls := make([]rpcrdma.Call, 0, n*len(cases))
	for rep := range n {
		for i, c := range cases {
			call := c.Call
			call.Tag = uint64(rep*len(cases) + i)
			calls = append(calls, call)
		}
	}
	var lines []string
	for dir := range numDirs {
		caller, replier := p.req, p.rsp
		if dir == rev {
			caller, replier = p.rsp, p.req
		}
		c0, r0 := caller.Stats(), replier.Stats()
		var rread, done int
		err := p.run(dir, calls, credits, func(r rpcrdma.Result) {
			tc := cases[r.Tag%uint64(len(cases))]
			want := 0
			if tc.Call.Proc == benchprog.ProcEcho || tc.Call.Proc == benchprog.ProcSource {
				want = tc.Call.Size
			}
			bad := r.Err != nil || r.CallClass != tc.CallClass || r.ReplyClass != tc.ReplyClass || len(r.Data) != want
			if bad {
				t.Errorf("%s %s: err %v, classes %s/%s, %d bytes; want %s/%s, %d bytes", dirNames[dir], tc.Name,
					r.Err, r.CallClass, r.ReplyClass, len(r.Data), tc.CallClass, tc.ReplyClass, want)
			}
			if tc.ReplyClass == rpcproto.ClassResponderRead {
				rread++
			}
			done++
			for _, c := range rowsOf(tc) {
				tally(dir, c, bad)
			}
		})
		if err != nil {
			t.Fatalf("%s: %v (%d of %d RPCs finished)", dirNames[dir], err, done, len(calls))
		}
		// The replier sees the last RDMA_DONE messages after the caller finished its RPCs:
		// keep both progressing until it has them all.
		deadline := time.Now().Add(10 * time.Second)
		for replier.Stats().DoneReceived-r0.DoneReceived < caller.Stats().DoneSent-c0.DoneSent && time.Now().Before(deadline) {
			if err := p.progress(); err != nil {
				t.Fatal(err)
			}
		}
		cs, rs := caller.Stats(), replier.Stats()
		doneSent := cs.DoneSent - c0.DoneSent
		doneRecv := rs.DoneReceived - r0.DoneReceived
		served := rs.Replies.Total() - r0.Replies.Total() // Served lags by the unsignalled replies
		sendInv := rs.SendInv.Count - r0.SendInv.Count
		remoteInv := cs.RemoteInvalidated - c0.RemoteInvalidated
		binds := cs.Binds - c0.Binds
		if int(served) != len(calls) {
			t.Errorf("%s: the replier served %d calls, want %d", dirNames[dir], served, len(calls))
		}
		if int(doneSent) != rread || doneRecv != doneSent || rs.DoneTimeouts != r0.DoneTimeouts {
			t.Errorf("%s: %d responder Read chunk replies, RDMA_DONE sent %d, received %d, %d release timeouts",
				dirNames[dir], rread, doneSent, doneRecv, rs.DoneTimeouts-r0.DoneTimeouts)
		}
		if cs.MaxOutstanding > int(cs.MaxCredit) || rs.MaxServing > int(rs.Granted) {
			t.Errorf("%s: credits exceeded: %d outstanding with %d granted, %d served at once with %d granted",
				dirNames[dir], cs.MaxOutstanding, cs.MaxCredit, rs.MaxServing, rs.Granted)
		}
		switch co.mem {
		case rpcrdma.MemoryWindows:
			if binds == 0 {
				t.Errorf("%s: no memory windows bound in windows mode", dirNames[dir])
			}
			// Forward, the responder must invalidate remotely; its Send With Invalidate
			// shows up as an invalidated receive on the requester.
			if dir == fwd && (sendInv == 0 || remoteInv != sendInv) {
				t.Errorf("fwd: %d Send With Invalidate sent, %d receives invalidated remotely", sendInv, remoteInv)
			}
			// And the requester's RDMA_DONE invalidates the responder's Read chunk window.
			if doneInv := rs.RemoteInvalidated - r0.RemoteInvalidated; dir == fwd && doneInv != doneRecv {
				t.Errorf("fwd: %d RDMA_DONE received, %d of them by Send With Invalidate", doneRecv, doneInv)
			}
		case rpcrdma.MemoryPreregistered:
			if binds != 0 || sendInv != 0 {
				t.Errorf("%s: %d binds and %d Send With Invalidate in preregistered mode", dirNames[dir], binds, sendInv)
			}
		}
		lines = append(lines, fmt.Sprintf("%-11s %s: rpcs=%d served=%d max_outstanding=%d/%d binds=%d local_inv=%d send_inv=%d remote_invalidated=%d rdma_read=%d rdma_write=%d rdma_done=%d/%d",
			co, dirNames[dir], done, served, cs.MaxOutstanding, cs.MaxCredit, binds, cs.LocalInvs-c0.LocalInvs,
			sendInv, remoteInv, cs.Read.Count-c0.Read.Count+rs.Read.Count-r0.Read.Count,
			cs.Write.Count-c0.Write.Count+rs.Write.Count-r0.Write.Count, doneSent, doneRecv))
	}
	return lines
}

// rowsOf is the table rows a case counts in: each half that is not inline, or short.
func rowsOf(tc rpcrdmatest.Case) []rpcproto.Class {
	var rows []rpcproto.Class
	if tc.CallClass != rpcproto.ClassShort {
		rows = append(rows, tc.CallClass)
	}
	if tc.ReplyClass != rpcproto.ClassShort {
		rows = append(rows, tc.ReplyClass)
	}
	if len(rows) == 0 {
		rows = append(rows, rpcproto.ClassShort)
	}
	return rows
}

// pair is a requester and a responder connected on one device, driven together from one
// goroutine (a Conn belongs to one goroutine; alternating between the two keeps each
// progressing while the other waits).
type pair struct {
	req, rsp *rpcrdma.Conn
	buf      [64]rpcrdma.Result
	// idle decides, after a round that completed nothing, whether to block (the matrix's
	// poll mode).
	idle datapath.Idler
}

// waitSlice bounds each CQ.Wait of the event and hybrid modes.
const waitSlice = 2 * time.Millisecond

func connect(t testing.TB, cdev, sdev datapath.Device, l datapath.Listener, cfg rpcrdma.Config) *pair {
	t.Helper()
	type res struct {
		c   *rpcrdma.Conn
		err error
	}
	ch := make(chan res, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		c, err := rpcrdma.Accept(ctx, sdev, l, cfg)
		ch <- res{c, err}
	}()
	req, err := rpcrdma.Dial(ctx, cdev, l.Addr(), cfg)
	r := <-ch
	if err != nil || r.err != nil {
		if req != nil {
			req.Close()
		}
		if r.c != nil {
			r.c.Close()
		}
		t.Fatalf("connect: dial: %v; accept: %v", err, r.err)
	}
	return &pair{req: req, rsp: r.c}
}

func (p *pair) close() {
	p.req.Close()
	p.rsp.Close()
}

// progress runs both endpoints once; their own RPCs must all have finished (their results
// are dropped).
func (p *pair) progress() error {
	for _, c := range []*rpcrdma.Conn{p.req, p.rsp} {
		if _, err := c.Progress(p.buf[:]); err != nil {
			return fmt.Errorf("%s: %w", c.Params().Role, err)
		}
	}
	return nil
}

// run sends calls from the requester (dir fwd) or the responder (dir rev), keeping up to
// depth outstanding (fewer if fewer credits are granted), while progressing the other end,
// and hands every Result to got as it arrives (its Data valid only during the call). It
// returns an error if a connection broke or the calls did not finish within runTimeout.
func (p *pair) run(dir int, calls []rpcrdma.Call, depth int, got func(rpcrdma.Result)) error {
	caller, other := p.req, p.rsp
	if dir == rev {
		caller, other = p.rsp, p.req
	}
	deadline := time.Now().Add(runTimeout)
	next, inflight, done := 0, 0, 0
	for done < len(calls) {
		for next < len(calls) && inflight < depth {
			err := caller.Submit(calls[next])
			if errors.Is(err, rpcrdma.ErrNoCredit) {
				break
			}
			if err != nil {
				got(rpcrdma.Result{Tag: calls[next].Tag, Err: err})
				done++
			} else {
				inflight++
			}
			next++
		}
		k, err := caller.Progress(p.buf[:])
		for _, r := range p.buf[:k] {
			got(r)
		}
		inflight -= k
		done += k
		if err != nil {
			return fmt.Errorf("%s (caller): %w", caller.Params().Role, err)
		}
		if k, err := other.Progress(p.buf[:]); err != nil || k != 0 {
			return fmt.Errorf("%s (replier): %d results of its own, %v", other.Params().Role, k, err)
		}
		if k > 0 {
			p.idle.Active()
		} else if p.idle.ShouldWait() {
			// Each end's CQ in turn, briefly: the completion that ends the wait may be
			// on either, and both are drained by the next Progress.
			for _, c := range []*rpcrdma.Conn{caller, other} {
				if err := c.CQ().Wait(waitSlice); err != nil && !errors.Is(err, datapath.ErrTimeout) {
					return fmt.Errorf("%s: wait: %w", c.Params().Role, err)
				}
			}
		}
		if time.Now().After(deadline) {
			return rpcrdmatest.ErrTimeout
		}
	}
	return nil
}
