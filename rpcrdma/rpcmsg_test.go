package rpcrdma

import (
	"bytes"
	"reflect"
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

// sameDecode checks that the fixed-shape decoders give what oncrpc's do for b: offset,
// error and every decoded field.
func sameDecode(t *testing.T, b []byte) {
	t.Helper()
	var fc, gc oncrpc.Call
	fo, fe := decodeCall(b, &fc)
	gobuf := append([]byte(nil), b...)
	goff, ge := gc.Decode(gobuf)
	if fo != goff || fe != ge || (fe == nil && !reflect.DeepEqual(fc, gc)) {
		t.Errorf("call % x: fast %d %v %+v, oncrpc %d %v %+v", b, fo, fe, fc, goff, ge, gc)
	}
	var fr, gr oncrpc.Reply
	fo, fe = decodeReply(b, &fr)
	goff, ge = gr.Decode(gobuf)
	if fo != goff || fe != ge || (fe == nil && !reflect.DeepEqual(fr, gr)) {
		t.Errorf("reply % x: fast %d %v %+v, oncrpc %d %v %+v", b, fo, fe, fr, goff, ge, gr)
	}
}

// rpcMsgSeeds are encoded calls and replies of every shape the decoders meet.
func rpcMsgSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	enc := func(n int, err error, b []byte) {
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b[:n])
	}
	for _, c := range []oncrpc.Call{
		{XID: 1, Prog: 400123, Vers: 1, Proc: 1},
		{XID: 2, Prog: 100003, Vers: 3, Cred: oncrpc.OpaqueAuth{Flavor: oncrpc.FlavorSys, Body: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}},
		{XID: 3, Prog: 400123, Vers: 1, Verf: oncrpc.OpaqueAuth{Flavor: 6, Body: []byte{9}}},
	} {
		b := make([]byte, 128)
		n, err := c.Encode(b)
		enc(n+8, err, b) // with arguments after the header
	}
	for _, r := range []oncrpc.Reply{
		{XID: 4, Stat: oncrpc.Accepted, Accept: oncrpc.Success},
		{XID: 5, Stat: oncrpc.Accepted, Accept: oncrpc.ProgMismatch, Low: 1, High: 2},
		{XID: 6, Stat: oncrpc.Denied, Reject: oncrpc.RPCMismatch, Low: 2, High: 2},
		{XID: 7, Stat: oncrpc.Accepted, Verf: oncrpc.OpaqueAuth{Flavor: 1, Body: []byte{1, 2, 3, 4, 5}}},
	} {
		b := make([]byte, 128)
		n, err := r.Encode(b)
		enc(n+4, err, b)
	}
	return seeds
}

// TestRPCMsgDecodeMatchesCodec: on valid messages, every truncation of them and every
// single-byte corruption, the fast decoders agree with oncrpc's.
func TestRPCMsgDecodeMatchesCodec(t *testing.T) {
	for _, seed := range rpcMsgSeeds(t) {
		for n := range len(seed) + 1 {
			sameDecode(t, seed[:n])
		}
		for i := range seed {
			for _, v := range []byte{0, 1, 2, 0xff} {
				b := append([]byte(nil), seed...)
				b[i] = v
				sameDecode(t, b)
			}
		}
	}
}

func FuzzRPCMsgDecode(f *testing.F) {
	for _, seed := range rpcMsgSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameDecode(t, b) })
}
