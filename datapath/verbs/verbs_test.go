//go:build verbs && cgo

package verbs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"golang.org/x/sys/unix"
)

func TestLayout(t *testing.T) {
	if !layoutOK() {
		t.Fatal("datapath.SGE/Completion layouts differ from ibv_sge/vb_wc")
	}
}

func TestStatusMapping(t *testing.T) {
	// enum ibv_wc_status values (libibverbs ABI).
	for _, tc := range []struct {
		ibv  int
		want datapath.Status
	}{
		{0, datapath.StatusSuccess},
		{1, datapath.StatusLocalLength},
		{2, datapath.StatusLocalQPOperation},
		{3, datapath.StatusGeneral}, // LOC_EEC_OP_ERR
		{4, datapath.StatusLocalProtection},
		{5, datapath.StatusFlushed},
		{6, datapath.StatusMWBind},
		{9, datapath.StatusRemoteInvalidRequest},
		{10, datapath.StatusRemoteAccess},
		{11, datapath.StatusRemoteOperation},
		{12, datapath.StatusRetryExceeded},
		{13, datapath.StatusRNRRetryExceeded},
		{19, datapath.StatusGeneral}, // FATAL_ERR
		{21, datapath.StatusGeneral}, // GENERAL_ERR
	} {
		if got := statusOf(tc.ibv); got != tc.want {
			t.Errorf("ibv status %d maps to %v, want %v", tc.ibv, got, tc.want)
		}
	}
}

func TestOpcodeConstants(t *testing.T) {
	if !constsOK() {
		t.Fatal("C opcode/flag numbers differ from package datapath's")
	}
}

// env is one device with a CQ and a connected pair of queue pairs on it (the device talking
// to itself at its own address, as soft-RoCE allows).
type env struct {
	dev      datapath.Device
	cq       datapath.CQ
	cli, srv datapath.Conn
	mem      []byte
	mr       datapath.MR
}

func openDevice(t testing.TB, cfg Config) datapath.Device {
	t.Helper()
	p := New(cfg)
	devs, err := p.Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if len(devs) == 0 {
		skipNoDevice(t)
	}
	d, err := p.Open("")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return d
}

// skipNoDevice skips, except in the VM (VMTEST_REQUIRE_DEVICE set), where a missing device
// is a failure.
func skipNoDevice(t testing.TB) {
	t.Helper()
	if os.Getenv("VMTEST_REQUIRE_DEVICE") != "" {
		t.Fatal("no RDMA device, but VMTEST_REQUIRE_DEVICE is set")
	}
	t.Skip("no RDMA device: run inside the soft-RoCE VM (make vmtest)")
}

func mmap(t testing.TB, n int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

func newEnv(t testing.TB, cfg Config, qc datapath.QPConfig, cliPriv, srvPriv []byte) *env {
	t.Helper()
	e := &env{dev: openDevice(t, cfg)}
	t.Cleanup(func() {
		if err := e.dev.Close(); err != nil {
			t.Errorf("device Close: %v", err)
		}
	})
	var err error
	if e.cq, err = e.dev.NewCQ(256); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.cq.Close(); err != nil {
			t.Errorf("CQ Close: %v", err)
		}
	})
	e.mem = mmap(t, 1<<20)
	if e.mr, err = e.dev.Register(e.mem, datapath.AccessLocalWrite|datapath.AccessRemoteRead|datapath.AccessRemoteWrite|datapath.AccessMWBind); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.mr.Close(); err != nil {
			t.Errorf("MR Close: %v", err)
		}
	})
	qc.SendCQ, qc.RecvCQ = e.cq, e.cq
	e.cli, e.srv = connectPair(t, e.dev, qc, cliPriv, srvPriv)
	return e
}

