package soft_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/datapathtest"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
)

// pair is a connected pair of queue pairs for the package's own tests and benchmarks.
type pair struct {
	devA, devB datapath.Device
	a, b       datapath.Conn
	cqA, cqB   datapath.CQ
	pdA, pdB   []byte // what each end's peer sent
	closers    []func() error
}

func (p *pair) close(tb testing.TB) {
	for i := len(p.closers) - 1; i >= 0; i-- {
		if err := p.closers[i](); err != nil {
			tb.Errorf("cleanup: %v", err)
		}
	}
}

func newPair(tb testing.TB, cfg soft.Config, addr string, qp datapath.QPConfig, cpd, apd []byte) *pair {
	tb.Helper()
	prov := soft.New(cfg)
	p := &pair{}
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	var err error
	p.devA, err = prov.Open("")
	must(err)
	p.closers = append(p.closers, p.devA.Close)
	p.devB, err = prov.Open(soft.DeviceName)
	must(err)
	p.closers = append(p.closers, p.devB.Close)
	p.cqA, err = p.devA.NewCQ(4096)
	must(err)
	p.closers = append(p.closers, p.cqA.Close)
	p.cqB, err = p.devB.NewCQ(4096)
	must(err)
	p.closers = append(p.closers, p.cqB.Close)
	ln, err := p.devB.Listen(addr)
	must(err)
	type res struct {
		c   datapath.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		req, err := ln.Accept(context.Background())
		if err != nil {
			ch <- res{nil, err}
			return
		}
		cfg := qp
		cfg.SendCQ, cfg.RecvCQ = p.cqB, p.cqB
		c, err := req.Accept(cfg, apd)
		ch <- res{c, err}
	}()
	cfgA := qp
	cfgA.SendCQ, cfgA.RecvCQ = p.cqA, p.cqA
	p.a, err = p.devA.Connect(context.Background(), ln.Addr(), cfgA, cpd)
	must(err)
	r := <-ch
	must(r.err)
	must(ln.Close())
	p.b = r.c
	p.closers = append(p.closers, p.a.Close, p.b.Close)
	p.pdA, p.pdB = p.a.PeerPrivateData(), p.b.PeerPrivateData()
	return p
}

func (p *pair) reg(tb testing.TB, dev datapath.Device, n int, acc datapath.Access) datapath.MR {
	mem, free, err := datapathtest.Alloc(n)
	if err != nil {
		tb.Fatal(err)
	}
	mr, err := dev.Register(mem, acc)
	if err != nil {
		tb.Fatal(err)
	}
	p.closers = append(p.closers, free, mr.Close)
	return mr
}

func sge(mr datapath.MR, n int) []datapath.SGE {
	return []datapath.SGE{{Addr: mr.Addr(), Length: uint32(n), LKey: mr.LKey()}}
}

func pollN(tb testing.TB, cq datapath.CQ, wcs []datapath.Completion) {
	got := 0
	deadline := time.Now().Add(5 * time.Second)
	for got < len(wcs) {
		n, err := cq.Poll(wcs[got:])
		if err != nil {
			tb.Fatal(err)
		}
		got += n
		if n == 0 && time.Now().After(deadline) {
			tb.Fatalf("got %d of %d completions", got, len(wcs))
		}
	}
	for _, wc := range wcs {
		if wc.Status != datapath.StatusSuccess {
			tb.Fatalf("completion %+v: %v", wc, wc.Status)
		}
	}
}

const rwAll = datapath.AccessLocalWrite | datapath.AccessRemoteWrite | datapath.AccessRemoteRead

func TestPrivateDataPaddedToCMSizes(t *testing.T) {
	for _, addr := range []string{"inproc:", "127.0.0.1:0"} {
		p := newPair(t, soft.Config{}, addr, datapath.QPConfig{}, []byte{1, 2, 3}, []byte{4})
		if len(p.pdB) != datapath.MaxConnectPrivateData || p.pdB[0] != 1 || p.pdB[2] != 3 || p.pdB[55] != 0 {
			t.Errorf("%s: connect private data %x, want 010203 padded to 56 bytes", addr, p.pdB)
		}
		if len(p.pdA) != datapath.MaxAcceptPrivateData || p.pdA[0] != 4 || p.pdA[195] != 0 {
			t.Errorf("%s: accept private data %x, want 04 padded to 196 bytes", addr, p.pdA)
		}
		p.close(t)
	}
}

