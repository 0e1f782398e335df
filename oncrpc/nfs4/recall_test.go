package nfs4

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// fakeReply is the outcome of one call a fakeDriver made.
type fakeReply struct {
	who, proc int
	err       error
}

// fakeDriver drives a recall as the engine does, without RDMA: each call goes through its
// client's codec to that client's fake server at once, and its outcome reaches the
// Measurement at the next poll. clock is the recall's clock.
type fakeDriver struct {
	t        *testing.T
	servers  [2]*fakeServer
	codecs   [2]*Codec
	replies  []fakeReply
	calls    []string // "who procedure", since the last poll
	figures  []rpcproto.Figures
	declined int
	clock    int64
}

func (d *fakeDriver) Call(who, proc int) error {
	d.calls = append(d.calls, string(rune('0'+who))+" "+Prog.Procs[proc].Name)
	_, err := d.servers[who].call(d.codecs[who], proc, 0, 0)
	d.replies = append(d.replies, fakeReply{who, proc, err})
	return nil
}

func (d *fakeDriver) Done(f rpcproto.Figures) { d.figures = append(d.figures, f) }
func (d *fakeDriver) Declined()               { d.declined++ }

// poll hands the outcomes in so far to m and steps it, as the engine's Progress does; it
// returns the calls m made meanwhile.
func (d *fakeDriver) poll(m rpcproto.Measurement) ([]string, error) {
	in := d.replies
	d.replies = nil
	for _, r := range in {
		if err := m.Reply(d, r.who, r.proc, r.err); err != nil {
			return d.take(), err
		}
	}
	err := m.Step(d)
	return d.take(), err
}

func (d *fakeDriver) take() []string {
	c := d.calls
	d.calls = nil
	return c
}

// expect polls and fails the test unless m made exactly the calls want.
func (d *fakeDriver) expect(m rpcproto.Measurement, what string, want ...string) {
	d.t.Helper()
	got, err := d.poll(m)
	if err != nil {
		d.t.Fatalf("%s: %v", what, err)
	}
	if len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
		d.t.Fatalf("%s: calls %q, want %q", what, got, want)
	}
}

// newRecallTest is a recall over two clients, each set up with its own fake server.
func newRecallTest(t *testing.T) (*recall, *fakeDriver) {
	d := &fakeDriver{t: t}
	d.servers[holder], d.codecs[holder] = setUp(t)
	d.servers[conflicter], d.codecs[conflicter] = setUp(t)
	m, err := d.codecs[holder].Measure(PRecall)
	if err != nil {
		t.Fatal(err)
	}
	r := m.(*recall)
	r.now = func() int64 { return d.clock }
	if r.Conns() != 2 {
		t.Fatalf("Conns %d, want 2", r.Conns())
	}
	for i, c := range d.codecs {
		if err := r.Connected(i, c); err != nil {
			t.Fatalf("Connected %d: %v", i, err)
		}
	}
	return r, d
}

// openedFile is the name the last OPEN to s named.
func openedFile(s *fakeServer) string {
	c := s.calls[len(s.calls)-1]
	return c.names[len(c.names)-1]
}

// cbRecall is the holder's CB_COMPOUND recalling the delegation it holds: CB_SEQUENCE on
// back channel slot 0 with sequenceid seq, then CB_RECALL.
func cbRecallOf(c *Codec, seq uint32) []byte {
	var w xw
	w.opaque(nil).u32(1).u32(0).u32(2)
	w.u32(CBOpSequence).raw(c.session[:]).u32(seq).u32(0).u32(0).u32(0).u32(0)
	w.u32(CBOpRecall).stateid(delegState).u32(0).opaque(c.delegFH.fh())
	return w.b
}

