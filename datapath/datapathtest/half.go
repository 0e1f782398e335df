package datapathtest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// half is one end of a case: everything it creates is released by cleanup, in reverse.
type half struct {
	name     string
	dev      datapath.Device
	ln       datapath.Listener // passive halves only
	addr     string            // where the active half connects
	deadline time.Time
	xch      exchanger
	kill     func() error // active half across processes: SIGKILL the peer
	cleanups []func()
	skipMsg  string
	// failed is set once the half failed; cleanupErr is a failure found by cleanup.
	failed     bool
	cleanupErr error
}

// exchanger is the side channel between the halves of a case.
type exchanger interface {
	// exchange sends b to the other half and returns what it sent: a barrier carrying data.
	exchange(b []byte, deadline time.Time) ([]byte, error)
}

// failure is how helpers abort a half; run turns it back into an error.
type failure struct{ err error }

type skipped struct{ msg string }

func (h *half) fatalf(format string, args ...any) {
	panic(failure{fmt.Errorf(format, args...)})
}

func (h *half) must(err error, what string) {
	if err != nil {
		h.fatalf("%s: %v", what, err)
	}
}

// skip ends both halves of the case as skipped: the other half learns it at its next
// exchange.
func (h *half) skip(msg string) {
	h.xch.exchange([]byte(skipTag+msg), h.deadline) //nolint:errcheck // best effort
	panic(skipped{msg})
}

const skipTag = "\x00skip:"

// run runs f as this half and returns its failure, or a skipped value.
func (h *half) run(f func(*half)) (err error) {
	defer func() {
		r := recover()
		h.failed = r != nil
		for i := len(h.cleanups) - 1; i >= 0; i-- {
			h.cleanups[i]()
		}
		switch r := r.(type) {
		case nil:
			err = h.cleanupErr
		case failure:
			err = r.err
		case skipped:
			h.skipMsg = r.msg
		default:
			buf := make([]byte, 4096)
			buf = buf[:runtime.Stack(buf, false)]
			err = fmt.Errorf("panic: %v\n%s", r, buf)
		}
	}()
	f(h)
	return nil
}

func (h *half) expired() bool { return time.Now().After(h.deadline) }

func (h *half) defer1(f func()) { h.cleanups = append(h.cleanups, f) }

// exchange swaps b with the other half's bytes.
func (h *half) exchange(b []byte) []byte {
	got, err := h.xch.exchange(b, h.deadline)
	h.must(err, "exchange with the other half")
	if len(got) >= len(skipTag) && string(got[:len(skipTag)]) == skipTag {
		panic(skipped{string(got[len(skipTag):])})
	}
	return got
}

// sync is a barrier.
func (h *half) sync() { h.exchange([]byte{1}) }

func (h *half) ctx() context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), h.deadline)
	h.defer1(cancel)
	return ctx
}

func (h *half) cq(depth int) datapath.CQ {
	cq, err := h.dev.NewCQ(depth)
	h.must(err, "NewCQ")
	h.defer1(func() { cq.Close() })
	return cq
}

// qp returns a QPConfig with one fresh CQ for both queues and the given sizes (0 = default).
func (h *half) qp(sendWR, recvWR int) (datapath.QPConfig, datapath.CQ) {
	cq := h.cq(1024)
	return datapath.QPConfig{SendCQ: cq, RecvCQ: cq, MaxSendWR: sendWR, MaxRecvWR: recvWR}, cq
}

// reg allocates and registers n bytes in the default PD, filled with pattern(seed).
func (h *half) reg(n int, access datapath.Access, seed byte) datapath.MR {
	return h.regIn(nil, n, access, seed)
}

// regIn is reg in pd (nil: the device's default PD).
func (h *half) regIn(pd datapath.PD, n int, access datapath.Access, seed byte) datapath.MR {
	mem, free, err := Alloc(n)
	h.must(err, "alloc")
	h.defer1(func() { free() })
	fill(mem, seed)
	var mr datapath.MR
	if pd != nil {
		mr, err = pd.Register(mem, access)
	} else {
		mr, err = h.dev.Register(mem, access)
	}
	h.must(err, "Register")
	h.defer1(func() { mr.Close() })
	return mr
}

// pd allocates a protection domain, closed at cleanup after everything created later.
func (h *half) pd() datapath.PD {
	pd, err := h.dev.AllocPD()
	h.must(err, "AllocPD")
	h.defer1(func() {
		if err := pd.Close(); err != nil && !h.failed {
			h.cleanupErr = fmt.Errorf("PD.Close after its objects closed: %w", err)
		}
	})
	return pd
}

// connect is the active side's Connect; the Conn closes at cleanup.
func (h *half) connect(cfg datapath.QPConfig, pd []byte) datapath.Conn {
	c, err := h.dev.Connect(h.ctx(), h.addr, cfg, pd)
	h.must(err, "Connect")
	h.defer1(func() { c.Close() })
	return c
}

func (h *half) request() datapath.ConnRequest {
	req, err := h.ln.Accept(h.ctx())
	h.must(err, "Listener.Accept")
	return req
}

