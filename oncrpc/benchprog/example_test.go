package benchprog_test

import (
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// A requester sends SINK with its payload in a Read chunk: the inline part is the call header
// and the reduced arguments; the payload, filled in registered memory, is read by the
// responder, which decodes the reduced arguments with the chunk and verifies the pattern.
func Example_sinkReadChunk() {
	payload := make([]byte, 10000) // registered memory in a real requester
	benchprog.Fill(payload, 0xabcd, 0)

	send := make([]byte, 1024)
	call := oncrpc.Call{XID: 1, Prog: benchprog.Program, Vers: benchprog.Version, Proc: benchprog.ProcSink}
	h, _ := call.Encode(send)
	args := benchprog.SinkArgs{Seed: 0xabcd, Verify: true, Data: payload}
	n, _ := args.EncodeReduced(send[h:])
	position := h + args.ReducedSize()
	fmt.Printf("inline %d bytes, Read chunk at position %d, length %d\n", h+n, position, len(payload))

	// Responder: the Send brought send[:h+n]; RDMA Read brought the chunk.
	var c oncrpc.Call
	off, _ := c.Decode(send[:h+n])
	var got benchprog.SinkArgs
	if _, err := got.DecodeReduced(send[off:h+n], payload); err != nil {
		fmt.Println(err)
		return
	}
	res := benchprog.SinkRes{Count: uint32(len(got.Data)), Check: benchprog.CheckOK}
	if bad := benchprog.Verify(got.Data, got.Seed, 0); bad >= 0 {
		res.Check, res.BadOffset = benchprog.CheckBad, uint32(bad)
	}
	fmt.Println(res.Count, res.Check)
	// Output:
	// inline 56 bytes, Read chunk at position 56, length 10000
	// 10000 CHECK_OK
}
