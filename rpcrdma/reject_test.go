package rpcrdma

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// errMemlock is what a device's registration fails with in these tests: the verbs
// provider's explanation of ibv_reg_mr under RLIMIT_MEMLOCK, cut short.
var errMemlock = errors.New("cannot allocate memory: RLIMIT_MEMLOCK is 8 MiB; raise it with 'ulimit -l unlimited'")

// failRegDev is a device whose protection domains refuse to register memory, as a device
// under a small RLIMIT_MEMLOCK does.
type failRegDev struct{ datapath.Device }

func (d failRegDev) AllocPD() (datapath.PD, error) {
	pd, err := d.Device.AllocPD()
	return failRegPD{pd}, err
}

func (d failRegDev) Register([]byte, datapath.Access) (datapath.MR, error) {
	return nil, &datapath.OpError{Op: "ibv_reg_mr", Err: errMemlock}
}

type failRegPD struct{ datapath.PD }

func (failRegPD) Register([]byte, datapath.Access) (datapath.MR, error) {
	return nil, &datapath.OpError{Op: "ibv_reg_mr", Err: errMemlock}
}

// refusedDial dials a soft server at addr (in process or over TCP) whose device and listener
// are wrapped as given, and returns the requester's error and the server's Accept error.
func refusedDial(t *testing.T, addr string, dev func(datapath.Device) datapath.Device, lis func(datapath.Listener) datapath.Listener) (dialErr, acceptErr error) {
	t.Helper()
	prov := soft.New(soft.Config{})
	cdev, _ := prov.Open("")
	sdev, _ := prov.Open("")
	defer sdev.Close()
	defer cdev.Close()
	l, err := sdev.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	acc := make(chan error, 1)
	go func() {
		c, err := Accept(context.Background(), dev(sdev), lis(l), testCfg(4096))
		if c != nil {
			c.Close()
		}
		acc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, dialErr = Dial(ctx, cdev, l.Addr(), testCfg(4096))
	return dialErr, <-acc
}

func sameDevice(d datapath.Device) datapath.Device       { return d }
func sameListener(l datapath.Listener) datapath.Listener { return l }

// A server that cannot set a connection up refuses it with the cause, and the requester's
// error carries that cause: in process and over TCP.
func TestRefusalCarriesSetupCause(t *testing.T) {
	for _, addr := range []string{soft.InprocPrefix + "0", "127.0.0.1:0"} {
		err, serr := refusedDial(t, addr, func(d datapath.Device) datapath.Device { return failRegDev{d} }, sameListener)
		if serr == nil || !strings.Contains(serr.Error(), errMemlock.Error()) {
			t.Errorf("%s: the server's Accept: %v, want its cause", addr, serr)
		}
		if err == nil || !strings.Contains(err.Error(), "RLIMIT_MEMLOCK is 8 MiB") {
			t.Errorf("%s: Dial: %v; want the server's cause (RLIMIT_MEMLOCK is 8 MiB)", addr, err)
		}
	}
}

// failQPListener hands out requests whose queue pair cannot be created, as a device out of
// queue pairs or memory refuses one: Accept fails before answering the requester.
type failQPListener struct{ datapath.Listener }

var errNoQP = &datapath.OpError{Op: "rdma_create_qp", Err: errors.New("send 160×2, recv 160×2, inline 0: cannot allocate memory")}

func (l failQPListener) Accept(ctx context.Context) (datapath.ConnRequest, error) {
	r, err := l.Listener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return failQPRequest{r}, nil
}

type failQPRequest struct{ datapath.ConnRequest }

func (failQPRequest) Accept(datapath.QPConfig, []byte) (datapath.Conn, error) { return nil, errNoQP }

// A queue pair that cannot be created is a refusal with its cause too, not a requester left
// waiting for an answer until its timeout.
func TestFailedAcceptCarriesCause(t *testing.T) {
	for _, addr := range []string{soft.InprocPrefix + "0", "127.0.0.1:0"} {
		err, _ := refusedDial(t, addr, sameDevice, func(l datapath.Listener) datapath.Listener { return failQPListener{l} })
		var rej *RejectReasonError
		if !errors.As(err, &rej) || !strings.Contains(rej.Reason, "rdma_create_qp") || !strings.Contains(rej.Reason, "cannot allocate memory") {
			t.Errorf("%s: Dial: %v; want a refusal naming rdma_create_qp and its cause", addr, err)
		}
	}
}

// The same with the server in another process.
func TestProcessRefusalCarriesSetupCause(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a peer process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), peerEnvVar+"=rspfail {}")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var line string
	if _, err := fmt.Fscanln(out, &line, &line); err != nil {
		t.Fatalf("the peer's address: %v", err)
	}
	dev, _ := soft.New(soft.Config{}).Open("")
	defer dev.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	_, err = Dial(ctx, dev, line, testCfg(4096))
	if err == nil || !strings.Contains(err.Error(), "RLIMIT_MEMLOCK is 8 MiB") {
		t.Fatalf("Dial: %v; want the server's cause (RLIMIT_MEMLOCK is 8 MiB)", err)
	}
}

