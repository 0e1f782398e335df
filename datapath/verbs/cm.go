//go:build verbs && cgo

package verbs

// #include "shim.h"
// #include <stdlib.h>
import "C"

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"golang.org/x/sys/unix"
)

// evchan is an rdma_cm event channel read without blocking a thread: its fd is non-blocking
// and a duplicate of it waits in Go's netpoller. Every connection watches its channel for a
// disconnect for as long as it lives, and a listener waits on its own: in poll(2), each of
// those held an OS thread in a system call (and a cancellable wait woke every 50 ms to look
// at its context); in the netpoller a waiting channel costs no thread.
type evchan struct {
	ch     *C.struct_rdma_event_channel
	f      *os.File // the duplicate
	rc     syscall.RawConn
	closed atomic.Bool
	once   sync.Once
}

func newEvchan() (*evchan, error) {
	ch, err := C.rdma_create_event_channel()
	if ch == nil {
		return nil, &datapath.OpError{Op: "rdma_create_event_channel", Err: err}
	}
	if rc := C.vb_nonblock(ch.fd); rc != 0 {
		C.rdma_destroy_event_channel(ch)
		return nil, opErr("fcntl O_NONBLOCK", rc)
	}
	// The duplicate shares the channel's open file (O_NONBLOCK included), so the netpoller
	// sees its events; rdma_destroy_event_channel closes the original.
	fd, err := unix.FcntlInt(uintptr(ch.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		C.rdma_destroy_event_channel(ch)
		return nil, &datapath.OpError{Op: "dup rdma_cm channel", Err: err}
	}
	f := os.NewFile(uintptr(fd), "rdma_cm event channel")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		C.rdma_destroy_event_channel(ch)
		return nil, &datapath.OpError{Op: "rdma_cm channel", Err: err}
	}
	return &evchan{ch: ch, f: f, rc: rc}, nil
}

// wake makes every current and future next return ErrClosed.
func (e *evchan) wake() {
	e.once.Do(func() {
		e.closed.Store(true)
		e.f.SetReadDeadline(time.Unix(1, 0))
	})
}

// destroy frees the channel; no id may use it any more.
func (e *evchan) destroy() {
	e.wake()
	e.f.Close()
	C.rdma_destroy_event_channel(e.ch)
}

