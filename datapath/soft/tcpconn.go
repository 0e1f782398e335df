package soft

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Setting up and ending a TCP connection (WIRE.md): dial, listen and accept, the
// CONNECT/ACCEPT/REJECT exchange with its private data, the DISCONNECT that ends a
// connection with its reason, and the closed connections the device's Close waits for.

type tcpListener struct {
	dev  *device
	nl   net.Listener
	reqs chan *tcpReq
	done chan struct{}
	once sync.Once
}

var _ datapath.Listener = (*tcpListener)(nil)

func listenTCP(d *device, addr string) (datapath.Listener, error) {
	nl, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &datapath.OpError{Op: "soft: listen " + addr, Err: err}
	}
	l := &tcpListener{dev: d, nl: nl, reqs: make(chan *tcpReq, 16), done: make(chan struct{})}
	d.count(&d.nLn, 1)
	go l.loop()
	return l, nil
}

func (l *tcpListener) Addr() string { return l.nl.Addr().String() }

// loop accepts TCP connections and reads their CONNECT frames off the Accept path, so a
// slow or silent client holds up nobody.
func (l *tcpListener) loop() {
	for {
		nc, err := l.nl.Accept()
		if err != nil {
			return
		}
		go func() {
			r, err := readConnect(nc, l.dev.p.cfg.HandshakeTimeout)
			if err != nil {
				nc.Close()
				return
			}
			r.ln = l
			select {
			case l.reqs <- r:
			case <-l.done:
				nc.Close()
			}
		}()
	}
}

// readConnect reads the CONNECT frame; a peer that has not sent it within timeout fails.
func readConnect(nc net.Conn, timeout time.Duration) (*tcpReq, error) {
	nc.SetDeadline(time.Now().Add(timeout))
	br := bufio.NewReaderSize(nc, bufSize)
	var b [headerLen]byte
	var h header
	if _, err := io.ReadFull(br, b[:]); err != nil {
		return nil, err
	}
	if err := h.parse(b[:]); err != nil {
		return nil, err
	}
	if h.typ != frameConnect || h.len != helloLen+datapath.MaxConnectPrivateData {
		return nil, errHelloLength
	}
	p := make([]byte, h.len)
	if _, err := io.ReadFull(br, p); err != nil {
		return nil, err
	}
	m, err := parseHello(p, datapath.MaxConnectPrivateData)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Time{}) // the application takes its time to Accept
	return &tcpReq{nc: nc, br: br, hello: m}, nil
}

func (l *tcpListener) Accept(ctx context.Context) (datapath.ConnRequest, error) {
	return accept(ctx, l.reqs, l.done)
}

func (l *tcpListener) Close() error {
	err := error(&datapath.OpError{Op: "soft: close listener", Err: datapath.ErrClosed})
	l.once.Do(func() {
		close(l.done)
		err = l.nl.Close()
		for {
			select {
			case r := <-l.reqs:
				r.nc.Close()
			default:
				l.dev.count(&l.dev.nLn, -1)
				return
			}
		}
	})
	return err
}

type tcpReq struct {
	ln    *tcpListener
	nc    net.Conn
	br    *bufio.Reader
	hello hello
	mu    sync.Mutex
	done  bool
}

var _ datapath.ConnRequest = (*tcpReq)(nil)

func (r *tcpReq) PrivateData() []byte { return r.hello.pd }
func (r *tcpReq) RemoteAddr() string  { return r.nc.RemoteAddr().String() }

func (r *tcpReq) decide() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return errDecided
	}
	r.done = true
	return nil
}

func writeFrame(nc net.Conn, typ uint8, payload []byte) error {
	b := make([]byte, headerLen+len(payload))
	h := header{typ: typ, len: uint32(len(payload))}
	h.put(b)
	copy(b[headerLen:], payload)
	_, err := nc.Write(b)
	return err
}

