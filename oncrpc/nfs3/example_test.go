package nfs3_test

import (
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
)

// A requester reads 8 KiB with the data placed by the server into a Write chunk: the call goes
// inline; the reply's inline part ends with the data's length word, and the data are taken
// from the chunk, the client's registered memory.
func Example_readWriteChunk() {
	fh := nfs3.FH{0x01, 0x00, 0x07, 0x00}
	send := make([]byte, 256)
	call := oncrpc.Call{XID: 7, Prog: nfs3.Program, Vers: nfs3.Version, Proc: nfs3.ProcRead}
	h, _ := call.Encode(send)
	args := nfs3.ReadArgs{FH: fh, Offset: 0, Count: 8192}
	n, _ := args.Encode(send[h:])
	fmt.Printf("call: %d bytes inline\n", h+n)

	// What the responder sent: a reply header, then READ3resok reduced (status NFS3_OK, no
	// attributes, count 8192, eof TRUE, data length 8192), and 8192 bytes by RDMA Write.
	recv := []byte{
		0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // xid, REPLY, accepted, AUTH_NONE, SUCCESS
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 1, 0, 0, 0x20, 0,
	}
	chunk := make([]byte, 8192) // registered memory, the Write chunk's target

	var reply oncrpc.Reply
	off, _ := reply.Decode(recv)
	pos, length, _ := nfs3.DDPData(nfs3.ProcRead, true, recv[off:])
	var res nfs3.ReadRes
	if _, err := res.DecodeReduced(recv[off:], chunk); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("reply: %s, %d bytes (item at body offset %d, %d bytes), eof %v, data in the chunk: %v\n",
		res.Status, res.Count, pos, length, res.EOF, &res.Data[0] == &chunk[0])
	// Output:
	// call: 60 bytes inline
	// reply: NFS3_OK, 8192 bytes (item at body offset 20, 8192 bytes), eof true, data in the chunk: true
}
