package rpcrdma

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// ErrIdleTimeout ends a connection of a Mux that saw no completion for MuxConfig.IdleTimeout.
var ErrIdleTimeout = errors.New("rpcrdma: connection idle for longer than the idle timeout")

// MuxConfig configures a Mux. The zero value keeps connections until they break.
type MuxConfig struct {
	// IdleTimeout closes a connection that completed no work request (no call, reply or
	// RDMA operation) for this long; 0 never does. It is checked a few times per timeout,
	// so a connection may live up to a quarter longer.
	IdleTimeout time.Duration
	// Done is called on the poller's thread when a connection leaves the Mux, with the
	// reason: its *ConnError, ErrIdleTimeout, or nil when the Mux was closed. The
	// connection is closed right after Done returns; its Stats are final.
	Done func(c *Conn, err error)
	// Clock returns monotonic nanoseconds (nil: the runtime's); tests replace it.
	Clock func() int64
	// CloseReason is what Close tells the peers of the connections it ends, where the
	// provider carries a reason (datapath.Aborter): Serve's is "server shutting down".
	CloseReason string
	// KeepBroken keeps a connection that broke in the Mux (its completions are skipped) for
	// its owner to collect its failed RPCs and close it; a requester's client sets it.
	KeepBroken bool
}

// Mux serves many connections that share one CQ (Config.CQ) from one poller: it is the
// datapath.Handler of that poller, and routes each completion to its connection by queue
// pair number. Connections join from any goroutine (Attach, AcceptOn); everything else runs
// on the poller's thread, with no lock and no allocation per completion. A connection that
// breaks or idles out leaves the Mux (see MuxConfig.Done) without disturbing the others.
type Mux struct {
	cfg MuxConfig
	cq  datapath.CQ

	// Owned by the poller thread.
	conns []*Conn
	byQPN map[uint32]*Conn
	last  *Conn
	dirty []*Conn
	idles uint32
	sweep int64 // clock of the last idle sweep
	// Stray counts completions of queue pairs the Mux does not serve (left already).
	stray uint64
	// share is what Serve's connections on this poller have in common (nil: nothing).
	share *share
	touch func(*Conn) // markDirty, made once

	// handles counts Handle calls: every few, overdue Read chunks expire (expireDone).
	handles uint32
	// expired is the clock of the last expireDone from Idle.
	expired int64

	// Hand-over from other goroutines: mu guards pending, npending mirrors its length so
	// that the poller looks at it without the lock.
	mu       sync.Mutex
	pending  []*Conn
	npending atomic.Int32
	// load is how many connections are attached (pending or served), for dealing new
	// connections to the least loaded Mux.
	load atomic.Int32
}

var _ datapath.Handler = (*Mux)(nil)

// NewMux returns a Mux for connections whose completions go to cq.
func NewMux(cq datapath.CQ, cfg MuxConfig) *Mux {
	if cfg.Clock == nil {
		cfg.Clock = monoNow
	}
	m := &Mux{cfg: cfg, cq: cq, byQPN: make(map[uint32]*Conn)}
	m.touch = m.markDirty
	return m
}

// markDirty lists c among the connections to flush after this batch.
func (m *Mux) markDirty(c *Conn) {
	if !c.muxDirty {
		c.muxDirty = true
		m.dirty = append(m.dirty, c)
	}
}

// CQ is the completion queue the Mux's connections share.
func (m *Mux) CQ() datapath.CQ { return m.cq }

// Load is how many connections the Mux serves or is about to; safe from any goroutine.
func (m *Mux) Load() int { return int(m.load.Load()) }

// Attach hands c, established on the Mux's CQ, to the poller. It is safe from any
// goroutine; the poller takes c over at its next Handle or Idle, and from then on c belongs
// to the poller's thread.
func (m *Mux) Attach(c *Conn) error {
	if c.cq != m.cq || !c.sharedCQ {
		return errors.New("rpcrdma: Mux.Attach: the connection does not use the Mux's CQ")
	}
	m.mu.Lock()
	m.hand(c)
	m.mu.Unlock()
	return nil
}

func (m *Mux) hand(c *Conn) {
	m.pending = append(m.pending, c)
	m.npending.Add(1)
	m.load.Add(1)
}

// Conns are the connections the poller serves; call it on the poller's thread (or after
// the poller stopped).
func (m *Mux) Conns() []*Conn { return m.conns }

// Stray is how many completions arrived for queue pairs the Mux no longer serves.
func (m *Mux) Stray() uint64 { return m.stray }

// adopt takes over the connections handed over since the last call.
func (m *Mux) adopt() {
	m.mu.Lock()
	for _, c := range m.pending {
		m.conns = append(m.conns, c)
		m.byQPN[c.qpn] = c
		c.deferPosts() // this thread both posts and polls from now on
		if m.share != nil {
			m.share.sinks.conns++
		}
	}
	clear(m.pending)
	m.pending = m.pending[:0]
	m.npending.Store(0)
	m.mu.Unlock()
}