// next waits for the next event until ctx is done or wake is called. One goroutine at a
// time waits on a channel.
func (e *evchan) next(ctx context.Context, ev *C.struct_vb_event) error {
	var stop func() bool
	if ctx.Done() != nil {
		// A cancellation ends the wait through the deadline; one from an earlier call that
		// lands late only makes the loop below wait again.
		stop = context.AfterFunc(ctx, func() { e.f.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	for {
		dl, _ := ctx.Deadline()
		e.f.SetReadDeadline(dl)
		// Checked after the deadline is set: wake and a cancellation set theirs after their
		// flag, so one that came first is seen here and one that comes later ends the wait.
		if e.closed.Load() {
			return datapath.ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var rc C.int
		err := e.rc.Read(func(uintptr) bool {
			rc = C.vb_get_event(e.ch, ev)
			return rc != C.EAGAIN
		})
		switch {
		case err == nil && rc == 0:
			return nil
		case err == nil:
			return opErr("rdma_get_cm_event", rc)
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return &datapath.OpError{Op: "wait for rdma_cm channel", Err: err}
		}
	}
}

// expect waits for an event of type want on id; any other event for id is an error naming
// it. Events of other ids (a listener's channel) are skipped.
func (e *evchan) expect(ctx context.Context, op string, id *C.struct_rdma_cm_id, want C.enum_rdma_cm_event_type) (*C.struct_vb_event, error) {
	ev := new(C.struct_vb_event)
	for {
		if err := e.next(ctx, ev); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w waiting for %s", datapath.ErrTimeout, eventName(want))
			}
			return nil, &datapath.OpError{Op: op, Err: err}
		}
		if ev.id != id {
			continue
		}
		if C.enum_rdma_cm_event_type(ev._type) == want {
			return ev, nil
		}
		if ev._type == C.RDMA_CM_EVENT_REJECTED {
			return nil, &datapath.OpError{Op: op, Err: &datapath.RejectedError{Status: int(ev.status), PrivateData: C.GoBytes(unsafe.Pointer(&ev.priv[0]), ev.priv_len)}}
		}
		err := fmt.Errorf("got %s (status %d), want %s", eventName(C.enum_rdma_cm_event_type(ev._type)), int(ev.status), eventName(want))
		if ev.status < 0 {
			err = fmt.Errorf("%w: %w", err, unix.Errno(-ev.status))
		}
		return nil, &datapath.OpError{Op: op, Err: err}
	}
}

func eventName(t C.enum_rdma_cm_event_type) string {
	return C.GoString(C.rdma_event_str(t))
}

// sockaddr converts host:port; an empty or unspecified host becomes def.
func sockaddr(host string, port int, def net.IP, ss *C.struct_sockaddr_storage) error {
	ip := net.ParseIP(host)
	if host != "" && ip == nil {
		ips, err := net.LookupIP(host)
		if err != nil {
			return err
		}
		ip = ips[0]
	}
	if ip == nil || ip.IsUnspecified() {
		if def == nil {
			return errors.New("the device's network interface has no IP address; give one")
		}
		ip = def
	}
	cs := C.CString(ip.String())
	defer C.free(unsafe.Pointer(cs))
	if rc := C.vb_sockaddr(cs, C.int(port), ss); rc != 0 {
		return fmt.Errorf("bad address %q", host)
	}
	return nil
}

func splitAddr(addr string) (string, int, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", addr)
	}
	return host, port, nil
}

func addrString(sa *C.struct_sockaddr) string {
	var buf [64]C.char
	port := C.vb_addr_string(sa, &buf[0], C.int(len(buf)))
	if port < 0 {
		return ""
	}
	return net.JoinHostPort(C.GoString(&buf[0]), strconv.Itoa(int(port)))
}

// checkDevice makes sure rdma_cm resolved id to this device's context: a PD and CQs of one
// device cannot serve a queue pair of another.
func (d *device) checkDevice(id *C.struct_rdma_cm_id, addr string) error {
	if id.verbs == nil || id.verbs == d.ctx {
		return nil
	}
	return fmt.Errorf("%s is reached through device %s, not %s", addr, ctxName(id.verbs), d.info.Name)
}

type listener struct {
	d    *device
	ec   *evchan
	id   *C.struct_rdma_cm_id
	addr string

	mu     sync.Mutex
	closed bool
}

var _ datapath.Listener = (*listener)(nil)

// Listen binds to addr; an empty or unspecified host means the device's own address, so that
// requests arrive on this device.
func (d *device) Listen(addr string) (datapath.Listener, error) {
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, &datapath.OpError{Op: "rdma_listen", Err: err}
	}
	var ss C.struct_sockaddr_storage
	if err := sockaddr(host, port, d.ip, &ss); err != nil {
		return nil, &datapath.OpError{Op: "rdma_bind_addr", Err: err}
	}
	ec, err := newEvchan()
	if err != nil {
		return nil, err
	}
	var id *C.struct_rdma_cm_id
	if rc, err := C.rdma_create_id(ec.ch, &id, nil, C.RDMA_PS_TCP); rc != 0 {
		ec.destroy()
		return nil, &datapath.OpError{Op: "rdma_create_id", Err: err}
	}
	fail := func(op string, err error) (datapath.Listener, error) {
		C.rdma_destroy_id(id)
		ec.destroy()
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	if rc, err := C.rdma_bind_addr(id, (*C.struct_sockaddr)(unsafe.Pointer(&ss))); rc != 0 {
		return fail("rdma_bind_addr "+addr, err)
	}
	if err := d.checkDevice(id, addr); err != nil {
		return fail("rdma_bind_addr", err)
	}
	if rc, err := C.rdma_listen(id, 128); rc != 0 {
		return fail("rdma_listen", err)
	}
	if err := d.track(&d.nlis, 1); err != nil {
		return fail("rdma_listen", err)
	}
	return &listener{d: d, ec: ec, id: id, addr: addrString(C.rdma_get_local_addr(id))}, nil
}

func (l *listener) Addr() string { return l.addr }

func (l *listener) Accept(ctx context.Context) (datapath.ConnRequest, error) {
	ev := new(C.struct_vb_event)
	for {
		if err := l.ec.next(ctx, ev); err != nil {
			return nil, &datapath.OpError{Op: "rdma_cm accept", Err: err}
		}
		switch ev._type {
		case C.RDMA_CM_EVENT_CONNECT_REQUEST:
			r := &request{
				l:         l,
				id:        ev.id,
				priv:      C.GoBytes(unsafe.Pointer(&ev.priv[0]), ev.priv_len),
				initDepth: int(ev.initiator_depth),
				respRes:   int(ev.responder_resources),
			}
			r.remote = addrString(C.rdma_get_peer_addr(ev.id))
			return r, nil
		case C.RDMA_CM_EVENT_DEVICE_REMOVAL:
			return nil, &datapath.OpError{Op: "rdma_cm accept", Err: errors.New("device removed")}
		}
		// Anything else concerns a requester not accepted yet (it gave up): nothing to do.
	}
}

func (l *listener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return &datapath.OpError{Op: "rdma_destroy_id", Err: datapath.ErrClosed}
	}
	l.closed = true
	l.ec.wake()
	C.rdma_destroy_id(l.id)
	l.ec.destroy()
	l.d.track(&l.d.nlis, -1)
	return nil
}

