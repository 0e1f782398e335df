package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/engine"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

func TestTransportFlagsBadValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fakerun", "--memory", "frwr"}, `"frwr" for "--memory" flag: unknown memory mode "frwr" (want preregistered or windows)`},
		{[]string{"fakerun", "--memory", ""}, `unknown memory mode ""`},
		{[]string{"fakerun", "--remote-invalidate"}, "--remote-invalidate needs --memory windows"},
		{[]string{"fakerun", "--memory", "preregistered", "--remote-invalidate"}, "--remote-invalidate needs --memory windows"},
		{[]string{"fakerun", "--memory", "windows", "--done-invalidate"}, "--done-invalidate needs --remote-invalidate"},
		{[]string{"fakerun", "--credits", "-1"}, "--credits -1 out of range"},
		{[]string{"fakerun", "--credits", "8193"}, "--credits 8193 out of range"},
		{[]string{"fakerun", "--credits", "x"}, `"x" for "--credits"`},
		{[]string{"fakerun", "--send-size", "1500"}, `"1500" for "--send-size" flag: inline size 1500 is not a multiple of 1k`},
		{[]string{"fakerun", "--recv-size", "512k"}, `"512k" for "--recv-size"`},
		{[]string{"fakerun", "--recv-size", "0"}, `"0" for "--recv-size"`},
		{[]string{"fakesweep", "--send-size", "4k", "--recv-size", "4k", "--thresholds", "1k,4k"}, "leave --thresholds nothing to vary"},
		{[]string{"fakeserver", "--memory", "mw"}, `"mw" for "--memory"`},
		{[]string{"fakeserver", "--credits", "9000"}, "--credits 9000 out of range"},
		{[]string{"fakeserver", "--send-size", "3"}, `"3" for "--send-size"`},
		{[]string{"fakerun", "--inline-rule", "fedora"}, `"fedora" for "--inline-rule" flag: unknown inline rule "fedora" (want exact or linux)`},
		{[]string{"fakerun", "--turnarounds"}, "--turnarounds needs --provider verbs: the probe is in its completion queues' C code (provider soft has none)"},
		{[]string{"fakesweep", "--provider", "soft", "--turnarounds"}, "--turnarounds needs --provider verbs"},
		{[]string{"fakeserver", "--turnarounds"}, "--turnarounds needs --provider verbs"},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