// Handle routes each completion to its connection, then lets each connection that had one
// post what it caused.
func (m *Mux) Handle(wcs []datapath.Completion) error {
	if m.npending.Load() > 0 {
		m.adopt()
	}
	if m.last != nil {
		m.last.nowRead = false // a new batch: its clock is read again, if used (Conn.batchNow)
	}
	for i := range wcs {
		wc := &wcs[i]
		c := m.last
		if c == nil || c.qpn != wc.QPN {
			if c = m.byQPN[wc.QPN]; c == nil {
				// A connection handed over while this batch was polled (AcceptOn holds the
				// lock from posting its receives until the hand-over, so the lock waits
				// for it), or one that already left: its flushed work requests.
				m.adopt()
				if c = m.byQPN[wc.QPN]; c == nil {
					m.stray++
					continue
				}
			}
			m.last = c
			c.nowRead = false
		}
		if c.err != nil {
			continue
		}
		c.handle(wc)
		m.markDirty(c)
	}
	if m.handles++; m.handles%16 == 0 {
		m.expireDone()
	}
	m.wakeSinks()
	if m.flushDirty() {
		m.reap()
	}
	return nil
}

// expireDone lets every connection release its overdue Read chunks and fail on an overdue
// RDMA Read while the CQ stays busy (Idle, which does too, runs only when it is not), so
// that a peer that withholds RDMA_DONE or answers RDMA Reads late holds shared sink buffers
// for DoneTimeout or ReadTimeout, not for as long as other connections keep the poller busy.
func (m *Mux) expireDone() {
	now := time.Now()
	for _, c := range m.conns {
		if c.err == nil && c.sv.pendingDone > 0 {
			n := len(c.sv.waiting)
			if c.sv.expireDone(now); len(c.sv.waiting) != n {
				m.markDirty(c) // it queued LOCAL_INVs
			}
		}
		if c.err == nil && len(c.sv.pulls) > 0 {
			if c.sv.expirePulls(now); c.err != nil {
				m.markDirty(c) // flushDirty finds it broken: reap
			}
		}
	}
}

// wakeSinks hands the shared sink buffers freed since the last call (by replies that
// completed, chunks whose RDMA_DONE timed out, connections that left) to the calls waiting for
// them, on any connection of the poller, and marks those connections for flushDirty.
func (m *Mux) wakeSinks() {
	if m.share != nil && len(m.share.sinks.waiting) > 0 {
		m.share.sinks.wake(m.touch)
	}
}

// flushDirty lets each connection the batch touched post what it queued, and reports
// whether one of them broke.
func (m *Mux) flushDirty() bool {
	removed := false
	for _, c := range m.dirty {
		c.muxDirty = false
		c.muxActive = true
		if c.Idle() != nil {
			removed = true
		}
	}
	clear(m.dirty)
	m.dirty = m.dirty[:0]
	return removed
}

// Idle adopts connections handed over, and every few calls lets every connection expire
// overdue Read chunks, post what it queued, and checks idle timeouts.
func (m *Mux) Idle() error {
	if m.npending.Load() > 0 {
		m.adopt()
	}
	if now := m.cfg.Clock(); now-m.expired >= int64(expireEvery) {
		// An idle poller wakes every few milliseconds to 100 ms: the bounds on what a peer
		// holds are checked at each wake-up, not only every 16.
		m.expired = now
		m.expireDone()
		m.wakeSinks()
		if m.flushDirty() {
			m.reap()
		}
	}
	m.idles++
	if m.idles%16 != 0 {
		return nil
	}
	removed := false
	for _, c := range m.conns {
		if c.Idle() != nil {
			removed = true
		}
	}
	m.wakeSinks()
	removed = m.flushDirty() || removed
	if t := m.cfg.IdleTimeout; t > 0 {
		now := m.cfg.Clock()
		if m.sweep == 0 {
			m.sweep = now
		}
		if now-m.sweep >= int64(t/4) {
			m.sweep = now
			for _, c := range m.conns {
				switch {
				case c.muxActive || c.busy():
					c.muxActive, c.muxIdleSweeps = false, 0
				case c.err == nil:
					if c.muxIdleSweeps++; c.muxIdleSweeps >= 4 {
						c.err = ErrIdleTimeout
						removed = true
					}
				}
			}
		}
	}
	if removed {
		m.reap()
	}
	return nil
}

// reap removes the connections that broke or timed out.
func (m *Mux) reap() {
	live := m.conns[:0]
	for _, c := range m.conns {
		if c.err == nil || m.cfg.KeepBroken && c.err != ErrIdleTimeout {
			live = append(live, c)
			continue
		}
		m.leave(c, c.err)
	}
	clear(m.conns[len(live):])
	m.conns = live
	m.wakeSinks()
	if m.flushDirty() {
		m.reap()
	}
}

func (m *Mux) leave(c *Conn, err error) {
	delete(m.byQPN, c.qpn)
	if m.last == c {
		m.last = nil
	}
	m.load.Add(-1)
	if m.share != nil {
		m.share.sinks.conns--
	}
	if m.cfg.Done != nil {
		m.cfg.Done(c, err)
	}
	c.Close()
}

// Close ends every connection (Done with a nil reason), pending ones too. Call it on the
// poller's thread after the poller stopped, or when no poller runs.
func (m *Mux) Close() {
	m.adopt()
	for _, c := range m.conns {
		var err error
		if c.err != nil && c.err != ErrClosed {
			err = c.err
		}
		c.closeReason = m.cfg.CloseReason
		m.leave(c, err)
	}
	clear(m.conns)
	m.conns = m.conns[:0]
}

// expireEvery is how often an idle Mux checks DoneTimeout and ReadTimeout at most.
const expireEvery = 5 * time.Millisecond

func monoNow() int64 { return int64(time.Since(monoEpoch)) }

// mono is t in monoNow's nanoseconds (t must carry a monotonic reading, as time.Now's do).
func mono(t time.Time) int64 { return int64(t.Sub(monoEpoch)) }

var monoEpoch = time.Now()
