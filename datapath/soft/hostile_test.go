package soft

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
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
				t.Fatalf("completion %d: %+v (%v) %v", i, wc, wc.Status, p.c.Err())
			}
		}
	})
	t.Run("beyond the requests sent", func(t *testing.T) {
		p, _, post := setup(t)
		hs := post(datapath.OpWrite)
		ack(t, p, hs[0].seq+5)
		if err := p.waitBroken(t); !strings.Contains(err.Error(), "which was not sent yet") {
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

// bigWrite is larger than what the socket buffers of both ends hold, so that a frame queued
// behind a WRITE of it stays unsent while the peer does not read.
const bigWrite = 16 << 20

// postWriteThenSend shrinks the peer's socket buffer and posts a WRITE of bigWrite bytes
// (ID 1) and then a 4-byte SEND of "AAAA" (ID 2); it returns the WRITE's memory and the
// SEND's memory and region.
func postWriteThenSend(t *testing.T, p *rawPeer) (big, mem []byte, mr datapath.MR) {
	t.Helper()
	p.nc.(*net.TCPConn).SetReadBuffer(64 << 10)
	big, free, err := datapathtest.Alloc(bigWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { free() })
	bmr, err := p.dev.Register(big, datapath.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bmr.Close() })
	mem, mr = p.localMem(t)
	copy(mem, "AAAA")
	if _, err := p.c.PostSend([]datapath.SendWR{
		{ID: 1, Op: datapath.OpWrite, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: bmr.Addr(), Length: bigWrite, LKey: bmr.LKey()}},
			RemoteAddr: 0x1000, RKey: 0x1ff},
		{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: mr.Addr(), Length: 4, LKey: mr.LKey()}}},
	}); err != nil {
		t.Fatal(err)
	}
	return big, mem, mr
}

// stalledSend posts a WRITE of bigWrite bytes and then a SEND of "AAAA" to a peer that reads
// the WRITE's header and nothing more: the SEND stays in the writer. It returns both frames'
// sequence numbers.
func stalledSend(t *testing.T, p *rawPeer) (write, send uint32, sendMem []byte, sendMR datapath.MR) {
	t.Helper()
	_, mem, mr := postWriteThenSend(t, p)
	var b [headerLen]byte
	if _, err := io.ReadFull(p.br, b[:]); err != nil {
		t.Fatal(err)
	}
	var h header
	if err := h.parse(b[:]); err != nil || h.typ != frameWrite || h.len != bigWrite {
		t.Fatalf("first frame %+v (%v), want the WRITE", h, err)
	}
	return h.seq, h.seq + 1, mem, mr
}

func (p *rawPeer) send(t *testing.T, h header, payload ...byte) {
	t.Helper()
	b := make([]byte, headerLen, headerLen+len(payload))
	h.put(b)
	if _, err := p.nc.Write(append(b, payload...)); err != nil {
		t.Fatal(err)
	}
}

// pollN waits for at least want completions and returns them.
func (p *rawPeer) pollN(t *testing.T, want int) []datapath.Completion {
	t.Helper()
	var got []datapath.Completion
	wc := make([]datapath.Completion, 8)
	for deadline := time.Now().Add(hangGuard); len(got) < want; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d completions: %+v", len(got), want, got)
		}
		n, _ := p.cq.Poll(wc)
		got = append(got, wc[:n]...)
		p.cq.Wait(time.Millisecond)
	}
	return got
}

// An ACK for a SEND still queued behind a large WRITE is a protocol error: the SEND must not
// complete (the provider may still read its memory), the connection breaks naming what the
// peer did, and nothing posted afterwards goes out under the old SEND's header.
func TestTCPEarlyACKBreaks(t *testing.T) {
	p := dialRaw(t, Config{})
	_, send, mem, mr := stalledSend(t, p)
	p.send(t, header{typ: frameAck, seq: send})
	wcs := p.pollN(t, 2)
	for _, wc := range wcs {
		if wc.Status == datapath.StatusSuccess {
			t.Fatalf("completion %+v (%v) from an ACK for requests not yet written to the socket", wc, wc.Status)
		}
	}
	err := p.waitBroken(t)
	if want := "ACK for request 1, which was not sent yet"; !strings.Contains(err.Error(), want) {
		t.Fatalf("Err = %v, want it to name the early ACK (%q)", err, want)
	}
	// What a post after the break does to the stream: the old SEND's header never carries it.
	copy(mem, "BBBB")
	p.c.PostSend([]datapath.SendWR{{ID: 3, Op: datapath.OpSend, Flags: datapath.FlagSignaled,
		SGL: []datapath.SGE{{Addr: mr.Addr(), Length: 4, LKey: mr.LKey()}}}})
	rest, _ := io.ReadAll(p.br)
	if strings.Contains(string(rest), "BBBB") {
		t.Fatalf("the stream carries the data of a SEND posted after the break")
	}
}

