package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// runConfig is what the "config" object of a results file holds: everything needed to repeat
// the invocation. Its fields are this program's flags after defaults.
type runConfig struct {
	// Command is the subcommand that wrote the file: run, client or sweep.
	Command  string `json:"command"`
	Provider string `json:"provider"`
	Device   string `json:"device,omitempty"`
	// Addr is the server's address (client) or the in-process listener's (run).
	Addr string `json:"addr,omitempty"`
	// Threshold is the inline threshold a single run offers.
	Threshold int `json:"threshold,omitempty"`
	// Workload is the normalized workload of a single run.
	Workload *workloads.Config `json:"workload,omitempty"`
	// Sweep is the sweep, Points its expansion, of a sweep.
	Sweep *workloads.Sweep `json:"sweep,omitempty"`
	// Transport is the engine's knobs the run set, the same for every point.
	Transport session.Transport `json:"transport"`
	// NFS names the files of --program nfs3.
	NFS *nfsFlags `json:"nfs,omitempty"`
	// Turnarounds says the pollers' turnaround probe was on (--turnarounds).
	Turnarounds bool `json:"turnarounds,omitempty"`
	// Repeat is the rounds of every point (--repeat; absent: one); Shuffle says each
	// round's order was drawn from the workload's seed (--shuffle).
	Repeat  int  `json:"repeat,omitempty"`
	Shuffle bool `json:"shuffle,omitempty"`
	// SoftSlowdown is the soft provider's calibrated slowdown (--soft-delay,
	// --soft-bandwidth), absent when off.
	SoftSlowdown *softSlowdown `json:"soft_slowdown,omitempty"`
	// Auto is the judgement the run made of itself (--baseline, --repeat auto), absent
	// without one.
	Auto *session.AutoRecord `json:"auto,omitempty"`
}

// newConnector opens the connector a command's flags ask for, for the points it will run
// (so that a server in this process can be sized for all of them); its error is reported as
// the command's failure.
type newConnector func(w *workloadFlags, pts []workloads.Point) (session.Connector, error)

// openEngine is the commands' connector: the transport engine over the provider the flags
// name, to --addr or to a responder in this process.
func openEngine(w *workloadFlags, pts []workloads.Point) (session.Connector, error) {
	p, err := lookupProvider(w.provider)
	if err != nil {
		return nil, err
	}
	if p, err = w.slowdown.provider(p); err != nil {
		return nil, err
	}
	if w.turnarounds {
		p = withTurnarounds(p)
	}
	codec, cred, err := programCodec(w, pts)
	if err != nil {
		return nil, err
	}
	cfg := session.EngineConfig{Provider: p, Device: w.device, Addr: w.addr, Verify: w.cfg.Verify,
		Poll: w.cfg.Poll, Transport: w.tr, Codec: codec, Cred: cred, Log: os.Stderr}
	if w.turnarounds {
		// The client's turnarounds go into the results, point by point; the responder's
		// poller serves every point, so its reading covers the whole run and is printed
		// when it stops, as server --turnarounds prints its own.
		cfg.ResponderDone = printTurnarounds(os.Stderr, new(sync.Mutex), "rpcrdma-bench: the responder in this process, all points and warm-ups: ")
	}
	sizeRuntime(p.Name(), cfg.Polls(pts))
	return session.Engine(cfg, pts)
}

// programCodec is the codec of a program the session cannot make by itself, and the
// credential its calls carry: NFS version 3 (nfs3.Target) with the handles of the files the
// workload's procedures name (nil and AUTH_NONE: the benchmark program, or another
// program's NULL).
func programCodec(w *workloadFlags, pts []workloads.Point) (rpcproto.Codec, oncrpc.OpaqueAuth, error) {
	var none oncrpc.OpaqueAuth
	if w.cfg.Prog != nfs3.Prog {
		return nil, none, nil
	}
	if w.addr == "" {
		return nil, none, usageErrorf("--program nfs3 needs --addr: an NFS/RDMA server (the server in this process serves only the benchmark program)")
	}
	t := &nfs3.Target{Addr: w.addr, Export: w.nfs.Export, File: w.nfs.File, Scratch: w.nfs.Scratch,
		Mount: nfs3.MountConfig{MountdPort: w.nfs.MountdPort}}
	if _, _, err := t.ParseExport(); err != nil {
		return nil, none, usageErrorf("--nfs-export %q: want HOST:/PATH", w.nfs.Export)
	}
	return session.NFSCodec(context.Background(), t, pts)
}

// nfsRDMAPort is NFS/RDMA's IANA port (RFC 5666), the server's default: a client's --addr
// HOST goes there.
const nfsRDMAPort = "20049"

