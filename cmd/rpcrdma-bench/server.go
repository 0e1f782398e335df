package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/session"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// serverFlags are the responder's settings.
type serverFlags struct {
	Provider string `json:"provider"`
	Device   string `json:"device,omitempty"`
	// Listen is the address to listen on (host:port; port 0 picks one).
	Listen string `json:"listen"`
	// Threshold is the inline threshold offered in the accept private data (0: the engine's
	// default).
	Threshold int `json:"threshold,omitempty"`
	// Credits is the credit window granted to each requester (0: the engine's default).
	Credits int `json:"credits,omitempty"`
	// MaxPayload is the largest payload a call or reply may carry: it sizes the large
	// buffers the pollers share among their connections.
	MaxPayload int `json:"max_payload"`
	// SinkBuffers bounds each poller's shared pool of those buffers (0: one connection's
	// worth at the full grant).
	SinkBuffers int `json:"sink_buffers,omitempty"`
	// Pollers and CPUs place the responder's polling threads as workloads.Config does;
	// connections are dealt to the least loaded poller and share its CQ.
	Pollers int   `json:"pollers"`
	CPUs    []int `json:"cpus,omitempty"`
	// Poll is how the pollers wait when idle.
	Poll datapath.Poll `json:"poll"`
	// MaxConnections bounds the connections served at once; more are rejected with a reason.
	MaxConnections int `json:"max_connections"`
	// IdleTimeout closes connections that did nothing for this long (0: never).
	IdleTimeout time.Duration `json:"idle_timeout_ns"`
	// connDone reports each connection's end (set by serve).
	connDone func(c *rpcrdma.Conn, err error)
	// Verify checks every payload received against the benchmark pattern.
	Verify bool `json:"verify,omitempty"`
	// Once makes the server exit after its first connection closes.
	Once bool `json:"once,omitempty"`
	// Turnarounds switches the pollers' turnaround probe on; each poller prints what it
	// measured when the server stops.
	Turnarounds bool `json:"turnarounds,omitempty"`
	// pollerDone reports each poller's end (set by serve).
	pollerDone func(poller int, st datapath.PollerStats)
	// Transport is the engine's knobs (its Credits unused: see Credits above).
	Transport session.Transport `json:"transport"`
	// Slowdown is the soft provider's calibrated slowdown (--soft-delay, --soft-bandwidth).
	Slowdown softSlowdown `json:"soft_slowdown"`
}

// server is the responder side of the engine: it listens, accepts connections (negotiating
// each one's private data afresh) and serves the benchmark program on its pollers.
type server interface {
	// Addr is the address actually listened on.
	Addr() string
	// Serve runs until ctx is done (then it closes the connections and returns nil), Once's
	// connection ends, or a fatal error.
	Serve(ctx context.Context) error
	Close() error
}

// newServer starts listening as f says.
type newServer func(f *serverFlags) (server, error)

