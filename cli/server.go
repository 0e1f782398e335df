package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/engine"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// ServeConfig is the server command's settings: a responder serving other processes.
type ServeConfig struct {
	// Provider ("": soft) and Device name the datapath.
	Provider, Device string
	// Listen is the address to listen on (host:port; port 0 picks one).
	Listen string
	// Threshold is the inline threshold offered in the accept private data (0: the engine's
	// default).
	Threshold int
	// Credits is the credit window granted to each requester (0: the engine's default).
	Credits int
	// MaxPayload is the largest payload a call or reply may carry: it sizes the large
	// buffers the pollers share among their connections.
	MaxPayload int
	// SinkBuffers bounds each poller's shared pool of those buffers (0: one connection's
	// worth at the full grant); each connection also keeps one of its own in reserve.
	SinkBuffers int
	// Pollers and CPUs place the responder's polling threads as workloads.Config does;
	// connections are dealt to the least loaded poller and share its CQ.
	Pollers int
	CPUs    []int
	// Poll is how the pollers wait when idle.
	Poll datapath.Poll
	// MaxConnections bounds the connections served at once; more are rejected with a reason.
	MaxConnections int
	// IdleTimeout closes connections that did nothing for this long (0: never).
	IdleTimeout time.Duration
	// Verify checks every payload received against the benchmark pattern.
	Verify bool
	// Once makes the server exit after its first connection closes.
	Once bool
	// Turnarounds switches the pollers' turnaround probe on; each poller prints what it
	// measured when the server stops.
	Turnarounds bool
	// Transport is the engine's knobs (its Credits unused: see Credits above).
	Transport engine.Transport
	// Slowdown is the soft provider's calibrated slowdown (--soft-delay, --soft-bandwidth).
	Slowdown SoftSlowdown
	// ConnDone and PollerDone report each connection's and each poller's end (set by
	// StartServing).
	ConnDone   func(c *rpcrdma.Conn, err error)
	PollerDone func(poller int, st datapath.PollerStats)
}

// Validate checks c before anything listens, naming the flag at fault; Provider takes its
// default.
func (c *ServeConfig) Validate() error {
	switch {
	case c.SinkBuffers < 0:
		return Usagef("--sink-buffers must not be negative (0: the default)")
	case c.Pollers < 1:
		return Usagef("--pollers %d: want at least 1 poller thread", c.Pollers)
	}
	if err := CheckCredits(c.Credits); err != nil {
		return UsageError{err.Error()}
	}
	if c.MaxConnections < 1 {
		return Usagef("--max-connections %d: want at least 1", c.MaxConnections)
	}
	if c.IdleTimeout < 0 {
		return Usagef("--idle-timeout must not be negative (got %v; 0: never)", c.IdleTimeout)
	}
	if _, err := CheckAddr("listen", c.Listen, false); err != nil {
		return err
	}
	if err := ValidateTransport(&c.Transport, false); err != nil {
		return UsageError{err.Error()}
	}
	// The CPUs are checked as a workload's, of the one program the server serves.
	if _, err := (workloads.Config{Prog: benchprog.Prog, CPUs: c.CPUs}).Normalized(); err != nil {
		return UsageError{err.Error()}
	}
	// Before listening: pinning would fail only once the first poller starts.
	if err := CheckCPUs(c.CPUs); err != nil {
		return err
	}
	return CheckTurnarounds(c.Turnarounds, c.Provider)
}

// Open starts c's responder over provider p (its slowdown and probe already applied),
// sizing the Go runtime for its pollers.
func (c *ServeConfig) Open(p datapath.Provider) (*engine.Responder, error) {
	polls := make([]datapath.Poll, c.Pollers)
	for i := range polls {
		polls[i] = c.Poll
	}
	p.Defaults().SizeRuntime(polls)
	th := c.Threshold
	if th == 0 {
		th = rpcrdma.DefaultInline
	}
	cfg := rpcrdma.ServeConfig{Endpoint: rpcrdma.Config{SendSize: th, RecvSize: th, Credits: c.Credits,
		MaxPayload: engine.PayloadSize(c.MaxPayload), Verify: c.Verify},
		// An idle event or hybrid poller wakes every EventTimeout to notice a stop and idle
		// connections: 100 ms keeps an idle server's CPU near zero.
		Pollers: c.Pollers, Poller: datapath.PollerConfig{Poll: c.Poll, EventTimeout: 100 * time.Millisecond},
		MaxConnections: c.MaxConnections, IdleTimeout: c.IdleTimeout, SinkBuffers: c.SinkBuffers, Done: c.ConnDone,
		PollerDone: c.PollerDone}
	c.Transport.Apply(&cfg.Endpoint)
	if len(c.CPUs) > 0 {
		picker, err := datapath.NewCPUPicker(c.CPUs...)
		if err != nil {
			return nil, err
		}
		cfg.Poller.Pin, cfg.CPUs = true, picker
	}
	return engine.Listen(engine.ResponderConfig{Provider: p, Device: c.Device, Listen: c.Listen, Serve: cfg, Once: c.Once})
}