func TestRejectCarriesPrivateData(t *testing.T) {
	for _, addr := range []string{"inproc:", "127.0.0.1:0"} {
		prov := soft.New(soft.Config{})
		dev, _ := prov.Open("")
		cq, _ := dev.NewCQ(16)
		ln, err := dev.Listen(addr)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			req, err := ln.Accept(context.Background())
			if err == nil {
				req.Reject([]byte("busy"))
			}
		}()
		_, err = dev.Connect(context.Background(), ln.Addr(), datapath.QPConfig{SendCQ: cq, RecvCQ: cq}, nil)
		var rej *datapath.RejectedError
		if !errors.As(err, &rej) || string(rej.PrivateData[:4]) != "busy" || len(rej.PrivateData) != datapath.MaxAcceptPrivateData {
			t.Errorf("%s: Connect = %v, want a RejectError carrying \"busy\" padded to 196 bytes", addr, err)
		}
		ln.Close()
		cq.Close()
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestDeviceCloseReportsOpenObjects(t *testing.T) {
	dev, _ := soft.New(soft.Config{}).Open("")
	cq, _ := dev.NewCQ(1)
	var open *soft.OpenObjectsError
	if err := dev.Close(); !errors.As(err, &open) || open.CQs != 1 {
		t.Fatalf("Close with a CQ open = %v", err)
	}
	cq.Close()
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCQOverrun(t *testing.T) {
	dev, _ := soft.New(soft.Config{}).Open("")
	defer dev.Close()
	cq, _ := dev.NewCQ(4)
	defer cq.Close()
	ln, _ := dev.Listen("inproc:")
	defer ln.Close()
	other := make(chan datapath.Conn, 1)
	go func() {
		req, _ := ln.Accept(context.Background())
		c, _ := req.Accept(datapath.QPConfig{SendCQ: cq, RecvCQ: cq}, nil)
		other <- c
	}()
	c, err := dev.Connect(context.Background(), ln.Addr(), datapath.QPConfig{SendCQ: cq, RecvCQ: cq}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer (<-other).Close()
	// The 8 receives flush into the 4-entry CQ at Close: it overruns.
	if n, err := c.PostRecv(make([]datapath.RecvWR, 8)); n != 8 {
		t.Fatal(err)
	}
	c.Close()
	wcs := make([]datapath.Completion, 16)
	if _, err := cq.Poll(wcs); err == nil {
		t.Fatal("Poll after overrun returned no error")
	}
}

func TestSendWaitsForReceiveWithinRNRBudget(t *testing.T) {
	p := newPair(t, soft.Config{RNRTimeout: time.Minute}, "inproc:", datapath.QPConfig{MaxInlineData: 64}, nil, nil)
	defer p.close(t)
	src := p.reg(t, p.devA, 64, datapath.AccessLocalWrite)
	dst := p.reg(t, p.devB, 64, rwAll)
	copy(src.Bytes(), "hello")
	// Posted before the peer has a receive, as right after connection setup.
	if _, err := p.a.PostSend([]datapath.SendWR{
		{ID: 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled | datapath.FlagInline, SGL: sge(src, 5)},
		{ID: 2, Op: datapath.OpRead, Flags: datapath.FlagSignaled, SGL: sge(src, 5), RemoteAddr: dst.Addr(), RKey: dst.RKey()},
	}); err != nil {
		t.Fatal(err)
	}
	copy(src.Bytes(), "xxxxx") // inline: the SEND's data was taken at post time
	var wc [1]datapath.Completion
	if n, _ := p.cqA.Poll(wc[:]); n != 0 {
		t.Fatalf("SEND completed without a receive: %+v", wc[0])
	}
	if _, err := p.b.PostRecv([]datapath.RecvWR{{ID: 9, SGL: sge(dst, 64)}}); err != nil {
		t.Fatal(err)
	}
	pollN(t, p.cqB, wc[:])
	if wc[0].ByteLen != 5 || string(dst.Bytes()[:5]) != "hello" {
		t.Fatalf("received %+v %q", wc[0], dst.Bytes()[:5])
	}
	two := make([]datapath.Completion, 2)
	pollN(t, p.cqA, two)
	if two[0].ID != 1 || two[1].ID != 2 {
		t.Fatalf("completions out of order: %+v", two)
	}
}

func TestMWRules(t *testing.T) {
	p := newPair(t, soft.Config{}, "inproc:", datapath.QPConfig{}, nil, nil)
	defer p.close(t)
	mr := p.reg(t, p.devA, 4096, datapath.AccessLocalWrite|datapath.AccessMWBind)
	w1, _ := p.devA.AllocMW()
	w2, _ := p.devA.AllocMW()
	p.closers = append(p.closers, w1.Close, w2.Close)
	bind := func(w datapath.MW, key uint32) datapath.Status {
		if _, err := p.a.PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpBindMW, Flags: datapath.FlagSignaled,
			SGL: sge(mr, 64), MW: w, RKey: key, BindAccess: datapath.AccessRemoteRead}}); err != nil {
			t.Fatal(err)
		}
		var wc [1]datapath.Completion
		for n := 0; n == 0; n, _ = p.cqA.Poll(wc[:]) {
		}
		return wc[0].Status
	}
	if st := bind(w1, datapath.NextRKey(w1.RKey())); st != datapath.StatusSuccess {
		t.Fatalf("bind: %v", st)
	}
	if err := mr.Close(); err == nil {
		t.Fatal("deregistering a region with a bound window succeeded")
	}
	// A key of another window's index is refused and breaks the connection.
	if st := bind(w2, datapath.NextRKey(w1.RKey())); st != datapath.StatusMWBind {
		t.Fatalf("bind with a foreign key: %v, want %v", st, datapath.StatusMWBind)
	}
	if !errors.Is(p.a.Err(), datapath.ErrBroken) || !errors.Is(p.b.Err(), datapath.ErrBroken) {
		t.Fatalf("Err after a bind error: %v / %v", p.a.Err(), p.b.Err())
	}
	w1.Close() // invalidates, so the region can go
	p.closers = p.closers[:len(p.closers)-2]
	w2.Close()
}

