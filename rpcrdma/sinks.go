package rpcrdma

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/mempool"
)

// sinks is a pool of large buffers (headroom + MaxPayload + tailroom bytes each) that contexts take
// only while they need one: a Read chunk or a whole message pulled into it, or a SOURCE
// result built in it. A server poller's connections share one (see Serve): it grows by
// registered segments as the calls in flight need buffers, up to limit, and a call that finds
// none free waits in order until one is put back. A connection that is not served by Serve
// has one of its own, made whole at setup with a buffer per context: a context holds at most
// one, so it never waits.
//
// No connection can hold a shared pool (allow). Each connection served keeps one buffer in
// reserve beyond max, so the pool is max + conns buffers at most and a connection that holds
// none always finds one, however many others misbehave. Beyond that first buffer, a
// connection competes for the max shared ones: one that holds its share of them (max over
// the connections) takes another only while more than one stays free, and one whose peer
// holds buffers long (server.peerSlow: RDMA Reads answered late, RDMA_DONE withheld) only
// while half of them stays free. Waiting calls that allow refuses let later ones of
// other connections pass.
//
// Owned by one poller thread: no locks.
type sinks struct {
	reg    mempool.Registrar
	access datapath.Access
	size   int // bytes per buffer
	max    int // buffers shared beyond the connections' reserves (all of them for an own pool)
	made   int
	segs   []*mempool.Region
	free   []*mempool.Buf // last in, first out: the memory in use stays warm
	// waiting are the contexts that found no buffer, oldest first (see wake).
	waiting []sinkWait
	err     error // the last registration that failed
	shared  bool  // by the connections of a poller (woken by its Mux)
	// conns counts the connections that share the pool (kept by their Mux).
	conns int
	// over counts the shared buffers held: those beyond each connection's first.
	over int
}

// limit is how many buffers the pool may have: the shared ones and one reserved for each
// connection.
func (s *sinks) limit() int { return s.max + s.conns }

// allow reports whether the server half sv may take a buffer of a shared pool now: its
// reserved one when it holds none; else a shared one while it holds less than its share,
// or while more than one stays free (half of them, for a slow peer). Every connection has
// its reserve, so what one over its share leaves free is for a connection below its share
// asking next; buffers that come back go first to those (wake), which evens the shares out.
func (s *sinks) allow(sv *server) bool {
	// Small enough to inline for one connection's calls, the usual case; compete weighs shares.
	return sv.sinkHeld == 0 || s.conns <= 1 && s.over < s.max || s.compete(sv)
}

// compete is allow for a connection that holds a buffer already.
func (s *sinks) compete(sv *server) bool {
	free := s.max - s.over
	switch {
	case free <= 0:
		return false
	case s.conns <= 1:
		return true
	case sv.peerSlow(sv.c.batchNow()):
		// Its peer keeps what it takes for long: the others keep half the shared buffers.
		return free-1 >= (s.max+1)/2
	}
	return sv.sinkHeld-1 < max(1, s.max/s.conns) || free > 1
}

// held counts a buffer sv just took (shared pools).
func (s *sinks) held(sv *server) {
	if sv.sinkHeld++; sv.sinkHeld > 1 {
		s.over++
	}
}

// putBack counts a buffer sv gave back (shared pools).
func (s *sinks) putBack(sv *server) {
	if sv.sinkHeld--; sv.sinkHeld > 0 {
		s.over--
	}
}

type sinkWait struct {
	c *Conn
	i int32
}

// newSinks returns an empty pool of buffers of size bytes, registered with reg as needed,
// up to max of them.
func newSinks(reg mempool.Registrar, access datapath.Access, size, max int) *sinks {
	return &sinks{reg: reg, access: access, size: size, max: max, shared: true,
		free: make([]*mempool.Buf, 0, max), waiting: make([]sinkWait, 0, 16)}
}

// ownSinks makes the sink pool of one connection from p, a pool of its own region: every
// buffer there from the start, so that it never waits.
func ownSinks(p *mempool.Pool) *sinks {
	s := &sinks{size: p.Size(), max: p.Cap(), free: make([]*mempool.Buf, 0, p.Cap())}
	s.take(p)
	return s
}

// take moves every buffer of p to the free list, first buffer on top. Get and Put here are
// then a slice pop and push whichever segment a buffer is from; close gives them back.
func (s *sinks) take(p *mempool.Pool) {
	n := p.Free()
	s.free = slices.Grow(s.free, n) // a shared pool's limit grows with its connections
	s.free = s.free[:len(s.free)+n]
	for k := range n {
		s.free[len(s.free)-1-k] = p.Get()
	}
	s.made += n
}

// grow registers a segment of n more buffers (committed lazily, like every pool here).
func (s *sinks) grow(n int) error {
	r, err := mempool.New(s.reg, mempool.Config{
		Pools:  []mempool.PoolConfig{{Name: "sink", Size: s.size, Count: n, Lazy: true}},
		Access: s.access,
	})
	if err != nil {
		s.err = err
		return err
	}
	s.segs = append(s.segs, r)
	s.take(r.Pools()[0])
	return nil
}

// get returns a free buffer, growing the pool when it has none and may, or nil when every
// buffer is in use (or a segment could not be registered): the caller waits (park). A
// context of a shared pool asks allow first.
func (s *sinks) get() *mempool.Buf {
	if len(s.free) == 0 && s.made < s.limit() && s.reg != nil {
		// Doubling keeps segments (and registrations) few: at most log2(limit) + 1.
		if s.grow(min(s.limit()-s.made, max(s.made, 4))) != nil {
			return nil
		}
	}
	if len(s.free) == 0 {
		return nil
	}
	b := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	return b
}

func (s *sinks) put(b *mempool.Buf) { s.free = append(s.free, b) }

// park queues context i of c until a buffer is free.
func (s *sinks) park(c *Conn, i int32) {
	s.waiting = append(s.waiting, sinkWait{c, i})
}

// wake hands free buffers to waiting contexts that allow lets take one, oldest first, and
// calls touched for each connection that got one (its work is queued and needs a flush).
// Contexts whose connection broke meanwhile are dropped.
func (s *sinks) wake(touched func(*Conn)) {
	live := s.waiting[:0]
	for k, w := range s.waiting {
		sv := &w.c.sv
		switch {
		case w.c.err != nil || sv.ctxs[w.i].state != ctxSinkWait:
		case len(s.free) == 0 && s.made >= s.limit():
			live = append(live, s.waiting[k:]...)
			clear(s.waiting[len(live):])
			s.waiting = live
			return
		case s.allow(sv):
			if b := s.get(); b != nil {
				sv.resume(w.i, b)
				touched(w.c)
				continue
			}
			live = append(live, w)
		default:
			live = append(live, w)
		}
	}
	clear(s.waiting[len(live):])
	s.waiting = live
}

// drop forgets the waiting contexts of c (closing).
func (s *sinks) drop(c *Conn) {
	live := s.waiting[:0]
	for _, w := range s.waiting {
		if w.c != c {
			live = append(live, w)
		}
	}
	clear(s.waiting[len(live):])
	s.waiting = live
}

// close returns every buffer to its segment and releases the segments. Buffers still held
// (by connections not closed) are reported.
func (s *sinks) close() error {
	for _, b := range s.free {
		b.Pool().Put(b)
	}
	s.free = nil
	var errs []error
	for _, r := range s.segs {
		if err := r.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sink pool: %w", err))
		}
	}
	s.segs = nil
	return errors.Join(errs...)
}