// checkAddr checks the HOST:PORT of flag; withDefault supplies nfsRDMAPort when addr names
// no port. It returns the address to use.
func checkAddr(flag, addr string, withDefault bool) (string, error) {
	_, port, err := net.SplitHostPort(addr)
	var ae *net.AddrError
	if withDefault && errors.As(err, &ae) && ae.Err == "missing port in address" {
		addr = net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), nfsRDMAPort)
		_, port, err = net.SplitHostPort(addr)
	}
	if err != nil {
		return "", usageErrorf("--%s %q: want HOST:PORT: %v", flag, addr, unwrapAddr(err))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", usageErrorf("--%s %q: port %s is not a number from 0 to 65535", flag, addr, port)
	}
	return addr, nil
}

// checkListen checks a server's --listen HOST:PORT.
func checkListen(addr string) error {
	_, err := checkAddr("listen", addr, false)
	return err
}

// unwrapAddr is the reason of a *net.AddrError without the address, which the caller names.
func unwrapAddr(err error) string {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return ae.Err
	}
	return err.Error()
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
				fs.StringVar(&w.addr, "addr", "", "server address HOST[:PORT], port 20049 (NFS/RDMA) by default (required; see 'rpcrdma-bench server')")
			case addrOptional:
				fs.StringVar(&w.addr, "addr", "", "server address HOST[:PORT], port 20049 by default (default: a server in this process)")
			}
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, name, usageErrorf("unexpected arguments %q", args))
				}
				if addr == addrRequired && w.addr == "" {
					return fail(e, name, usageErrorf("--addr is required"))
				}
				if w.addr != "" {
					a, err := checkAddr("addr", w.addr, true)
					if err != nil {
						return fail(e, name, err)
					}
					w.addr = a
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
	cfg := &runConfig{Command: name, Provider: w.provider, Device: w.device, Addr: w.addr, Transport: w.tr, Turnarounds: w.turnarounds}
	if w.cfg.Prog == nfs3.Prog {
		cfg.NFS = &w.nfs
	}
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
	if w.shuffle && len(pts) == 1 {
		return fail(e, name, usageErrorf("--shuffle orders the points of a round, and this measurement has one point"))
	}
	if w.repeat > 1 && !w.auto {
		cfg.Repeat = w.repeat
	}
	cfg.Shuffle = w.shuffle
	if w.slowdown.on() {
		cfg.SoftSlowdown = &w.slowdown
	}
	judge, err := planJudgement(e, w, pts)
	if err != nil {
		return fail(e, name, err)
	}
	if judge != nil {
		cfg.Auto = &judge.Record
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
	stop := newStopper(e, true)
	sc := session.Config{Command: name, Points: pts, RunConfig: cfg, Provider: cfg.Provider, Connector: conn,
		Out: w.out, ResultsTo: e.stdout, Log: e.stderr, Interval: w.interval}
	sc.Hurry = stop.hurry
	sc.Rounds, sc.Shuffle, sc.Seed = w.repeat, w.shuffle, w.cfg.Seed
	if judge != nil {
		sc.AfterRound = judge.AfterRound()
	}
	if !w.quiet {
		per, total, started := session.PlannedTime(pts), len(pts)*max(w.repeat, 1), 0
		if w.auto {
			per = 0 // the rounds are not known in advance: no ETA
		}
		sc.Progress = func(label string, lives []*workloads.Live) func() {
			started++
			p := session.NewProgress(e.stderr, label, lives, workloads.Now)
			p.Point, p.After = per, per*time.Duration(max(total-started, 0))
			p.Start()
			return p.End
		}
	}
	o, err := session.Run(stop.ctx, sc)
	stop.release()
	if err != nil {
		conn.Close()
		return fail(e, name, err)
	}
	code := printOutcome(e, name, w.out, o)
	if err := conn.Close(); err != nil {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: close: %v\n", name, err)
		code = max(code, exitFailed)
	}
	te := e
	if w.out == stdio {
		te = &env{stdout: e.stderr, stderr: e.stderr}
	}
	if w.sweep && len(o.Run.Points) > 0 {
		switch {
		case len(cfg.Sweep.Mixes) > 0 && (judge == nil || judge.AgainstBaseline()):
			// A mix has no size axis to switch class along: the question is which
			// threshold suits it.
			fmt.Fprintln(te.stdout)
			if err := results.WriteThresholds(te.stdout, results.BestThresholds([]*results.Run{o.Run}, 0)); err != nil {
				fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, err)
			}
		case len(cfg.Sweep.Mixes) == 0:
			session.WriteSwitches(te.stdout, o.Run)
		}
	}
	if judge != nil && o.Run.Status.State == results.StateComplete {
		// A failed or interrupted run keeps its exit status: its judgement would rest on
		// what it did not measure.
		if jc := printVerdict(e, te.stdout, name, judge, w.auto, o.Run); code == exitOK {
			code = jc
		}
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
	if out == stdio {
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