func connectPair(t testing.TB, d datapath.Device, qc datapath.QPConfig, cliPriv, srvPriv []byte) (cli, srv datapath.Conn) {
	t.Helper()
	l, err := d.Listen(":0")
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	defer l.Close()
	type res struct {
		c   datapath.Conn
		req []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r, err := l.Accept(ctx)
		if err != nil {
			ch <- res{err: err}
			return
		}
		c, err := r.Accept(qc, srvPriv)
		ch <- res{c, r.PrivateData(), err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cli, err = d.Connect(ctx, l.Addr(), qc, cliPriv)
	if err != nil {
		t.Fatalf("Connect %s: %v", l.Addr(), err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatalf("Accept: %v", r.err)
	}
	if !bytes.HasPrefix(r.req, cliPriv) || !allZeroFrom(r.req, len(cliPriv)) {
		t.Fatalf("listener got private data % x, want % x (+ zero padding)", r.req, cliPriv)
	}
	t.Cleanup(func() { cli.Close(); r.c.Close() })
	return cli, r.c
}

func allZeroFrom(b []byte, i int) bool { return allZero(b[i:]) }

// waitFor polls until n completions arrived or a deadline passes.
func waitFor(t testing.TB, cq datapath.CQ, n int) []datapath.Completion {
	t.Helper()
	var got []datapath.Completion
	buf := make([]datapath.Completion, 16)
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n {
		k, err := cq.Poll(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:k]...)
		if k == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d completions after 10s: %+v", len(got), n, got)
			}
			cq.Wait(10 * time.Millisecond)
		}
	}
	return got
}

func byID(wcs []datapath.Completion, id uint64) datapath.Completion {
	for _, w := range wcs {
		if w.ID == id {
			return w
		}
	}
	return datapath.Completion{}
}

func TestIntegrationDevices(t *testing.T) {
	p := New(Config{})
	devs, err := p.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) == 0 {
		skipNoDevice(t)
	}
	for _, d := range devs {
		t.Logf("%+v", d)
		if d.MaxInlineData <= 0 || d.MaxSGE <= 0 || d.MaxQPWR <= 0 || d.MaxCQE <= 0 || d.MaxMRSize == 0 || len(d.Ports) == 0 {
			t.Errorf("%s: implausible attributes %+v", d.Name, d)
		}
		for _, pt := range d.Ports {
			if pt.State == "ACTIVE" && (pt.ActiveMTU == 0 || len(pt.GIDs) == 0) {
				t.Errorf("%s port %d: active without MTU or GIDs: %+v", d.Name, pt.Num, pt)
			}
		}
	}
}

func TestIntegrationConnectPrivateData(t *testing.T) {
	cliPriv := []byte("rpcrdma-bench connect private")
	srvPriv := bytes.Repeat([]byte{0xa5}, datapath.MaxAcceptPrivateData)
	e := newEnv(t, Config{}, datapath.QPConfig{}, cliPriv, srvPriv)
	if got := e.cli.PeerPrivateData(); !bytes.HasPrefix(got, srvPriv) {
		t.Fatalf("connector got private data % x, want % x", got, srvPriv)
	}
	if e.cli.QPN() == 0 || e.srv.QPN() == 0 || e.cli.QPN() == e.srv.QPN() {
		t.Errorf("QPNs %#x %#x", e.cli.QPN(), e.srv.QPN())
	}
	if e.cli.RemoteAddr() != e.srv.LocalAddr() || e.srv.RemoteAddr() != e.cli.LocalAddr() {
		t.Errorf("addresses: cli %s->%s srv %s->%s", e.cli.LocalAddr(), e.cli.RemoteAddr(), e.srv.LocalAddr(), e.srv.RemoteAddr())
	}
	c := e.cli.Caps()
	if c.MaxSendWR < datapath.DefaultMaxWR || c.MaxSendSGE < datapath.DefaultMaxSGE || c.RDMAReadDepth < 1 {
		t.Errorf("caps %+v below the defaults", c)
	}
}

func TestIntegrationReject(t *testing.T) {
	d := openDevice(t, Config{})
	defer d.Close()
	cq, err := d.NewCQ(16)
	if err != nil {
		t.Fatal(err)
	}
	defer cq.Close()
	l, err := d.Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		r, err := l.Accept(context.Background())
		if err == nil {
			r.Reject([]byte("go away"))
		}
	}()
	_, err = d.Connect(context.Background(), l.Addr(), datapath.QPConfig{SendCQ: cq, RecvCQ: cq}, []byte("hi"))
	var rej *RejectedError
	if !errors.As(err, &rej) || !bytes.HasPrefix(rej.PrivateData, []byte("go away")) {
		t.Fatalf("Connect to a rejecting listener: %v", err)
	}
}

