// Package workloads says what a benchmark run does and drives it.
//
// A Config is the workload spec: the procedure mix of an RPC program (its procedures with
// weights, or its default preset), call and reply sizes (fixed, a list or a seeded
// distribution), a forced message class or the requester's own choice, queue depth,
// connections, pollers and their CPUs, run length (duration or RPC count) after a discarded
// warm-up, and closed loop or open loop at a target rate. The program is an rpcproto.Program
// the caller always gives (Config.Prog, or Config.Program for a NULL procedure alone): which
// program is measured by default is the command line's choice, so the workloads know none,
// and a Config without one is refused (ErrNoProgram). The whole Config goes into the results
// file, so every field is JSON-serialisable and, the program aside, the zero value means
// documented defaults.
//
// A Driver runs one poller's share of a workload against a Client (the RPC-over-RDMA
// requester, or a fake in tests): it keeps the queue full (closed loop) or follows an
// intended-send schedule (open loop, where latency is measured from the intended send time so
// that a stalled server cannot hide its stall: the coordinated-omission correction), records
// every round trip into the poller's own Recorder and counts classes, procedures and errors.
// Everything a Driver needs is allocated before its loop: no heap allocation per RPC, one
// clock read per poll iteration. Driver.Run stops (drained, marked interrupted) when its
// context is done; Driver.Hurry cuts that drain short.
//
// Run starts one pinned poller goroutine per Config.Pollers, each with its own Client, Driver
// and Recorder, and returns their statistics for the caller to merge. A Sweep expands
// thresholds × sizes × depths into Points, each of which the caller runs on fresh connections,
// and Switches reports where each size changed message class.
//
// The Parse functions turn CLI strings ("64,4k,1m", "null:1,echo:4,source/32k:2", "0,2-3")
// into these types, with errors that name the bad token.
package workloads
