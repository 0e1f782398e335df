//go:build verbs && cgo

package verbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	return openNamed(t, cfg, "")
}

// openNamed opens the device name ("": the first).
func openNamed(t testing.TB, cfg Config, name string) datapath.Device {
	t.Helper()
	p := New(cfg)
	devs, err := p.Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if len(devs) == 0 {
		skipNoDevice(t)
	}
	d, err := p.Open(name)
	if err != nil {
		t.Fatalf("Open %q: %v", name, err)
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
	return newEnvOn(t, "", cfg, qc, cliPriv, srvPriv)
}

// newEnvOn is newEnv on the device name ("": the first).
func newEnvOn(t testing.TB, name string, cfg Config, qc datapath.QPConfig, cliPriv, srvPriv []byte) *env {
	t.Helper()
	e := &env{dev: openNamed(t, cfg, name)}
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
	var rej *datapath.RejectedError
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

// deferAll switches both ends of e to deferred posting.
func deferAll(t testing.TB, e *env) {
	t.Helper()
	for _, c := range []datapath.Conn{e.cli, e.srv} {
		if err := c.(datapath.Deferrer).DeferPosts(); err != nil {
			t.Fatal(err)
		}
	}
}

// Deferred posts reach the device with the next poll of the CQ and not before, receives
// first, and complete as immediate ones do.
func TestIntegrationDeferPosts(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{MaxInlineData: 64}, nil, nil)
	deferAll(t, e)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	copy(e.mem[:64], "deferred until the next poll")
	dst := e.mem[4096 : 4096+64]
	if _, err := e.srv.PostRecv([]datapath.RecvWR{{ID: 7, SGL: []datapath.SGE{{Addr: base + 4096, Length: 64, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	// Inline: the data is copied when the poll posts it, so what is there then is sent.
	if _, err := e.cli.PostSend([]datapath.SendWR{{ID: 8, Op: datapath.OpSend, Flags: datapath.FlagSignaled | datapath.FlagInline, SGL: []datapath.SGE{{Addr: base, Length: 64, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if !allZero(dst) {
		t.Fatalf("the SEND arrived before any poll: % x", dst[:16])
	}
	wcs := waitFor(t, e.cq, 2)
	if s, r := byID(wcs, 8), byID(wcs, 7); s.Status != datapath.StatusSuccess || r.Status != datapath.StatusSuccess || r.ByteLen != 64 {
		t.Fatalf("send %+v, receive %+v", s, r)
	}
	if !bytes.Equal(dst, e.mem[:64]) {
		t.Fatalf("received % x, want % x", dst[:16], e.mem[:16])
	}
}

// The poll posts queue pairs in the order they staged: a receive staged on one before the
// SEND staged on another that takes it is posted first. With no RNR retries, a SEND that
// found no receive would fail.
func TestIntegrationDeferOrder(t *testing.T) {
	e := newEnv(t, Config{RNRRetry: -1}, datapath.QPConfig{}, nil, nil)
	deferAll(t, e)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	for i := range 20 {
		id := uint64(2 * i)
		if _, err := e.srv.PostRecv([]datapath.RecvWR{{ID: id, SGL: []datapath.SGE{{Addr: base + 4096, Length: 64, LKey: lkey}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.cli.PostSend([]datapath.SendWR{{ID: id + 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 8, LKey: lkey}}}}); err != nil {
			t.Fatal(err)
		}
		wcs := waitFor(t, e.cq, 2)
		if r, s := byID(wcs, id), byID(wcs, id+1); r.Status != datapath.StatusSuccess || s.Status != datapath.StatusSuccess {
			t.Fatalf("round %d: receive %+v, send %+v", i, r, s)
		}
	}
}

// A ping-pong between two deferred connections on CQs of their own: each side's poll posts
// what it staged since its previous poll.
func TestIntegrationDeferPingPong(t *testing.T) {
	cqs := deferPingPong(t, Config{}, nil)
	if _, ok := datapath.Turnarounds(cqs[0]); ok {
		t.Error("Turnarounds: ok with the probe off")
	}
}

// With the turnaround probe on, each end's turnarounds are counted, one per round trip, and
// a delay before an end posts its reply is in its turnarounds.
func TestIntegrationTurnarounds(t *testing.T) {
	const delay = 2 * time.Millisecond
	cqs := deferPingPong(t, Config{Turnarounds: true}, func(side int) {
		if side == 1 {
			time.Sleep(delay)
		}
	})
	var ta [2]datapath.Turnaround
	for side, cq := range cqs {
		var ok bool
		if ta[side], ok = datapath.Turnarounds(cq); !ok {
			t.Fatalf("side %d: Turnarounds: not ok with the probe on", side)
		}
		t.Logf("side %d: %d turnarounds, mean %v, p50 %v, min %v, max %v", side, ta[side].Count, ta[side].Mean(), ta[side].Quantile(0.5), ta[side].Min, ta[side].Max)
		var hist uint64
		for _, c := range ta[side].Hist {
			hist += c
		}
		if ta[side].Post <= 0 || ta[side].Min <= 0 || ta[side].Min > ta[side].Max || ta[side].Total < time.Duration(ta[side].Count)*ta[side].Min || hist != ta[side].Count {
			t.Errorf("side %d: inconsistent %+v (histogram holds %d)", side, ta[side], hist)
		}
	}
	// Side 0 starts each round with a SEND; the first round's follows no poll that found
	// work. Side 1 answers each of the 20 rounds.
	if ta[0].Count != 19 || ta[1].Count != 20 {
		t.Errorf("turnarounds counted: %d and %d, want 19 and 20", ta[0].Count, ta[1].Count)
	}
	if ta[1].Min < delay || ta[1].Hist[datapath.TurnaroundBuckets-1] != ta[1].Count {
		t.Errorf("side 1's shortest turnaround %v (%d in the open bucket), shorter than the %v it waited each time", ta[1].Min, ta[1].Hist[datapath.TurnaroundBuckets-1], delay)
	}
}

// pairOnTwoCQs connects two connections (client, server) of one device, each on a CQ of its
// own, and registers 64 KiB for them, open to RDMA Reads and Writes.
func pairOnTwoCQs(t *testing.T, cfg Config) ([]byte, datapath.MR, [2]datapath.CQ, [2]datapath.Conn) {
	d := openDevice(t, cfg)
	t.Cleanup(func() { d.Close() })
	mem := mmap(t, 1<<16)
	mr, err := d.Register(mem, datapath.AccessLocalWrite|datapath.AccessRemoteRead|datapath.AccessRemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close() })
	cqs := [2]datapath.CQ{}
	for i := range cqs {
		if cqs[i], err = d.NewCQ(64); err != nil {
			t.Fatal(err)
		}
		cq := cqs[i]
		t.Cleanup(func() { cq.Close() })
	}
	l, err := d.Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan datapath.Conn, 1)
	go func() {
		r, err := l.Accept(context.Background())
		if err != nil {
			t.Error(err)
			accepted <- nil
			return
		}
		c, err := r.Accept(datapath.QPConfig{SendCQ: cqs[1], RecvCQ: cqs[1], MaxInlineData: 64}, nil)
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	cli, err := d.Connect(context.Background(), l.Addr(), datapath.QPConfig{SendCQ: cqs[0], RecvCQ: cqs[0], MaxInlineData: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	srv := <-accepted
	if srv == nil {
		t.FailNow()
	}
	t.Cleanup(func() { srv.Close() })
	return mem, mr, cqs, [2]datapath.Conn{cli, srv}
}

// deferPingPong runs 20 rounds of a SEND ping-pong with deferred posts between two
// connections on two CQs of one device, calling before (if not nil) at each end between
// its receive and its SEND, and returns the CQs (client, server).
func deferPingPong(t *testing.T, cfg Config, before func(side int)) [2]datapath.CQ {
	_, mr, cqs, conns := pairOnTwoCQs(t, cfg)
	base, lkey := mr.Addr(), mr.LKey()
	for i, c := range conns {
		for k := range 4 {
			if _, err := c.PostRecv([]datapath.RecvWR{{ID: uint64(100 + k), SGL: []datapath.SGE{{Addr: base + uint64(4096*(1+i)), Length: 64, LKey: lkey}}}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.(datapath.Deferrer).DeferPosts(); err != nil {
			t.Fatal(err)
		}
	}
	wcs := make([]datapath.Completion, 8)
	// await polls cq until a receive completes and stages a receive in its place.
	await := func(side int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, err := cqs[side].Poll(wcs)
			if err != nil {
				t.Fatal(err)
			}
			for _, wc := range wcs[:n] {
				if wc.Status != datapath.StatusSuccess {
					t.Fatalf("side %d: %+v (%v)", side, wc, conns[side].Err())
				}
				if wc.Op == datapath.OpRecv {
					if _, err := conns[side].PostRecv([]datapath.RecvWR{{ID: wc.ID, SGL: []datapath.SGE{{Addr: base + uint64(4096*(1+side)), Length: 64, LKey: lkey}}}}); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("side %d: no receive after 5 s", side)
			}
		}
	}
	for round := range 20 {
		flags := datapath.FlagInline
		if round%4 == 3 {
			flags |= datapath.FlagSignaled
		}
		for side := range 2 {
			if before != nil {
				before(side)
			}
			if _, err := conns[side].PostSend([]datapath.SendWR{{ID: uint64(round), Op: datapath.OpSend, Flags: flags, SGL: []datapath.SGE{{Addr: base, Length: 8, LKey: lkey}}}}); err != nil {
				t.Fatal(err)
			}
			// This side's poll posts its SEND; the other side waits for it.
			if _, err := cqs[side].Poll(wcs[:1]); err != nil {
				t.Fatal(err)
			}
			await(1 - side)
		}
	}
	return cqs
}

// A full queue fails at PostSend as without deferring: what is staged counts.
func TestIntegrationDeferQueueFull(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{MaxSendWR: 4}, nil, nil)
	deferAll(t, e)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	recvs := make([]datapath.RecvWR, 4)
	for i := range recvs {
		recvs[i] = datapath.RecvWR{ID: uint64(10 + i), SGL: []datapath.SGE{{Addr: base + 4096, Length: 64, LKey: lkey}}}
	}
	if n, err := e.srv.PostRecv(recvs); n != 4 || err != nil {
		t.Fatalf("PostRecv: %d, %v", n, err)
	}
	sends := make([]datapath.SendWR, 5)
	for i := range sends {
		sends[i] = datapath.SendWR{ID: uint64(i), Op: datapath.OpSend, SGL: []datapath.SGE{{Addr: base, Length: 8, LKey: lkey}}}
	}
	sends[3].Flags = datapath.FlagSignaled
	if n, err := e.cli.PostSend(sends[:2]); n != 2 || err != nil {
		t.Fatalf("first PostSend: %d, %v", n, err)
	}
	if n, err := e.cli.PostSend(sends[2:]); n != 2 || !errors.Is(err, datapath.ErrQueueFull) {
		t.Fatalf("PostSend beyond MaxSendWR with 2 staged: %d, %v; want 2, ErrQueueFull", n, err)
	}
	wcs := waitFor(t, e.cq, 5)
	if s := byID(wcs, 3); s.Status != datapath.StatusSuccess || s.Op != datapath.OpSend {
		t.Fatalf("signaled send: %+v", s)
	}
	for i := range 4 {
		if r := byID(wcs, uint64(10+i)); r.Status != datapath.StatusSuccess || r.Op != datapath.OpRecv {
			t.Fatalf("receive %d: %+v", i, r)
		}
	}
}

// A staged work request the device refuses when the poll posts it breaks the connection with
// the post's error. (The refusal is provoked by making the C accounting see the queue full.)
func TestIntegrationDeferRefused(t *testing.T) {
	e := newEnv(t, Config{}, datapath.QPConfig{MaxSendWR: 4}, nil, nil)
	deferAll(t, e)
	base, lkey := e.mr.Addr(), e.mr.LKey()
	c := e.cli.(*conn)
	if _, err := c.PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 8, LKey: lkey}}}}); err != nil {
		t.Fatal(err)
	}
	c.q.sq_posted += 4 // as if four more were outstanding: vb_post_send finds no room
	wcs := make([]datapath.Completion, 4)
	if _, err := e.cq.Poll(wcs); err != nil {
		t.Fatalf("Poll: %v (a refused post is the connection's failure, not the CQ's)", err)
	}
	err := c.Err()
	var op *datapath.OpError
	if !errors.As(err, &op) || op.Op != "ibv_post_send" {
		t.Fatalf("Err after a refused deferred post: %v, want the ibv_post_send error", err)
	}
	c.q.sq_posted -= 4
	if _, err := c.PostSend([]datapath.SendWR{{ID: 2, Op: datapath.OpSend, SGL: []datapath.SGE{{Addr: base, Length: 8, LKey: lkey}}}}); !errors.Is(err, datapath.ErrBroken) {
		t.Fatalf("PostSend on the broken connection: %v", err)
	}
}

// Closing a connection with work staged drops the work; the next poll takes the queue pair off
// its CQ's list without touching it, and the CQ closes cleanly with one still on it.
func TestIntegrationDeferClose(t *testing.T) {
	for _, pollFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("poll=%v", pollFirst), func(t *testing.T) {
			e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
			deferAll(t, e)
			base, lkey := e.mr.Addr(), e.mr.LKey()
			c := e.cli.(*conn)
			q := c.q
			if _, err := c.PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 8, LKey: lkey}}}}); err != nil {
				t.Fatal(err)
			}
			if q.linked == 0 || q.staged_send != 1 {
				t.Fatalf("after a deferred PostSend: linked %d, staged %d", q.linked, q.staged_send)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if !pollFirst {
				return // the CQ closes at cleanup with the queue pair on its list
			}
			wcs := make([]datapath.Completion, 4)
			for range 100 {
				n, err := e.cq.Poll(wcs)
				if err != nil {
					t.Fatal(err)
				}
				for _, wc := range wcs[:n] {
					if wc.ID == 1 {
						t.Fatalf("the send staged before Close was posted: %+v", wc)
					}
				}
			}
			if q.linked != 0 || q.pnext != nil {
				t.Fatalf("still linked after a poll: %d", q.linked)
			}
		})
	}
}

// Deferring needs one CQ for both queues: a poll of one CQ posts everything.
func TestIntegrationDeferTwoCQs(t *testing.T) {
	d := openDevice(t, Config{})
	t.Cleanup(func() { d.Close() })
	scq, err := d.NewCQ(16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scq.Close() })
	rcq, err := d.NewCQ(16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rcq.Close() })
	cli, _ := connectPair(t, d, datapath.QPConfig{SendCQ: scq, RecvCQ: rcq}, nil, nil)
	if err := cli.(datapath.Deferrer).DeferPosts(); err == nil {
		t.Fatal("DeferPosts with different send and receive CQs: no error")
	}
}

func TestIntegrationPostPollAllocs(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprintf("deferred=%v", deferred), func(t *testing.T) { postPollAllocs(t, deferred) })
	}
}

func postPollAllocs(t *testing.T, deferred bool) {
	e := newEnv(t, Config{PollSpin: 100}, datapath.QPConfig{}, nil, nil)
	if deferred {
		deferAll(t, e)
	}
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
	// Deferred too: a bind staged and posted later must still name the window's key of the
	// moment it is posted (the provider updates ibv_mw's key only then).
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprintf("deferred=%v", deferred), func(t *testing.T) { bindAnyRange(t, deferred) })
	}
}