func TestIntegrationSendRecvWriteRead(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{MaxInlineData: 64}, nil, nil)
	base := e.mr.Addr()
	lkey := e.mr.LKey()
	// Layout of the test region: [0,4K) client send, [4K,8K) server recv, [8K,12K) WRITE
	// target, [12K,16K) READ source, [16K,20K) READ destination.
	copy(e.mem[0:], "hello over rxe")
	copy(e.mem[12288:], "read me")
	if _, err := e.srv.PostRecv([]datapath.RecvWR{{ID: 7, SGL: []datapath.SGE{{Addr: base + 4096, Length: 4096, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	wrs := []datapath.SendWR{
		{ID: 1, Op: datapath.OpWrite, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 14, LKey: lkey}}, RemoteAddr: base + 8192, RKey: e.mr.RKey()},
		{ID: 2, Op: datapath.OpRead, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base + 16384, Length: 7, LKey: lkey}}, RemoteAddr: base + 12288, RKey: e.mr.RKey()},
		{ID: 3, Op: datapath.OpSend, Flags: datapath.FlagSignaled | datapath.FlagInline, SGL: []datapath.SGE{{Addr: base, Length: 14, LKey: lkey}}},
	}
	if n, err := e.cli.PostSend(wrs); n != 3 || err != nil {
		t.Fatalf("PostSend: %d %v", n, err)
	}
	wcs := waitFor(t, e.cq, 4)
	for _, tc := range []struct {
		id  uint64
		op  datapath.Opcode
		qpn uint32
	}{{1, datapath.OpWrite, e.cli.QPN()}, {2, datapath.OpRead, e.cli.QPN()}, {3, datapath.OpSend, e.cli.QPN()}, {7, datapath.OpRecv, e.srv.QPN()}} {
		w := byID(wcs, tc.id)
		if w.Status != datapath.StatusSuccess || w.Op != tc.op || w.QPN != tc.qpn {
			t.Errorf("completion %d: %+v, want %v on qp %#x", tc.id, w, tc.op, tc.qpn)
		}
	}
	if w := byID(wcs, 7); w.ByteLen != 14 || string(e.mem[4096:4096+14]) != "hello over rxe" {
		t.Errorf("received %d bytes %q", w.ByteLen, e.mem[4096:4096+14])
	}
	if string(e.mem[8192:8192+14]) != "hello over rxe" {
		t.Errorf("WRITE placed %q", e.mem[8192:8192+14])
	}
	if string(e.mem[16384:16384+7]) != "read me" {
		t.Errorf("READ got %q", e.mem[16384:16384+7])
	}
}

