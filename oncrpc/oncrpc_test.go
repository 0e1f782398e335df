package oncrpc

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
)

// sysBody is authsys_parms computed by hand from RFC 5531 appendix A: stamp 0x01020304,
// machinename "abcde" (5 bytes + 3 pad), uid 1000, gid 100, gids {100, 10}.
const sysBody = "01020304 00000005 61626364 65000000 000003e8 00000064 00000002 00000064 0000000a"

func TestCallExactBytes(t *testing.T) {
	var sys SysCred
	sys.Stamp = 0x01020304
	sys.MachineName = []byte("abcde")
	sys.UID, sys.GID = 1000, 100
	sys.NGids = 2
	sys.Gids[0], sys.Gids[1] = 100, 10
	var body [MaxAuthBody]byte
	n, err := sys.Encode(body[:])
	if err != nil {
		t.Fatal(err)
	}
	if want := testutil.Unhex(t, sysBody); !bytes.Equal(body[:n], want) || n != sys.Size() {
		t.Fatalf("AUTH_SYS body\n got %x\nwant %x", body[:n], want)
	}

	tests := []struct {
		name string
		call Call
		want string
	}{
		{
			// The NFSv3 NULL call knfsd answered in the soft-RoCE lab.
			name: "nfs3 null auth_none",
			call: Call{XID: 0x12345678, Prog: 100003, Vers: 3, Proc: 0},
			want: "12345678 00000000 00000002 000186a3 00000003 00000000 00000000 00000000 00000000 00000000",
		},
		{
			name: "auth_sys cred",
			call: Call{XID: 1, Prog: 100003, Vers: 3, Proc: 1,
				Cred: OpaqueAuth{Flavor: FlavorSys, Body: body[:n]}},
			want: "00000001 00000000 00000002 000186a3 00000003 00000001 00000001 00000024 " + sysBody +
				" 00000000 00000000",
		},
		{
			name: "odd verifier padded with zeros",
			call: Call{XID: 2, Prog: 0x2f0c8166, Vers: 1, Proc: 2,
				Verf: OpaqueAuth{Flavor: FlavorShort, Body: []byte{0xaa}}},
			want: "00000002 00000000 00000002 2f0c8166 00000001 00000002 00000000 00000000 00000002 00000001 aa000000",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := testutil.Unhex(t, tt.want)
			if got := tt.call.Size(); got != len(want) {
				t.Errorf("Size = %d, want %d", got, len(want))
			}
			buf := bytes.Repeat([]byte{0xee}, 1024)
			n, err := tt.call.Encode(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:n], want) {
				t.Fatalf("encode\n got %x\nwant %x", buf[:n], want)
			}
			in := append(append([]byte{}, want...), 0xde, 0xad)
			var c Call
			off, err := c.Decode(in)
			if err != nil {
				t.Fatal(err)
			}
			if off != len(want) || !callEqual(c, tt.call) {
				t.Fatalf("decode = %+v at %d, want %+v at %d", c, off, tt.call, len(want))
			}
		})
	}

	var got SysCred
	if err := DecodeSysCred(testutil.Unhex(t, sysBody), &got); err != nil {
		t.Fatal(err)
	}
	if got.Stamp != sys.Stamp || string(got.MachineName) != "abcde" || got.UID != 1000 ||
		got.GID != 100 || got.NGids != 2 || got.Gids != sys.Gids {
		t.Fatalf("DecodeSysCred = %+v", got)
	}
}

func callEqual(a, b Call) bool {
	return a.XID == b.XID && a.Prog == b.Prog && a.Vers == b.Vers && a.Proc == b.Proc &&
		authEqual(a.Cred, b.Cred) && authEqual(a.Verf, b.Verf)
}

func authEqual(a, b OpaqueAuth) bool { return a.Flavor == b.Flavor && bytes.Equal(a.Body, b.Body) }

func replyEqual(a, b Reply) bool {
	va, vb := a.Verf, b.Verf
	a.Verf, b.Verf = OpaqueAuth{}, OpaqueAuth{}
	return reflect.DeepEqual(a, b) && authEqual(va, vb)
}

// The knfsd case below is the RPC part of the reply recorded from the kernel.
func TestKnfsdRecordedReply(t *testing.T) {
	s, err := os.ReadFile("../rpcrdma/wire/testdata/knfsd/null-reply.hex")
	if err != nil {
		t.Fatal(err)
	}
	b := testutil.Unhex(t, strings.Join(strings.Fields(string(s)), ""))
	var r Reply
	if _, err := r.Decode(b[28:]); err != nil || r.XID != 0x12345678 || r.Stat != Accepted || r.Accept != Success {
		t.Fatalf("knfsd's recorded NULL reply decodes to %+v, %v", r, err)
	}
}