func serverCommand(open newServer) *command {
	return &command{
		name:    "server",
		summary: "Serve the benchmark RPC program for clients in other processes",
		usage:   "[--listen HOST:PORT] [flags]",
		examples: `  rpcrdma-bench server --listen 0.0.0.0:20049               # soft provider over TCP
  rpcrdma-bench server --provider verbs --device rxe0 --listen 10.0.2.15:20049
  rpcrdma-bench server --thresholds 16k --cpus 3 --verify   # offer 16 KiB inline, pin the poller
  rpcrdma-bench server --remote-invalidate --responder-read # Send With Invalidate, responder Read chunks`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			f := &serverFlags{}
			var thresholds []int
			fs.StringVar(&f.Provider, "provider", "", "RDMA provider: soft (default, pure Go over TCP between processes) or verbs")
			fs.StringVar(&f.Device, "device", "", "device to open (default: the provider's first)")
			fs.StringVar(&f.Listen, "listen", "127.0.0.1:20049", "address to listen on (port 0 picks one)")
			fs.Var(thresholdsFlag(&thresholds), "thresholds", "inline threshold to offer, both ways (one value; default the engine's, 4k)")
			fs.IntVar(&f.Credits, "credits", 0, "credits granted to each client (default the engine's)")
			maxPayload := 1 << 20
			fs.Var(sizeFlag(&maxPayload), "max-payload", "largest payload of one RPC: the size of the buffers Read chunks are pulled into and long replies built in")
			fs.IntVar(&f.SinkBuffers, "sink-buffers", 0, "per poller, the most of those buffers the calls in flight hold at once (registered as needed; a call that finds none free waits); default one connection's worth at the full grant")
			fs.IntVar(&f.Pollers, "pollers", 1, "poller threads; connections are dealt to the least loaded and share its completion queue")
			fs.Var(cpusFlag(&f.CPUs), "cpus", "pin poller i to the i-th CPU of this list (default: unpinned)")
			fs.Var(pollFlag(&f.Poll, true), "poll", "how idle pollers wait: busy (a CPU each, always), event (block on the completion channel) or hybrid[:SPIN] (spin after the last completion, then block; the spin is SPIN, or without it twice the usual time between completions, 50us to 1ms); default event on soft, hybrid on verbs")
			fs.IntVar(&f.MaxConnections, "max-connections", rpcrdma.DefaultMaxConnections, "connections served at once; more are rejected with a reason the client prints")
			fs.DurationVar(&f.IdleTimeout, "idle-timeout", 10*time.Minute, "close a connection that did nothing for this long (0: never)")
			fs.BoolVar(&f.Verify, "verify", false, "check every payload received")
			fs.BoolVar(&f.Once, "once", false, "exit after the first connection closes")
			fs.BoolVar(&f.Turnarounds, "turnarounds", false, "print each poller's turnaround when the server stops: its own time from a completion to the posts it caused (verbs only; two clock reads per turnaround)")
			addTransportFlags(fs, &f.Transport, false)
			addSlowdownFlags(fs, &f.Slowdown)
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, "server", usageErrorf("unexpected arguments %q", args))
				}
				if len(thresholds) > 1 {
					return fail(e, "server", usageErrorf("--thresholds takes one value (%d given)", len(thresholds)))
				}
				if len(thresholds) == 1 {
					f.Threshold = thresholds[0]
				}
				f.MaxPayload = maxPayload
				if f.SinkBuffers < 0 {
					return fail(e, "server", usageErrorf("--sink-buffers must not be negative (0: the default)"))
				}
				if f.Pollers < 1 {
					return fail(e, "server", usageErrorf("--pollers %d: want at least 1 poller thread", f.Pollers))
				}
				if err := checkCredits(f.Credits); err != nil {
					return fail(e, "server", err)
				}
				if f.MaxConnections < 1 {
					return fail(e, "server", usageErrorf("--max-connections %d: want at least 1", f.MaxConnections))
				}
				if f.IdleTimeout < 0 {
					return fail(e, "server", usageErrorf("--idle-timeout must not be negative (got %v; 0: never)", f.IdleTimeout))
				}
				if err := checkListen(f.Listen); err != nil {
					return fail(e, "server", err)
				}
				if err := checkTransport(&f.Transport, false); err != nil {
					return fail(e, "server", err)
				}
				if _, err := (workloads.Config{CPUs: f.CPUs}).Normalized(); err != nil {
					return fail(e, "server", usageError{err.Error()})
				}
				if err := checkCPUs(f.CPUs); err != nil {
					// Before listening: pinning would fail only once the first poller starts.
					return fail(e, "server", usageError{err.Error()})
				}
				if f.Provider == "" {
					f.Provider = "soft"
				}
				if err := checkTurnarounds(f.Turnarounds, f.Provider); err != nil {
					return fail(e, "server", err)
				}
				if !fs.Changed("poll") {
					f.Poll = session.ServerPoll(f.Provider)
				}
				return serve(e, f, open)
			}
		},
	}
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

func serve(e *env, f *serverFlags, open newServer) int {
	var mu sync.Mutex
	var tally serverTally
	f.connDone = func(c *rpcrdma.Conn, err error) {
		line := session.ConnEndLine(c, err)
		mu.Lock()
		defer mu.Unlock()
		if c != nil {
			tally.conns++
			tally.calls += c.Stats().Served
		}
		if line != "" {
			fmt.Fprintln(e.stderr, "rpcrdma-bench server: "+line)
		}
	}
	turnarounds := printTurnarounds(e.stderr, &mu, "rpcrdma-bench server: ")
	f.pollerDone = func(i int, st datapath.PollerStats) {
		mu.Lock()
		tally.polls += st.Iterations
		tally.emptyPolls += st.EmptyPolls
		mu.Unlock()
		turnarounds(i, st)
	}
	cpu0, cpuErr := results.ReadCPU()
	srv, err := open(f)
	if err != nil {
		return fail(e, "server", err)
	}
	stop := newStopper(e, false)
	fmt.Fprintf(e.stderr, "rpcrdma-bench server: listening on %s (provider %s, %d poller(s), poll %s, at most %d connections)\n",
		srv.Addr(), f.Provider, f.Pollers, f.Poll, f.MaxConnections)
	start := time.Now()
	err = srv.Serve(stop.ctx)
	stop.release()
	if cerr := srv.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(e, "server", err)
	}
	cpu := "CPU unknown"
	if cpu1, err := results.ReadCPU(); err == nil && cpuErr == nil {
		d := cpu1.Sub(cpu0)
		cpu = fmt.Sprintf("process CPU %v (user %v, system %v)", time.Duration(d.UserNs+d.SysNs).Round(time.Millisecond),
			time.Duration(d.UserNs).Round(time.Millisecond), time.Duration(d.SysNs).Round(time.Millisecond))
	}
	mu.Lock()
	fmt.Fprintf(e.stderr, "rpcrdma-bench server: stopped after %v: %v; %s\n", time.Since(start).Round(time.Millisecond), &tally, cpu)
	mu.Unlock()
	return exitOK
}

