package nfs3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// handler answers one call on a fake server's connection; call and args are decoded from the
// connection's first record.
type handler func(t *testing.T, c net.Conn, call *oncrpc.Call, args []byte)

// serve starts a fake RPC server on 127.0.0.1 that reads one call per connection and passes
// it to h. It returns the address; the listener and every connection close at test cleanup.
func serve(t *testing.T, h handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				rec, err := readRecord(c)
				if err != nil {
					t.Errorf("server: %v", err)
					return
				}
				var call oncrpc.Call
				off, err := call.Decode(rec)
				if err != nil {
					t.Errorf("server: %v", err)
					return
				}
				h(t, c, &call, rec[off:])
			})
		}
	})
	return ln.Addr().String()
}

// replyRecord is an accepted SUCCESS reply with body, cut into fragments of at most frag
// bytes (0: one fragment).
func replyRecord(xid uint32, r oncrpc.Reply, body []byte, frag int) []byte {
	r.XID = xid
	msg := make([]byte, r.Size()+len(body))
	n, err := r.Encode(msg)
	if err != nil {
		panic(err)
	}
	copy(msg[n:], body)
	if frag == 0 {
		frag = len(msg)
	}
	var out []byte
	for len(msg) > 0 {
		k := min(frag, len(msg))
		mark := uint32(k)
		if k == len(msg) {
			mark |= lastFragment
		}
		out = append(out, 0, 0, 0, 0)
		put32(out, len(out)-4, mark)
		out = append(out, msg[:k]...)
		msg = msg[k:]
	}
	return out
}

var success = oncrpc.Reply{Stat: oncrpc.Accepted, Accept: oncrpc.Success}

// portmapper answers GETPORT for mountd (TCP, version 3) with port.
func portmapper(port int) handler {
	return func(t *testing.T, c net.Conn, call *oncrpc.Call, args []byte) {
		want := testutil.Unhex(t, "000186a5 00000003 00000006 00000000") // 100005, 3, IPPROTO_TCP, 0
		if call.Prog != pmapProgram || call.Vers != pmapVersion || call.Proc != pmapGetport || !bytes.Equal(args, want) {
			t.Errorf("portmapper: %+v %x", call, args)
		}
		res := make([]byte, 4)
		put32(res, 0, uint32(port))
		c.Write(replyRecord(call.XID, success, res, 0))
	}
}

// mountd checks a MOUNT call for /export and answers it with reply.
func mountd(proc uint32, reply func(xid uint32) []byte) handler {
	return func(t *testing.T, c net.Conn, call *oncrpc.Call, args []byte) {
		var sys oncrpc.SysCred
		if call.Prog != MountProgram || call.Vers != MountVersion || call.Proc != proc ||
			call.Cred.Flavor != oncrpc.FlavorSys || oncrpc.DecodeSysCred(call.Cred.Body, &sys) != nil || sys.UID != 1000 {
			t.Errorf("mountd: %+v", call)
		}
		if !bytes.Equal(args, testutil.Unhex(t, "00000007 2f657870 6f727400")) {
			t.Errorf("mountd: dirpath %x", args)
		}
		c.Write(reply(call.XID))
	}
}