// The legitimate pipeline: the peer acknowledges a SEND it received while a large WRITE behind
// it is still being written, then the WRITE once it has it all; both complete.
func TestTCPACKWhileWriting(t *testing.T) {
	p := dialRaw(t, Config{})
	p.nc.(*net.TCPConn).SetReadBuffer(64 << 10)
	big, free, err := datapathtest.Alloc(bigWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	bmr, err := p.dev.Register(big, datapath.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer bmr.Close()
	mem, mr := p.localMem(t)
	copy(mem, "AAAA")
	if _, err := p.c.PostSend([]datapath.SendWR{
		{ID: 1, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: mr.Addr(), Length: 4, LKey: mr.LKey()}}},
		{ID: 2, Op: datapath.OpWrite, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: bmr.Addr(), Length: bigWrite, LKey: bmr.LKey()}},
			RemoteAddr: 0x1000, RKey: 0x1ff},
	}); err != nil {
		t.Fatal(err)
	}
	h, payload := p.frame(t)
	if h.typ != frameSend || string(payload) != "AAAA" {
		t.Fatalf("first frame %+v %q, want the SEND", h, payload)
	}
	p.send(t, header{typ: frameAck, seq: h.seq})
	if wc := p.pollN(t, 1); wc[0].ID != 1 || wc[0].Status != datapath.StatusSuccess {
		t.Fatalf("SEND completion %+v (%v)", wc[0], wc[0].Status)
	}
	if h, _ = p.frame(t); h.typ != frameWrite {
		t.Fatalf("second frame %+v, want the WRITE", h)
	}
	p.send(t, header{typ: frameAck, seq: h.seq})
	if wc := p.pollN(t, 1); wc[0].ID != 2 || wc[0].Status != datapath.StatusSuccess {
		t.Fatalf("WRITE completion %+v (%v)", wc[0], wc[0].Status)
	}
	if err := p.c.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

// An ACK or NAK carries no payload: a non-zero length breaks the connection naming it, and
// the bytes that follow are not parsed as frames.
func TestTCPACKWithLengthBreaks(t *testing.T) {
	for _, typ := range []uint8{frameAck, frameNak} {
		t.Run(strconv.Itoa(int(typ)), func(t *testing.T) {
			p := dialRaw(t, Config{})
			_, mr := p.localMem(t)
			if _, err := p.c.PostSend([]datapath.SendWR{{ID: 1, Op: datapath.OpWrite, Flags: datapath.FlagSignaled,
				SGL: []datapath.SGE{{Addr: mr.Addr(), Length: 4, LKey: mr.LKey()}}, RemoteAddr: 0x1000, RKey: 0x1ff}}); err != nil {
				t.Fatal(err)
			}
			h, _ := p.frame(t)
			// The "payload" is an ACK for the WRITE: a receiver that parses it completes it.
			inner := make([]byte, headerLen)
			(&header{typ: frameAck, seq: h.seq}).put(inner)
			p.send(t, header{typ: typ, seq: h.seq, len: headerLen}, inner...)
			err := p.waitBroken(t)
			const want = "soft wire: ACK or NAK frame with a non-zero length"
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("Err = %v, want it to contain %q", err, want)
			}
			if wc := p.pollN(t, 1); wc[0].Status == datapath.StatusSuccess {
				t.Fatalf("WRITE completion %+v: the payload was parsed as a frame", wc[0])
			}
			if _, reason := p.disconnect(t); reason != want {
				t.Fatalf("DISCONNECT reason %q, want %q", reason, want)
			}
		})
	}
}

const hostileEnv = "SOFT_TEST_HOSTILE_PEER"

