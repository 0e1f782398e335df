package fanin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// Command is one rank of the fanin command: a measuring command's settings as its flags give
// them (Run.Command "fanin"; a single point, or with Run.Sweep a sweep's points, repeated with
// Run.Repeat) and the job's layout. Every client rank runs the same points in the same order,
// each started on all of them at once.
type Command struct {
	Run         *cli.RunConfig
	ServerRanks []int
	Pairs       bool
	// Listen is where a server rank listens (port 0 picks one).
	Listen string
	// Coordinator is the host rank 0's coordinator listens on (Config.Coordinator).
	Coordinator string
	// Open opens the provider the settings name, with the slowdown and probe they ask for.
	Open func(name string, slow cli.SoftSlowdown, turnarounds bool) (datapath.Provider, error)
	// sweep is the sweep Check planned (Run.Sweep).
	sweep *workloads.Sweep
}

// RankFile is the name of rank's own file of an NFS fan-in, name.RANK, so that no two ranks
// write (or read) the same file; rank -1 gives the pattern, name.RANK, for the record.
func RankFile(name string, rank int) string {
	if rank < 0 {
		return name + ".RANK"
	}
	return name + "." + strconv.Itoa(rank)
}

// Record is the "config" object of a fan-in's results file: the client ranks' settings and
// the layout.
type Record struct {
	cli.RunRecord
	FanIn JobRecord `json:"fanin"`
}

// JobRecord is how the job's ranks were laid out.
type JobRecord struct {
	Ranks       int   `json:"ranks"`
	ServerRanks []int `json:"server_ranks,omitempty"`
	Pairs       bool  `json:"pairs,omitempty"`
}

// Check validates the settings before the job wires up, as cli.UsageError where the user
// is at fault, and returns the points every client rank measures, in order. With Run.Sweep
// they are a sweep's (cli.RunConfig.Plan): --thresholds, --sizes (a plain list) and
// --depths are its axes, --mix its one mix.
func (c *Command) Check() ([]workloads.Point, error) {
	w := c.Run
	if w.Sweep {
		if sz := w.Workload.Size; sz.Dist != "" && sz.Dist != "list" {
			return nil, cli.Usagef("--sweep takes --sizes as a list of sizes to sweep, not a %s distribution", sz.Dist)
		}
		if len(w.Workload.Size.Values) > 0 {
			w.Sizes, w.Workload.Size = w.Workload.Size.Values, workloads.Sizes{}
		}
		if w.Mix != "" {
			w.Mixes, w.Mix = []string{w.Mix}, ""
		}
	} else if len(w.Depths) > 0 {
		return nil, cli.Usagef("--depths is a sweep's axis: give --sweep, or --depth for one point")
	}
	base, err := w.Base()
	if err != nil {
		return nil, err
	}
	if _, err := cli.CheckAddr("listen", c.Listen, false); err != nil {
		return nil, err
	}
	if w.Addr != "" {
		if w.Addr, err = cli.CheckAddr("addr", w.Addr, true); err != nil {
			return nil, err
		}
	}
	switch {
	case w.Auto || len(w.Judge.Baseline) > 0:
		return nil, cli.Usagef("--baseline and --repeat auto judge a run of one process: a fan-in takes --repeat N")
	case base.Prog != nil && base.Prog.External && w.Addr == "":
		return nil, cli.Usagef("--program %s needs --addr, the NFS/RDMA server every rank measures (server ranks serve the benchmark program only)", base.Prog.Name)
	case w.Addr != "" && (len(c.ServerRanks) > 0 || c.Pairs):
		return nil, cli.Usagef("--addr: every rank measures that server, so there are no --server-ranks or --pairs")
	}
	if err := cli.CheckCPUs(base.CPUs); err != nil {
		return nil, cli.UsageError{Msg: err.Error()}
	}
	if w.Provider == "" {
		w.Provider = "soft"
	}
	if w.Sweep {
		s, pts, err := w.Plan()
		c.sweep = &s
		return pts, err
	}
	pt := workloads.Point{Threshold: w.Threshold(), Depth: base.Depth, Workload: base}
	if len(base.Mix) == 1 && len(base.Mix[0].Size.Values) == 1 {
		pt.Size = base.Mix[0].Size.Values[0]
	}
	return []workloads.Point{pt}, nil
}