// Server is a responder as the server command runs it: Responder, or a test's fake.
type Server interface {
	// Addr is the address actually listened on.
	Addr() string
	// Serve runs until ctx is done (then it closes the connections and returns nil), Once's
	// connection ends, or a fatal error.
	Serve(ctx context.Context) error
	Close() error
}

// Serving is the server command running: its Server, with a line to log per connection
// that ended abnormally and what was served, for the summary at stop.
type Serving struct {
	srv    Server
	log    io.Writer
	mu     sync.Mutex
	tally  serverTally
	cpu0   results.CPU
	cpuErr error
}

// serverTally is what a server did, for its summary at stop.
type serverTally struct {
	conns                    int
	calls, polls, emptyPolls uint64
}

func (t *serverTally) String() string {
	empty := 0.0
	if t.polls > 0 {
		empty = 100 * float64(t.emptyPolls) / float64(t.polls)
	}
	return fmt.Sprintf("%d connection(s), %d calls served; pollers: %d polls, %.0f%% empty", t.conns, t.calls, t.polls, empty)
}

// StartServing opens the server c describes with open, which takes c's ConnDone and
// PollerDone, and logs where it listens.
func StartServing(c *ServeConfig, open func(*ServeConfig) (Server, error), log io.Writer) (*Serving, error) {
	s := &Serving{log: log}
	c.ConnDone = func(conn *rpcrdma.Conn, err error) {
		line := engine.ConnEndLine(conn, err)
		s.mu.Lock()
		defer s.mu.Unlock()
		if conn != nil {
			s.tally.conns++
			s.tally.calls += conn.Stats().Served
		}
		if line != "" {
			fmt.Fprintln(log, "rpcrdma-bench server: "+line)
		}
	}
	turnarounds := PrintTurnarounds(log, &s.mu, "rpcrdma-bench server: ")
	c.PollerDone = func(i int, st datapath.PollerStats) {
		s.mu.Lock()
		s.tally.polls += st.Iterations
		s.tally.emptyPolls += st.EmptyPolls
		s.mu.Unlock()
		turnarounds(i, st)
	}
	s.cpu0, s.cpuErr = results.ReadCPU()
	srv, err := open(c)
	if err != nil {
		return nil, err
	}
	s.srv = srv
	fmt.Fprintf(log, "rpcrdma-bench server: listening on %s (provider %s, %d poller(s), poll %s, at most %d connections)\n",
		srv.Addr(), c.Provider, c.Pollers, c.Poll, c.MaxConnections)
	return s, nil
}

// Serve serves until ctx is done or the server stops by itself, closes the server and logs
// the summary: connections, calls, the pollers' polls and the process's CPU time.
func (s *Serving) Serve(ctx context.Context) error {
	start := time.Now()
	err := s.srv.Serve(ctx)
	if cerr := s.srv.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	cpu := "CPU unknown"
	if cpu1, err := results.ReadCPU(); err == nil && s.cpuErr == nil {
		d := cpu1.Sub(s.cpu0)
		cpu = fmt.Sprintf("process CPU %v (user %v, system %v)", time.Duration(d.UserNs+d.SysNs).Round(time.Millisecond),
			time.Duration(d.UserNs).Round(time.Millisecond), time.Duration(d.SysNs).Round(time.Millisecond))
	}
	s.mu.Lock()
	fmt.Fprintf(s.log, "rpcrdma-bench server: stopped after %v: %v; %s\n", time.Since(start).Round(time.Millisecond), &s.tally, cpu)
	s.mu.Unlock()
	return nil
}