func bindAnyRange(t *testing.T, deferred bool) {
	e := newEnv(t, Config{}, datapath.QPConfig{}, nil, nil)
	if deferred {
		deferAll(t, e)
	}
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
//
// posts=deferred stages both posts for the poll to post (datapath.Deferrer): one C call per
// round where posts=immediate takes three.
// A device may give a destroyed queue pair's number to the next one at once (siw hands out
// the lowest free number): the completions the old queue pair left in a shared CQ must
// neither reach nor break the connection that now has its number.
func TestIntegrationReusedQPNumber(t *testing.T) {
	devs, err := New(Config{}).Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) == 0 {
		skipNoDevice(t)
	}
	for _, di := range devs {
		t.Run(di.Name, func(t *testing.T) {
			e := newEnvOn(t, di.Name, Config{}, datapath.QPConfig{}, nil, nil)
			base, lkey := e.mr.Addr(), e.mr.LKey()
			const n = 8
			recvs := make([]datapath.RecvWR, n)
			for i := range recvs {
				recvs[i] = datapath.RecvWR{ID: uint64(100 + i), SGL: []datapath.SGE{{Addr: base + uint64(i)*64, Length: 64, LKey: lkey}}}
			}
			if _, err := e.cli.PostRecv(recvs); err != nil {
				t.Fatal(err)
			}
			old := e.cli.QPN()
			e.cli.Close()
			time.Sleep(200 * time.Millisecond) // the flushes land in the CQ, unpolled
			e.dev.(*device).reap(func(*zombie) bool { return true })

			cli, srv := connectPair(t, e.dev, datapath.QPConfig{SendCQ: e.cq, RecvCQ: e.cq}, nil, nil)
			t.Logf("closed qp %#x; new qps %#x and %#x", old, cli.QPN(), srv.QPN())
			if _, err := srv.PostRecv([]datapath.RecvWR{{ID: 7, SGL: []datapath.SGE{{Addr: base + 4096, Length: 64, LKey: lkey}}}}); err != nil {
				t.Fatalf("new connection's PostRecv: %v", err)
			}
			if _, err := cli.PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: base, Length: 16, LKey: lkey}}}}); err != nil {
				t.Fatalf("new connection's PostSend: %v", err)
			}
			var got []datapath.Completion
			buf := make([]datapath.Completion, 16)
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
				k, err := e.cq.Poll(buf)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range buf[:k] {
					if w.QPN == cli.QPN() || w.QPN == srv.QPN() {
						got = append(got, w)
					}
				}
				if k == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			if len(got) != 2 || byID(got, 1).Status != datapath.StatusSuccess || byID(got, 7).Status != datapath.StatusSuccess {
				t.Errorf("the new connections' completions: %+v, want the SEND (1) and its receive (7), both successful", got)
			}
			if cli.Err() != nil || srv.Err() != nil {
				t.Errorf("new connections broken: %v / %v", cli.Err(), srv.Err())
			}
		})
	}
}

