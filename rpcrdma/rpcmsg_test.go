package rpcrdma

import (
	"bytes"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// TestRPCMsgMatchesCodec: the fixed-shape helpers write the same bytes as oncrpc's codec
// and fall back to it for every other shape.
func TestRPCMsgMatchesCodec(t *testing.T) {
	none := oncrpc.OpaqueAuth{}
	if got, want := callHeaderSize, oncrpc.CallHeaderSize(none, none); got != want {
		t.Fatalf("callHeaderSize %d, oncrpc says %d", got, want)
	}
	if got, want := replyHeaderSize, oncrpc.ReplyHeaderSize(none, oncrpc.Success); got != want {
		t.Fatalf("replyHeaderSize %d, oncrpc says %d", got, want)
	}

	for _, c := range []oncrpc.Call{
		{XID: 0x01020304, Prog: 400123, Vers: 1, Proc: 0},
		{XID: 0xffffffff, Prog: 100003, Vers: 3, Proc: 3},
	} {
		want := make([]byte, 64)
		got := bytes.Repeat([]byte{0xee}, 64) // stale bytes must be overwritten
		n, err := c.Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		if m := putCall(got, &c); m != n || !bytes.Equal(got[:m], want[:n]) {
			t.Errorf("putCall %+v = % x, oncrpc % x", c, got[:m], want[:n])
		}
	}

	for _, r := range []oncrpc.Reply{
		{XID: 7, Stat: oncrpc.Accepted, Accept: oncrpc.Success},
		{XID: 7, Stat: oncrpc.Accepted, Accept: oncrpc.GarbageArgs},
		{XID: 7, Stat: oncrpc.Accepted, Accept: oncrpc.ProcUnavail},
		{XID: 7, Stat: oncrpc.Accepted, Accept: oncrpc.ProgMismatch, Low: 1, High: 1},
		{XID: 7, Stat: oncrpc.Denied, Reject: oncrpc.RPCMismatch, Low: 2, High: 2},
		{XID: 7, Stat: oncrpc.Accepted, Verf: oncrpc.OpaqueAuth{Flavor: oncrpc.FlavorSys, Body: []byte{1, 2, 3, 4}}},
	} {
		want := make([]byte, 64)
		got := bytes.Repeat([]byte{0xee}, 64)
		n, err := r.Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		if m := putReply(got, &r); m != n || !bytes.Equal(got[:m], want[:n]) {
			t.Errorf("putReply %+v = % x, oncrpc % x", r, got[:m], want[:n])
		}
	}
}
