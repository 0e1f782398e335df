// Package soft is the pure-Go datapath provider: a faithful emulation of reliable-connected
// RDMA hardware, in process (the fast default) and between processes over TCP. Everything
// above the datapath (the RPC-over-RDMA transport, the workloads, the CLI's default run) is
// tested for real against it, and the conformance suite in datapath/datapathtest holds it
// to the same rules as the verbs provider.
//
// # Addresses
//
// An address beginning with "inproc:" (InprocPrefix) is in process: Listen("inproc:name")
// binds a name in a process-wide table ("inproc:" alone picks a free one) and
// Connect("inproc:name") reaches it. Any other address is "host:port" over TCP, framed as
// WIRE.md describes.
//
// # Memory
//
// SGE.Addr, MR.Addr and SendWR.RemoteAddr are real virtual addresses: MR.Addr is the
// address of Bytes()[0]. Registered memory must therefore not move (use mmap'd memory, as
// package mempool provides). A key is index<<8 | key byte, as on hardware; a region's lkey
// and rkey are equal, and keys are unique per device. An SGE resolves through its lkey to the
// region and the offset addr-MR.Addr(); a remote access resolves through the rkey to a region
// or a bound window on the peer's device. Both lookups then check the protection domain: the
// region or window must be in the PD of the queue pair using it (Device.AllocPD,
// QPConfig.PD; without one, the device's default PD), else the access fails exactly like a
// bad key. A type 2 window is bound to the queue pair its bind was posted on, and only the
// peer of that connection can use (or, with SEND_WITH_INV, invalidate) its key. In process the "wire" is one copy from the source region to the
// destination region; nothing on the post and poll path allocates.
//
// # Semantics
//
// As RC hardware: in-order execution; a SEND consumes the peer's oldest receive; a SEND
// larger than that receive fails (the receive with StatusLocalLength, the SEND with
// StatusRemoteInvalidRequest, as rxe and mlx5 report it); a SEND that finds no receive
// waits up to Config.RNRTimeout (the RNR retry budget) for one and then fails with
// StatusRNRRetryExceeded; RDMA READ and WRITE need a valid rkey, the range inside the
// region or bound window and the access right, else StatusRemoteAccess; SEND_WITH_INV
// invalidates a bound memory window at the receiver; type 2 windows bind only while free and
// only with a key of their own index (datapath.NextRKey). Any failure breaks the connection:
// the failing work request completes with its status, everything else outstanding on both
// ends with StatusFlushed, both Conns' Err report a *BrokenError (errors.Is ErrBroken), and
// later posts fail with ErrBroken. A send queue slot stays taken until its completion (or,
// for unsignaled work requests, a later signaled one) has been polled, so overposting fails
// with ErrQueueFull exactly where hardware would.
//
// Private data is delivered zero-padded to the CM field sizes, 56 bytes in a connect request
// and 196 in an accept or reject, as RDMA-CM over RoCE (and rxe) delivers it: decoders
// must not take its length as the sender's. A reject carries at most 148 bytes of it, as
// IB's REJ does.
//
// # Concurrency
//
// The two ends of an in-process connection share one mutex, taken by PostSend, PostRecv and
// Close of either end: uncontended except when both ends post at once, and it makes a SEND,
// the receive it consumes and both completions one step. CQs are lock-free bounded
// multi-producer single-consumer rings; CQ.Wait sleeps on a channel signalled after a push.
//
// Over TCP a request the peer leaves unanswered for Config.RetryTimeout (to twice it)
// completes with StatusRetryExceeded, as RC's transport retry counter would; a listener drops
// a peer that has not sent its CONNECT within Config.HandshakeTimeout; and an end that breaks
// the connection because of a fault it found, or is closed with Abort (datapath.Aborter),
// tells the peer why, so the peer's Err reads "peer closed: <reason>" (WIRE.md).
//
// Over TCP each connection has a reader and a writer goroutine (see WIRE.md); completions
// arrive from the reader. A poller that spins on an empty CQ with runtime.Gosched starves
// them: the Go scheduler polls the network only when a P goes idle or from sysmon every
// 10 ms, and round trips grow to milliseconds. Pollers of TCP connections should block in
// CQ.Wait when Poll finds nothing (BenchmarkPingPong/tcp does). In process nothing runs
// behind the poller's back, and spinning is fine.
//
// # Calibrated slowdown
//
// Config.CompletionDelay, Config.Bandwidth and Config.PostCost are a test instrument: a known slowdown, so
// that a regression gate's power can be measured against an effect of known size. A CQ
// stamps each completion with the time it may be polled (when it is first found, or later
// while the provider's one virtual link still carries bytes posted before it, plus the
// delay); Poll stops at the first completion not yet due, and Wait sleeps until it is. The
// instrument adds no cost of its own that the delay would not: a delay-only slowdown reads
// the clock once per Poll that finds a completion, none per push, and Wait spins out holds
// under 20 µs, which a timer's wake-up would lengthen. PostSend puts the
// bytes of SENDs, RDMA WRITEs and RDMA READs on the link. A depth-1 RPC whose two sides share
// the provider (a responder in the same process) waits for two completions, so its round
// trip grows by at least twice the delay. A held completion's effect at depth depends on
// what the poller does meanwhile, and need not grow smoothly with the delay; PostCost spins
// the poster per send queue work request instead, which adds to each side's work per RPC in
// proportion. Off (all zero), it costs one nil check per post, push and poll.
package soft