func TestReplyExactBytes(t *testing.T) {
	tests := []struct {
		name  string
		reply Reply
		want  string
	}{
		{
			// knfsd's reply to the NFSv3 NULL call: the RPC part of
			// rpcrdma/wire/testdata/knfsd/null-reply.hex (after its 28-byte transport header).
			name:  "knfsd nfs3 null success",
			reply: Reply{XID: 0x12345678, Stat: Accepted, Accept: Success},
			want:  "12345678 00000001 00000000 00000000 00000000 00000000",
		},
		{
			// knfsd's answer to NFS version 2: PROG_MISMATCH low 3 high 4.
			name:  "knfsd nfs2 prog_mismatch",
			reply: Reply{XID: 0x12345678, Stat: Accepted, Accept: ProgMismatch, Low: 3, High: 4},
			want:  "12345678 00000001 00000000 00000000 00000000 00000002 00000003 00000004",
		},
		{
			name:  "prog_unavail",
			reply: Reply{XID: 7, Stat: Accepted, Accept: ProgUnavail},
			want:  "00000007 00000001 00000000 00000000 00000000 00000001",
		},
		{
			name:  "proc_unavail",
			reply: Reply{XID: 7, Stat: Accepted, Accept: ProcUnavail},
			want:  "00000007 00000001 00000000 00000000 00000000 00000003",
		},
		{
			name:  "garbage_args",
			reply: Reply{XID: 7, Stat: Accepted, Accept: GarbageArgs},
			want:  "00000007 00000001 00000000 00000000 00000000 00000004",
		},
		{
			name:  "system_err with verifier",
			reply: Reply{XID: 7, Stat: Accepted, Accept: SystemErr, Verf: OpaqueAuth{Flavor: FlavorShort, Body: []byte{1, 2, 3, 4, 5}}},
			want:  "00000007 00000001 00000000 00000002 00000005 01020304 05000000 00000005",
		},
		{
			name:  "rpc_mismatch",
			reply: Reply{XID: 8, Stat: Denied, Reject: RPCMismatch, Low: 2, High: 2},
			want:  "00000008 00000001 00000001 00000000 00000002 00000002",
		},
		{
			name:  "auth_error tooweak",
			reply: Reply{XID: 9, Stat: Denied, Reject: AuthError, Auth: AuthTooWeak},
			want:  "00000009 00000001 00000001 00000001 00000005",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := testutil.Unhex(t, tt.want)
			if got := tt.reply.Size(); got != len(want) {
				t.Errorf("Size = %d, want %d", got, len(want))
			}
			if tt.reply.Stat == Accepted {
				if got := ReplyHeaderSize(tt.reply.Verf, tt.reply.Accept); got != len(want) {
					t.Errorf("ReplyHeaderSize = %d, want %d", got, len(want))
				}
			}
			buf := bytes.Repeat([]byte{0xee}, 256)
			n, err := tt.reply.Encode(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:n], want) {
				t.Fatalf("encode\n got %x\nwant %x", buf[:n], want)
			}
			in := append(append([]byte{}, want...), 0xca, 0xfe, 0xba, 0xbe)
			r := Reply{Low: 99, Auth: 3} // stale fields must be cleared
			off, err := r.Decode(in)
			if err != nil {
				t.Fatal(err)
			}
			if off != len(want) || !replyEqual(r, tt.reply) {
				t.Fatalf("decode = %+v at %d, want %+v at %d", r, off, tt.reply, len(want))
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	nullCall := "12345678 00000000 00000002 000186a3 00000003 00000000 00000000 00000000 00000000 00000000"
	tests := []struct {
		name  string
		reply bool
		in    string
		kind  error
		field string
		xid   uint32
	}{
		{"empty call", false, "", ErrTruncated, "call header", 0},
		{"call xid only", false, "12345678", ErrTruncated, "call header", 0x12345678},
		{"call is a reply", false, "12345678 00000001 00000000", ErrMsgType, "msg_type", 0x12345678},
		{"call msg_type 2", false, "12345678 00000002 00000002", ErrBadEnum, "msg_type", 0x12345678},
		{"rpcvers 3", false, "12345678 00000000 00000003", ErrRPCVersion, "rpcvers", 0x12345678},
		{"rpcvers 1 rest missing", false, "0000abcd 00000000 00000001", ErrRPCVersion, "rpcvers", 0xabcd},
		{"call no proc", false, "12345678 00000000 00000002 000186a3 00000003", ErrTruncated, "call header", 0x12345678},
		{"cred too long", false, "12345678 00000000 00000002 000186a3 00000003 00000000 00000001 00000191", ErrTooLong, "cred body", 0x12345678},
		{"cred body truncated", false, "12345678 00000000 00000002 000186a3 00000003 00000000 00000001 00000008 00000000", ErrTruncated, "cred", 0x12345678},
		{"cred pad missing", false, "12345678 00000000 00000002 000186a3 00000003 00000000 00000001 00000001 01", ErrTruncated, "cred", 0x12345678},
		{"verf missing", false, nullCall[:len(nullCall)-18], ErrTruncated, "verf", 0x12345678},
		{"verf too long", false, nullCall[:len(nullCall)-8] + "ffffffff", ErrTooLong, "verf body", 0x12345678},
		{"reply is a call", true, "12345678 00000000 00000002", ErrMsgType, "msg_type", 0x12345678},
		{"reply short", true, "12345678 00000001", ErrTruncated, "reply header", 0x12345678},
		{"reply_stat 2", true, "12345678 00000001 00000002", ErrBadEnum, "reply_stat", 0x12345678},
		{"accept_stat 6", true, "12345678 00000001 00000000 00000000 00000000 00000006", ErrBadEnum, "accept_stat", 0x12345678},
		{"accept_stat missing", true, "12345678 00000001 00000000 00000000 00000000", ErrTruncated, "reply header", 0x12345678},
		{"prog_mismatch no high", true, "12345678 00000001 00000000 00000000 00000000 00000002 00000003", ErrTruncated, "reply header", 0x12345678},
		{"reply verf too long", true, "12345678 00000001 00000000 00000000 00000194", ErrTooLong, "verf body", 0x12345678},
		{"reject_stat 2", true, "12345678 00000001 00000001 00000002", ErrBadEnum, "reject_stat", 0x12345678},
		{"rpc_mismatch no high", true, "12345678 00000001 00000001 00000000 00000002", ErrTruncated, "reply header", 0x12345678},
		{"auth_stat 15", true, "12345678 00000001 00000001 00000001 0000000f", ErrBadEnum, "auth_stat", 0x12345678},
		{"auth_stat missing", true, "12345678 00000001 00000001 00000001", ErrTruncated, "reply header", 0x12345678},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testutil.Unhex(t, tt.in)
			var err error
			var xid uint32
			if tt.reply {
				var r Reply
				_, err = r.Decode(in)
				xid = r.XID
			} else {
				var c Call
				_, err = c.Decode(in)
				xid = c.XID
			}
			var e *XDRError
			if !errors.Is(err, tt.kind) || !errors.As(err, &e) || e.Field != tt.field {
				t.Fatalf("err = %v, want %v on %q", err, tt.kind, tt.field)
			}
			if xid != tt.xid {
				t.Errorf("xid = %#x, want %#x", xid, tt.xid)
			}
			if !strings.HasPrefix(err.Error(), "oncrpc: "+tt.field+": ") {
				t.Errorf("message %q does not name the field", err)
			}
		})
	}
}

