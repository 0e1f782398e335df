// Package fanin runs one measurement over many ranks of a job started by a launcher
// (mpirun): server ranks serve, client ranks drive them, every point starts on all client
// ranks at once, and rank 0 writes one results file that merges them.
//
// Roles come from Layout: --server-ranks serve (rank 0 by default) and the client ranks are
// dealt to them, or --pairs makes rank 2k the server of rank 2k+1 (many links measured at
// once).
//
// The launcher's communicator (Comm: MPI through fanin/mpi, or NewLocal in tests) does the
// wire-up only: every rank's host and the server ranks' addresses (Gather), then rank 0's
// coordinator address and the job's secret (Bcast), and the barrier's cost (Barrier). MPI
// collectives have no timeout and a dead rank leaves the others blocked in them (or the
// launcher kills the job), so everything after goes through rank 0's coordinator over one
// TCP connection per rank that stays open:
//
//   - the coordinator listens on the one address the ranks are told and admits a connection
//     only by a hello that carries the job's secret (compared in constant time) and names a
//     rank of the job in its role, read with a small bound and a deadline; any other
//     connection, and a second hello for a rank that joined, is refused and recorded, and
//     the run goes on;
//   - each rank estimates its clock's offset to rank 0's (the quickest of 8 exchanges, as
//     NTP does) and refines it with one exchange before each point;
//   - every client rank runs the same points in the same order (one, or a sweep's with
//     Command's Run.Sweep, in every round of Run.Repeat);
//   - each point starts when every client rank has connected all its pollers (a vote; a
//     rank that cannot connect votes its cause and no rank starts), at an instant rank 0
//     sets a few milliseconds after its verdicts, which each rank waits for on its monotonic
//     clock, for at most the lead and its offset's error bound; each reads its wall clock
//     then: the skew between ranks and their intervals' overlap are reckoned in rank 0's
//     clock, with the error bounds;
//   - both sides send a heartbeat every Config.Heartbeat, and each point has a deadline
//     (its warm-up, duration and drain, and Config.PointGrace);
//   - each client rank reports its session (points with their histograms) at its end;
//   - a rank whose connection ends before it reported has died, one silent for 5
//     heartbeats or past its deadline is given up (ErrGaveUp: the caller ends the job): the
//     coordinator names it (rank, host, cause) and tells the others to stop, which end their
//     point cleanly (drained, marked incomplete) and report what they measured;
//   - a client rank that loses rank 0 before rank 0 has its results writes its own points
//     (Config.OwnOut) with the cause.
//
// Rank 0 merges each point (histograms exactly, with hdrhistogram's Merge, never averaging
// percentiles, classes, procedures and callbacks alike; throughput summed) with the ranks' own points and their fairness
// (results.FanIn), and rewrites its file after every result or failure, so that a job the
// launcher kills keeps what had arrived.
package fanin