// A recall granted: the holder's OPEN gets a delegation; a request's conflicting OPEN is
// answered NFS4ERR_DELAY until CB_RECALL comes, DELEGRETURN follows at once, the OPEN is
// made again when its reply is in (and again on a second DELAY), and once it succeeds the
// request is complete with its figures, both clients close the file and the holder opens
// the next one.
func TestRecallGranted(t *testing.T) {
	r, d := newRecallTest(t)
	d.servers[holder].deleg = true
	d.servers[conflicter].fail[OpOpen] = []Status{ErrDelay, ErrDelay}
	if ok, err := r.Begin(d); ok || err != nil || len(d.take()) > 0 {
		t.Fatalf("Begin before a delegation is held: %v %v", ok, err)
	}
	d.expect(r, "first step", "0 deleg-open")
	if f := openedFile(d.servers[holder]); f != RecallFile(0) {
		t.Fatalf("the holder opened %q, want %q", f, RecallFile(0))
	}
	d.expect(r, "delegation granted")
	if !r.Settled() {
		t.Error("not settled with a delegation held")
	}

	// A CB_RECALL before the request is none of its own.
	res := make([]byte, 512)
	if _, err := d.codecs[holder].Service().Serve(CBProcCompound, cbRecallOf(d.codecs[holder], 1), res); err != nil {
		t.Fatalf("CB_RECALL: %v", err)
	}
	d.clock = Now()
	t0 := d.clock
	if ok, err := r.Begin(d); !ok || err != nil {
		t.Fatalf("Begin with a delegation held: %v %v", ok, err)
	}
	if got := d.take(); !reflect.DeepEqual(got, []string{"1 deleg-conflict"}) {
		t.Fatalf("Begin: calls %q", got)
	}
	if f := openedFile(d.servers[conflicter]); f != RecallFile(0) {
		t.Fatalf("the conflicter opened %q, want %q", f, RecallFile(0))
	}
	d.expect(r, "NFS4ERR_DELAY before the recall")
	d.expect(r, "no recall yet")
	if r.Settled() {
		t.Error("settled amid a conflict")
	}

	if _, err := d.codecs[holder].Service().Serve(CBProcCompound, cbRecallOf(d.codecs[holder], 2), res); err != nil {
		t.Fatalf("CB_RECALL: %v", err)
	}
	arrived := Now()
	d.clock = arrived + 5000
	d.expect(r, "CB_RECALL in", "0 delegreturn")
	d.clock += 7000
	d.expect(r, "DELEGRETURN's reply", "1 deleg-conflict")
	d.expect(r, "NFS4ERR_DELAY after DELEGRETURN", "1 deleg-conflict")
	d.clock += 3000
	d.expect(r, "the conflicting OPEN's success", "0 deleg-close", "1 deleg-close")
	if len(d.figures) != 1 {
		t.Fatalf("%d requests done, want 1", len(d.figures))
	}
	f := d.figures[0]
	if f.CallbackNs < 0 || f.CallbackNs > arrived-t0 || f.AnswerNs != 7000 || f.TotalNs != d.clock-t0 || f.Retries != 2 || d.declined != 0 {
		t.Errorf("figures %+v (declined %d), want the recall within %d ns, DELEGRETURN 7000 ns, all %d ns, 2 retries",
			f, d.declined, arrived-t0, d.clock-t0)
	}
	d.expect(r, "both CLOSEs", "0 deleg-open")
	if f := openedFile(d.servers[holder]); f != RecallFile(1) {
		t.Fatalf("the holder opened %q next, want %q", f, RecallFile(1))
	}
}

// Refused delegations: each OPEN granted none is closed and counted, the next file is
// opened at once until recallPatience refusals in a row, then after recallBackoff; a grant
// makes the patience start over.
func TestRecallRefused(t *testing.T) {
	r, d := newRecallTest(t)
	d.expect(r, "first step", "0 deleg-open")
	for k := 1; k <= recallPatience; k++ {
		if f := openedFile(d.servers[holder]); f != RecallFile(k-1) {
			t.Fatalf("refusal %d: the holder opened %q, want %q", k, f, RecallFile(k-1))
		}
		d.expect(r, "no delegation", "0 deleg-close")
		if d.declined != k {
			t.Fatalf("%d declined, want %d", d.declined, k)
		}
		if k < recallPatience {
			d.expect(r, "closed", "0 deleg-open")
		}
	}
	d.expect(r, "the last refusal's CLOSE: a wait")
	d.clock += int64(recallBackoff) - 1
	d.expect(r, "within the wait")
	d.clock++
	d.servers[holder].deleg = true
	d.expect(r, "after the wait", "0 deleg-open")
	d.expect(r, "granted")
	if r.refused != 0 {
		t.Errorf("refusals %d after a grant, want 0", r.refused)
	}
	if ok, err := r.Begin(d); !ok || err != nil {
		t.Fatalf("Begin: %v %v", ok, err)
	}
}