func TestNonZeroPaddingTolerated(t *testing.T) {
	in := testutil.Unhex(t, "00000002 00000000 00000002 2f0c8166 00000001 00000002 00000000 00000000 00000002 00000001 aaffffff")
	var c Call
	n, err := c.Decode(in)
	if err != nil || n != len(in) || !bytes.Equal(c.Verf.Body, []byte{0xaa}) {
		t.Fatalf("Decode = %d, %v, verf %x", n, err, c.Verf.Body)
	}
	if cap(c.Verf.Body) != 1 {
		t.Errorf("verifier body exposes pad bytes: cap %d", cap(c.Verf.Body))
	}
}

func TestSysCredErrors(t *testing.T) {
	long := SysCred{MachineName: make([]byte, 256)}
	if _, err := long.Encode(make([]byte, 512)); !errors.Is(err, ErrTooLong) {
		t.Errorf("machinename 256: %v", err)
	}
	gids := SysCred{NGids: 17}
	if _, err := gids.Encode(make([]byte, 512)); !errors.Is(err, ErrTooLong) {
		t.Errorf("17 gids: %v", err)
	}
	// 255-byte name + 16 gids is 4+4+256+12+64 = 340 bytes: legal, and fits in 400.
	max := SysCred{MachineName: make([]byte, 255), NGids: 16}
	if n, err := max.Encode(make([]byte, 400)); err != nil || n != 340 {
		t.Errorf("largest body: %d, %v", n, err)
	}
	if _, err := max.Encode(make([]byte, 339)); !errors.Is(err, ErrShortBuffer) {
		t.Errorf("short buffer: %v", err)
	}
	good := testutil.Unhex(t, sysBody)
	for i := range len(good) {
		var c SysCred
		if err := DecodeSysCred(good[:i], &c); !errors.Is(err, ErrTruncated) {
			t.Errorf("truncated at %d: %v", i, err)
		}
	}
	bad := append([]byte{}, good...)
	bad[7] = 0xff // machinename length 255+
	bad[6] = 0x01
	var c SysCred
	if err := DecodeSysCred(bad, &c); !errors.Is(err, ErrTooLong) {
		t.Errorf("machinename length 0x1ff: %v", err)
	}
	bad = append([]byte{}, good...)
	bad[27] = 17
	if err := DecodeSysCred(bad, &c); !errors.Is(err, ErrTooLong) {
		t.Errorf("17 gids: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	c := Call{Cred: OpaqueAuth{Body: make([]byte, 401)}}
	if _, err := c.Encode(make([]byte, 2048)); !errors.Is(err, ErrTooLong) {
		t.Errorf("cred 401: %v", err)
	}
	c = Call{Verf: OpaqueAuth{Body: make([]byte, 401)}}
	if _, err := c.Encode(make([]byte, 2048)); !errors.Is(err, ErrTooLong) {
		t.Errorf("verf 401: %v", err)
	}
	c = Call{Cred: OpaqueAuth{Body: make([]byte, 400)}, Verf: OpaqueAuth{Body: make([]byte, 400)}}
	if n, err := c.Encode(make([]byte, MaxCallHeaderSize)); err != nil || n != MaxCallHeaderSize {
		t.Errorf("largest call header: %d, %v", n, err)
	}
	if _, err := c.Encode(make([]byte, MaxCallHeaderSize-1)); !errors.Is(err, ErrShortBuffer) {
		t.Errorf("short: %v", err)
	}
	big := Reply{Stat: Accepted, Accept: ProgMismatch, Verf: OpaqueAuth{Body: make([]byte, 400)}}
	if n, err := big.Encode(make([]byte, MaxReplyHeaderSize)); err != nil || n != MaxReplyHeaderSize {
		t.Errorf("largest reply header: %d, %v", n, err)
	}
	for _, r := range []Reply{
		{Stat: 2},
		{Stat: Accepted, Accept: 6},
		{Stat: Denied, Reject: 2},
		{Stat: Denied, Reject: AuthError, Auth: 15},
	} {
		if _, err := r.Encode(make([]byte, 64)); !errors.Is(err, ErrBadEnum) {
			t.Errorf("%+v: %v", r, err)
		}
	}
	r := Reply{Stat: Denied, Reject: RPCMismatch}
	if _, err := r.Encode(make([]byte, 23)); !errors.Is(err, ErrShortBuffer) {
		t.Errorf("short reply: %v", err)
	}
}

func TestPeek(t *testing.T) {
	xid, mt, err := Peek(testutil.Unhex(t, "12345678 00000001"))
	if err != nil || xid != 0x12345678 || mt != ReplyMsg {
		t.Errorf("Peek reply = %#x %v %v", xid, mt, err)
	}
	if _, _, err := Peek(testutil.Unhex(t, "12345678 00000003")); !errors.Is(err, ErrBadEnum) {
		t.Errorf("Peek msg_type 3: %v", err)
	}
	if _, _, err := Peek(testutil.Unhex(t, "12345678")); !errors.Is(err, ErrTruncated) {
		t.Errorf("Peek short: %v", err)
	}
}

func randAuth(r *rand.Rand, scratch []byte) OpaqueAuth {
	flavors := []Flavor{FlavorNone, FlavorSys, FlavorShort, FlavorDH, FlavorGSS, 0x12345}
	n := r.IntN(MaxAuthBody + 1)
	if r.IntN(3) == 0 {
		n = 0
	}
	body := scratch[:n]
	for i := range body {
		body[i] = byte(r.Uint32())
	}
	return OpaqueAuth{Flavor: flavors[r.IntN(len(flavors))], Body: body}
}

func TestCallRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var credBuf, verfBuf [MaxAuthBody]byte
	buf := make([]byte, MaxCallHeaderSize+16)
	for range 2000 {
		c := Call{XID: r.Uint32(), Prog: r.Uint32(), Vers: r.Uint32(), Proc: r.Uint32(),
			Cred: randAuth(r, credBuf[:]), Verf: randAuth(r, verfBuf[:])}
		n, err := c.Encode(buf)
		if err != nil {
			t.Fatal(err)
		}
		if n != c.Size() || n != CallHeaderSize(c.Cred, c.Verf) || n%4 != 0 {
			t.Fatalf("n %d, Size %d", n, c.Size())
		}
		var d Call
		off, err := d.Decode(buf[:n+r.IntN(16)])
		if err != nil || off != n || !callEqual(c, d) {
			t.Fatalf("round trip %+v -> %+v (%d, %v)", c, d, off, err)
		}
		// Every strict prefix is truncated, never misread.
		cut := r.IntN(n)
		if _, err := d.Decode(buf[:cut]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix %d of %d: %v", cut, n, err)
		}
	}
}

func TestReplyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var verfBuf [MaxAuthBody]byte
	buf := make([]byte, MaxReplyHeaderSize+16)
	for range 2000 {
		rep := Reply{XID: r.Uint32()}
		if r.IntN(2) == 0 {
			rep.Stat = Accepted
			rep.Verf = randAuth(r, verfBuf[:])
			rep.Accept = AcceptStat(r.IntN(int(SystemErr) + 1))
			if rep.Accept == ProgMismatch {
				rep.Low, rep.High = r.Uint32(), r.Uint32()
			}
		} else {
			rep.Stat = Denied
			rep.Reject = RejectStat(r.IntN(2))
			if rep.Reject == RPCMismatch {
				rep.Low, rep.High = r.Uint32(), r.Uint32()
			} else {
				rep.Auth = AuthStat(r.IntN(int(RPCSecGSSCtxProblem) + 1))
			}
		}
		n, err := rep.Encode(buf)
		if err != nil {
			t.Fatal(err)
		}
		if n != rep.Size() {
			t.Fatalf("n %d, Size %d", n, rep.Size())
		}
		var d Reply
		off, err := d.Decode(buf[:n+r.IntN(16)])
		if err != nil || off != n || !replyEqual(rep, d) {
			t.Fatalf("round trip %+v -> %+v (%d, %v)", rep, d, off, err)
		}
		cut := r.IntN(n)
		if _, err := d.Decode(buf[:cut]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix %d of %d: %v", cut, n, err)
		}
	}
}

func TestSysCredRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var name [MaxMachineName]byte
	buf := make([]byte, MaxAuthBody)
	for range 1000 {
		c := SysCred{Stamp: r.Uint32(), UID: r.Uint32(), GID: r.Uint32(), NGids: r.IntN(MaxGids + 1)}
		c.MachineName = name[:r.IntN(MaxMachineName+1)]
		for i := range c.MachineName {
			c.MachineName[i] = byte('a' + r.IntN(26))
		}
		for i := range c.NGids {
			c.Gids[i] = r.Uint32()
		}
		n, err := c.Encode(buf)
		if err != nil || n != c.Size() {
			t.Fatalf("Encode %d, %v", n, err)
		}
		var d SysCred
		if err := DecodeSysCred(buf[:n], &d); err != nil {
			t.Fatal(err)
		}
		if d.Stamp != c.Stamp || !bytes.Equal(d.MachineName, c.MachineName) || d.UID != c.UID ||
			d.GID != c.GID || d.NGids != c.NGids || d.Gids != c.Gids {
			t.Fatalf("round trip %+v -> %+v", c, d)
		}
	}
}

func TestEnumStrings(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{CallMsg.String(), "CALL"}, {MsgType(9).String(), "msg_type(invalid)"},
		{Denied.String(), "MSG_DENIED"}, {ProgMismatch.String(), "PROG_MISMATCH"},
		{AcceptStat(6).String(), "accept_stat(invalid)"}, {AuthError.String(), "AUTH_ERROR"},
		{RPCSecGSSCtxProblem.String(), "RPCSEC_GSS_CTXPROBLEM"}, {AuthStat(15).String(), "auth_stat(invalid)"},
		{FlavorSys.String(), "AUTH_SYS"}, {Flavor(99).String(), "auth_flavor(other)"},
	} {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
}
