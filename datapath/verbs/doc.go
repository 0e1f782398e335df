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
// Mapping onto verbs: a Device is an rdma_cm verbs context (rdma_get_devices) with one
// protection domain; Listen and Connect bind to the device's own IP address, so that the
// rdma_cm ids of its connections always resolve to that context; every Conn is an RC queue
// pair created with rdma_create_qp on the device's PD; private data travels in the CM REQ and
// REP. Work requests are built in C memory that belongs to the Conn and posted as one chain per
// PostSend/PostRecv call; completions are polled in batches by one C call that writes straight
// into the caller's slice and may spin a bounded number of times (Config.PollSpin). C never
// keeps a Go pointer: registered memory must come from outside the Go heap (mmap).
//
// Deviations from the datapath contract, forced by verbs:
//   - Work request IDs must be below 1<<48: the top bits of the verbs wr_id carry the opcode
//     (a completion in error has no valid opcode, and SEND_WITH_INV completes as SEND) and the
//     queue pair's slot, through which polling frees queue entries so that posting beyond
//     QPCaps fails with datapath.ErrQueueFull on every device (rxe accepts more than it
//     reports).
//   - MW.RKey is the key ibv_alloc_mw returned until the first bind is posted (not 0), so that
//     datapath.NextRKey(mw.RKey()) is always the right key for the next bind.
package verbs