func port(t *testing.T, addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func testConfig(pmap string) *MountConfig {
	return &MountConfig{PortmapAddr: pmap, Cred: &oncrpc.SysCred{MachineName: []byte("client"), UID: 1000, GID: 1000}}
}

func TestMount(t *testing.T) {
	// mountres3_ok: a 4-byte handle, flavors AUTH_SYS and RPCSEC_GSS; 5-byte fragments make
	// the client reassemble.
	ok := testutil.Unhex(t, "00000000 00000004 aabbccdd 00000002 00000001 00000006")
	md := serve(t, mountd(MountProcMnt, func(xid uint32) []byte { return replyRecord(xid, success, ok, 5) }))
	pm := serve(t, portmapper(port(t, md)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fh, flavors, err := testConfig(pm).Mount(ctx, "127.0.0.1", "/export")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fh, fhAABB) || len(flavors) != 2 || flavors[0] != oncrpc.FlavorSys || flavors[1] != oncrpc.FlavorGSS {
		t.Fatalf("fh %x flavors %v", fh, flavors)
	}
}

func TestUnmount(t *testing.T) {
	md := serve(t, mountd(MountProcUmnt, func(xid uint32) []byte { return replyRecord(xid, success, nil, 0) }))
	pm := serve(t, portmapper(port(t, md)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := testConfig(pm).Unmount(ctx, "127.0.0.1", "/export"); err != nil {
		t.Fatal(err)
	}
}

func TestMountErrors(t *testing.T) {
	// A port nobody listens on: listen, note the port, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	raw := func(b []byte) func(uint32) []byte { return func(uint32) []byte { return b } }
	tests := []struct {
		name    string
		pmap    handler // nil: portmapper pointing at the mountd below
		mountd  func(xid uint32) []byte
		want    string // substring of the error
		is      error
		timeout time.Duration
	}{
		{name: "MNT3ERR_ACCES", mountd: func(xid uint32) []byte { return replyRecord(xid, success, testutil.Unhex(t, "0000000d"), 0) },
			want: "mount 127.0.0.1:/export: MNT3ERR_ACCES", is: MountErrAcces},
		{name: "not registered", pmap: portmapper(0), want: "portmapper GETPORT: mountd (program 100005 version 3) is not registered"},
		{name: "denied", mountd: func(xid uint32) []byte {
			return replyRecord(xid, oncrpc.Reply{Stat: oncrpc.Denied, Reject: oncrpc.AuthError, Auth: oncrpc.AuthTooWeak}, nil, 0)
		}, want: "MNT: RPC denied: AUTH_ERROR: AUTH_TOOWEAK"},
		{name: "prog unavail", mountd: func(xid uint32) []byte {
			return replyRecord(xid, oncrpc.Reply{Stat: oncrpc.Accepted, Accept: oncrpc.ProgUnavail}, nil, 0)
		}, want: "MNT: RPC not executed: PROG_UNAVAIL"},
		{name: "wrong xid", mountd: func(xid uint32) []byte { return replyRecord(xid+1, success, testutil.Unhex(t, "0000000d"), 0) },
			want: "MNT: reply: xid"},
		// The record mark promises 100 bytes; 10 come, then the server closes.
		{name: "short fragment", mountd: raw(append(testutil.Unhex(t, "80000064"), make([]byte, 10)...)),
			want: "MNT: read reply: unexpected EOF", is: io.ErrUnexpectedEOF},
		{name: "closed before reply", mountd: raw(nil), want: "MNT: read reply: unexpected EOF"},
		{name: "huge record mark", mountd: raw(testutil.Unhex(t, "ffffffff")), want: "MNT: read reply: record longer than 1 MiB"},
		// Two non-final fragments of 600 KiB: the reassembled record would pass 1 MiB.
		{name: "huge reassembly", mountd: raw(bytes.Repeat(append(testutil.Unhex(t, "00096000"), make([]byte, 600<<10)...), 2)),
			want: "record longer than 1 MiB"},
		// The reply header is whole but mountres3_ok stops inside the handle.
		{name: "truncated result", mountd: func(xid uint32) []byte {
			return replyRecord(xid, success, testutil.Unhex(t, "00000000 00000004 aabb"), 0)
		},
			want: "MNT: result: oncrpc: mountres3: truncated", is: oncrpc.ErrTruncated},
		{name: "truncated reply header", mountd: raw(testutil.Unhex(t, "80000006 00000001 0000")),
			want: "MNT: reply: oncrpc: reply header: truncated", is: oncrpc.ErrTruncated},
		{name: "hang", mountd: nil, timeout: 200 * time.Millisecond, is: context.DeadlineExceeded,
			want: "MNT: context deadline exceeded"},
		{name: "portmapper hangs", pmap: func(t *testing.T, c net.Conn, _ *oncrpc.Call, _ []byte) { io.Copy(io.Discard, c) },
			timeout: 200 * time.Millisecond, is: context.DeadlineExceeded, want: "portmapper GETPORT: context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := serve(t, func(t *testing.T, c net.Conn, call *oncrpc.Call, args []byte) {
				if tt.mountd == nil { // hang: read until the client gives up
					io.Copy(io.Discard, c)
					return
				}
				c.Write(tt.mountd(call.XID))
			})
			h := tt.pmap
			if h == nil {
				h = portmapper(port(t, md))
			}
			pm := serve(t, h)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			_, _, err := testConfig(pm).Mount(ctx, "127.0.0.1", "/export")
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("err = %v, want %q (%v)", err, tt.want, tt.is)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}

	t.Run("portmapper refused", func(t *testing.T) {
		_, _, err := testConfig(closed).Mount(context.Background(), "127.0.0.1", "/export")
		if err == nil || !strings.Contains(err.Error(), "mount 127.0.0.1:/export: portmapper GETPORT: dial tcp "+closed) ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := testConfig(closed).Mount(ctx, "127.0.0.1", "/export")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("path too long", func(t *testing.T) {
		_, _, err := testConfig(closed).Mount(context.Background(), "127.0.0.1", "/"+strings.Repeat("x", MaxPath))
		if !errors.Is(err, oncrpc.ErrTooLong) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestReadRecord(t *testing.T) {
	// Three fragments, one of them empty, reassemble into one record.
	in := testutil.Unhex(t, "00000002 0102 00000000 80000003 030405")
	rec, err := readRecord(bytes.NewReader(in))
	if err != nil || !bytes.Equal(rec, []byte{1, 2, 3, 4, 5}) {
		t.Fatalf("%x %v", rec, err)
	}
	// Exactly 1 MiB with its mark is accepted; one byte more is not.
	for _, c := range []struct {
		n  int
		ok bool
	}{{maxRecord - 4, true}, {maxRecord - 3, false}} {
		in := make([]byte, 4+c.n)
		put32(in, 0, lastFragment|uint32(c.n))
		_, err := readRecord(bytes.NewReader(in))
		if (err == nil) != c.ok {
			t.Errorf("record of %d: %v", c.n, err)
		}
	}
	if _, err := readRecord(bytes.NewReader(nil)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("empty stream: %v", err)
	}
}

// With MountdPort set the portmapper is not asked: one that refuses the query (or is not
// there at all) does not stop the mount.
func TestMountFixedPort(t *testing.T) {
	ok := testutil.Unhex(t, "00000000 00000004 aabbccdd 00000001 00000001")
	md := serve(t, mountd(MountProcMnt, func(xid uint32) []byte { return replyRecord(xid, success, ok, 0) }))
	c := testConfig("127.0.0.1:1")
	c.MountdPort = port(t, md)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fh, _, err := c.Mount(ctx, "127.0.0.1", "/export")
	if err != nil || !bytes.Equal(fh, fhAABB) {
		t.Fatalf("%x %v", fh, err)
	}
}
