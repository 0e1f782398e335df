package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// connector makes the Clients of each point: the transport engine's requester over a
// provider (and, for run, an in-process responder), or a fake in tests. It is the one place
// the commands below touch the engine.
type connector interface {
	// Device is the opened device's attributes for the results' environment (nil: none).
	Device() *datapath.DeviceInfo
	// Point prepares pt: it returns the Opener each poller calls to connect its share of
	// pt's connections (fresh connections with fresh private data offering pt.Threshold) and a function called once after the point ran, when
	// every Client is closed, reporting what the connections negotiated and the RDMA
	// operations they posted (nil: unknown).
	Point(pt workloads.Point) (workloads.Opener, func() pointReport, error)
	// Close releases the device (and, for run, stops the in-process responder).
	Close() error
}

// pointReport is what a connector learned from a point's connections.
type pointReport struct {
	// Negotiated are the first connection's parameters (all of a point's connections offer
	// the same), nil if none was established.
	Negotiated *results.Negotiated
	// Ops are the RDMA operations of all the point's connections, nil if not counted;
	// PeerOps those of the responder's side of them, nil if not counted.
	Ops, PeerOps *results.Ops
	// PeerOpsInferred: PeerOps were inferred from this side's counters (a responder in
	// another process), not counted by the responder.
	PeerOpsInferred bool
	// SpinningPeers counts pollers of a responder in this process that spin under load
	// (they compete with the measuring pollers for the CPUs).
	SpinningPeers int
}

// newConnector opens the connector a command's flags ask for, for the points it will run
// (so that a server in this process can be sized for all of them); its error is reported as
// the command's failure.
type newConnector func(w *workloadFlags, pts []workloads.Point) (connector, error)

// addrMode is whether a measuring command talks to a server in another process.
type addrMode uint8

const (
	addrNone     addrMode = iota // run: the responder runs in-process
	addrRequired                 // client: --addr names the server
	addrOptional                 // sweep: in-process unless --addr names a server
)

// measureCommand is the body of run, client and sweep: flags → points → a session over the
// connector. sweep selects a sweep's flags; summary, usage and examples are its help.
func measureCommand(name, summary, usage, examples string, sweep bool, addr addrMode, open newConnector) *command {
	return &command{
		name:     name,
		summary:  summary,
		usage:    usage,
		examples: examples + "\n\n" + mixHelp,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			w := addWorkloadFlags(fs, sweep)
			switch addr {
			case addrRequired:
				fs.StringVar(&w.addr, "addr", "", "server address host:port (required; see 'rpcrdma-bench server')")
			case addrOptional:
				fs.StringVar(&w.addr, "addr", "", "server address host:port (default: a server in this process)")
			}
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, name, usageErrorf("unexpected arguments %q", args))
				}
				if addr == addrRequired && w.addr == "" {
					return fail(e, name, usageErrorf("--addr is required"))
				}
				return measure(e, name, w, open)
			}
		},
	}
}

func measure(e *env, name string, w *workloadFlags, open newConnector) int {
	if !w.fs.Changed("out") {
		// Every measurement is kept unless the user says otherwise: a run is expensive to
		// repeat, and report, compare and plot work from files.
		w.out = defaultOut(name, time.Now())
	}
	cfg := &runConfig{Command: name, Provider: w.provider, Device: w.device, Addr: w.addr, Transport: w.tr}
	if cfg.Provider == "" {
		cfg.Provider = "soft"
	}
	var pts []workloads.Point
	if w.sweep {
		s, p, err := w.plan()
		if err != nil {
			return fail(e, name, err)
		}
		cfg.Sweep, pts = &s, p
	} else {
		c, err := w.config()
		if err != nil {
			return fail(e, name, err)
		}
		cfg.Workload, cfg.Threshold = &c, w.threshold()
		size := 0
		if len(c.Mix) == 1 && len(c.Mix[0].Size.Values) == 1 {
			size = c.Mix[0].Size.Values[0]
		}
		pts = []workloads.Point{{Threshold: cfg.Threshold, Size: size, Depth: c.Depth, Workload: c}}
	}
	if err := checkCPUs(w.cfg.CPUs); err != nil {
		return fail(e, name, usageError{err.Error()})
	}
	if err := checkOut(w.out); err != nil {
		// Before anything is measured: a run is expensive to repeat.
		return fail(e, name, usageError{err.Error()})
	}
	conn, err := open(w, pts)
	if err != nil {
		return fail(e, name, err)
	}
	s, err := newSession(e, name, w, cfg, conn.Device())
	if err != nil {
		conn.Close()
		return fail(e, name, err)
	}
	code := s.runPoints(pts, conn.Point)
	if err := conn.Close(); err != nil {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: close: %v\n", name, err)
		code = max(code, exitFailed)
	}
	if w.sweep && len(s.run.Points) > 0 {
		te := e
		if w.out == stdio {
			te = &env{stdout: e.stderr}
		}
		if len(cfg.Sweep.Mixes) > 0 {
			// A mix has no size axis to switch class along: the question is which
			// threshold suits it.
			fmt.Fprintln(te.stdout)
			if err := results.WriteThresholds(te.stdout, results.BestThresholds([]*results.Run{&s.run}, 0)); err != nil {
				fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, err)
			}
		} else {
			printSwitches(te, &s.run)
		}
	}
	return code
}

// defaultOut is the results file of a command run at t without --out.
func defaultOut(name string, t time.Time) string {
	return "rpcrdma-bench-" + name + "-" + t.UTC().Format("20060102T150405Z") + ".json"
}

// printSwitches prints where each size changed message class, per threshold and depth.
func printSwitches(e *env, r *results.Run) {
	sw := switchesOf(r)
	fmt.Fprintln(e.stdout, "\nclass switches (size in (below, at]):")
	if len(sw) == 0 {
		fmt.Fprintln(e.stdout, "  none")
	}
	for _, s := range sw {
		fmt.Fprintf(e.stdout, "  thr %-5s depth %-3d %-7s -> %-7s between %s and %s\n", workloads.FormatSize(s.Threshold), s.Depth,
			s.From, s.To, workloads.FormatSize(s.Below), workloads.FormatSize(s.At))
	}
}