func TestIntegrationInlineClamped(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{MaxInlineData: 1 << 20}, nil, nil)
	c := e.cli.Caps()
	if c.MaxInlineData <= 0 || c.MaxInlineData > 1<<20 {
		t.Fatalf("MaxInlineData %d", c.MaxInlineData)
	}
	t.Logf("asked 1 MiB inline, got %d (device probe %d)", c.MaxInlineData, e.dev.Info().MaxInlineData)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	n := uint32(c.MaxInlineData)
	for i := range e.mem[:n] {
		e.mem[i] = byte(i)
	}
	if _, err := e.srv.PostRecv([]datapath.RecvWR{{ID: 1, SGL: []datapath.SGE{{Addr: base + 65536, Length: 65536, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cli.PostSend([]datapath.SendWR{{ID: 9, Op: datapath.OpSend, Flags: datapath.FlagInline, SGL: []datapath.SGE{{Addr: base, Length: n + 1, LKey: lkey}}}}); !errors.Is(err, errInline) {
		t.Fatalf("inline send over the limit: %v", err)
	}
	if _, err := e.cli.PostSend([]datapath.SendWR{{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagInline | datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: n, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	wcs := waitFor(t, e.cq, 2)
	if w := byID(wcs, 1); w.Status != datapath.StatusSuccess || w.ByteLen != n || !bytes.Equal(e.mem[65536:65536+n], e.mem[:n]) {
		t.Fatalf("inline receive %+v", w)
	}
}

func TestIntegrationMemoryWindowSendInv(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
	w, err := e.dev.AllocMW()
	if errors.Is(err, datapath.ErrNotSupported) {
		t.Skipf("no memory windows: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	base, lkey := e.mr.Addr(), e.mr.LKey()
	// The server binds a window over [32K, 36K) for the client to WRITE into, the client
	// writes and then sends with invalidate: the server's receive reports the key.
	key := datapath.NextRKey(w.RKey())
	bind := []datapath.SendWR{{ID: 10, Op: datapath.OpBindMW, Flags: datapath.FlagSignaled, MW: w, RKey: key,
		SGL: []datapath.SGE{{Addr: base + 32768, Length: 4096, LKey: lkey}}, BindAccess: datapath.AccessRemoteWrite | datapath.AccessLocalWrite}}
	if _, err := e.srv.PostSend(bind); err != nil {
		t.Fatal(err)
	}
	if wc := waitFor(t, e.cq, 1)[0]; wc.Status != datapath.StatusSuccess || wc.Op != datapath.OpBindMW {
		t.Fatalf("bind completion %+v", wc)
	}
	if w.RKey() != key&^0xff|key&0xff || w.RKey()&0xff != key&0xff {
		t.Fatalf("MW.RKey %#x after binding %#x", w.RKey(), key)
	}
	copy(e.mem[0:], "through a window")
	if _, err := e.srv.PostRecv([]datapath.RecvWR{{ID: 11, SGL: []datapath.SGE{{Addr: base + 4096, Length: 4096, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	wrs := []datapath.SendWR{
		{ID: 12, Op: datapath.OpWrite, SGL: []datapath.SGE{{Addr: base, Length: 16, LKey: lkey}}, RemoteAddr: base + 32768, RKey: w.RKey()},
		{ID: 13, Op: datapath.OpSendInv, Flags: datapath.FlagSignaled, InvRKey: w.RKey(), SGL: []datapath.SGE{{Addr: base, Length: 4, LKey: lkey}}},
	}
	if _, err := e.cli.PostSend(wrs); err != nil {
		t.Fatal(err)
	}
	wcs := waitFor(t, e.cq, 2)
	if s := byID(wcs, 13); s.Status != datapath.StatusSuccess || s.Op != datapath.OpSendInv {
		t.Errorf("send-with-inv completion %+v", s)
	}
	if r := byID(wcs, 11); r.Status != datapath.StatusSuccess || !r.Invalidated || r.InvRKey != w.RKey() {
		t.Errorf("receive %+v, want invalidated rkey %#x", r, w.RKey())
	}
	if string(e.mem[32768:32768+16]) != "through a window" {
		t.Errorf("WRITE through window placed %q", e.mem[32768:32768+16])
	}
	// The window is invalid now: a WRITE with its key breaks the connection.
	if _, err := e.cli.PostSend([]datapath.SendWR{{ID: 14, Op: datapath.OpWrite, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 16, LKey: lkey}}, RemoteAddr: base + 32768, RKey: w.RKey()}}); err != nil {
		t.Fatal(err)
	}
	if wc := waitFor(t, e.cq, 1)[0]; wc.ID != 14 || wc.Status != datapath.StatusRemoteAccess {
		t.Fatalf("WRITE through an invalidated window: %+v", wc)
	}
	var ce *CompletionError
	if err := e.cli.Err(); !errors.As(err, &ce) || !errors.Is(err, datapath.ErrBroken) {
		t.Fatalf("Err after remote access error: %v", err)
	}
	t.Logf("broken: %v", e.cli.Err())
}

func TestIntegrationLocalInv(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
	w, err := e.dev.AllocMW()
	if errors.Is(err, datapath.ErrNotSupported) {
		t.Skipf("no memory windows: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	base, lkey := e.mr.Addr(), e.mr.LKey()
	key := datapath.NextRKey(w.RKey())
	wrs := []datapath.SendWR{
		{ID: 1, Op: datapath.OpBindMW, MW: w, RKey: key, SGL: []datapath.SGE{{Addr: base, Length: 4096, LKey: lkey}}, BindAccess: datapath.AccessRemoteRead},
		{ID: 2, Op: datapath.OpLocalInv, Flags: datapath.FlagSignaled, InvRKey: key},
	}
	if _, err := e.srv.PostSend(wrs); err != nil {
		t.Fatal(err)
	}
	if wc := waitFor(t, e.cq, 1)[0]; wc.ID != 2 || wc.Status != datapath.StatusSuccess || wc.Op != datapath.OpLocalInv {
		t.Fatalf("local invalidate: %+v", wc)
	}
}

func TestIntegrationSendTooLong(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	e.srv.PostRecv([]datapath.RecvWR{{ID: 1, SGL: []datapath.SGE{{Addr: base + 4096, Length: 8, LKey: lkey}}}, {ID: 2, SGL: []datapath.SGE{{Addr: base + 8192, Length: 8, LKey: lkey}}}})
	if _, err := e.cli.PostSend([]datapath.SendWR{{ID: 3, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 100, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	wcs := waitFor(t, e.cq, 3)
	// rdma_rxe reports an RC receive too small for the SEND as a local QP operation error
	// (rxe_resp.c, RESPST_ERR_LENGTH); hardware says local length error.
	if r := byID(wcs, 1); (r.Status != datapath.StatusLocalLength && r.Status != datapath.StatusLocalQPOperation) || r.Op != datapath.OpRecv {
		t.Errorf("receiver: %+v, want local length (or, on rxe, local QP operation) error", r)
	}
	if r := byID(wcs, 2); r.Status != datapath.StatusFlushed || r.Op != datapath.OpRecv {
		t.Errorf("second receive: %+v, want flushed", r)
	}
	if s := byID(wcs, 3); s.Status == datapath.StatusSuccess {
		t.Errorf("sender: %+v, want an error", s)
	}
	for _, c := range []datapath.Conn{e.cli, e.srv} {
		if !errors.Is(c.Err(), datapath.ErrBroken) {
			t.Errorf("qp %#x Err = %v", c.QPN(), c.Err())
		}
	}
	if _, err := e.cli.PostSend([]datapath.SendWR{{ID: 4, Op: datapath.OpSend}}); !errors.Is(err, datapath.ErrBroken) {
		t.Errorf("PostSend on a broken connection: %v", err)
	}
}

func TestIntegrationWait(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
	if err := e.cq.Wait(20 * time.Millisecond); !errors.Is(err, datapath.ErrTimeout) {
		t.Fatalf("Wait on an idle CQ: %v", err)
	}
	base, lkey := e.mr.Addr(), e.mr.LKey()
	e.srv.PostRecv([]datapath.RecvWR{{ID: 1, SGL: []datapath.SGE{{Addr: base + 4096, Length: 64, LKey: lkey}}}})
	e.cli.PostSend([]datapath.SendWR{{ID: 2, Op: datapath.OpSend, SGL: []datapath.SGE{{Addr: base, Length: 8, LKey: lkey}}}})
	var wcs [4]datapath.Completion
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := e.cq.Wait(5 * time.Second); err != nil {
			t.Fatalf("Wait with a completion coming: %v", err)
		}
		if n, _ := e.cq.Poll(wcs[:]); n > 0 {
			if wcs[0].ID != 1 || wcs[0].Status != datapath.StatusSuccess {
				t.Fatalf("completion %+v", wcs[0])
			}
			return
		}
	}
	t.Fatal("no completion")
}

func TestIntegrationPeerClose(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	e.srv.PostRecv([]datapath.RecvWR{{ID: 5, SGL: []datapath.SGE{{Addr: base, Length: 64, LKey: lkey}}}})
	e.cli.Close()
	wc := waitFor(t, e.cq, 1)[0]
	if wc.ID != 5 || wc.Status != datapath.StatusFlushed {
		t.Fatalf("server receive after client close: %+v", wc)
	}
	if !errors.Is(e.srv.Err(), datapath.ErrBroken) {
		t.Fatalf("server Err after peer close: %v", e.srv.Err())
	}
}

func TestIntegrationPostPollAllocs(t *testing.T) {
	e := newEnv(t, Config{PollSpin: 100}, datapath.QPConfig{}, nil, nil)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	recv := []datapath.RecvWR{{ID: 1, SGL: []datapath.SGE{{Addr: base + 4096, Length: 64, LKey: lkey}}}}
	send := []datapath.SendWR{{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 64, LKey: lkey}}}}
	wcs := make([]datapath.Completion, 4)
	round := func() {
		if _, err := e.srv.PostRecv(recv); err != nil {
			panic(err)
		}
		if _, err := e.cli.PostSend(send); err != nil {
			panic(err)
		}
		for got := 0; got < 2; {
			n, err := e.cq.Poll(wcs)
			if err != nil {
				panic(err)
			}
			got += n
		}
	}
	round()
	if n := testing.AllocsPerRun(200, round); n != 0 {
		t.Fatalf("post+poll round allocates %v times", n)
	}
}

func TestIntegrationDeviceCloseReportsOpen(t *testing.T) {
	d := openDevice(t, Config{})
	cq, err := d.NewCQ(4)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err == nil {
		t.Fatal("Close with an open CQ succeeded")
	} else {
		t.Log(err)
	}
	cq.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestIntegrationBindAnyRange(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
	w, err := e.dev.AllocMW()
	if errors.Is(err, datapath.ErrNotSupported) {
		t.Skipf("no memory windows: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	base, lkey := e.mr.Addr(), e.mr.LKey()
	for i, tc := range []struct {
		off, n uint64
		acc    datapath.Access
	}{{0, 64, datapath.AccessRemoteRead}, {4096, 64, datapath.AccessRemoteRead}, {100, 64, datapath.AccessRemoteWrite}, {100, 64, datapath.AccessRemoteRead}, {7, 1, datapath.AccessRemoteRead}} {
		key := datapath.NextRKey(w.RKey())
		_, err := e.srv.PostSend([]datapath.SendWR{{ID: uint64(i), Op: datapath.OpBindMW, Flags: datapath.FlagSignaled, MW: w, RKey: key,
			SGL: []datapath.SGE{{Addr: base + tc.off, Length: uint32(tc.n), LKey: lkey}}, BindAccess: tc.acc}})
		if err != nil {
			t.Errorf("bind [%d,+%d) %v: %v", tc.off, tc.n, tc.acc, err)
			continue
		}
		if wc := waitFor(t, e.cq, 1)[0]; wc.Status != datapath.StatusSuccess {
			t.Fatalf("bind [%d,+%d): %+v", tc.off, tc.n, wc)
		}
		// A type 2 window is bound again only after an invalidation.
		if _, err := e.srv.PostSend([]datapath.SendWR{{ID: 100, Op: datapath.OpLocalInv, Flags: datapath.FlagSignaled, InvRKey: key}}); err != nil {
			t.Fatal(err)
		}
		if wc := waitFor(t, e.cq, 1)[0]; wc.Status != datapath.StatusSuccess {
			t.Fatalf("invalidate: %+v", wc)
		}
	}
}

// A SEND that arrives shortly before its receive is posted waits (RNR retries) instead of
// breaking the connection, as the datapath contract requires.
func TestIntegrationLateRecv(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	if _, err := e.cli.PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 8, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := e.srv.PostRecv([]datapath.RecvWR{{ID: 2, SGL: []datapath.SGE{{Addr: base + 4096, Length: 64, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	wcs := waitFor(t, e.cq, 2)
	if s, r := byID(wcs, 1), byID(wcs, 2); s.Status != datapath.StatusSuccess || r.Status != datapath.StatusSuccess {
		t.Fatalf("late receive: send %+v, receive %+v", s, r)
	}
}

// BenchmarkPostPoll is one SEND/RECV on a queue pair talking to itself through one CQ: a
// PostRecv, a PostSend and the Polls that collect both completions.
func BenchmarkPostPoll(b *testing.B) {
	e := newEnv(b, Config{PollSpin: 64}, datapath.QPConfig{MaxInlineData: 64}, nil, nil)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	recv := []datapath.RecvWR{{ID: 1, SGL: []datapath.SGE{{Addr: base + 4096, Length: 64, LKey: lkey}}}}
	send := []datapath.SendWR{{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled | datapath.FlagInline, SGL: []datapath.SGE{{Addr: base, Length: 64, LKey: lkey}}}}
	wcs := make([]datapath.Completion, 4)
	b.ReportAllocs()
	polls := 0
	for b.Loop() {
		if _, err := e.srv.PostRecv(recv); err != nil {
			b.Fatal(err)
		}
		if _, err := e.cli.PostSend(send); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < 2; polls++ {
			n, err := e.cq.Poll(wcs)
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
	b.ReportMetric(float64(polls)/float64(b.N), "polls/op")
}
