package soft

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/datapathtest"
)

// A hostile or broken peer, played by the test over a raw TCP socket: it speaks just enough of
// WIRE.md to get a connection established and then does what no soft peer does.

// hangGuard bounds how long a test waits for something that must happen; it is not a timing
// assertion (the timeouts under test are far shorter).
const hangGuard = 10 * time.Second

type rawPeer struct {
	nc  net.Conn
	br  *bufio.Reader
	dev *device
	cq  datapath.CQ
	c   datapath.Conn
}

// dialRaw connects a soft Conn (cfg) to a raw peer that accepts it.
func dialRaw(t *testing.T, cfg Config) *rawPeer {
	t.Helper()
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	d, _ := New(cfg).Open("")
	p := &rawPeer{dev: d.(*device)}
	p.cq, _ = d.NewCQ(64)
	type res struct {
		c   datapath.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := d.Connect(context.Background(), nl.Addr().String(), datapath.QPConfig{SendCQ: p.cq, RecvCQ: p.cq}, nil)
		ch <- res{c, err}
	}()
	if p.nc, err = nl.Accept(); err != nil {
		t.Fatal(err)
	}
	p.nc.SetDeadline(time.Now().Add(hangGuard))
	p.br = bufio.NewReader(p.nc)
	if h, _ := p.frame(t); h.typ != frameConnect {
		t.Fatalf("first frame %+v, want CONNECT", h)
	}
	m := hello{maxSendWR: 16, maxRecvWR: 16}
	if err := writeFrame(p.nc, frameAccept, m.bytes(datapath.MaxAcceptPrivateData)); err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	p.c = r.c
	t.Cleanup(func() {
		p.nc.Close()
		p.c.Close()
		p.cq.Close()
		if err := p.dev.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// frame reads the next frame the soft end sent.
func (p *rawPeer) frame(t *testing.T) (header, []byte) {
	t.Helper()
	var b [headerLen]byte
	if _, err := io.ReadFull(p.br, b[:]); err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	var h header
	if err := h.parse(b[:]); err != nil {
		t.Fatal(err)
	}
	var payload []byte
	if h.hasPayload() {
		payload = make([]byte, h.len)
		if _, err := io.ReadFull(p.br, payload); err != nil {
			t.Fatalf("reading a frame's payload: %v", err)
		}
	}
	return h, payload
}

// disconnect reads frames until DISCONNECT and returns it.
func (p *rawPeer) disconnect(t *testing.T) (header, string) {
	t.Helper()
	for {
		if h, payload := p.frame(t); h.typ == frameDisconnect {
			return h, string(payload)
		}
	}
}

func (p *rawPeer) waitBroken(t *testing.T) error {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for p.c.Err() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the connection never broke")
		}
		time.Sleep(time.Millisecond)
	}
	return p.c.Err()
}

// localMem registers 64 bytes of local memory on p's device for the test's work requests;
// both are released when the test ends.
func (p *rawPeer) localMem(t *testing.T) ([]byte, datapath.MR) {
	mem, free, err := datapathtest.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { free() })
	mr, err := p.dev.Register(mem, datapath.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mr.Close() })
	return mem, mr
}

// A peer that takes the RDMA READ request and never answers it: the READ completes with
// StatusRetryExceeded once RetryTimeout has passed without an answer, the connection breaks,
// and the peer is told why.
func TestTCPUnansweredReadTimesOut(t *testing.T) {
	p := dialRaw(t, Config{RetryTimeout: 20 * time.Millisecond})
	_, mr := p.localMem(t)
	if _, err := p.c.PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpRead, Flags: datapath.FlagSignaled,
		SGL: []datapath.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}, RemoteAddr: 0x1000, RKey: 0x1ff}}); err != nil {
		t.Fatal(err)
	}
	if h, _ := p.frame(t); h.typ != frameReadReq || h.len != 64 {
		t.Fatalf("frame %+v, want a READ request of 64 bytes", h)
	}
	// ... and never answer it.
	var wc [1]datapath.Completion
	deadline := time.Now().Add(hangGuard)
	for n := 0; n == 0; n, _ = p.cq.Poll(wc[:]) {
		if time.Now().After(deadline) {
			t.Fatal("the unanswered READ never completed")
		}
		p.cq.Wait(time.Millisecond)
	}
	if wc[0].ID != 1 || wc[0].Status != datapath.StatusRetryExceeded {
		t.Fatalf("completion %+v (%v), want id 1 with %v", wc[0], wc[0].Status, datapath.StatusRetryExceeded)
	}
	err := p.waitBroken(t)
	var be *BrokenError
	if !errors.As(err, &be) || be.Status != datapath.StatusRetryExceeded || !strings.Contains(err.Error(), "answered no request") {
		t.Fatalf("Err = %v, want a BrokenError with %v saying why", err, datapath.StatusRetryExceeded)
	}
	h, reason := p.disconnect(t)
	if datapath.Status(h.flags) != datapath.StatusRetryExceeded || !strings.Contains(reason, "answered no request") {
		t.Fatalf("DISCONNECT %+v %q, want %v and the reason", h, reason, datapath.StatusRetryExceeded)
	}
}