// untilBroken progresses c until it breaks and returns its error.
func untilBroken(t *testing.T, c *Conn) error {
	t.Helper()
	var res [8]Result
	for deadline := time.Now().Add(hangGuard); time.Now().Before(deadline); {
		if _, err := c.Progress(res[:]); err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the connection never broke")
	return nil
}

// A connection the server ends above the wire layer (idle timeout, shutdown) tells the
// client why, where the provider can carry it (soft, in process and over TCP).
func TestServerCloseCarriesReason(t *testing.T) {
	for _, addr := range []string{soft.InprocPrefix + "0", "127.0.0.1:0"} {
		prov := soft.New(soft.Config{})
		cdev, _ := prov.Open("")
		sdev, _ := prov.Open("")
		l, err := sdev.Listen(addr)
		if err != nil {
			t.Fatal(err)
		}
		stop := serveForTest(t, sdev, l, ServeConfig{Endpoint: testCfg(4096), IdleTimeout: 50 * time.Millisecond,
			Poller: datapath.PollerConfig{Poll: datapath.Poll{Mode: datapath.PollEvent}, EventTimeout: time.Millisecond}})
		idle, err := Dial(context.Background(), cdev, l.Addr(), testCfg(4096))
		if err != nil {
			t.Fatal(err)
		}
		if err := untilBroken(t, idle); !strings.Contains(err.Error(), "the server closed the connection: rpcrdma: connection idle") {
			t.Errorf("%s: idle client: %v; want the server's reason", addr, err)
		}
		idle.Close()

		busy, err := Dial(context.Background(), cdev, l.Addr(), testCfg(4096))
		if err != nil {
			t.Fatal(err)
		}
		if r := callServed(t, busy, Call{Proc: benchprog.ProcNull}); r.Err != nil {
			t.Fatal(r.Err)
		}
		stop()
		if err := untilBroken(t, busy); !strings.Contains(err.Error(), "the server closed the connection: server shutting down") {
			t.Errorf("%s: client of a server that stops: %v; want \"the server closed the connection: server shutting down\"", addr, err)
		}
		busy.Close()
		l.Close()
		cdev.Close()
		sdev.Close()
	}
}

// Served counts the replies whose Send completed, not the replies queued: a reply whose
// Send fails (the requester went away before it) is not a call served.
func TestServedCountsRepliesSent(t *testing.T) {
	p := newPair(t, testCfg(4096), testCfg(4096))
	// Four replies: the fourth Send is signalled (every min(16, credits/2)), so its
	// completion proves all four sent.
	for i := range 4 {
		if r := p.call(p.req, Call{Proc: benchprog.ProcNull, Tag: uint64(i)}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if err := p.req.Submit(Call{Proc: benchprog.ProcNull, Tag: 4}); err != nil {
		t.Fatal(err)
	}
	p.req.qp.Close() // the call is in the responder's receive queue; its reply cannot be sent
	var res [8]Result
	for deadline := time.Now().Add(hangGuard); p.rsp.Err() == nil && time.Now().Before(deadline); {
		p.rsp.Progress(res[:])
	}
	if got := p.rsp.Stats().Served; got != 4 {
		t.Fatalf("Served = %d after four replies sent and one that could not be, want 4", got)
	}
}

// A requester that closes after its replies arrived: every reply counts, the unsignalled
// ones no later completion reported included.
func TestServedCountsRepliesBeforeClose(t *testing.T) {
	p := newPair(t, testCfg(4096), testCfg(4096))
	for i := range 3 { // all three unsignalled (every fourth reply Send is signalled)
		if r := p.call(p.req, Call{Proc: benchprog.ProcNull, Tag: uint64(i)}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	p.req.Close()
	err := untilBroken(t, p.rsp)
	if got := p.rsp.Stats().Served; got != 3 {
		t.Fatalf("Served = %d after three replies and the requester's close, want 3", got)
	}
	if !strings.Contains(err.Error(), "the client closed the connection") {
		t.Fatalf("the responder's error: %v, want it to say the client closed the connection", err)
	}
}

// lateCauseQP refuses every post as broken, and learns why (the peer's close) only once
// told: a post can find the connection broken before the provider has read the peer's
// DISCONNECT.
type lateCauseQP struct {
	datapath.Conn
	cause error
}

func (q *lateCauseQP) PostSend([]datapath.SendWR) (int, error) {
	return 0, fmt.Errorf("soft: post: %w", datapath.ErrBroken)
}

func (q *lateCauseQP) Err() error { return q.cause }

// A break first seen as a refused post names the peer's close once the provider knows it,
// as one first seen as a flush does.
func TestRefusedPostNamesThePeersCloseLater(t *testing.T) {
	p := newPair(t, testCfg(1024), testCfg(1024))
	q := &lateCauseQP{Conn: p.req.qp}
	p.req.qp = q
	if err := p.req.Submit(Call{Proc: benchprog.ProcNull}); err != nil && !errors.Is(err, datapath.ErrBroken) {
		t.Fatalf("Submit: %v", err)
	}
	var res [8]Result
	for deadline := time.Now().Add(hangGuard); p.req.Err() == nil && time.Now().Before(deadline); {
		p.req.Progress(res[:])
	}
	if p.req.Err() == nil {
		t.Fatal("a refused post did not break the connection")
	}
	q.cause = &datapath.DisconnectError{Reason: "server shutting down"}
	if err := p.req.Err(); !strings.Contains(err.Error(), "the server closed the connection: server shutting down") {
		t.Errorf("%v; want the server's reason, learned after the refused post", err)
	}
	p.req.qp = q.Conn
}