// engineCommands are the commands that need the transport engine, given how to connect a
// point's pollers (to --addr, or to a responder in this process) and how to serve.
func engineCommands(open newConnector, srv newServer) []*command {
	run := measureCommand("run", "Run server and client in this process and print per-class RTT percentiles and throughput",
		"[flags]",
		`  rpcrdma-bench run                                  # the default: NFS-like mix on soft, ~6 s
  rpcrdma-bench run --mix echo --sizes 64 --depth 1  # latency of small inline ECHOs
  rpcrdma-bench run --mix source/1m --class long     # force a Reply chunk for 1 MiB READs
  rpcrdma-bench run --rate 1000 --mix echo --sizes 64 --out run.json  # open loop, RTT from the intended send (a rate the machine cannot sustain fails)
  rpcrdma-bench run --mix sink/64k --memory windows --remote-invalidate  # bind and invalidate per RPC, as FRWR
  rpcrdma-bench run --provider verbs --device rxe0 --cpus 2,3`, false, addrNone, open)
	client := measureCommand("client", "Drive a server in another process ('rpcrdma-bench server') and record the results",
		"--addr HOST:PORT [flags]",
		`  rpcrdma-bench client --addr 10.0.2.15:20049 --duration 30s --out client.json
  rpcrdma-bench client --addr 10.0.2.15:20049 --mix null --depth 1     # NULL ping-pong
  rpcrdma-bench client --provider verbs --device rxe0 --addr 10.0.2.15:20049 --mix sink/64k`, false, addrRequired, open)
	sweep := measureCommand("sweep", "Sweep inline thresholds × sizes (or mixes) × depths, each point on fresh connections",
		"[flags]",
		`  rpcrdma-bench sweep --out sweep.json                               # 1k..64k × 64 B..1 MiB, ECHO
  rpcrdma-bench sweep --proc source --thresholds 1k,4k --sizes 1k,4k,16k
  rpcrdma-bench sweep --depth 1,16 --duration 500ms --addr 10.0.2.15:20049
  rpcrdma-bench report --format switches sweep.json                  # where classes changed
  rpcrdma-bench sweep --mix nfs-like --mix 'echo/128:3,sink/32k' --thresholds 1k,4k,16k,64k --out mix.json
  rpcrdma-bench report --format thresholds mix.json                  # the best threshold per mix
  rpcrdma-bench sweep --thresholds 1k,4k --sizes 64,16k --repeat auto # rounds until each size's best threshold is settled
  rpcrdma-bench sweep --thresholds 4k --sizes 64,4k,64k --duration 2s --repeat auto:10 --shuffle --baseline baseline/
                                                                      # the CI gate: exit 0 ok, 1 regressed, 3 inconclusive`, true, addrOptional, open)
	return []*command{run, client, sweep, serverCommand(srv)}
}

// printTurnarounds is a PollerDone (rpcrdma.ServeConfig's, session.EngineConfig's
// ResponderDone) that prints to w, after prefix, the turnarounds of each poller that measured
// any, a line at a time under mu.
func printTurnarounds(w io.Writer, mu *sync.Mutex, prefix string) func(int, datapath.PollerStats) {
	return func(i int, st datapath.PollerStats) {
		if !st.HasTurnaround {
			return
		}
		mu.Lock()
		fmt.Fprintln(w, prefix+turnaroundLine(i, &st.Turnaround))
		mu.Unlock()
	}
}

// turnaroundLine is what a server's poller prints of its turnaround probe when it stops.
func turnaroundLine(poller int, t *datapath.Turnaround) string {
	return fmt.Sprintf("poller %d turnaround (its own time from a completion to the posts it caused, the connections' setup included), µs: %s",
		poller, results.TurnaroundOf(t))
}