// The knobs land in the results file's config, not in the points' params: a run differing
// only in them measures the same points.
func TestTransportFlagsInConfig(t *testing.T) {
	dir := t.TempDir()
	read := func(name string, args ...string) (engine.Transport, []results.Params) {
		t.Helper()
		out := filepath.Join(dir, name)
		args = append([]string{"fakerun", "--mix", "sink/64k", "--count", "50", "--warmup", "0", "-q", "--out", out}, args...)
		if code, _, stderr := runMain(t, args...); code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		r, cfg := readRecord(t, out)
		var ps []results.Params
		for _, p := range r.Points {
			ps = append(ps, p.Params)
		}
		return cfg.Transport, ps
	}
	base, bp := read("base.json")
	if base != (engine.Transport{}) {
		t.Fatalf("defaults: %+v", base)
	}
	got, gp := read("set.json", "--memory", "windows", "--remote-invalidate", "--responder-read", "--done-invalidate", "--credits", "8", "--send-size", "1k", "--recv-size", "16k", "--inline-rule", "linux")
	want := engine.Transport{Memory: rpcrdma.MemoryWindows, RemoteInvalidate: true, ResponderRead: true, DoneInvalidate: true, Credits: 8, SendSize: 1024, RecvSize: 16384, InlineRule: rpcrdma.InlineLinux}
	if got != want {
		t.Fatalf("config.transport = %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(bp, gp) {
		t.Fatalf("params differ: %+v vs %+v", bp, gp)
	}
}

// engineRun runs the real engine over soft and returns the only point.
func engineRun(t *testing.T, args ...string) results.Point {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run.json")
	args = append([]string{"run", "--count", "300", "--warmup", "0", "--depth", "4", "-q", "--verify", "--out", out}, args...)
	if code, _, stderr := runMain(t, args...); code != exitOK {
		t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return r.Points[0]
}

// Windows mode binds a window per chunk and invalidates each exactly once: locally, or, with
// remote invalidation, by the reply's Send With Invalidate. Pre-registered mode does neither.
func TestEngineMemoryModes(t *testing.T) {
	// SINK and SOURCE of 64 KiB both have a chunk per RPC (Read chunk, Write chunk); ECHO of
	// 64 KiB two (Position Zero Read chunk, Reply chunk).
	mix := []string{"--mix", "sink/64k,source/64k,echo/64k,null"}
	pre := engineRun(t, mix...)
	if o := pre.Ops; o.BindMW.Count != 0 || o.LocalInv.Count != 0 || o.SendInv.Count != 0 || pre.Negotiated.RemoteInvalidation {
		t.Fatalf("preregistered: ops %+v, negotiated %+v", o, pre.Negotiated)
	}

	win := engineRun(t, append(mix, "--memory", "windows")...)
	o := win.Ops
	if o.BindMW.Count == 0 || o.LocalInv.Count != o.BindMW.Count || o.SendInv.Count != 0 || win.Negotiated.RemoteInvalidation {
		t.Fatalf("windows: ops %+v, negotiated %+v", o, win.Negotiated)
	}
	// At least one window per RPC with data: all but the NULLs.
	if o.BindMW.Count < win.Throughput.RPCs*3/4-20 {
		t.Fatalf("windows: %d binds for %d RPCs", o.BindMW.Count, win.Throughput.RPCs)
	}

	ri := engineRun(t, append(mix, "--memory", "windows", "--remote-invalidate")...)
	o = ri.Ops
	if !ri.Negotiated.RemoteInvalidation || !ri.Negotiated.Local.RemoteInvalidate || o.SendInv.Count == 0 ||
		o.LocalInv.Count+o.SendInv.Count != o.BindMW.Count || o.LocalInv.Count >= o.BindMW.Count {
		t.Fatalf("remote invalidation: ops %+v, negotiated %+v", o, ri.Negotiated)
	}
}

// Responder-provided Read chunks replace the Reply chunk of long ECHO replies: the
// requester pulls them by RDMA Read (and sends RDMA_DONE, a Send more per RPC).
func TestEngineResponderRead(t *testing.T) {
	plain := engineRun(t, "--mix", "echo/64k")
	rr := engineRun(t, "--mix", "echo/64k", "--responder-read")
	n := rr.Throughput.RPCs
	if plain.Ops.Read.Count != 0 || rr.Ops.Read.Count < n || rr.Ops.Send.Count < 2*n {
		t.Fatalf("reads without %d, with %d; sends with %d; for %d RPCs", plain.Ops.Read.Count, rr.Ops.Read.Count, rr.Ops.Send.Count, n)
	}
}

// --done-invalidate: with R on both ends every RDMA_DONE goes by Send With Invalidate of the
// in-process responder's Read chunk window, which then needs no LOCAL_INV of its own.
func TestEngineDoneInvalidate(t *testing.T) {
	args := []string{"--mix", "echo/64k", "--memory", "windows", "--remote-invalidate", "--responder-read"}
	plain := engineRun(t, args...)
	inv := engineRun(t, append(args, "--done-invalidate")...)
	n := inv.Throughput.RPCs
	if plain.PeerOps == nil || inv.PeerOps == nil {
		t.Fatal("no peer_ops from the in-process responder")
	}
	if plain.PeerOps.LocalInv.Count < n || inv.PeerOps.LocalInv.Count != 0 || inv.Ops.Send.Count < 2*n {
		t.Fatalf("responder LOCAL_INVs without --done-invalidate %d, with %d, for %d RPCs; requester ops %+v", plain.PeerOps.LocalInv.Count, inv.PeerOps.LocalInv.Count, n, inv.Ops)
	}
	// The requester's own windows: each invalidated once, locally or by a reply.
	if o := inv.Ops; o.LocalInv.Count+o.SendInv.Count != o.BindMW.Count {
		t.Fatalf("requester ops %+v: local_inv + send_with_inv != bind_mw", o)
	}
}

// --credits sets the credit value requested, which the in-process server grants.
func TestEngineCreditsAndSizes(t *testing.T) {
	p := engineRun(t, "--mix", "echo/64", "--credits", "3", "--send-size", "1k", "--recv-size", "16k")
	n := p.Negotiated
	if n.CreditsRequested != 3 || n.CreditsGranted != 3 || n.InlineSendBytes != 1024 || n.InlineRecvBytes != 16384 {
		t.Fatalf("negotiated %+v", n)
	}
}

// A long ECHO moves its data by RDMA Reads and Writes the responder performs: with the
// responder in this process, the point counts them (peer_ops), where the requester's own
// counts show none.
func TestEnginePeerOps(t *testing.T) {
	p := engineRun(t, "--mix", "echo/64k")
	if p.PeerOps == nil {
		t.Fatal("no peer_ops from the in-process responder")
	}
	o, q := p.Ops, *p.PeerOps
	if o.Read.Count != 0 || o.Write.Count != 0 {
		t.Errorf("the requester posted RDMA Reads/Writes: %+v", o)
	}
	// Every RPC: the call's Position Zero Read chunk read, the reply written to the Reply chunk.
	if q.Read.Count < 300 || q.Write.Count < 300 || q.Read.Bytes < 300*64<<10 || q.Recv.Count != o.Send.Count || q.Send.Count != o.Recv.Count {
		t.Errorf("responder ops %+v, requester %+v", q, o)
	}
}