func BenchmarkPostPoll(b *testing.B) {
	for _, deferred := range []bool{true, false} {
		name := map[bool]string{true: "posts=deferred", false: "posts=immediate"}[deferred]
		b.Run(name, func(b *testing.B) { postPoll(b, deferred) })
	}
}

func postPoll(b *testing.B, deferred bool) {
	e := newEnv(b, Config{PollSpin: 64}, datapath.QPConfig{MaxInlineData: 64}, nil, nil)
	if deferred {
		deferAll(b, e)
	}
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

// BenchmarkEmptyPoll is one CQ.Poll of an empty CQ that polls 1+spin times inside C. The
// difference between spin=0 and spin=N, divided by N, is one ibv_poll_cq of an empty CQ; what
// spin=0 costs beyond that is the Go to C crossing itself.
func BenchmarkEmptyPoll(b *testing.B) {
	for _, spin := range []int{0, 100} {
		b.Run(fmt.Sprintf("spin=%d", spin), func(b *testing.B) {
			e := newEnv(b, Config{PollSpin: spin}, datapath.QPConfig{}, nil, nil)
			wcs := make([]datapath.Completion, 4)
			b.ReportAllocs()
			for b.Loop() {
				if n, err := e.cq.Poll(wcs); n != 0 || err != nil {
					b.Fatalf("poll of an empty CQ: %d, %v", n, err)
				}
			}
		})
	}
}
