package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
	"github.com/rpcrdma-bench/rpcrdma-bench/fanin/mpi"

	"github.com/spf13/pflag"
)

// faninCommand is one rank of a measurement launched by mpirun: a command of its own, not
// client flags, because a rank learns only at run time whether it serves or measures.
func faninCommand() *command {
	return &command{
		name:    "fanin",
		summary: "One rank under mpirun: client ranks measure server ranks together, rank 0 merges",
		usage:   "[--server-ranks LIST | --pairs | --addr HOST] [--sweep [--depths LIST]] [workload flags]   (under mpirun; build with -tags mpi)",
		examples: `  mpirun -np 4 rpcrdma-bench fanin --duration 10s                 # rank 0 serves ranks 1-3
  mpirun -np 8 rpcrdma-bench fanin --pairs --out links.json        # rank 2k serves rank 2k+1
  mpirun -np 6 rpcrdma-bench fanin --server-ranks 0,3 --sizes 64k
  mpirun -np 4 rpcrdma-bench fanin --sweep --thresholds 1k,4k --sizes 64,4k --repeat 3
  mpirun -np 4 rpcrdma-bench fanin --provider verbs --addr nfs1 --program nfs3 --mix nfs-read  # 4 clients of knfsd`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			c := &fanin.Command{Run: addWorkloadFlags(fs, false), Listen: "0.0.0.0:0", Open: openProvider}
			fs.Var(cpusFlag(&c.ServerRanks), "server-ranks", "ranks that serve; the others measure, dealt to them in turn (default 0)")
			fs.BoolVar(&c.Pairs, "pairs", false, "pair the ranks: rank 2k serves rank 2k+1 (many links at once)")
			fs.BoolVar(&c.Run.Sweep, "sweep", false, "run a sweep's points in lockstep: --thresholds, --sizes and --depths are its axes, --mix its one mix")
			fs.Var(depthsFlag(&c.Run.Depths), "depths", "with --sweep: queue depths to sweep (default --depth)")
			fs.StringVar(&c.Coordinator, "coordinator", "", "the host name or address rank 0 takes the ranks' connections on (default: loopback when every rank runs on rank 0's host, else the first address of rank 0's host name that is not a loopback)")
			fs.StringVar(&c.Listen, "listen", c.Listen, "where a server rank listens (port 0 picks one; an unspecified host is advertised as the rank's host name)")
			fs.StringVar(&c.Run.Addr, "addr", "", "a server outside the job that every rank measures, HOST[:PORT] (port 20049 by default): an NFS/RDMA server with --program nfs3, each rank on its own files (--nfs-file and --nfs-scratch with .RANK appended)")
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, "fanin", cli.Usagef("unexpected arguments %q", args))
				}
				c.Run.Command, c.Run.Given = "fanin", given(fs)
				if !c.Run.Given["poll"] {
					c.Run.Workload.Poll = providerDefaults(c.Run.Provider).MeasuringPoll
				}
				if !c.Run.Given["out"] {
					c.Run.Out = defaultOut("fanin", time.Now())
				}
				return runFanIn(e, c)
			}
		},
	}
}

func runFanIn(e *env, c *fanin.Command) int {
	pts, err := c.Check()
	if err != nil {
		return fail(e, "fanin", err)
	}
	comm, err := mpi.Init()
	if err != nil {
		return fail(e, "fanin", err)
	}
	defer comm.Close()
	if comm.Rank() == 0 {
		if err := cli.CheckOut(c.Run.Out); err != nil {
			// Before anything is measured; the other ranks wait in the wire-up: end them.
			code := fail(e, "fanin", cli.UsageError{Msg: err.Error()})
			comm.Abort(code)
			return code
		}
	}
	stop := newStopper(e, true)
	defer stop.release()
	r, err := c.Execute(stop.ctx, stop.hurry, comm, pts, e.stderr)
	if comm.Rank() != 0 {
		if err != nil {
			return fail(e, fmt.Sprintf("fanin rank %d", comm.Rank()), err)
		}
		return exitOK
	}
	if rerr := c.Report(e.stdout, e.stderr, r, err); rerr != nil {
		code := fail(e, "fanin", rerr)
		if errors.Is(err, fanin.ErrGaveUp) {
			// A stopped or hung rank would hold the job (and MPI_Finalize) for ever.
			fmt.Fprintf(e.stderr, "rpcrdma-bench fanin: ending the job (MPI_Abort): the rank given up would hold it\n")
			comm.Abort(code)
		}
		return code
	}
	return exitOK
}
