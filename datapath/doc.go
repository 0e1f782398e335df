// Package datapath defines the verbs-shaped contract every RDMA provider implements and
// everything above it (the RPC-over-RDMA transport, the workloads) is written against.
//
// The shapes follow libibverbs and librdmacm closely, so that the cgo provider
// (datapath/verbs) is a thin mapping and the pure-Go provider (datapath/soft) is a faithful
// emulation of reliable-connected (RC) hardware: a Provider opens a Device; a Device registers
// memory (MR), allocates memory windows (MW), creates completion queues (CQ), listens and
// connects with connection private data; a Conn is one RC queue pair on which work requests
// are posted in batches (PostSend, PostRecv) and whose completions are polled in batches into
// caller-owned slices (CQ.Poll).
//
// Nothing here allocates per operation: work requests, scatter/gather lists and completion
// slices belong to the caller and are reused. A work request id is an index into the caller's
// slot table, never a pointer, because the verbs provider hands it to C.
//
// The Poller runs the completion loop the way the design asks: one goroutine locked to its
// OS thread and pinned to a CPU (CPUPicker chooses from the allowed set), polling a CQ in
// batches and handing the completions to a Handler in place, busy-polling or, for comparison,
// blocking in CQ.Wait.
//
// The conformance suite in datapath/datapathtest states the semantics as executable checks;
// every provider passes it.
package datapath
