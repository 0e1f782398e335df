// Package transport holds the in-guest acceptance test of the RPC-over-RDMA engine (package
// rpcrdma) over the verbs provider on a real (soft-RoCE) device: the message class matrix of
// rpcrdmatest between the project's requester and responder, in both directions (forward
// calls and RFC 8167 reverse calls), at inline thresholds of 1, 4 and 64 KiB, in both memory
// modes, with payload verification and remote invalidation on. The in-package tests of
// rpcrdma run the same matrix over the soft provider; this one proves it where the RDMA
// operations are the kernel's (rdma_rxe).
//
// It runs inside the soft-RoCE VM (test/vm, make vmtest), where VMTEST_REQUIRE_DEVICE is set;
// elsewhere it skips when no RDMA device can be opened. It prints the matrix as "MATRIX"
// lines, which the host's summary shows.
package transport