// accept accepts the next request with pd.
func (h *half) accept(cfg datapath.QPConfig, pd []byte) (datapath.Conn, datapath.ConnRequest) {
	req := h.request()
	c, err := req.Accept(cfg, pd)
	h.must(err, "ConnRequest.Accept")
	h.defer1(func() { c.Close() })
	return c, req
}

func (h *half) postSend(c datapath.Conn, wrs ...datapath.SendWR) {
	n, err := c.PostSend(wrs)
	if err != nil || n != len(wrs) {
		h.fatalf("PostSend posted %d of %d: %v", n, len(wrs), err)
	}
}

func (h *half) postRecv(c datapath.Conn, wrs ...datapath.RecvWR) {
	n, err := c.PostRecv(wrs)
	if err != nil || n != len(wrs) {
		h.fatalf("PostRecv posted %d of %d: %v", n, len(wrs), err)
	}
}

// poll returns the next n completions, failing the half if they do not arrive in time.
func (h *half) poll(cq datapath.CQ, n int) []datapath.Completion {
	wcs := make([]datapath.Completion, n)
	got := 0
	for spins := 0; got < n; spins++ {
		k, err := cq.Poll(wcs[got:])
		h.must(err, "CQ.Poll")
		got += k
		if k == 0 {
			if time.Now().After(h.deadline) {
				h.fatalf("timed out with %d of %d completions: %+v", got, n, wcs[:got])
			}
			if spins > 100 {
				time.Sleep(50 * time.Microsecond)
			} else {
				runtime.Gosched()
			}
		}
	}
	return wcs
}

// pollOne polls one completion and checks its id and status (and its opcode on success,
// the only case where verbs defines it).
func (h *half) pollOne(cq datapath.CQ, c datapath.Conn, id uint64, op datapath.Opcode, st datapath.Status) datapath.Completion {
	wc := h.poll(cq, 1)[0]
	h.check(wc, c, id, op, st)
	return wc
}

func (h *half) check(wc datapath.Completion, c datapath.Conn, id uint64, op datapath.Opcode, st datapath.Status) {
	if wc.ID != id || wc.Status != st || (st == datapath.StatusSuccess && wc.Op != op) || wc.QPN != c.QPN() {
		h.fatalf("completion %+v (status %v), want id %d op %v status %v qpn %d", wc, wc.Status, id, op, st, c.QPN())
	}
}

// byID polls n completions and indexes them by work request id, failing on duplicates.
func (h *half) byID(cq datapath.CQ, n int) map[uint64]datapath.Completion {
	m := make(map[uint64]datapath.Completion, n)
	for _, wc := range h.poll(cq, n) {
		if _, dup := m[wc.ID]; dup {
			h.fatalf("two completions for id %d", wc.ID)
		}
		m[wc.ID] = wc
	}
	return m
}

// empty checks that the CQ holds no completion now.
func (h *half) empty(cq datapath.CQ) {
	var wcs [4]datapath.Completion
	n, err := cq.Poll(wcs[:])
	h.must(err, "CQ.Poll")
	if n != 0 {
		h.fatalf("unexpected completions: %+v", wcs[:n])
	}
}

// broken waits until c reports a broken connection and checks that posting is refused or
// flushed from then on.
func (h *half) broken(c datapath.Conn, cq datapath.CQ) {
	for c.Err() == nil {
		if time.Now().After(h.deadline) {
			h.fatalf("connection never reported broken")
		}
		time.Sleep(100 * time.Microsecond)
	}
	// After the break a post either fails or completes flushed.
	n, err := c.PostSend([]datapath.SendWR{{ID: 999, Op: datapath.OpSend, Flags: datapath.FlagSignaled}})
	if err == nil && n == 1 {
		h.pollOne(cq, c, 999, datapath.OpSend, datapath.StatusFlushed)
	}
}

// region names a peer's memory, as sent over the side channel.
type region struct {
	addr uint64
	rkey uint32
	len  uint32
}

func (r region) bytes() []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, r.addr)
	binary.BigEndian.PutUint32(b[8:], r.rkey)
	binary.BigEndian.PutUint32(b[12:], r.len)
	return b
}

func (h *half) region(b []byte) region {
	if len(b) != 16 {
		h.fatalf("bad region message %x", b)
	}
	return region{binary.BigEndian.Uint64(b), binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:])}
}

func regionOf(mr datapath.MR) region {
	return region{mr.Addr(), mr.RKey(), uint32(len(mr.Bytes()))}
}

func sge(mr datapath.MR, off, n int) datapath.SGE {
	return datapath.SGE{Addr: mr.Addr() + uint64(off), Length: uint32(n), LKey: mr.LKey()}
}

// fill writes a pattern that differs per seed and per position.
func fill(b []byte, seed byte) {
	if seed == 0 {
		clear(b)
		return
	}
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	fill(b, seed)
	return b
}

func (h *half) equal(got, want []byte, what string) {
	if len(got) != len(want) {
		h.fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			h.fatalf("%s: first difference at byte %d of %d: %#x, want %#x", what, i, len(got), got[i], want[i])
		}
	}
}

var errOtherEnded = errors.New("the other half ended")
