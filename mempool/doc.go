// Package mempool provides the registered memory the datapath works in: a Region is one
// mmap'd, pre-faulted (and optionally huge-page backed and mlocked) mapping outside the Go
// heap, registered once with a datapath.Device, and carved into pools of fixed-size buffers.
//
// Memory comes from mmap rather than make because registered memory is handed to the NIC (or
// to C, in the verbs provider) by address: it must never move and the Go garbage collector
// must never see it as Go memory. Registering once up front keeps ibv_reg_mr, the expensive
// kernel call that pins pages, off the hot path.
//
// A Pool is a free list of equally sized buffers owned by exactly one goroutine, normally a
// datapath.Poller: Get and Put take no locks and allocate nothing. Give each poller its own
// pools (for example, per connection: send buffers sized to the inline threshold, receive
// buffers sized to the advertised receive size, payload buffers for chunks); a buffer goes
// back to the pool it came from, on the goroutine that owns that pool.
//
// Buffers are named by a uint32 index, unique within the Region, so a work request id can
// carry it and a completion can be mapped back to its buffer with Region.Buf.
package mempool
