package rpcrdma

import "github.com/rpcrdma-bench/rpcrdma-bench/datapath"

// Mux serves several connections that share one CQ (Config.CQ) from one datapath.Poller:
// it routes each completion to its connection by queue pair number. A connection that broke
// is dropped from the Mux, so one failure does not stop the poller; check Conn.Err.
type Mux struct {
	conns []*Conn
}

var _ datapath.Handler = (*Mux)(nil)

// Add adds c to the Mux. Not safe while the poller runs Handle.
func (m *Mux) Add(c *Conn) { m.conns = append(m.conns, c) }

// Conns are the connections still served.
func (m *Mux) Conns() []*Conn { return m.conns }

// Handle routes each completion to its connection, then lets every connection post.
func (m *Mux) Handle(wcs []datapath.Completion) error {
	for i := range wcs {
		for _, c := range m.conns {
			if c.qpn == wcs[i].QPN {
				if c.err == nil {
					c.handle(&wcs[i])
				}
				break
			}
		}
	}
	return m.Idle()
}

// Idle lets every connection expire overdue Read chunks and post what it queued.
func (m *Mux) Idle() error {
	live := m.conns[:0]
	for _, c := range m.conns {
		c.Idle()
		if c.err == nil {
			live = append(live, c)
		}
	}
	clear(m.conns[len(live):])
	m.conns = live
	return nil
}
