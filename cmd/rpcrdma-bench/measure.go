package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/internal/completion"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"

	"github.com/spf13/pflag"
)

// newConnector opens the connector a command's flags ask for, for the points it will run
// (so that a server in this process can be sized for all of them), until ctx is done (an
// interrupt); its error is reported as the command's failure.
type newConnector func(ctx context.Context, w *cli.RunConfig, pts []workloads.Point) (session.Connector, error)

// openEngine is the commands' connector: the transport engine over the provider the flags
// name, to --addr or to a responder in this process.
func openEngine(ctx context.Context, w *cli.RunConfig, pts []workloads.Point) (session.Connector, error) {
	p, err := openProvider(w.Provider, w.Slowdown, w.Turnarounds)
	if err != nil {
		return nil, err
	}
	return w.Engine(ctx, p, pts, os.Stderr)
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
			addGateFlags(fs, w)
			switch addr {
			case addrRequired:
				fs.StringVar(&w.Addr, "addr", "", "server address HOST[:PORT], port 20049 (NFS/RDMA) by default (required; see 'rpcrdma-bench server')")
			case addrOptional:
				fs.StringVar(&w.Addr, "addr", "", "server address HOST[:PORT], port 20049 by default (default: a server in this process)")
			}
			block := fs.String("round-block", "", "")
			_ = fs.MarkHidden("round-block") // FIRST:ROUNDS:PROCESS: this process runs a block of rounds for another
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, name, cli.Usagef("unexpected arguments %q", args))
				}
				if addr == addrRequired && w.Addr == "" {
					return fail(e, name, cli.Usagef("--addr is required"))
				}
				w.Command, w.Given = name, given(fs)
				if !w.Given["poll"] {
					w.Workload.Poll = providerDefaults(w.Provider).MeasuringPoll // the responder in this process follows it
				}
				if *block != "" {
					b, err := cli.ParseBlock(*block)
					if err != nil {
						return fail(e, name, cli.Usagef("--round-block: %v", err))
					}
					w.Block = &b
				}
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

func measure(e *env, w *cli.RunConfig, open newConnector) int {
	name := w.Command
	m, err := w.Prepare(e.stdin)
	if err != nil {
		return fail(e, name, mixHint(w, err))
	}
	for _, warn := range m.Warnings {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: warning: %s\n", name, warn)
	}
	var conn session.Connector
	var blocks session.RunBlock
	stop := newStopper(e, true) // an interrupt also ends the set-up: dials, an NFS export's look-ups
	if m.Fresh() {
		// Each block of rounds in a new process of this binary with this command line:
		// the rounds then sample the noise between processes, not only within one.
		dir, err := os.MkdirTemp("", "rpcrdma-bench-rounds-")
		if err != nil {
			stop.release()
			return fail(e, name, fmt.Errorf("rounds in fresh processes: %w", err))
		}
		defer os.RemoveAll(dir)
		blocks = cli.FreshProcesses(selfCommand, e.args, dir, e.stderr)
	} else if conn, err = open(stop.ctx, w, m.Points); err != nil {
		stop.release()
		return fail(e, name, err)
	}
	o, err := m.Run(stop.ctx, stop.hurry, conn, blocks, e.stdout, e.stderr)
	stop.release()
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		return fail(e, name, err)
	}
	code := exitOK
	if !o.Print(e.stdout, e.stderr, name, w.Out) {
		code = exitFailed
	}
	if conn != nil {
		if err := conn.Close(); err != nil {
			fmt.Fprintf(e.stderr, "rpcrdma-bench %s: close: %v\n", name, err)
			code = max(code, exitFailed)
		}
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

// mixHint adds "did you mean" to a --mix error whose mix is a misspelt preset or procedure
// name (nfs_like for nfs-like).
func mixHint(w *cli.RunConfig, err error) error {
	var ue cli.UsageError
	if !errors.As(err, &ue) || !strings.HasPrefix(ue.Error(), "--mix: ") {
		return err
	}
	prog := w.Table()
	var names []string
	for n := range prog.Presets {
		names = append(names, n)
	}
	for _, p := range prog.Procs {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	for _, m := range append([]string{w.Mix}, w.Mixes...) {
		t := strings.ToLower(strings.TrimSpace(m))
		if t == "" || strings.ContainsAny(t, "/:,") || slices.Contains(names, t) {
			continue
		}
		if s := completion.Closest(strings.ReplaceAll(t, "_", "-"), names); s != "" {
			return cli.UsageError{Msg: fmt.Sprintf("%s; did you mean --mix %s?", ue.Error(), s)}
		}
	}
	return err
}

// selfCommand is the command that runs this tool in a new process with args (the rounds of
// --rounds-per-process); tests replace it, their binary being the test's.
var selfCommand = func(args []string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe, args...)
}

// addGateFlags declares the measuring commands' flags of the rounds' processes and of the
// judgement's report files.
func addGateFlags(fs *pflag.FlagSet, w *cli.RunConfig) {
	fs.IntVar(&w.RoundsPerProcess, "rounds-per-process", 1, "with --repeat: run each block of this many rounds in a new process of this tool (its own thread placement, memory and connections), merged into the one results file; 0: every round in this process")
	fs.StringArrayVar(&w.Judge.Reports, "report", nil, "with --baseline: also write the judgement to `FILE`, in the format its name says (.json, .bmf.json Bencher Metric Format, .xml JUnit, .md Markdown, .txt text); repeat the flag for several")
}

// defaultOut is the results file of a command run at t without --out.
func defaultOut(name string, t time.Time) string {
	return "rpcrdma-bench-" + name + "-" + t.UTC().Format("20060102T150405Z") + ".json"
}
