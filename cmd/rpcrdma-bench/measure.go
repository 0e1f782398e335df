package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"

	"github.com/spf13/pflag"
)

// runConfig is the "config" object of a results file.
type runConfig = session.RunRecord

// newConnector opens the connector a command's flags ask for, for the points it will run
// (so that a server in this process can be sized for all of them); its error is reported as
// the command's failure.
type newConnector func(w *workloadFlags, pts []workloads.Point) (session.Connector, error)

// openEngine is the commands' connector: the transport engine over the provider the flags
// name, to --addr or to a responder in this process.
func openEngine(w *workloadFlags, pts []workloads.Point) (session.Connector, error) {
	p, err := openProvider(w.Provider, w.Slowdown, w.Turnarounds)
	if err != nil {
		return nil, err
	}
	return w.Engine(p, pts, os.Stderr)
}

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
				fs.StringVar(&w.Addr, "addr", "", "server address HOST[:PORT], port 20049 (NFS/RDMA) by default (required; see 'rpcrdma-bench server')")
			case addrOptional:
				fs.StringVar(&w.Addr, "addr", "", "server address HOST[:PORT], port 20049 by default (default: a server in this process)")
			}
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, name, session.Usagef("unexpected arguments %q", args))
				}
				if addr == addrRequired && w.Addr == "" {
					return fail(e, name, session.Usagef("--addr is required"))
				}
				w.Command, w.Given = name, given(fs)
				if !w.Given["out"] {
					// Every measurement is kept unless the user says otherwise: a run is
					// expensive to repeat, and report, compare and plot work from files.
					w.Out = defaultOut(name, time.Now())
				}
				return measure(e, w, open)
			}
		},
	}
}

func measure(e *env, w *workloadFlags, open newConnector) int {
	name := w.Command
	m, err := w.Prepare(e.stdin)
	if err != nil {
		return fail(e, name, err)
	}
	conn, err := open(w, m.Points)
	if err != nil {
		return fail(e, name, err)
	}
	stop := newStopper(e, true)
	o, err := m.Run(stop.ctx, stop.hurry, conn, e.stdout, e.stderr)
	stop.release()
	if err != nil {
		conn.Close()
		return fail(e, name, err)
	}
	code := printOutcome(e, name, w.Out, o)
	if err := conn.Close(); err != nil {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: close: %v\n", name, err)
		code = max(code, exitFailed)
	}
	out := e.stdout
	if w.Out == session.Stdout {
		out = e.stderr
	}
	jc, err := m.Conclude(out, e.stderr, o.Run)
	if err != nil {
		jc = fail(e, name, err)
	}
	if code == exitOK {
		code = jc
	}
	return code
}

// printOutcome prints the table of a session's results (to standard error when the results
// themselves go to standard output) and how it ended, and returns the exit status.
func printOutcome(e *env, name, out string, o *session.Outcome) int {
	code := exitOK
	if o.Run.Status.State != results.StateComplete {
		code = exitFailed
	}
	if o.WriteErr != nil {
		// Never lose a measurement, never claim a write that did not happen.
		code = exitFailed
		if !o.WriteErrLogged {
			fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, o.WriteErr)
		}
		switch {
		case o.Rescued:
			fmt.Fprintf(e.stderr, "results written to %s instead\n", o.Written)
		case o.RescueErr != nil:
			fmt.Fprintf(e.stderr, "results NOT written: the fallback failed too: %v\n", o.RescueErr)
		}
	}
	table := e.stdout
	if out == session.Stdout {
		table = e.stderr
	}
	measured := false
	for _, p := range o.Run.Points {
		measured = measured || p.RTT.Count > 0 || p.Throughput.RPCs > 0
	}
	if measured {
		// A table of nothing would only repeat the failure printed below.
		if werr := results.WriteText(table, o.Run); werr != nil {
			fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, werr)
		}
	}
	switch o.Run.Status.State {
	case results.StateFailed:
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: failed: %s%s\n", name, o.Run.Status.Message, hint(o.Err))
	case results.StateInterrupted:
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: interrupted: %d point(s) kept\n", name, len(o.Run.Points))
	}
	if o.Written != "" && !o.Rescued {
		fmt.Fprintf(e.stderr, "results written to %s\n", o.Written)
	}
	return code
}

// hint is advice for a failure whose cause is commonly a setup mistake, "" for others.
func hint(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused"):
		return "\n  (is 'rpcrdma-bench server' running at that address, on that port, with the same --provider?)"
	}
	var de *datapath.DisconnectError
	if errors.As(err, &de) && de.Reason == "" {
		return "\n  (it gave no reason: on verbs rdma_disconnect carries none; the server's log says why)"
	}
	return ""
}

// defaultOut is the results file of a command run at t without --out.
func defaultOut(name string, t time.Time) string {
	return "rpcrdma-bench-" + name + "-" + t.UTC().Format("20060102T150405Z") + ".json"
}
