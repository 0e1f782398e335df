package soft

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// The in-process "network": listeners by name.
var inproc struct {
	mu   sync.Mutex
	m    map[string]*ipListener
	next int
}

type ipListener struct {
	dev    *device
	name   string
	reqs   chan *ipReq
	done   chan struct{}
	closed bool
}

var _ datapath.Listener = (*ipListener)(nil)

// listenInproc binds name; "" or "0" picks a free one, reported by Addr.
func listenInproc(d *device, name string) (datapath.Listener, error) {
	inproc.mu.Lock()
	defer inproc.mu.Unlock()
	if inproc.m == nil {
		inproc.m = make(map[string]*ipListener)
	}
	if name == "" || name == "0" {
		for {
			inproc.next++
			name = strconv.Itoa(inproc.next)
			if inproc.m[name] == nil {
				break
			}
		}
	}
	if inproc.m[name] != nil {
		return nil, &datapath.OpError{Op: "soft: listen " + InprocPrefix + name, Err: errAddrInUse}
	}
	l := &ipListener{dev: d, name: name, reqs: make(chan *ipReq, 16), done: make(chan struct{})}
	inproc.m[name] = l
	d.count(&d.nLn, 1)
	return l, nil
}

// accept waits for the next connection request a listener queued until it closes (done) or
// ctx ends.
func accept[R datapath.ConnRequest](ctx context.Context, reqs <-chan R, done <-chan struct{}) (datapath.ConnRequest, error) {
	select {
	case r := <-reqs:
		return r, nil
	case <-done:
		return nil, &datapath.OpError{Op: "soft: accept", Err: datapath.ErrClosed}
	case <-ctx.Done():
		return nil, &datapath.OpError{Op: "soft: accept", Err: ctx.Err()}
	}
}

func (l *ipListener) Addr() string { return InprocPrefix + l.name }

func (l *ipListener) Accept(ctx context.Context) (datapath.ConnRequest, error) {
	return accept(ctx, l.reqs, l.done)
}

// Close unbinds the name and rejects the requests nobody accepted.
func (l *ipListener) Close() error {
	inproc.mu.Lock()
	if l.closed {
		inproc.mu.Unlock()
		return &datapath.OpError{Op: "soft: close listener", Err: datapath.ErrClosed}
	}
	l.closed = true
	delete(inproc.m, l.name)
	close(l.done)
	inproc.mu.Unlock()
	for {
		select {
		case r := <-l.reqs:
			r.decide(nil, nil) // nil private data: refused, not rejected
		default:
			l.dev.count(&l.dev.nLn, -1)
			return nil
		}
	}
}

// ipReq is a connection request in flight. The connector's queue pair exists already (as
// after rdma_create_qp and before rdma_connect); Accept pairs it with a new one.
type ipReq struct {
	ln     *ipListener
	pd     []byte
	client *conn
	remote string

	mu      sync.Mutex
	state   int // reqPending, reqDecided, reqAbandoned
	decided chan []byte
	ok      bool
}

const (
	reqPending = iota
	reqDecided
	reqAbandoned
)

var _ datapath.ConnRequest = (*ipReq)(nil)

func (r *ipReq) PrivateData() []byte { return r.pd }
func (r *ipReq) RemoteAddr() string  { return r.remote }

// decide records the outcome; server is nil for a rejection. It fails if the connector
// gave up (its context ended) or the request was decided already.
func (r *ipReq) decide(server *conn, pd []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.state {
	case reqAbandoned:
		return errConnectorGone
	case reqDecided:
		return errDecided
	}
	r.state = reqDecided
	if server != nil {
		pair := new(sync.Mutex)
		c := r.client
		c.mu, server.mu = pair, pair
		c.peer, server.peer = server, c
		server.peerPD = r.pd
		server.local, server.remote = r.ln.Addr(), r.remote
		c.local, c.remote = r.remote, r.ln.Addr()
		r.ok = true
	}
	var reply []byte
	if server != nil || pd != nil {
		reply = pad(pd, datapath.MaxAcceptPrivateData)
	}
	r.decided <- reply
	return nil
}

func (r *ipReq) Accept(cfg datapath.QPConfig, pd []byte) (datapath.Conn, error) {
	const op = "soft: accept"
	if len(pd) > datapath.MaxAcceptPrivateData {
		return nil, &datapath.OpError{Op: op, Err: errPrivateDataTooLong}
	}
	s, err := newConn(r.ln.dev, cfg)
	if err != nil {
		return nil, err
	}
	if err := prepare(s, cfg); err != nil {
		return nil, err
	}
	if err := r.decide(s, pd); err != nil {
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	s.counted(1)
	return s, nil
}

func (r *ipReq) Reject(pd []byte) error {
	if len(pd) > datapath.MaxRejectPrivateData {
		return &datapath.OpError{Op: "soft: reject", Err: errPrivateDataTooLong}
	}
	if pd == nil {
		pd = []byte{} // a REJ always carries its private data field
	}
	if err := r.decide(nil, pd); err != nil {
		return &datapath.OpError{Op: "soft: reject", Err: err}
	}
	return nil
}

var connectorSeq struct {
	mu sync.Mutex
	n  int
}

func connectInproc(ctx context.Context, d *device, name string, cfg datapath.QPConfig, pd []byte) (datapath.Conn, error) {
	op := "soft: connect " + InprocPrefix + name
	c, err := newConn(d, cfg)
	if err != nil {
		return nil, err
	}
	if err := prepare(c, cfg); err != nil {
		return nil, err
	}
	inproc.mu.Lock()
	l := inproc.m[name]
	inproc.mu.Unlock()
	if l == nil {
		return nil, &datapath.OpError{Op: op, Err: errConnRefused}
	}
	connectorSeq.mu.Lock()
	connectorSeq.n++
	remote := InprocPrefix + "client-" + strconv.Itoa(connectorSeq.n)
	connectorSeq.mu.Unlock()
	r := &ipReq{ln: l, pd: pad(pd, datapath.MaxConnectPrivateData), client: c, remote: remote,
		decided: make(chan []byte, 1)}
	select {
	case l.reqs <- r:
	case <-l.done:
		return nil, &datapath.OpError{Op: op, Err: errConnRefused}
	case <-ctx.Done():
		return nil, &datapath.OpError{Op: op, Err: ctx.Err()}
	}
	var reply []byte
	select {
	case reply = <-r.decided:
	case <-ctx.Done():
		r.mu.Lock()
		if r.state == reqPending {
			r.state = reqAbandoned
			r.mu.Unlock()
			return nil, &datapath.OpError{Op: op, Err: ctx.Err()}
		}
		r.mu.Unlock()
		reply = <-r.decided
	}
	if !r.ok {
		if reply == nil {
			return nil, &datapath.OpError{Op: op, Err: errConnRefused}
		}
		return nil, &datapath.OpError{Op: op, Err: &datapath.RejectedError{PrivateData: reply}}
	}
	c.peerPD = reply
	c.counted(1)
	return c, nil
}

// pad returns a copy of pd zero-padded to n bytes: RDMA-CM over IB and RoCE carries private
// data in fixed-size CM message fields, so the peer always sees the full field (rxe does
// the same). Decoders must not take the length as the sender's.
func pad(pd []byte, n int) []byte {
	b := make([]byte, n)
	copy(b, pd)
	return b
}

var (
	errAddrInUse     = errors.New("address already in use")
	errConnRefused   = errors.New("connection refused")
	errConnectorGone = errors.New("the connecting side gave up")
	errDecided       = errors.New("request already accepted or rejected")
)