func (r *tcpReq) Accept(cfg datapath.QPConfig, pd []byte) (datapath.Conn, error) {
	const op = "soft: accept"
	if len(pd) > datapath.MaxAcceptPrivateData {
		return nil, &datapath.OpError{Op: op, Err: errPrivateDataTooLong}
	}
	c, err := newConn(r.ln.dev, cfg)
	if err != nil {
		return nil, err
	}
	if err := prepare(c, cfg); err != nil {
		return nil, err
	}
	if err := r.decide(); err != nil {
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	m := hello{maxSendWR: uint32(c.caps.MaxSendWR), maxRecvWR: uint32(c.caps.MaxRecvWR), pd: pd}
	if err := writeFrame(r.nc, frameAccept, m.bytes(datapath.MaxAcceptPrivateData)); err != nil {
		r.nc.Close()
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	c.peerPD = r.hello.pd
	c.local, c.remote = r.nc.LocalAddr().String(), r.nc.RemoteAddr().String()
	c.counted(1)
	newLink(c, r.nc, r.br, int(r.hello.maxSendWR))
	return c, nil
}

func (r *tcpReq) Reject(pd []byte) error {
	const op = "soft: reject"
	if len(pd) > datapath.MaxRejectPrivateData {
		return &datapath.OpError{Op: op, Err: errPrivateDataTooLong}
	}
	if err := r.decide(); err != nil {
		return &datapath.OpError{Op: op, Err: err}
	}
	defer r.nc.Close()
	if err := writeFrame(r.nc, frameReject, pad(pd, datapath.MaxAcceptPrivateData)); err != nil {
		return &datapath.OpError{Op: op, Err: err}
	}
	return nil
}

func connectTCP(ctx context.Context, d *device, addr string, cfg datapath.QPConfig, pd []byte) (datapath.Conn, error) {
	op := "soft: connect " + addr
	c, err := newConn(d, cfg)
	if err != nil {
		return nil, err
	}
	if err := prepare(c, cfg); err != nil {
		return nil, err
	}
	var dialer net.Dialer
	nc, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	// The context bounds the handshake.
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	m := hello{maxSendWR: uint32(c.caps.MaxSendWR), maxRecvWR: uint32(c.caps.MaxRecvWR), pd: pd}
	br := bufio.NewReaderSize(nc, bufSize)
	reply, typ, err := func() ([]byte, uint8, error) {
		if err := writeFrame(nc, frameConnect, m.bytes(datapath.MaxConnectPrivateData)); err != nil {
			return nil, 0, err
		}
		var b [headerLen]byte
		var h header
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, 0, err
		}
		if err := h.parse(b[:]); err != nil {
			return nil, 0, err
		}
		if (h.typ != frameAccept || h.len != helloLen+datapath.MaxAcceptPrivateData) &&
			(h.typ != frameReject || h.len != datapath.MaxAcceptPrivateData) {
			return nil, 0, errHelloLength
		}
		p := make([]byte, h.len)
		_, err := io.ReadFull(br, p)
		return p, h.typ, err
	}()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		nc.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		} else if errors.Is(err, io.EOF) {
			err = errConnRefused
		}
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	if typ == frameReject {
		nc.Close()
		return nil, &datapath.OpError{Op: op, Err: &datapath.RejectedError{PrivateData: reply}}
	}
	am, err := parseHello(reply, datapath.MaxAcceptPrivateData)
	if err != nil {
		nc.Close()
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	if !stop() {
		nc.Close()
		return nil, &datapath.OpError{Op: op, Err: ctx.Err()}
	}
	c.peerPD = am.pd
	c.local, c.remote = nc.LocalAddr().String(), nc.RemoteAddr().String()
	c.counted(1)
	newLink(c, nc, br, int(am.maxSendWR))
	return c, nil
}

// broken runs when the connection moves to the error state: tell the peer, then let the
// writer close our direction.
func (l *tcpLink) broken(c *conn) {
	l.ackTimer.Stop()
	if l.closing {
		return
	}
	l.closing = true
	st := datapath.StatusFlushed
	d := txd{h: header{typ: frameDisconnect}}
	if e, ok := (*c.err.Load()).(*BrokenError); ok {
		st = e.Status
		// The peer learns why when we found the fault; it knows already when it broke the
		// connection itself (a NAK, DISCONNECT, its close) or when it is gone.
		if !e.Remote && e != errLocalClose {
			text := strings.TrimPrefix(e.Error(), "connection broken: ")
			d.text = []byte(text[:min(len(text), maxReason)])
			d.h.len = uint32(len(d.text))
		}
	}
	d.h.flags = uint8(st)
	if !l.tx.push(d) {
		// Full only if the protocol broke; the reader's deadline closes the socket.
		l.nc.SetDeadline(time.Now())
	}
	l.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
}

// readReason reads a DISCONNECT's reason of n bytes: at most maxReason are kept (the rest
// is discarded) and anything but printable ASCII becomes '?', so that a peer cannot put
// control sequences into the error a user reads.
func (l *tcpLink) readReason(n uint32) (string, error) {
	b := make([]byte, min(n, maxReason))
	if _, err := io.ReadFull(l.br, b); err != nil {
		return "", err
	}
	if _, err := l.br.Discard(int(n) - len(b)); err != nil {
		return "", err
	}
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b), nil
}

// linger adds a closed connection's TCP teardown to those Close waits for, dropping those
// already done.
func (d *device) linger(done <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	live := d.lingers[:0]
	for _, ch := range d.lingers {
		select {
		case <-ch:
		default:
			live = append(live, ch)
		}
	}
	d.lingers = append(live, done)
}

// closeLinger bounds how long Close waits for the peers of closed TCP connections to read
// their DISCONNECT (and its reason) and close their ends.
const closeLinger = time.Second
