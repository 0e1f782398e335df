package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
	"github.com/rpcrdma-bench/rpcrdma-bench/fanin/mpi"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"

	"github.com/spf13/pflag"
)

// faninConfig is the "config" object of a fan-in's results file: the client ranks' flags
// and the layout.
type faninConfig struct {
	runConfig
	FanIn faninLayout `json:"fanin"`
}

type faninLayout struct {
	Ranks       int   `json:"ranks"`
	ServerRanks []int `json:"server_ranks,omitempty"`
	Pairs       bool  `json:"pairs,omitempty"`
}

// faninCommand is one rank of a measurement launched by mpirun: a command of its own, not
// client flags, because a rank learns only at run time whether it serves or measures (the
// logic is package fanin's).
func faninCommand() *command {
	return &command{
		name:    "fanin",
		summary: "One rank under mpirun: client ranks measure server ranks together, rank 0 merges",
		usage:   "[--server-ranks LIST | --pairs] [workload flags]   (under mpirun; build with -tags mpi)",
		examples: `  mpirun -np 4 rpcrdma-bench fanin --duration 10s --poll event      # rank 0 serves ranks 1-3
  mpirun -np 8 rpcrdma-bench fanin --pairs --out links.json          # rank 2k serves rank 2k+1
  mpirun -np 6 rpcrdma-bench fanin --server-ranks 0,3 --size 64k`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			w := addWorkloadFlags(fs, false)
			var servers []int
			var pairs bool
			listen := "0.0.0.0:0"
			fs.Var(cpusFlag(&servers), "server-ranks", "ranks that serve; the others measure, dealt to them in turn (default 0)")
			fs.BoolVar(&pairs, "pairs", false, "pair the ranks: rank 2k serves rank 2k+1 (many links at once)")
			fs.StringVar(&listen, "listen", listen, "where a server rank listens (port 0 picks one; an unspecified host is advertised as the rank's host name)")
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, "fanin", usageErrorf("unexpected arguments %q", args))
				}
				return runFanIn(e, w, servers, pairs, listen)
			}
		},
	}
}

func runFanIn(e *env, w *workloadFlags, servers []int, pairs bool, listen string) int {
	if !w.fs.Changed("out") {
		w.out = defaultOut("fanin", time.Now())
	}
	c, err := w.config()
	if err != nil {
		return fail(e, "fanin", err)
	}
	if err := checkListen(listen); err != nil {
		return fail(e, "fanin", err)
	}
	switch {
	case w.auto || len(w.judge.baseline) > 0:
		return fail(e, "fanin", usageErrorf("--baseline and --repeat auto judge a run of one process: a fan-in takes --repeat N"))
	case c.Prog == nfs3.Prog:
		return fail(e, "fanin", usageErrorf("--program nfs3: a fan-in drives its own server ranks, which serve the benchmark program only"))
	}
	if err := checkCPUs(c.CPUs); err != nil {
		return fail(e, "fanin", usageError{err.Error()})
	}

	th := w.threshold()
	pts := []workloads.Point{{Threshold: th, Depth: c.Depth, Workload: c}}
	if len(c.Mix) == 1 && len(c.Mix[0].Size.Values) == 1 {
		pts[0].Size = c.Mix[0].Size.Values[0]
	}
	comm, err := mpi.Init()
	if err != nil {
		return fail(e, "fanin", err)
	}
	defer comm.Close()
	if comm.Rank() == 0 {
		if err := checkOut(w.out); err != nil {
			// Before anything is measured; the other ranks wait in the wire-up: end them.
			code := fail(e, "fanin", usageError{err.Error()})
			comm.Abort(code)
			return code
		}
	}
	if w.provider == "" {
		w.provider = "soft"
	}
	cfg := faninConfig{runConfig: runConfig{Command: "fanin", Provider: w.provider, Device: w.device, Threshold: th, Workload: &c, Transport: w.tr,
		Turnarounds: w.turnarounds, Shuffle: w.shuffle},
		FanIn: faninLayout{Ranks: comm.Size(), ServerRanks: servers, Pairs: pairs}}
	if w.repeat > 1 {
		cfg.Repeat = w.repeat
	}
	if w.slowdown.on() {
		cfg.SoftSlowdown = &w.slowdown
	}
	stop := newStopper(e, true)
	defer stop.release()
	out := w.out
	if comm.Rank() != 0 {
		out = ""
	}
	r, err := fanin.Run(stop.ctx, fanin.Config{Comm: comm, ServerRanks: servers, Pairs: pairs, RunConfig: cfg, Out: out, Log: e.stderr,
		Serve: func() (fanin.Server, error) {
			f := &serverFlags{Provider: w.provider, Device: w.device, Listen: listen, Threshold: th, MaxPayload: 1 << 20, Pollers: 1,
				Poll: session.ServerPoll(w.provider), MaxConnections: rpcrdma.DefaultMaxConnections, IdleTimeout: 10 * time.Minute,
				Verify: c.Verify, Transport: w.tr}
			return openServer(f)
		},
		Measure: func(ctx context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
			rw := *w
			rw.addr = addr
			conn, err := openEngine(&rw, pts)
			if err != nil {
				return nil, err
			}
			defer conn.Close()
			o, err := session.Run(ctx, session.Config{Command: "fanin", Points: pts, RunConfig: cfg, Provider: w.provider,
				Connector: wrap(conn), Log: e.stderr, Hurry: stop.hurry, Interval: w.interval, Rounds: w.repeat, Shuffle: w.shuffle, Seed: c.Seed})
			if err != nil {
				return nil, err
			}
			return o.Run, o.Err
		}})
	if comm.Rank() != 0 {
		if err != nil {
			return fail(e, fmt.Sprintf("fanin rank %d", comm.Rank()), err)
		}
		return exitOK
	}
	if r != nil && len(r.Points) > 0 {
		if werr := results.WriteText(e.stdout, r); werr != nil {
			fmt.Fprintf(e.stderr, "rpcrdma-bench fanin: %v\n", werr)
		}
	}
	if out != "" && r != nil {
		fmt.Fprintf(e.stderr, "results written to %s\n", out)
	}
	if err != nil {
		return fail(e, "fanin", fmt.Errorf("failed: %w", err))
	}
	if r.Status.State != results.StateComplete {
		return fail(e, "fanin", fmt.Errorf("%s: %s", r.Status.State, r.Status.Message))
	}
	return exitOK
}