// Record is the results file's "config" object of a job of ranks ranks measuring pts (from
// Check).
func (c *Command) Record(ranks int, pts []workloads.Point) Record {
	w := c.Run
	rec := Record{RunRecord: cli.RunRecord{Command: "fanin", Provider: w.Provider, Device: w.Device, Addr: w.Addr,
		Transport: w.Transport, Turnarounds: w.Turnarounds, Shuffle: w.Shuffle},
		FanIn: JobRecord{Ranks: ranks, ServerRanks: c.ServerRanks, Pairs: c.Pairs}}
	if c.sweep != nil {
		rec.Sweep = c.sweep
	} else {
		workload := pts[0].Workload
		rec.Threshold, rec.Workload = pts[0].Threshold, &workload
	}
	if w.Repeat > 1 {
		rec.Repeat = w.Repeat
	}
	if w.Slowdown.On() {
		rec.SoftSlowdown = &w.Slowdown
	}
	if pts[0].Workload.Prog != nil && pts[0].Workload.Prog.External {
		rec.NFS = &cli.NFSFiles{Export: w.NFS.Export, File: RankFile(w.NFS.File, -1), Scratch: RankFile(w.NFS.Scratch, -1), MountdPort: w.NFS.MountdPort}
	}
	return rec
}

// Report prints rank 0's results r (the table, where the file went) and returns how the run
// failed, from err, Execute's error, and r's status; nil when it completed.
func (c *Command) Report(stdout, stderr io.Writer, r *results.Run, err error) error {
	if r != nil && len(r.Points) > 0 {
		if werr := results.WriteText(stdout, r); werr != nil {
			fmt.Fprintf(stderr, "rpcrdma-bench fanin: %v\n", werr)
		}
		// Beside the table, on its stream: mpirun forwards each stream on its own, so a
		// line on the other one lands anywhere in the table.
		switch c.Run.Out {
		case "":
		case session.Stdout:
			fmt.Fprintln(stderr, "results written to standard output")
		default:
			fmt.Fprintf(stdout, "results written to %s\n", c.Run.Out)
		}
	}
	switch {
	case err != nil:
		return fmt.Errorf("failed: %w", err)
	case r.Status.State != results.StateComplete:
		return fmt.Errorf("%s: %s", r.Status.State, r.Status.Message)
	}
	return nil
}

// Execute runs this rank of the job over comm: a server rank serves, a client rank measures
// pts (from Check) with the others, point by point in lockstep, and rank 0 writes the merged
// results to Run.Out (checked by the caller before) and returns them. hurry, done, skips a
// client's drain. Other ranks return nil results and their own failure.
func (c *Command) Execute(ctx, hurry context.Context, comm Comm, pts []workloads.Point, log io.Writer) (*results.Run, error) {
	w := c.Run
	workload := pts[0].Workload
	rec := c.Record(comm.Size(), pts)
	// Rank 0 writes the merged file; a client rank writes its own only if rank 0 is lost
	// (not to standard output, which the ranks share).
	out, own := w.Out, ""
	if comm.Rank() != 0 {
		out = ""
		if w.Out != "" && w.Out != "-" {
			own = RankFile(w.Out, comm.Rank())
		}
	}
	// The server offers the largest threshold, so that no point's own offer is capped.
	threshold := slices.MaxFunc(pts, func(a, b workloads.Point) int { return a.Threshold - b.Threshold }).Threshold
	return Run(ctx, Config{Comm: comm, ServerRanks: c.ServerRanks, Pairs: c.Pairs, External: w.Addr, RunConfig: rec, Out: out, OwnOut: own,
		Coordinator: c.Coordinator, Log: log,
		Serve: func() (Server, error) {
			p, err := c.Open(w.Provider, cli.SoftSlowdown{}, false) // the slowdown is the clients'
			if err != nil {
				return nil, err
			}
			sc := cli.ServeConfig{Provider: w.Provider, Device: w.Device, Listen: c.Listen, Threshold: threshold,
				MaxPayload: 1 << 20, Pollers: 1, Poll: p.Defaults().ServerPoll, MaxConnections: rpcrdma.DefaultMaxConnections,
				IdleTimeout: 10 * time.Minute, Verify: workload.Verify, Transport: w.Transport}
			r, err := sc.Open(p)
			if err != nil {
				return nil, err // not a nil *Responder in a non-nil Server
			}
			return r, nil
		},
		Measure: func(ctx, lost context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
			p, err := c.Open(w.Provider, w.Slowdown, w.Turnarounds)
			if err != nil {
				return nil, err
			}
			rw := *w
			rw.Addr = addr
			rw.NFS.File, rw.NFS.Scratch = RankFile(w.NFS.File, comm.Rank()), RankFile(w.NFS.Scratch, comm.Rank())
			conn, err := rw.Engine(ctx, p, pts, log)
			if err != nil {
				return nil, err
			}
			defer conn.Close()
			// The drain is skipped on a second signal, or when this rank's server is lost.
			hurry, hasten := context.WithCancel(hurry)
			defer context.AfterFunc(lost, hasten)()
			defer hasten()
			o, err := session.Run(ctx, session.Config{Command: "fanin", Points: pts, RunConfig: rec, Provider: w.Provider,
				Connector: wrap(conn), Log: log, Quiet: w.Quiet, Hurry: hurry, Interval: w.Interval, Rounds: w.Repeat, Shuffle: w.Shuffle, Seed: workload.Seed})
			if err != nil {
				return nil, err
			}
			return o.Run, o.Err
		}})
}