// TestTCPHostilePeerProcess is the hostile peer of TestTCPEarlyACKOtherProcess when the test
// binary runs as one (hostileEnv set); otherwise it does nothing. It prints ADDR <addr>,
// accepts one connection, acknowledges the SEND queued behind the WRITE as soon as the
// WRITE's header arrives, then reads the stream to its end and prints CLEAN, or CORRUPT if a
// SEND posted after the break went out.
func TestTCPHostilePeerProcess(t *testing.T) {
	if os.Getenv(hostileEnv) == "" {
		return
	}
	err := func() error {
		nl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		fmt.Printf("ADDR %s\n", nl.Addr())
		nc, err := nl.Accept()
		if err != nil {
			return err
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(hangGuard))
		nc.(*net.TCPConn).SetReadBuffer(64 << 10)
		br := bufio.NewReader(nc)
		var b [headerLen]byte
		var h header
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return err
		}
		if _, err := br.Discard(int(binary.BigEndian.Uint32(b[20:]))); err != nil {
			return err
		}
		m := hello{maxSendWR: 16, maxRecvWR: 16}
		if err := writeFrame(nc, frameAccept, m.bytes(datapath.MaxAcceptPrivateData)); err != nil {
			return err
		}
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return err
		}
		if err := h.parse(b[:]); err != nil || h.typ != frameWrite {
			return fmt.Errorf("first frame %+v (%v), want a WRITE", h, err)
		}
		(&header{typ: frameAck, seq: h.seq + 1}).put(b[:])
		if _, err := nc.Write(b[:]); err != nil {
			return err
		}
		rest, _ := io.ReadAll(br)
		if strings.Contains(string(rest), "BBBB") {
			fmt.Println("CORRUPT")
		} else {
			fmt.Println("CLEAN")
		}
		return nil
	}()
	if err != nil {
		fmt.Printf("FATAL %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// The early ACK with the hostile peer in another process, over soft TCP.
func TestTCPEarlyACKOtherProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestTCPHostilePeerProcess$")
	cmd.Env = append(os.Environ(), hostileEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "ADDR ") {
		t.Fatalf("peer said %q, want its address", sc.Text())
	}
	d, _ := New(Config{}).Open("")
	defer d.Close()
	cq, _ := d.NewCQ(64)
	defer cq.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := d.Connect(ctx, strings.TrimPrefix(sc.Text(), "ADDR "), datapath.QPConfig{SendCQ: cq, RecvCQ: cq}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big, free, err := datapathtest.Alloc(bigWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	bmr, err := d.Register(big, datapath.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer bmr.Close()
	mem, free2, err := datapathtest.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer free2()
	mr, err := d.Register(mem, datapath.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	copy(mem, "AAAA")
	send := []datapath.SendWR{{ID: 2, Op: datapath.OpSend, Flags: datapath.FlagSignaled, SGL: []datapath.SGE{{Addr: mr.Addr(), Length: 4, LKey: mr.LKey()}}}}
	if _, err := c.PostSend(append([]datapath.SendWR{{ID: 1, Op: datapath.OpWrite, Flags: datapath.FlagSignaled,
		SGL: []datapath.SGE{{Addr: bmr.Addr(), Length: bigWrite, LKey: bmr.LKey()}}, RemoteAddr: 0x1000, RKey: 0x1ff}}, send...)); err != nil {
		t.Fatal(err)
	}
	wc := make([]datapath.Completion, 4)
	for got, deadline := 0, time.Now().Add(hangGuard); got < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 completions", got)
		}
		n, _ := cq.Poll(wc)
		for _, w := range wc[:n] {
			if w.Status == datapath.StatusSuccess {
				t.Fatalf("completion %+v (%v) from an ACK for requests not yet written to the socket", w, w.Status)
			}
		}
		got += n
		cq.Wait(time.Millisecond)
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "ACK for request 1, which was not sent yet") {
		t.Fatalf("Err = %v, want it to name the early ACK", err)
	}
	copy(mem, "BBBB")
	c.PostSend(send)
	c.Close()
	if !sc.Scan() || sc.Text() != "CLEAN" {
		t.Fatalf("peer said %q, want CLEAN", sc.Text())
	}
}

// A peer that stops reading while a large WRITE is being written and never answers: the
// retry timeout fails the WRITE, and once its error completion is polled the provider no
// longer reads its memory, so what the application writes there afterwards never reaches
// the socket.
func TestTCPRetryTimeoutLetsGoOfMemory(t *testing.T) {
	p := dialRaw(t, Config{RetryTimeout: 20 * time.Millisecond})
	big, mem, _ := postWriteThenSend(t, p)
	// The peer reads nothing and answers nothing until the WRITE has failed.
	wc := p.pollN(t, 1)
	if wc[0].ID != 1 || wc[0].Status != datapath.StatusRetryExceeded {
		t.Fatalf("first completion %+v (%v), want the WRITE with %v", wc[0], wc[0].Status, datapath.StatusRetryExceeded)
	}
	for i := range big {
		big[i] = 'Z'
	}
	copy(mem, "ZZZZ")
	// Everything the soft end still sends, until it closes its direction.
	rest, _ := io.ReadAll(p.br)
	if i := strings.IndexByte(string(rest), 'Z'); i >= 0 {
		t.Fatalf("byte %d of the %d sent after the WRITE's error completion comes from memory written after it", i, len(rest))
	}
}