// A peer that is slow but answers within the budget keeps the connection: the timer restarts
// on every answer, so only silence counts.
func TestTCPAnsweredReadsKeepConnection(t *testing.T) {
	p := dialRaw(t, Config{RetryTimeout: 30 * time.Millisecond})
	mem, mr := p.localMem(t)
	for i := range 3 {
		if _, err := p.c.PostSend([]datapath.SendWR{{ID: uint64(i), Op: datapath.OpRead, Flags: datapath.FlagSignaled,
			SGL: []datapath.SGE{{Addr: mr.Addr(), Length: 4, LKey: mr.LKey()}}, RemoteAddr: 0x1000, RKey: 0x1ff}}); err != nil {
			t.Fatal(err)
		}
		h, _ := p.frame(t)
		time.Sleep(10 * time.Millisecond) // slow, within the budget
		b := make([]byte, headerLen)
		(&header{typ: frameReadResp, seq: h.seq, len: 4}).put(b)
		if _, err := p.nc.Write(append(b, "abcd"...)); err != nil {
			t.Fatal(err)
		}
		var wc [1]datapath.Completion
		deadline := time.Now().Add(hangGuard)
		for n := 0; n == 0; n, _ = p.cq.Poll(wc[:]) {
			if time.Now().After(deadline) {
				t.Fatal("the answered READ never completed")
			}
			p.cq.Wait(time.Millisecond)
		}
		if wc[0].Status != datapath.StatusSuccess || string(mem[:4]) != "abcd" {
			t.Fatalf("READ %d: %+v (%v), %q", i, wc[0], wc[0].Status, mem[:4])
		}
	}
	time.Sleep(100 * time.Millisecond) // idle with nothing outstanding: no timeout either
	if err := p.c.Err(); err != nil {
		t.Fatalf("Err = %v after answered READs and idling", err)
	}
}

// A malformed header from the peer breaks the connection with that cause, and the peer is
// told the cause in the DISCONNECT.
func TestTCPProtocolErrorToldToPeer(t *testing.T) {
	p := dialRaw(t, Config{})
	b := make([]byte, headerLen)
	(&header{typ: frameSend}).put(b)
	b[2] = 1 // reserved
	if _, err := p.nc.Write(b); err != nil {
		t.Fatal(err)
	}
	err := p.waitBroken(t)
	if !strings.Contains(err.Error(), "reserved header bytes not zero") || !errors.Is(err, datapath.ErrBroken) {
		t.Fatalf("Err = %v, want ErrBroken naming the reserved bytes", err)
	}
	var be *BrokenError
	if !errors.As(err, &be) || be.Remote {
		t.Fatalf("Err = %#v, want a BrokenError found locally", err)
	}
	_, reason := p.disconnect(t)
	if reason != "soft wire: reserved header bytes not zero" {
		t.Fatalf("DISCONNECT reason %q", reason)
	}
}

// The receiving end of that: a DISCONNECT with a reason puts it into Err, made printable.
func TestTCPDisconnectReasonReachesErr(t *testing.T) {
	p := dialRaw(t, Config{})
	reason := "soft wire: reserved header bytes not zero\x1b[2J"
	b := make([]byte, headerLen)
	(&header{typ: frameDisconnect, flags: uint8(datapath.StatusFlushed), len: uint32(len(reason))}).put(b)
	if _, err := p.nc.Write(append(b, reason...)); err != nil {
		t.Fatal(err)
	}
	err := p.waitBroken(t)
	want := "peer closed: soft wire: reserved header bytes not zero?[2J"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Err = %q, want it to contain %q", err, want)
	}
}

// A plain Close tells the peer nothing but that: no reason.
func TestTCPCloseSendsNoReason(t *testing.T) {
	p := dialRaw(t, Config{})
	p.c.Close()
	h, reason := p.disconnect(t)
	if datapath.Status(h.flags) != datapath.StatusFlushed || reason != "" {
		t.Fatalf("DISCONNECT %+v %q after Close, want flushed and no reason", h, reason)
	}
}