type request struct {
	l                  *listener
	id                 *C.struct_rdma_cm_id
	priv               []byte
	remote             string
	initDepth, respRes int
	decided            bool
}

var _ datapath.ConnRequest = (*request)(nil)

func (r *request) PrivateData() []byte { return r.priv }
func (r *request) RemoteAddr() string  { return r.remote }

var errDecided = errors.New("connection request already accepted or rejected")

func (r *request) Accept(cfg datapath.QPConfig, privateData []byte) (datapath.Conn, error) {
	if r.decided {
		return nil, &datapath.OpError{Op: "rdma_accept", Err: errDecided}
	}
	if len(privateData) > datapath.MaxAcceptPrivateData {
		return nil, &datapath.OpError{Op: "rdma_accept", Err: fmt.Errorf("%d bytes of private data, at most %d", len(privateData), datapath.MaxAcceptPrivateData)}
	}
	d := r.l.d
	// Until rdma_accept the requester has no answer: a failure leaves the request undecided,
	// for the caller to Reject with its reason.
	if err := d.checkDevice(r.id, r.l.addr); err != nil {
		return nil, &datapath.OpError{Op: "rdma_accept", Err: err}
	}
	ec, err := newEvchan()
	if err != nil {
		return nil, err
	}
	// The connection's events go to its own channel from now on.
	if rc, err := C.rdma_migrate_id(r.id, ec.ch); rc != 0 {
		ec.destroy()
		return nil, &datapath.OpError{Op: "rdma_migrate_id", Err: err}
	}
	c, err := d.newConn(r.id, ec, cfg)
	if err == nil && cfg.Prepare != nil {
		if err = cfg.Prepare(c); err != nil {
			c.destroyQP()
		}
	}
	if err != nil {
		if rc, _ := C.rdma_migrate_id(r.id, r.l.ec.ch); rc != 0 {
			// The id cannot go back to the listener's channel: refuse without a reason.
			C.rdma_reject(r.id, nil, 0)
			C.rdma_destroy_id(r.id)
			r.decided = true
		}
		ec.destroy()
		return nil, err
	}
	r.decided = true
	pd := C.CBytes(privateData)
	defer C.free(pd)
	rd := c.caps.RDMAReadDepth
	rc := C.vb_accept(r.id, pd, C.int(len(privateData)), C.int(min(rd, r.initDepth)), C.int(min(rd, r.respRes)), C.int(d.p.cfg.rnrRetry()))
	if rc != 0 {
		c.destroy()
		return nil, opErr("rdma_accept", rc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), datapath.DefaultConnectTimeout)
	defer cancel()
	if _, err := ec.expect(ctx, "rdma_accept", r.id, C.RDMA_CM_EVENT_ESTABLISHED); err != nil {
		c.destroy()
		return nil, err
	}
	c.peer = r.priv
	if err := c.start(); err != nil {
		c.destroy()
		return nil, err
	}
	return c, nil
}

func (r *request) Reject(privateData []byte) error {
	if r.decided {
		return &datapath.OpError{Op: "rdma_reject", Err: errDecided}
	}
	if len(privateData) > datapath.MaxRejectPrivateData {
		return &datapath.OpError{Op: "rdma_reject", Err: fmt.Errorf("%d bytes of private data, at most %d", len(privateData), datapath.MaxRejectPrivateData)}
	}
	r.decided = true
	var pd unsafe.Pointer
	if len(privateData) > 0 {
		pd = C.CBytes(privateData)
		defer C.free(pd)
	}
	rc, err := C.rdma_reject(r.id, pd, C.uint8_t(len(privateData)))
	C.rdma_destroy_id(r.id)
	if rc != 0 {
		return &datapath.OpError{Op: "rdma_reject", Err: err}
	}
	return nil
}