// A conflicting OPEN that succeeds before any recall, a failed call and a back channel
// reported down end the measurement with errors naming the file and procedure.
func TestRecallErrors(t *testing.T) {
	r, d := newRecallTest(t)
	d.servers[holder].deleg = true
	d.expect(r, "open", "0 deleg-open")
	d.expect(r, "granted")
	if ok, err := r.Begin(d); !ok || err != nil {
		t.Fatalf("Begin: %v %v", ok, err)
	}
	_, err := d.poll(r)
	if !errors.Is(err, errNoRecall) || !strings.Contains(err.Error(), "delegation recall of "+RecallFile(0)+": deleg-conflict: ") {
		t.Errorf("a conflict without recall: %v", err)
	}

	r, d = newRecallTest(t)
	d.servers[holder].fail[OpOpen] = []Status{ErrAccess}
	d.expect(r, "open", "0 deleg-open")
	if _, err := d.poll(r); err == nil || !strings.Contains(err.Error(), "delegation recall of "+RecallFile(0)+": deleg-open: ") {
		t.Errorf("a failed OPEN: %v", err)
	}

	r, d = newRecallTest(t)
	d.servers[holder].deleg = true
	d.servers[conflicter].fail[OpOpen] = []Status{ErrDelay}
	d.expect(r, "open", "0 deleg-open")
	d.expect(r, "granted")
	if ok, err := r.Begin(d); !ok || err != nil {
		t.Fatalf("Begin: %v %v", ok, err)
	}
	d.codecs[holder].pathDown = true
	if _, err := d.poll(r); !errors.Is(err, errPathDown) {
		t.Errorf("the back channel down: %v", err)
	}
}

// Stopping: no delegation is asked for any more; a delegation held is returned and its
// file closed on the holder's connection; nothing held, nothing to release.
func TestRecallRelease(t *testing.T) {
	r, d := newRecallTest(t)
	d.servers[holder].deleg = true
	d.expect(r, "open", "0 deleg-open")
	d.expect(r, "granted")
	r.Stop()
	if !r.Settled() {
		t.Fatal("not settled, a delegation held")
	}
	var got [][2]int
	for {
		who, proc, ok := r.Release()
		if !ok {
			break
		}
		if got = append(got, [2]int{who, proc}); len(got) > 2 {
			break
		}
	}
	if want := [][2]int{{holder, PDelegReturn}, {holder, PDelegClose}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Release: %v, want %v", got, want)
	}
	d.expect(r, "stopped and released")

	r, d = newRecallTest(t)
	r.Stop()
	d.expect(r, "stopped before any delegation")
	if _, _, ok := r.Release(); ok {
		t.Error("a release with nothing held")
	}
}

// The holder must have a back channel, and only PRecall is measured alone.
func TestRecallSetup(t *testing.T) {
	_, c := setUp(t)
	m, err := c.Measure(PRecall)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Connected(conflicter, c); err != nil {
		t.Errorf("a conflicter: %v", err)
	}
	c.backChan = false
	if err := m.Connected(holder, c); !errors.Is(err, errNoBackChannel) {
		t.Errorf("a holder without a back channel: %v", err)
	}
	if err := m.Connected(conflicter, c); err != nil {
		t.Errorf("a conflicter without a back channel: %v", err)
	}
	if _, err := c.Measure(PGetattr); err == nil {
		t.Error("GETATTR measured alone")
	}
	if _, err := c.Measure(-1); err == nil {
		t.Error("procedure -1 measured alone")
	}
}