// A TCP peer that connects and never completes the handshake is dropped after
// HandshakeTimeout, and the listener keeps serving others meanwhile.
func TestTCPHandshakeTimeout(t *testing.T) {
	d, _ := New(Config{HandshakeTimeout: 20 * time.Millisecond}).Open("")
	defer d.Close()
	cq, _ := d.NewCQ(16)
	defer cq.Close()
	ln, err := d.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	silent, err := net.Dial("tcp", ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	partial, err := net.Dial("tcp", ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()
	partial.Write([]byte{frameConnect, 0, 0}) // a header cut short
	for _, nc := range []net.Conn{silent, partial} {
		nc.SetReadDeadline(time.Now().Add(hangGuard))
		var ne net.Error
		if n, err := nc.Read(make([]byte, 1)); n != 0 || (errors.As(err, &ne) && ne.Timeout()) {
			t.Fatalf("a peer that did not finish the handshake: read %d, %v; want the listener to close it", n, err)
		}
	}
	accepted := make(chan datapath.Conn, 1)
	go func() {
		req, err := ln.Accept(context.Background())
		if err != nil {
			accepted <- nil
			return
		}
		c, _ := req.Accept(datapath.QPConfig{SendCQ: cq, RecvCQ: cq}, nil)
		accepted <- c
	}()
	c, err := d.Connect(context.Background(), ln.Addr(), datapath.QPConfig{SendCQ: cq, RecvCQ: cq}, nil)
	if err != nil {
		t.Fatalf("Connect after the silent peers: %v", err)
	}
	c.Close()
	if s := <-accepted; s != nil {
		s.Close()
	}
}

// ACKs are cumulative: one ACK completes every WRITE up to its sequence number, and an ACK
// beyond what was sent, or one covering an RDMA READ, is a protocol error.
func TestTCPCumulativeACK(t *testing.T) {
	setup := func(t *testing.T) (*rawPeer, datapath.MR, func(ops ...datapath.Opcode) []header) {
		p := dialRaw(t, Config{})
		_, mr := p.localMem(t)
		post := func(ops ...datapath.Opcode) []header {
			var hs []header
			for i, op := range ops {
				if _, err := p.c.PostSend([]datapath.SendWR{{ID: uint64(i + 1), Op: op, Flags: datapath.FlagSignaled,
					SGL: []datapath.SGE{{Addr: mr.Addr(), Length: 4, LKey: mr.LKey()}}, RemoteAddr: 0x1000, RKey: 0x1ff}}); err != nil {
					t.Fatal(err)
				}
				h, _ := p.frame(t)
				hs = append(hs, h)
			}
			return hs
		}
		return p, mr, post
	}
	ack := func(t *testing.T, p *rawPeer, seq uint32) {
		b := make([]byte, headerLen)
		(&header{typ: frameAck, seq: seq}).put(b)
		if _, err := p.nc.Write(b); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("covers all", func(t *testing.T) {
		p, _, post := setup(t)
		hs := post(datapath.OpWrite, datapath.OpWrite, datapath.OpWrite)
		ack(t, p, hs[2].seq)
		var wcs [4]datapath.Completion
		got := 0
		for deadline := time.Now().Add(hangGuard); got < 3; {
			n, _ := p.cq.Poll(wcs[got:])
			got += n
			if time.Now().After(deadline) {
				t.Fatalf("one ACK completed %d of 3 WRITEs", got)
			}
		}
		for i, wc := range wcs[:3] {
			if wc.ID != uint64(i+1) || wc.Status != datapath.StatusSuccess {
				t.Fatalf("completion %d: %+v (%v)", i, wc, wc.Status)
			}
		}
	})
	t.Run("beyond the requests sent", func(t *testing.T) {
		p, _, post := setup(t)
		hs := post(datapath.OpWrite)
		ack(t, p, hs[0].seq+5)
		if err := p.waitBroken(t); !strings.Contains(err.Error(), "ACK beyond the requests sent") {
			t.Fatalf("Err = %v", err)
		}
	})
	t.Run("covers a READ", func(t *testing.T) {
		p, _, post := setup(t)
		hs := post(datapath.OpWrite, datapath.OpRead, datapath.OpWrite)
		ack(t, p, hs[2].seq)
		if err := p.waitBroken(t); !strings.Contains(err.Error(), "ACK for an RDMA READ") {
			t.Fatalf("Err = %v", err)
		}
	})
}
