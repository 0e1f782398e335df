package oncrpc_test

import (
	"errors"
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// A server decodes a call in its receive buffer and answers in its send buffer; a call with
// the wrong rpcvers still yields the xid, so it can be answered with RPC_MISMATCH.
func Example_server() {
	recv := []byte{
		0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0, 0, 0, 0, 2, // xid, CALL, rpcvers 2
		0, 1, 0x86, 0xa3, 0, 0, 0, 2, 0, 0, 0, 0, // NFS, version 2, NULL
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // AUTH_NONE cred and verf
	}
	send := make([]byte, oncrpc.MaxReplyHeaderSize)

	var call oncrpc.Call
	reply := oncrpc.Reply{Stat: oncrpc.Accepted}
	n, err := call.Decode(recv)
	switch {
	case errors.Is(err, oncrpc.ErrRPCVersion):
		reply = oncrpc.Reply{Stat: oncrpc.Denied, Reject: oncrpc.RPCMismatch, Low: 2, High: 2}
	case err != nil:
		return // not a call we can answer: drop it
	case call.Prog == 100003 && call.Vers != 3:
		reply.Accept, reply.Low, reply.High = oncrpc.ProgMismatch, 3, 3
	}
	reply.XID = call.XID
	m, _ := reply.Encode(send)
	fmt.Printf("args at %d; reply %s %s: % x\n", n, reply.Stat, reply.Accept, send[:m])
	// Output: args at 40; reply MSG_ACCEPTED PROG_MISMATCH: 12 34 56 78 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00 03 00 00 00 03
}
