package rpcrdma

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// overspend makes c ignore its credits: it submits n calls at once, however many it was
// granted, and posts them in one batch.
func overspend(c *Conn, n int, call Call) error {
	c.cl.credits = uint32(c.cl.outstanding + n)
	for k := range n {
		call.Tag = uint64(1000 + k)
		if err := c.Submit(call); err != nil {
			return fmt.Errorf("call %d of %d: %w", k+1, n, err)
		}
	}
	return c.Idle()
}

// A requester that sends more calls than it was granted (RFC 8166 section 3.3) loses the
// connection, with a cause that says so; one that keeps to its grant never does.
func TestCallBeyondGrantFailsConnection(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.Credits, sc.Credits = 16, 4
	p := newPair(t, rc, sc)
	// At the grant: 4 SINKs with Read chunks in flight at a time, again and again.
	calls := make([]Call, 40)
	for k := range calls {
		calls[k] = Call{Proc: benchprog.ProcSink, Size: 8 << 10, Tag: uint64(k)}
	}
	for _, r := range func() []Result { r, _ := p.run(calls, nil); return r }() {
		if r.Err != nil {
			t.Fatalf("at the grant: %v", r.Err)
		}
	}
	if g := p.req.cl.credits; g != 4 || p.rsp.stats.MaxServing != 4 {
		t.Fatalf("granted %d, at most %d calls in service; want 4, 4", g, p.rsp.stats.MaxServing)
	}
	// Beyond it: 6 at once, all received before the responder looks (one batch).
	if err := overspend(p.req, 6, Call{Proc: benchprog.ProcSink, Size: 8 << 10}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	var res [16]Result
	for deadline := time.Now().Add(hangGuard); p.rsp.err == nil && time.Now().Before(deadline); {
		p.rsp.Progress(res[:])
		p.req.Progress(res[:])
	}
	if !errors.Is(p.rsp.err, ErrCreditOverrun) || !strings.Contains(p.rsp.err.Error(), "4 granted") {
		t.Fatalf("6 calls with 4 credits granted: the responder's connection ended with %v (max %d in service); want ErrCreditOverrun naming the grant",
			p.rsp.err, p.rsp.stats.MaxServing)
	}
}

// The same with the requester in another process, over the soft provider's TCP wire.
func TestProcessCallBeyondGrantFailsConnection(t *testing.T) {
	rc, sc := testCfg(1024), testCfg(1024)
	rc.Credits, sc.Credits = 16, 4
	p := startPeer(t, "req", rc, sc)
	call := fmt.Sprintf("CALL %d %d 0", benchprog.ProcSink, 8<<10)
	if got := p.do(call, "RES"); got != "RES ok "+fmt.Sprint(int(rpcproto.ClassShort)) {
		t.Fatal(got)
	}
	// The peer posts 6 calls at once; this side does not look until they are all here.
	if _, err := fmt.Fprintf(p.in, "OVERSPEND 6 %d %d\n", benchprog.ProcSink, 8<<10); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-p.lines:
		if line != "OK" {
			t.Fatalf("peer: %s", line)
		}
	case <-time.After(hangGuard):
		t.Fatal("the peer never posted its calls")
	}
	time.Sleep(200 * time.Millisecond)
	c := p.local
	var res [16]Result
	for deadline := time.Now().Add(hangGuard); c.err == nil && time.Now().Before(deadline); {
		c.Progress(res[:])
	}
	if !errors.Is(c.err, ErrCreditOverrun) || !strings.Contains(c.err.Error(), "4 granted") {
		t.Fatalf("6 calls with 4 credits granted: the responder's connection ended with %v (max %d in service); want ErrCreditOverrun naming the grant",
			c.err, c.stats.MaxServing)
	}
}