func TestListenNameInUse(t *testing.T) {
	dev, _ := soft.New(soft.Config{}).Open("")
	defer dev.Close()
	ln, err := dev.Listen("inproc:taken")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := dev.Listen("inproc:taken"); err == nil {
		t.Fatal("second Listen on one name succeeded")
	}
}

// A work request queued behind a SEND that waits for a receive fails on its own when its
// turn comes: one completion with its status, the rest flushed, none twice.
func TestQueuedFailureCompletesOnce(t *testing.T) {
	p := newPair(t, soft.Config{RNRTimeout: time.Minute}, "inproc:", datapath.QPConfig{}, nil, nil)
	defer p.close(t)
	src := p.reg(t, p.devA, 64, 0)
	dst := p.reg(t, p.devB, 64, rwAll)
	sig := datapath.FlagSignaled
	if _, err := p.a.PostSend([]datapath.SendWR{
		{ID: 1, Op: datapath.OpSend, Flags: sig, SGL: sge(src, 8)},
		{ID: 2, Op: datapath.OpWrite, Flags: sig, SGL: sge(src, 8), RemoteAddr: dst.Addr(), RKey: datapath.NextRKey(dst.RKey())},
		{ID: 3, Op: datapath.OpSend, Flags: sig, SGL: sge(src, 8)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.b.PostRecv([]datapath.RecvWR{{ID: 9, SGL: sge(dst, 64)}, {ID: 10, SGL: sge(dst, 64)}}); err != nil {
		t.Fatal(err)
	}
	wcs := make([]datapath.Completion, 8)
	n, _ := p.cqA.Poll(wcs)
	want := []struct {
		id uint64
		st datapath.Status
	}{{1, datapath.StatusSuccess}, {2, datapath.StatusRemoteAccess}, {3, datapath.StatusFlushed}}
	if n != len(want) {
		t.Fatalf("%d completions, want 3: %+v", n, wcs[:n])
	}
	for i, w := range want {
		if wcs[i].ID != w.id || wcs[i].Status != w.st {
			t.Errorf("completion %d: %+v, want id %d %v", i, wcs[i], w.id, w.st)
		}
	}
}

// Over TCP a SEND posted before the peer's receive is retried after the RNR NAK (go-back-N
// with the work requests behind it) and succeeds once the receive is there.
func TestTCPRNRRetry(t *testing.T) {
	p := newPair(t, soft.Config{RNRTimeout: time.Minute}, "127.0.0.1:0", datapath.QPConfig{RDMAReadDepth: 1}, nil, nil)
	defer p.close(t)
	src := p.reg(t, p.devA, 4096, datapath.AccessLocalWrite)
	dst := p.reg(t, p.devB, 4096, rwAll)
	copy(dst.Bytes(), "remote data")
	sig := datapath.FlagSignaled
	wrs := []datapath.SendWR{{ID: 1, Op: datapath.OpSend, Flags: sig, SGL: sge(src, 100)}}
	// READs beyond the initiator depth of 1 wait their turn; the fenced one waits for all.
	for i := range 4 {
		wrs = append(wrs, datapath.SendWR{ID: uint64(2 + i), Op: datapath.OpRead, Flags: sig,
			SGL:        []datapath.SGE{{Addr: src.Addr() + uint64(1024*i), Length: 11, LKey: src.LKey()}},
			RemoteAddr: dst.Addr(), RKey: dst.RKey()})
	}
	wrs[4].Flags |= datapath.FlagFence
	if _, err := p.a.PostSend(wrs); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // let a few RNR NAKs happen
	// The SEND lands after the data the READs fetch.
	rsgl := []datapath.SGE{{Addr: dst.Addr() + 2048, Length: 2048, LKey: dst.LKey()}}
	if _, err := p.b.PostRecv([]datapath.RecvWR{{ID: 9, SGL: rsgl}}); err != nil {
		t.Fatal(err)
	}
	wcs := make([]datapath.Completion, len(wrs))
	pollN(t, p.cqA, wcs)
	for i, wc := range wcs {
		if wc.ID != uint64(i+1) {
			t.Fatalf("completion %d: %+v, want id %d", i, wc, i+1)
		}
	}
	for i := range 4 {
		if got := string(src.Bytes()[1024*i : 1024*i+11]); got != "remote data" {
			t.Fatalf("READ %d got %q", i, got)
		}
	}
	pollN(t, p.cqB, wcs[:1])
	if wcs[0].ID != 9 || wcs[0].ByteLen != 100 {
		t.Fatalf("receive %+v", wcs[0])
	}
}

// The soft provider reports another PD's lkey exactly as hardware reports a bad lkey
// (the conformance case also accepts rxe's status), and a PD outlives what is in it.
func TestPDRules(t *testing.T) {
	p := newPair(t, soft.Config{}, "inproc:", datapath.QPConfig{}, nil, nil)
	defer p.close(t)
	pd, err := p.devA.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	mem, free, err := datapathtest.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	mr, err := pd.Register(mem, datapath.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := pd.Close(); err == nil {
		t.Fatal("PD.Close with a region open succeeded")
	}
	// p.a is in the default PD: mr's lkey is foreign there.
	if _, err := p.a.PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: sge(mr, 8)}}); err != nil {
		t.Fatal(err)
	}
	var wc [1]datapath.Completion
	if n, _ := p.cqA.Poll(wc[:]); n != 1 || wc[0].Status != datapath.StatusLocalProtection {
		t.Fatalf("SEND from another PD's region: %d %+v, want %v", n, wc[0], datapath.StatusLocalProtection)
	}
	// A PD of another device is refused with a clear error, not a panic.
	other, _ := p.devB.AllocPD()
	if _, err := p.devA.Connect(context.Background(), "inproc:nowhere", datapath.QPConfig{SendCQ: p.cqA, RecvCQ: p.cqA, PD: other}, nil); err == nil || !strings.Contains(err.Error(), "PD") {
		t.Fatalf("Connect with another device's PD: %v", err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pd.Close(); err != nil {
		t.Fatalf("PD.Close once empty: %v", err)
	}
}
