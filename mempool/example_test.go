//go:build linux

package mempool_test

import (
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/mempool"
)

// One region per poller, laid out for RPC-over-RDMA connections with 32 credits: send
// buffers sized to the 4 KiB inline threshold, receive buffers sized to the advertised
// receive size, and 1 MiB payload buffers for chunks. The device is nil here (unregistered);
// a real caller passes the datapath.Device the connections use.
func Example() {
	const credits = 32
	r, err := mempool.New(nil, mempool.Config{
		HugePages: true, // falls back to normal pages (and says so) where none are reserved
		Pools: []mempool.PoolConfig{
			{Name: "send", Size: 4096, Count: credits},
			{Name: "recv", Size: 4096, Count: credits},
			{Name: "payload", Size: 1 << 20, Count: 8},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	send := r.Pool("send")
	b := send.Get()
	n := copy(b.Bytes(), "an RPC-over-RDMA header and inline data")
	wr := datapath.SendWR{
		ID:  uint64(b.Index()), // the completion names the buffer
		Op:  datapath.OpSend,
		SGL: []datapath.SGE{b.SGE(n)},
	}
	// ... conn.PostSend; later, on the completion:
	done := r.Buf(uint32(wr.ID))
	fmt.Println(done == b, wr.SGL[0].Length, send.Put(done))
	// Output: true 39 <nil>
}