// Connect resolves addr from the device's own address, creates the queue pair and connects.
func (d *device) Connect(ctx context.Context, addr string, cfg datapath.QPConfig, privateData []byte) (datapath.Conn, error) {
	if len(privateData) > datapath.MaxConnectPrivateData {
		return nil, &datapath.OpError{Op: "rdma_connect", Err: fmt.Errorf("%d bytes of private data, at most %d", len(privateData), datapath.MaxConnectPrivateData)}
	}
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, &datapath.OpError{Op: "rdma_resolve_addr", Err: err}
	}
	var dst, src C.struct_sockaddr_storage
	if err := sockaddr(host, port, nil, &dst); err != nil {
		return nil, &datapath.OpError{Op: "rdma_resolve_addr", Err: err}
	}
	var srcp *C.struct_sockaddr
	if d.ip != nil && (d.ip.To4() != nil) == (dst.ss_family == C.AF_INET) {
		if err := sockaddr("", 0, d.ip, &src); err != nil {
			return nil, &datapath.OpError{Op: "rdma_resolve_addr", Err: err}
		}
		srcp = (*C.struct_sockaddr)(unsafe.Pointer(&src))
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, datapath.DefaultConnectTimeout)
		defer cancel()
	}
	dl, _ := ctx.Deadline()
	ms := C.int(max(time.Until(dl)/time.Millisecond, 1))

	ec, err := newEvchan()
	if err != nil {
		return nil, err
	}
	var id *C.struct_rdma_cm_id
	if rc, err := C.rdma_create_id(ec.ch, &id, nil, C.RDMA_PS_TCP); rc != 0 {
		ec.destroy()
		return nil, &datapath.OpError{Op: "rdma_create_id", Err: err}
	}
	fail := func(err error) (datapath.Conn, error) {
		C.rdma_destroy_id(id)
		ec.destroy()
		return nil, err
	}
	if rc, err := C.rdma_resolve_addr(id, srcp, (*C.struct_sockaddr)(unsafe.Pointer(&dst)), ms); rc != 0 {
		return fail(&datapath.OpError{Op: "rdma_resolve_addr " + addr, Err: err})
	}
	if _, err := ec.expect(ctx, "rdma_resolve_addr "+addr, id, C.RDMA_CM_EVENT_ADDR_RESOLVED); err != nil {
		return fail(err)
	}
	if err := d.checkDevice(id, addr); err != nil {
		return fail(&datapath.OpError{Op: "rdma_resolve_addr", Err: err})
	}
	if rc, err := C.rdma_resolve_route(id, ms); rc != 0 {
		return fail(&datapath.OpError{Op: "rdma_resolve_route " + addr, Err: err})
	}
	if _, err := ec.expect(ctx, "rdma_resolve_route "+addr, id, C.RDMA_CM_EVENT_ROUTE_RESOLVED); err != nil {
		return fail(err)
	}
	c, err := d.newConn(id, ec, cfg)
	if err != nil {
		return fail(err)
	}
	if cfg.Prepare != nil {
		if err := cfg.Prepare(c); err != nil {
			c.destroy()
			return nil, err
		}
	}
	var pd unsafe.Pointer
	if len(privateData) > 0 {
		pd = C.CBytes(privateData)
		defer C.free(pd)
	}
	if rc := C.vb_connect(id, pd, C.int(len(privateData)), C.int(c.caps.RDMAReadDepth), C.int(d.p.cfg.rnrRetry())); rc != 0 {
		c.destroy()
		return nil, opErr("rdma_connect "+addr, rc)
	}
	ev, err := ec.expect(ctx, "rdma_connect "+addr, id, C.RDMA_CM_EVENT_ESTABLISHED)
	if err != nil {
		c.destroy()
		return nil, err
	}
	c.peer = C.GoBytes(unsafe.Pointer(&ev.priv[0]), ev.priv_len)
	if err := c.start(); err != nil {
		c.destroy()
		return nil, err
	}
	return c, nil
}
