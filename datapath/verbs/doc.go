// Package verbs is the datapath provider over libibverbs and librdmacm (real RDMA hardware,
// or soft-RoCE/rdma_rxe and siw): the only package of the module that imports "C".
//
// It is built only with the build tag "verbs" and cgo:
//
//	CGO_ENABLED=1 go build -tags verbs ./...
//
// which needs the headers and libraries of libibverbs-dev and librdmacm-dev (Debian names).
// Without them the package still compiles (as the default CGO_ENABLED=0 build does): New
// returns a Provider whose Devices and Open fail with an error wrapping
// datapath.ErrNotSupported that says how to build it.
//
// Mapping onto verbs: a Device is an rdma_cm verbs context (rdma_get_devices) with a default
// protection domain, and AllocPD gives further ones (ibv_alloc_pd), in which QPConfig.PD
// creates a connection's queue pair; Listen and Connect bind to the device's own IP address, so that the
// rdma_cm ids of its connections always resolve to that context (an address of the netdev
// behind its GIDs: for an iWARP GID, which the kernel reports without one, the interface
// whose MAC address the GID carries); every Conn is an RC queue
// pair created with rdma_create_qp in its PD; private data travels in the CM REQ and
// REP. Work requests are built in C memory that belongs to the Conn and posted as one chain per
// PostSend/PostRecv call; completions are polled in batches by one C call that writes straight
// into the caller's slice and may spin a bounded number of times (Config.PollSpin). A Conn
// switched to deferred posting (datapath.Deferrer) only writes its work requests into that C
// memory and links itself on its CQ's pending list; the next poll of the CQ posts them,
// receives first, in the same C call, so a poller that handles a batch of completions and
// polls again crosses into C once for both. C never keeps a Go pointer: registered memory
// must come from outside the Go heap (mmap).
//
// The turnaround probe (Config.Turnarounds, read with datapath.Turnarounds) times, per CQ,
// a poll's completions to the poll that posts what they caused: the caller's own share of a
// round trip. With -tags pingpong the package also has RunPingPong, a SEND ping-pong whose
// loop runs in C through the same calls and deferred posting (what the datapath costs with
// no Go on the path), a lab instrument for test/vm/pingpong and docs/performance.md.
//
// Where verbs and the datapath contract meet:
//   - Work request IDs must be below 1<<48: the top bits of the verbs wr_id carry the opcode
//     (a completion in error has no valid opcode, and SEND_WITH_INV completes as SEND) and the
//     queue pair's slot, through which polling frees queue entries so that posting beyond
//     QPCaps fails with datapath.ErrQueueFull on every device (rxe accepts more than it
//     reports).
//   - A closed connection's queue pair lingers in the error state until its CQs close (or a
//     second has passed), so that its flushed completions reach the CQ on devices that drop
//     the completions of a destroyed queue pair.
//   - Completion statuses are the device's own: rxe (kernel 6.1) reports a receive too small
//     for a SEND and a SEND with a deregistered lkey as StatusLocalQPOperation, where RC
//     hardware says StatusLocalLength and StatusLocalProtection.
package verbs
