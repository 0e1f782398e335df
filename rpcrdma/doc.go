// Package rpcrdma is the RPC-over-RDMA version 1 engine (RFC 8166) with RFC 8797
// connection private data, RFC 8167 bidirectional operation and the responder-provided Read
// chunk draft. It runs RPCs over a datapath provider; the bytes of its transport headers
// and private data are package wire's.
//
//   - Conn is one endpoint on one connection, made by Dial (requester) or Accept,
//     AcceptRequest, AcceptOn (responder). Setup exchanges the RFC 8797 private data and
//     sizes the buffers, credits and queues from it (Params says what was negotiated).
//     Submit sends a call without ever blocking (ErrNoCredit: run Progress first);
//     Progress polls the connection's CQ, handles what completed, posts what that caused
//     and hands out finished RPCs as Results. With a CQ shared by many connections
//     (Config.CQ) the poller calls Handle and Idle instead, and the owner collects
//     Results. A Conn belongs to one goroutine: its methods are never called concurrently,
//     and a Result's Data is valid only until the caller's next call into that Conn.
//     Nothing on the per-RPC path takes a lock or allocates.
//   - Mux serves many connections on one shared CQ from one poller goroutine (it is that
//     poller's datapath.Handler). Attach, AcceptOn and Load are safe from any goroutine;
//     once attached, a connection belongs to the poller's goroutine, and MuxConfig.Done
//     runs there when it leaves (broken, idle, or the Mux closed).
//   - Serve accepts connections on a listener and serves the benchmark program on a fixed
//     set of pollers, each a Mux, until its context ends. ServeConfig.Done and PollerDone
//     run on the pollers' goroutines and must not block for long. Requests beyond
//     MaxConnections, or whose setup fails, are refused with the reason in the CM reject
//     (wire.EncodeRejectReason); a requester sees it as a *RejectReasonError.
//
// Errors: a connection that breaks fails every outstanding RPC with its *ConnError; a
// reply that is wrong fails its RPC with a *ReplyError; neither panics, whatever the peer
// sends.
package rpcrdma
