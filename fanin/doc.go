// Package fanin runs one measurement over many ranks of a job started by a launcher
// (mpirun): server ranks serve, client ranks drive them, every point starts on all client
// ranks at once, and rank 0 writes one results file that merges them.
//
// Roles come from Layout: --server-ranks serve (rank 0 by default) and the client ranks are
// dealt to them, or --pairs makes rank 2k the server of rank 2k+1 (many links measured at
// once).
//
// The launcher's communicator (Comm: MPI through fanin/mpi, or NewLocal in tests) does the
// wire-up only: the server ranks' addresses and rank 0's coordinator address (Gather,
// Bcast) and the barrier's cost (Barrier). MPI collectives have no timeout and a dead rank
// leaves the others blocked in them (or the launcher kills the job), so everything after
// goes through rank 0's coordinator over one TCP connection per rank that stays open:
//
//   - each rank estimates its clock's offset to rank 0's once (the quickest of 8 exchanges,
//     as NTP does);
//   - every client rank runs the same points in the same order (one, or a sweep's with
//     Command's Run.Sweep, in every round of Run.Repeat);
//   - each point starts when every client rank has connected all its pollers (a vote; a
//     rank that cannot connect votes its cause and no rank starts), at an instant rank 0
//     sets a few milliseconds after its verdicts, which each rank waits for by its own clock
//     corrected by its offset; each reads its wall clock then: the skew between ranks and
//     their intervals' overlap are reckoned in rank 0's clock;
//   - each client rank reports its session (points with their histograms) at its end;
//   - a rank whose connection ends before it reported has died: the coordinator names it
//     (rank, host, cause) and tells the others to stop, which end their point cleanly
//     (drained, marked incomplete) and report what they measured.
//
// Rank 0 merges each point (histograms exactly, with hdrhistogram's Merge, never averaging
// percentiles; throughput summed) with the ranks' own points and their fairness
// (results.FanIn), and rewrites its file after every result or failure, so that a job the
// launcher kills keeps what had arrived.
package fanin
