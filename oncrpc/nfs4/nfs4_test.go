package nfs4

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/xdrtest"
)

// Hand-built XDR pieces, from RFC 8881 sections 3 and 18.
const (
	sessHex = "00010203 04050607 08090a0b 0c0d0e0f" // sessionid4
	// stateid4: seqid 1, other.
	stateHex = "00000001 0a0b0c0d 0e0f1011 12131415"
	// COMPOUND4args header: empty tag, minorversion 1, one operation.
	hdr1 = "00000000 00000001 00000001 "
)

var (
	sess   = SessionID{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	state  = Stateid{Seqid: 1, Other: [12]byte{0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15}}
	dstate = Stateid{Seqid: 1, Other: [12]byte{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab}}
	verf   = Verifier{1, 2, 3, 4, 5, 6, 7, 8}
)

func TestArgsExactBytes(t *testing.T) {
	tests := []struct {
		name string
		op   func(c *Compound)
		want string
	}{
		// opnum 53; sessionid4; sequenceid 5; slotid 2; highest_slotid 7; cachethis TRUE.
		{"sequence", func(c *Compound) {
			c.Sequence(&SequenceArgs{SessionID: sess, SequenceID: 5, SlotID: 2, HighestSlotID: 7, CacheThis: true})
		}, "00000035 " + sessHex + " 00000005 00000002 00000007 00000001"},
		{"putrootfh", func(c *Compound) { c.PutRootFH() }, "00000018"},
		{"getfh", func(c *Compound) { c.GetFH() }, "0000000a"},
		// nfs_fh4 of 5 bytes: length, data, 3 pad bytes.
		{"putfh", func(c *Compound) { c.PutFH(FH{0xaa, 0xbb, 0xcc, 0xdd, 0xee}) }, "00000016 00000005 aabbccdd ee000000"},
		// component4 "foo", 1 pad byte.
		{"lookup", func(c *Compound) { c.Lookup([]byte("foo")) }, "0000000f 00000003 666f6f00"},
		// bitmap4 of two words: type change size fsid fileid; mode numlinks owner owner_group
		// rawdev space_used time_access time_metadata time_modify (Linux's nfs4_fattr_bitmap).
		{"getattr", func(c *Compound) { c.Getattr(StatAttrs) }, "00000009 00000002 0010011a 0030a23a"},
		// bitmap4 of one word: trailing zero words are not sent.
		{"getattr one word", func(c *Compound) { c.Getattr(NewBitmap(AttrSize)) }, "00000009 00000001 00000010"},
		// seqid 0; share_access READ; share_deny NONE; open_owner4 {clientid, "own"};
		// OPEN4_NOCREATE; CLAIM_NULL "file".
		{"open", func(c *Compound) {
			c.Open(&OpenArgs{ShareAccess: ShareAccessRead, ClientID: 0x0102030405060708, Owner: []byte("own"), Name: []byte("file")})
		}, "00000012 00000000 00000001 00000000 01020304 05060708 00000003 6f776e00 00000000 00000000 00000004 66696c65"},
		// ... OPEN4_CREATE; UNCHECKED4; fattr4 {bitmap4 {0, mode}; attrlist4 <mode 0644>}; CLAIM_NULL "f".
		{"open create", func(c *Compound) {
			c.Open(&OpenArgs{ShareAccess: ShareAccessBoth, ClientID: 1, Owner: []byte("o"), Create: true, Mode: 0o644, Name: []byte("f")})
		}, "00000012 00000000 00000003 00000000 00000000 00000001 00000001 6f000000" +
			" 00000001 00000000 00000002 00000000 00000002 00000004 000001a4 00000000 00000001 66000000"},
		// seqid 0; stateid4.
		{"close", func(c *Compound) { c.Close(&state) }, "00000004 00000000 " + stateHex},
		// stateid4 of the delegation.
		{"delegreturn", func(c *Compound) { c.DelegReturn(&dstate) }, "00000008 00000001 a0a1a2a3 a4a5a6a7 a8a9aaab"},
		// stateid4; offset 0x100000200; count 4096.
		{"read", func(c *Compound) { c.Read(&ReadArgs{Stateid: state, Offset: 0x100000200, Count: 4096}) },
			"00000019 " + stateHex + " 00000001 00000200 00001000"},
		// stateid4; offset 0x2000; FILE_SYNC4; data "hello", 3 pad bytes.
		{"write", func(c *Compound) {
			c.Write(&WriteArgs{Stateid: state, Offset: 0x2000, Stable: FileSync, Data: []byte("hello")})
		}, "00000026 " + stateHex + " 00000000 00002000 00000002 00000005 68656c6c 6f000000"},
		// the reduced form ends with the length word.
		{"write reduced", func(c *Compound) {
			c.WriteReduced(&WriteArgs{Stateid: state, Offset: 0x2000, Stable: Unstable, Data: []byte("hello")})
		}, "00000026 " + stateHex + " 00000000 00002000 00000000 00000005"},
		// offset 0; count 0.
		{"commit", func(c *Compound) { c.Commit(0, 0) }, "00000005 00000000 00000000 00000000"},
		// cookie 7; cookieverf; dircount 512; maxcount 8192; bitmap4 {type, fileid}.
		{"readdir", func(c *Compound) {
			c.Readdir(&ReaddirArgs{Cookie: 7, Verf: Verifier{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}, DirCount: 512, MaxCount: 8192, Attrs: NewBitmap(AttrType, AttrFileID)})
		}, "0000001a 00000000 00000007 11223344 55667788 00000200 00002000 00000001 00100002"},
		// co_verifier; co_ownerid "client"; flags; SP4_NONE; no nfs_impl_id4.
		{"exchange_id", func(c *Compound) {
			c.ExchangeID(&ExchangeIDArgs{Verifier: verf, OwnerID: []byte("client"), Flags: 0x103})
		}, "0000002a 01020304 05060708 00000006 636c6965 6e740000 00000103 00000000 00000000"},
		// ... one nfs_impl_id4 {"kernel.org", "rpcrdma-bench", {1 s, 2 ns}}.
		{"exchange_id impl", func(c *Compound) {
			c.ExchangeID(&ExchangeIDArgs{Verifier: verf, Impl: ImplID{Domain: []byte("kernel.org"), Name: []byte("rpcrdma-bench"), Date: Time{1, 2}}})
		}, "0000002a 01020304 05060708 00000000 00000000 00000000 00000001" +
			" 0000000a 6b65726e 656c2e6f 72670000 0000000d 72706372 646d612d 62656e63 68000000" +
			" 00000000 00000001 00000002"},
		// clientid; sequence 1; CONN_BACK_CHAN; fore {0, 1 MiB+1 KiB twice, 7584, 8, 16,
		// rdma_ird<1> {16}}; back {0, 4096, 4096, 0, 2, 1, rdma_ird<0>}; cb_program;
		// one callback_sec_parms4 AUTH_NONE.
		{"create_session", func(c *Compound) {
			c.CreateSession(&CreateSessionArgs{
				ClientID: 0x1122334455667788, Sequence: 1, Flags: CreateSessionFlagConnBackChan,
				Fore:      ChannelAttrs{MaxRequestSize: 0x100400, MaxResponseSize: 0x100400, MaxResponseSizeCached: 7584, MaxOperations: 8, MaxRequests: 16, HasRdmaIRD: true, RdmaIRD: 16},
				Back:      ChannelAttrs{MaxRequestSize: 4096, MaxResponseSize: 4096, MaxOperations: 2, MaxRequests: 1},
				CBProgram: 0x40000000, SecFlavor: oncrpc.FlavorNone,
			})
		}, "0000002b 11223344 55667788 00000001 00000002" +
			" 00000000 00100400 00100400 00001da0 00000008 00000010 00000001 00000010" +
			" 00000000 00001000 00001000 00000000 00000002 00000001 00000000" +
			" 40000000 00000001 00000000"},
		// ... AUTH_SYS authsys_parms {stamp 1, "vm", uid 0, gid 0, gids<0>}.
		{"create_session auth_sys", func(c *Compound) {
			c.CreateSession(&CreateSessionArgs{ClientID: 1, Sequence: 1, CBProgram: 1, SecFlavor: oncrpc.FlavorSys,
				SysCred: oncrpc.SysCred{Stamp: 1, MachineName: []byte("vm")}})
		}, "0000002b 00000000 00000001 00000001 00000000" +
			" 00000000 00000000 00000000 00000000 00000000 00000000 00000000" +
			" 00000000 00000000 00000000 00000000 00000000 00000000 00000000" +
			" 00000001 00000001 00000001 00000001 00000002 766d0000 00000000 00000000 00000000"},
		{"reclaim_complete", func(c *Compound) { c.ReclaimComplete(false) }, "0000003a 00000000"},
		{"destroy_session", func(c *Compound) { c.DestroySession(&sess) }, "0000002c " + sessHex},
		{"destroy_clientid", func(c *Compound) { c.DestroyClientID(0x1122334455667788) }, "00000039 11223344 55667788"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := testutil.Unhex(t, hdr1+tt.want)
			buf := bytes.Repeat([]byte{0xee}, 256) // pads must be zeroed, not left over
			var c Compound
			c.Start(buf, nil)
			tt.op(&c)
			n, err := c.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:n], want) {
				t.Fatalf("encode\n got %x\nwant %x", buf[:n], want)
			}
			if buf[n] != 0xee {
				t.Errorf("wrote past the encoding")
			}
			c.Start(buf[:n-1], nil)
			tt.op(&c)
			if _, err := c.Finish(); !errors.Is(err, oncrpc.ErrShortBuffer) {
				t.Errorf("encode into %d bytes: %v", n-1, err)
			}
		})
	}
}

// A COMPOUND of several operations with a tag; the reduced WRITE's data position is where the
// stream resumes with the next operation.
func TestCompoundWriteReduced(t *testing.T) {
	buf := make([]byte, 256)
	var c Compound
	c.Start(buf, []byte("tag"))
	c.Sequence(&SequenceArgs{SessionID: sess, SequenceID: 1})
	c.PutFH(FH{0xaa, 0xbb, 0xcc, 0xdd})
	c.WriteReduced(&WriteArgs{Stateid: state, Stable: FileSync, Data: make([]byte, 8192)})
	c.Getattr(NewBitmap(AttrChange))
	n, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	want := testutil.Unhex(t, "00000003 74616700 00000001 00000004"+ // tag "tag"; minorversion 1; 4 ops
		" 00000035 "+sessHex+" 00000001 00000000 00000000 00000000"+ // SEQUENCE
		" 00000016 00000004 aabbccdd"+ // PUTFH
		" 00000026 "+stateHex+" 00000000 00000000 00000002 00002000"+ // WRITE, data length 8192
		" 00000009 00000001 00000008") // GETATTR change
	if !bytes.Equal(buf[:n], want) {
		t.Fatalf("encode\n got %x\nwant %x", buf[:n], want)
	}
	off, l, ok := c.DDP()
	if !ok || off != 16+36+12+36 || l != 8192 {
		t.Fatalf("DDP %d %d %v", off, l, ok)
	}
	if c.Ops() != 4 {
		t.Errorf("Ops %d", c.Ops())
	}
	c.Start(buf, nil)
	c.Write(&WriteArgs{Data: []byte("x")})
	if _, _, ok := c.DDP(); ok {
		t.Errorf("DDP of an inline WRITE")
	}
}

func TestArgsErrors(t *testing.T) {
	long := make([]byte, 2000)
	tests := []struct {
		name  string
		op    func(c *Compound)
		kind  error
		field string
	}{
		{"putfh 129", func(c *Compound) { c.PutFH(long[:129]) }, oncrpc.ErrTooLong, "nfs_fh4"},
		{"lookup 256", func(c *Compound) { c.Lookup(long[:256]) }, oncrpc.ErrTooLong, "component4"},
		{"open owner", func(c *Compound) { c.Open(&OpenArgs{Owner: long[:1025]}) }, oncrpc.ErrTooLong, "open_owner4.owner"},
		{"open name", func(c *Compound) { c.Open(&OpenArgs{Name: long[:256]}) }, oncrpc.ErrTooLong, "component4"},
		{"write stable", func(c *Compound) { c.Write(&WriteArgs{Stable: 3}) }, oncrpc.ErrBadEnum, "stable_how4"},
		{"write reduced stable", func(c *Compound) { c.WriteReduced(&WriteArgs{Stable: 3}) }, oncrpc.ErrBadEnum, "stable_how4"},
		{"exchange_id owner", func(c *Compound) { c.ExchangeID(&ExchangeIDArgs{OwnerID: long[:1025]}) }, oncrpc.ErrTooLong, "co_ownerid"},
		{"exchange_id impl", func(c *Compound) { c.ExchangeID(&ExchangeIDArgs{Impl: ImplID{Name: long[:1025]}}) }, oncrpc.ErrTooLong, "nfs_impl_id4"},
		{"create_session flavor", func(c *Compound) { c.CreateSession(&CreateSessionArgs{SecFlavor: oncrpc.FlavorGSS}) }, oncrpc.ErrBadEnum, "cb_secflavor"},
		{"create_session gids", func(c *Compound) {
			c.CreateSession(&CreateSessionArgs{SecFlavor: oncrpc.FlavorSys, SysCred: oncrpc.SysCred{NGids: 17}})
		}, oncrpc.ErrTooLong, "callback_sec_parms4"},
		// the first failure sticks: a later good operation does not clear it.
		{"sticky", func(c *Compound) { c.PutFH(long[:129]); c.PutRootFH() }, oncrpc.ErrTooLong, "nfs_fh4"},
	}
	buf := make([]byte, 4096)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Compound
			c.Start(buf, nil)
			tt.op(&c)
			_, err := c.Finish()
			checkErr(t, err, tt.kind, tt.field)
		})
	}
	t.Run("tag", func(t *testing.T) {
		var c Compound
		c.Start(buf, long[:MaxTag+1])
		_, err := c.Finish()
		checkErr(t, err, oncrpc.ErrTooLong, "tag")
	})
	t.Run("not started", func(t *testing.T) {
		var c Compound
		c.PutRootFH()
		_, err := c.Finish()
		checkErr(t, err, ErrState, "COMPOUND4args")
		c.Start(buf, nil)
		if _, err := c.Finish(); err != nil {
			t.Fatal(err)
		}
		_, err = c.Finish()
		checkErr(t, err, ErrState, "COMPOUND4args")
	})
	t.Run("too many ops", func(t *testing.T) {
		var c Compound
		c.Start(make([]byte, 8*MaxOps), nil)
		for range MaxOps + 1 {
			c.PutRootFH()
		}
		_, err := c.Finish()
		checkErr(t, err, oncrpc.ErrTooLong, "argarray")
	})
}

func checkErr(t *testing.T, err, kind error, field string) {
	t.Helper()
	var e *oncrpc.XDRError
	if !errors.As(err, &e) || !errors.Is(err, kind) || !strings.Contains(e.Field, field) {
		t.Fatalf("error %v, want %v naming %q", err, kind, field)
	}
}

// Hand-built results (status and ok arm).
const (
	seqResHex = "00000000 " + sessHex + " 00000005 00000002 0000000f 0000000f 00000000"
	// GETATTR of StatAttrs: type REG; change 7; size 4096; fsid 1.2; fileid 0x42; mode 0644;
	// numlinks 1; owner "0"; owner_group "0"; rawdev 0,0; space_used 8192; atime, ctime, mtime.
	fattrHex = "00000002 0010011a 0030a23a 00000078" +
		" 00000001 00000000 00000007 00000000 00001000 00000000 00000001 00000000 00000002" +
		" 00000000 00000042 000001a4 00000001 00000001 30000000 00000001 30000000" +
		" 00000000 00000000 00000000 00002000" +
		" 00000000 5f000000 00000001 00000000 5f000001 00000002 00000000 5f000002 00000003"
	// READDIR4resok: cookieverf; entries "a" (cookie 1, REG, fileid 0x42) and "bc" (cookie
	// 2, DIR, fileid 0x43), each with bitmap4 {type, fileid}; eof TRUE.
	readdirHex = "00000000 11223344 55667788" +
		" 00000001 00000000 00000001 00000001 61000000 00000001 00100002 0000000c 00000001 00000000 00000042" +
		" 00000001 00000000 00000002 00000002 62630000 00000001 00100002 0000000c 00000002 00000000 00000043" +
		" 00000000 00000001"
	openReadDelegHex = "00000000 " + stateHex + " 00000001 00000000 00000001 00000000 00000002 00000004 00000000" +
		" 00000001 00000001 a0a1a2a3 a4a5a6a7 a8a9aaab 00000000 00000000 00000000 00000000 00000000"
)

var wantFattr = Fattr{
	Mask: StatAttrs, Type: TypeReg, Change: 7, Size: 4096, FSID: [2]uint64{1, 2}, FileID: 0x42,
	Mode: 0o644, NumLinks: 1, Owner: []byte("0"), OwnerGroup: []byte("0"), SpaceUsed: 8192,
	Atime: Time{0x5f000000, 1}, Ctime: Time{0x5f000001, 2}, Mtime: Time{0x5f000002, 3},
}

type decodable = xdrtest.Decodable

// resVector is a valid result body and the value it decodes to. The fuzz targets use the
// vectors as seeds.
type resVector struct {
	name string
	in   string
	v    decodable // a fresh value of the type to decode into
	want decodable
}

// pair is the vector's input and the value it decodes into, for xdrtest.
func (r resVector) pair() (string, decodable) { return r.in, r.v }

var resVectors = []resVector{
	{"sequence", seqResHex, &SequenceRes{}, &SequenceRes{SessionID: sess, SequenceID: 5, SlotID: 2, HighestSlotID: 15, TargetHighestSlotID: 15}},
	{"sequence badsession", "00002744", &SequenceRes{}, &SequenceRes{Status: ErrBadSession}},
	// clientid; sequenceid 1; flags USE_NON_PNFS|SUPP_MOVED_REFER; SP4_NONE; server_owner4
	// {0, "vm01"}; scope "vm01"; no impl id.
	{"exchange_id", "00000000 11223344 55667788 00000001 00010001 00000000 00000000 00000000 00000004 766d3031 00000004 766d3031 00000000",
		&ExchangeIDRes{}, &ExchangeIDRes{ClientID: 0x1122334455667788, SequenceID: 1, Flags: 0x10001, ServerMajorID: []byte("vm01"), ServerScope: []byte("vm01")}},
	// SP4_MACH_CRED {enforce <1 word>, allow <0 words>}; server_owner4 {9, ""}; scope "";
	// impl id {"a", "b", {3 s, 4 ns}}.
	{"exchange_id mach_cred impl", "00000000 00000000 00000002 00000003 00000000 00000001 00000001 00000001 00000000 00000000 00000009 00000000 00000000 00000001 00000001 61000000 00000001 62000000 00000000 00000003 00000004",
		&ExchangeIDRes{}, &ExchangeIDRes{ClientID: 2, SequenceID: 3, StateProtect: SP4MachCred, ServerMinorID: 9, ServerMajorID: []byte{}, ServerScope: []byte{}, HasImpl: true, Impl: ImplID{Domain: []byte("a"), Name: []byte("b"), Date: Time{3, 4}}}},
	{"exchange_id clid_inuse", "00002721", &ExchangeIDRes{}, &ExchangeIDRes{Status: ErrClidInUse}},
	// sessionid; sequence 1; flags CONN_BACK_CHAN; fore {0, 1 MiB + 1 KiB, same, 7584, 8,
	// 64, rdma_ird<0>}; back {0, 4096, 4096, 0, 2, 1, rdma_ird<1> {0}}.
	{"create_session", "00000000 " + sessHex + " 00000001 00000002 00000000 00100400 00100400 00001da0 00000008 00000040 00000000 00000000 00001000 00001000 00000000 00000002 00000001 00000001 00000000",
		&CreateSessionRes{}, &CreateSessionRes{SessionID: sess, Sequence: 1, Flags: 2,
			Fore: ChannelAttrs{MaxRequestSize: 0x100400, MaxResponseSize: 0x100400, MaxResponseSizeCached: 7584, MaxOperations: 8, MaxRequests: 64},
			Back: ChannelAttrs{MaxRequestSize: 4096, MaxResponseSize: 4096, MaxOperations: 2, MaxRequests: 1, HasRdmaIRD: true}}},
	{"getfh", "00000000 00000008 01020304 05060708", &GetFHRes{}, &GetFHRes{FH: FH{1, 2, 3, 4, 5, 6, 7, 8}}},
	{"getattr", "00000000 " + fattrHex, &GetattrRes{}, &GetattrRes{Attr: wantFattr}},
	// supported_attrs alone: a bitmap4 {type, size} as the value.
	{"getattr supported", "00000000 00000001 00000001 00000008 00000001 00000012", &GetattrRes{},
		&GetattrRes{Attr: Fattr{Mask: NewBitmap(AttrSupportedAttrs), SupportedAttrs: NewBitmap(AttrType, AttrSize)}}},
	// stateid; change_info4 {atomic, 1, 2}; rflags LOCKTYPE_POSIX; attrset <>; READ
	// delegation {stateid, recall FALSE, nfsace4 {0, 0, 0, ""}}.
	{"open read deleg", openReadDelegHex, &OpenRes{},
		&OpenRes{Stateid: state, Cinfo: ChangeInfo{true, 1, 2}, RFlags: 4, DelegType: DelegRead, DelegStateid: dstate}},
	// ... WRITE delegation {stateid, recall TRUE, NFS_LIMIT_SIZE 65536, nfsace4 "EVERYONE@"}.
	{"open write deleg", "00000000 " + stateHex + " 00000000 00000000 00000001 00000000 00000002 00000000 00000001 00000010" +
		" 00000002 00000001 a0a1a2a3 a4a5a6a7 a8a9aaab 00000001 00000001 00000000 00010000 00000000 00000000 001f01ff 00000009 45564552 594f4e45 40000000",
		&OpenRes{}, &OpenRes{Stateid: state, Cinfo: ChangeInfo{false, 1, 2}, AttrSet: NewBitmap(AttrSize), DelegType: DelegWrite, DelegStateid: dstate, DelegRecall: true}},
	// ... OPEN_DELEGATE_NONE_EXT {WND4_CONTENTION (1), will push TRUE}.
	{"open none_ext contention", "00000000 " + stateHex + " 00000000 00000000 00000001 00000000 00000002 00000000 00000000 00000003 00000001 00000001",
		&OpenRes{}, &OpenRes{Stateid: state, Cinfo: ChangeInfo{false, 1, 2}, DelegType: DelegNoneExt, WhyNoDeleg: WhyContention}},
	// ... OPEN_DELEGATE_NONE_EXT {WND4_CANCELLED (7)}: a void arm, no bool follows.
	{"open none_ext cancelled", "00000000 " + stateHex + " 00000000 00000000 00000001 00000000 00000002 00000000 00000000 00000003 00000007",
		&OpenRes{}, &OpenRes{Stateid: state, Cinfo: ChangeInfo{false, 1, 2}, DelegType: DelegNoneExt, WhyNoDeleg: 7}},
	{"open noent", "00000002", &OpenRes{}, &OpenRes{Status: ErrNoEnt}},
	{"close", "00000000 " + stateHex, &CloseRes{}, &CloseRes{Stateid: state}},
	// eof TRUE; data "hello".
	{"read", "00000000 00000001 00000005 68656c6c 6f000000", &ReadRes{}, &ReadRes{EOF: true, Data: []byte("hello")}},
	{"read io", "00000005", &ReadRes{}, &ReadRes{Status: ErrIO}},
	// count 5; FILE_SYNC4; verifier.
	{"write", "00000000 00000005 00000002 01020304 05060708", &WriteRes{}, &WriteRes{Count: 5, Committed: FileSync, Verf: verf}},
	{"commit", "00000000 01020304 05060708", &CommitRes{}, &CommitRes{Verf: verf}},
	{"readdir", readdirHex, &ReaddirRes{}, nil}, // entries checked in TestReaddir
}

func TestResDecode(t *testing.T) {
	for _, tt := range resVectors {
		if tt.want == nil {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			in := testutil.Unhex(t, tt.in)
			n, err := tt.v.Decode(in)
			if err != nil || n != len(in) {
				t.Fatalf("decode: %d %v", n, err)
			}
			if !reflect.DeepEqual(tt.v, tt.want) {
				t.Fatalf("decoded\n %+v\nwant %+v", tt.v, tt.want)
			}
			for i := 0; i < len(in); i += 4 {
				if _, err := tt.v.Decode(in[:i]); !errors.Is(err, oncrpc.ErrTruncated) {
					t.Fatalf("prefix %d: %v", i, err)
				}
			}
		})
	}
}

func TestReaddir(t *testing.T) {
	var r ReaddirRes
	in := testutil.Unhex(t, readdirHex)
	if n, err := r.Decode(in); err != nil || n != len(in) {
		t.Fatalf("%d %v", n, err)
	}
	if !r.EOF || r.Verf != (Verifier{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}) || r.Entries.Len() != 2 {
		t.Fatalf("%+v", r)
	}
	var e Entry
	var got []string
	for it := r.Entries; it.Next(&e); {
		got = append(got, string(e.Name))
		want := Fattr{Mask: NewBitmap(AttrType, AttrFileID), Type: FileType(e.Cookie), FileID: 0x41 + e.Cookie}
		if !reflect.DeepEqual(e.Attr, want) {
			t.Errorf("entry %q: %+v", e.Name, e.Attr)
		}
	}
	if strings.Join(got, ",") != "a,bc" {
		t.Errorf("entries %v", got)
	}
}

func TestResErrors(t *testing.T) {
	tests := []struct {
		name  string
		v     decodable
		in    string
		kind  error
		field string
	}{
		{"getfh 129", &GetFHRes{}, "00000000 00000081", oncrpc.ErrTooLong, "nfs_fh4"},
		{"write committed", &WriteRes{}, "00000000 00000005 00000003 01020304 05060708", oncrpc.ErrBadEnum, "stable_how4"},
		{"read eof", &ReadRes{}, "00000000 00000002 00000000", oncrpc.ErrBadEnum, "READ4resok.eof"},
		{"open deleg type", &OpenRes{}, "00000000 " + stateHex + " 00000000 00000000 00000001 00000000 00000002 00000000 00000000 00000004", oncrpc.ErrBadEnum, "delegation_type"},
		{"open limitby", &OpenRes{}, "00000000 " + stateHex + " 00000000 00000000 00000001 00000000 00000002 00000000 00000000 00000002 " + stateHex + " 00000000 00000003", oncrpc.ErrBadEnum, "limitby"},
		{"open atomic", &OpenRes{}, "00000000 " + stateHex + " 00000002", oncrpc.ErrBadEnum, "change_info4.atomic"},
		{"exchange_id sp4", &ExchangeIDRes{}, "00000000 00000000 00000001 00000002 00000000 00000003", oncrpc.ErrBadEnum, "eir_state_protect"},
		{"exchange_id impl<2>", &ExchangeIDRes{}, "00000000 00000000 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000002", oncrpc.ErrTooLong, "eir_server_impl_id"},
		{"create_session ird<2>", &CreateSessionRes{}, "00000000 " + sessHex + " 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000002", oncrpc.ErrTooLong, "ca_rdma_ird"},
		// an attribute (acl, 12) the decoder cannot walk.
		{"getattr unknown attr", &GetattrRes{}, "00000000 00000001 00001000 00000000", ErrAttr, "attrmask"},
		{"getattr attr in word 3", &GetattrRes{}, "00000000 00000004 00000000 00000000 00000000 00000001 00000000", ErrAttr, "attrmask"},
		// the list is longer than its attributes.
		{"getattr length", &GetattrRes{}, "00000000 00000001 00000010 0000000c 00000000 00000001 00000000", ErrAttr, "attr_vals: length"},
		// the list is shorter than its attributes.
		{"getattr short list", &GetattrRes{}, "00000000 00000001 00000010 00000004 00000000", oncrpc.ErrTruncated, "attr_vals"},
		{"getattr 9 words", &GetattrRes{}, "00000000 00000009", oncrpc.ErrTooLong, "bitmap4"},
		{"readdir next", &ReaddirRes{}, "00000000 11223344 55667788 00000002", oncrpc.ErrBadEnum, "entry4.nextentry"},
		{"readdir eof", &ReaddirRes{}, "00000000 11223344 55667788 00000000 00000007", oncrpc.ErrBadEnum, "dirlist4.eof"},
		{"sequence trunc", &SequenceRes{}, "00000000 " + sessHex, oncrpc.ErrTruncated, "SEQUENCE4res"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.v.Decode(testutil.Unhex(t, tt.in))
			checkErr(t, err, tt.kind, tt.field)
		})
	}
}

func TestReadReduced(t *testing.T) {
	var r ReadRes
	body := testutil.Unhex(t, "00000000 00000000 00000005")
	for _, chunk := range []string{"hello", "hello\x00\x00\x00"} {
		if n, err := r.DecodeReduced(body, []byte(chunk)); err != nil || n != 12 || string(r.Data) != "hello" || r.EOF {
			t.Fatalf("chunk %q: %d %v %+v", chunk, n, err, r)
		}
	}
	for _, chunk := range []string{"hell", "hello\x00\x00\x00\x00"} {
		_, err := r.DecodeReduced(body, []byte(chunk))
		checkErr(t, err, ErrChunk, "READ4resok.data")
	}
	// a failed READ has no data, and its chunk must be empty.
	if _, err := r.DecodeReduced(testutil.Unhex(t, "00000005"), nil); err != nil || r.Status != ErrIO || r.Data != nil {
		t.Fatalf("%v %+v", err, r)
	}
	_, err := r.DecodeReduced(testutil.Unhex(t, "00000005"), []byte("x"))
	checkErr(t, err, ErrChunk, "READ4resok.data")
}

// A knfsd-shaped reply to SEQUENCE PUTFH READ GETATTR, whole and with the READ data in a
// Write chunk (the stream resumes with GETATTR after the length word).
func TestCompoundRes(t *testing.T) {
	head := "00000000 00000003 74616700 00000004" + // NFS4_OK; tag "tag"; 4 results
		" 00000035 " + seqResHex + " 00000016 00000000 00000019 00000000 00000000 00000005"
	tail := " 00000009 00000000 00000001 00000010 00000008 00000000 00001000" // GETATTR size 4096
	check := func(t *testing.T, r *CompoundRes, n, want int) {
		t.Helper()
		var (
			seq SequenceRes
			rd  ReadRes
			ga  GetattrRes
		)
		if err := r.Sequence(&seq); err != nil || seq.SlotID != 2 {
			t.Fatalf("SEQUENCE %v %+v", err, seq)
		}
		if s, err := r.Op(OpPutFH); err != nil || s != OK {
			t.Fatalf("PUTFH %v %v", s, err)
		}
		if err := r.Read(&rd); err != nil || string(rd.Data) != "hello" {
			t.Fatalf("READ %v %+v", err, rd)
		}
		if err := r.Getattr(&ga); err != nil || ga.Attr.Size != 4096 {
			t.Fatalf("GETATTR %v %+v", err, ga)
		}
		if m, err := r.Done(); err != nil || m != want {
			t.Fatalf("Done %d %v, want %d", m, err, want)
		}
		if string(r.Tag) != "tag" || r.N != 4 || r.Status != OK {
			t.Fatalf("%+v", r)
		}
	}
	t.Run("inline", func(t *testing.T) {
		in := testutil.Unhex(t, head+" 68656c6c 6f000000"+tail)
		var r CompoundRes
		if err := r.Decode(in); err != nil {
			t.Fatal(err)
		}
		check(t, &r, len(in), len(in))
	})
	t.Run("reduced", func(t *testing.T) {
		in := testutil.Unhex(t, head+tail)
		var r CompoundRes
		if err := r.DecodeReduced(in, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		check(t, &r, len(in), len(in))
	})
}

// A COMPOUND whose second operation failed: the array ends there, with the failed status.
func TestCompoundResFailure(t *testing.T) {
	stale := "00000046 00000000 00000002 00000035 " + seqResHex + " 00000016 00000046"
	var r CompoundRes
	in := testutil.Unhex(t, stale)
	if err := r.Decode(in); err != nil {
		t.Fatal(err)
	}
	var seq SequenceRes
	if err := r.Sequence(&seq); err != nil || seq.Status != OK {
		t.Fatalf("SEQUENCE %v %+v", err, seq)
	}
	if s, err := r.Op(OpPutFH); err != nil || s != ErrStale {
		t.Fatalf("PUTFH %v %v", s, err)
	}
	if n, err := r.Done(); err != nil || n != len(in) || r.Status != ErrStale {
		t.Fatalf("Done %d %v %v", n, err, r.Status)
	}

	tests := []struct {
		name  string
		in    string
		ops   func(r *CompoundRes) error
		kind  error
		field string
	}{
		{"result after a failure", "00000046 00000000 00000002 00000016 00000046 00000009 00000000 00000000 00000000",
			func(r *CompoundRes) error { _, err := r.Op(OpPutFH); return err }, ErrOp, "result after a failed op"},
		{"wrong op", "00000000 00000000 00000001 00000018 00000000",
			func(r *CompoundRes) error { _, err := r.Op(OpPutFH); return err }, ErrOp, "PUTFH4res: resop"},
		{"missing", "00000000 00000000 00000001 00000035 " + seqResHex,
			func(r *CompoundRes) error {
				var s SequenceRes
				if err := r.Sequence(&s); err != nil {
					return err
				}
				var g GetFHRes
				return r.GetFH(&g)
			}, ErrOp, "GETFH4res: missing"},
		{"left over", "00000000 00000000 00000002 00000018 00000000 0000000a 00000000 00000000",
			func(r *CompoundRes) error {
				if _, err := r.Op(OpPutRootFH); err != nil {
					return err
				}
				_, err := r.Done()
				return err
			}, ErrOp, "left undecoded"},
		{"truncated in READ", "00000000 00000000 00000001 00000019 00000000 00000000 00000008 0102",
			func(r *CompoundRes) error { var s ReadRes; return r.Read(&s) }, oncrpc.ErrTruncated, "READ4res"},
		{"count", "00000000 00000000 00000401", nil, oncrpc.ErrTooLong, "resarray"},
		// an operation this package has no name for is named by its XDR type.
		{"unnamed op", "00000000 00000000 00000001 00000063 00000000",
			func(r *CompoundRes) error { _, err := r.Op(100); return err }, ErrOp, "nfs_resop4: resop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r CompoundRes
			err := r.Decode(testutil.Unhex(t, tt.in))
			if err == nil {
				err = tt.ops(&r)
			}
			checkErr(t, err, tt.kind, tt.field)
		})
	}
}

// A CB_COMPOUND of CB_SEQUENCE (one referring call list) and CB_RECALL, answered in place.
func TestCBCompound(t *testing.T) {
	in := testutil.Unhex(t, "00000000 00000001 00000000 00000002"+ // tag ""; minorversion 1; ident 0; 2 ops
		" 0000000b "+sessHex+" 00000001 00000000 00000000 00000000"+ // CB_SEQUENCE seq 1 slot 0, cachethis FALSE
		" 00000001 "+sessHex+" 00000001 00000007 00000003"+ // referring_call_list4 <1>: {seq 7, slot 3}
		" 00000004 00000001 a0a1a2a3 a4a5a6a7 a8a9aaab 00000000 00000004 aabbccdd") // CB_RECALL
	var c CBCompound
	if err := c.Decode(in); err != nil || c.MinorVersion != 1 || c.N != 2 {
		t.Fatalf("%v %+v", err, c)
	}
	var o CBOp
	if !c.Next(&o) || o.Op != CBOpSequence || !o.Decoded() ||
		o.Sequence != (CBSequenceArgs{SessionID: sess, SequenceID: 1, ReferringLists: 1}) {
		t.Fatalf("CB_SEQUENCE %+v %v", o, c.Err())
	}
	if !c.Next(&o) || o.Op != CBOpRecall || !reflect.DeepEqual(o.Recall, CBRecallArgs{Stateid: dstate, FH: FH{0xaa, 0xbb, 0xcc, 0xdd}}) {
		t.Fatalf("CB_RECALL %+v %v", o, c.Err())
	}
	if c.Next(&o) || c.Err() != nil {
		t.Fatalf("a third op: %v", c.Err())
	}

	buf := bytes.Repeat([]byte{0xee}, 128)
	var r CBReply
	r.Start(buf, nil)
	r.Sequence(OK, &CBSequenceRes{SessionID: sess, SequenceID: 1, HighestSlotID: 0, TargetHighestSlotID: 0})
	r.Recall(OK)
	n, err := r.Finish(OK)
	want := testutil.Unhex(t, "00000000 00000000 00000002"+ // NFS4_OK; tag ""; 2 results
		" 0000000b 00000000 "+sessHex+" 00000001 00000000 00000000 00000000"+ // CB_SEQUENCE4resok
		" 00000004 00000000") // CB_RECALL NFS4_OK
	if err != nil || !bytes.Equal(buf[:n], want) {
		t.Fatalf("reply %v\n got %x\nwant %x", err, buf[:n], want)
	}
}

// Operations the client does not implement end the walk and are answered NOTSUPP, or
// CB_ILLEGAL for a number no callback has.
func TestCBUnsupported(t *testing.T) {
	seq := " 0000000b " + sessHex + " 00000001 00000000 00000000 00000000 00000000"
	tests := []struct {
		name, op, reply string
	}{
		// CB_GETATTR: NFS4ERR_NOTSUPP (10004) under its number.
		{"cb_getattr", "00000003 ffffffff", "00002714 00000000 00000002 0000000b 00000000 " + sessHex + " 00000001 00000000 00000000 00000000 00000003 00002714"},
		// opnum 99: CB_ILLEGAL with NFS4ERR_OP_ILLEGAL (10044).
		{"illegal", "00000063", "0000273c 00000000 00000002 0000000b 00000000 " + sessHex + " 00000001 00000000 00000000 00000000 0000273c 0000273c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c CBCompound
			if err := c.Decode(testutil.Unhex(t, "00000000 00000001 00000000 00000003"+seq+" "+tt.op+" 00000004")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 128)
			var r CBReply
			r.Start(buf, nil)
			var o CBOp
			for c.Next(&o) {
				switch o.Op {
				case CBOpSequence:
					r.Sequence(OK, &CBSequenceRes{SessionID: o.Sequence.SessionID, SequenceID: o.Sequence.SequenceID})
				case CBOpRecall:
					r.Recall(OK)
				default:
					r.Unsupported(&o)
				}
			}
			if c.Err() != nil {
				t.Fatal(c.Err())
			}
			n, err := r.Finish(OK)
			if want := testutil.Unhex(t, tt.reply); err != nil || !bytes.Equal(buf[:n], want) {
				t.Fatalf("%v\n got %x\nwant %x", err, buf[:n], want)
			}
		})
	}
	t.Run("minor version", func(t *testing.T) {
		var r CBReply
		buf := make([]byte, 16)
		r.Start(buf, []byte("t"))
		n, err := r.Finish(ErrMinorVersMismatch)
		if want := testutil.Unhex(t, "00002725 00000001 74000000 00000000"); err != nil || !bytes.Equal(buf[:n], want) {
			t.Fatalf("%v %x", err, buf[:n])
		}
	})
	t.Run("short", func(t *testing.T) {
		var r CBReply
		r.Start(make([]byte, 20), nil)
		r.Sequence(OK, &CBSequenceRes{})
		_, err := r.Finish(OK)
		checkErr(t, err, oncrpc.ErrShortBuffer, "CB_COMPOUND4res")
	})
}

func TestCBErrors(t *testing.T) {
	tests := []struct {
		name, in string
		kind     error
		field    string
	}{
		{"truncated header", "00000000 00000001", oncrpc.ErrTruncated, "CB_COMPOUND4args"},
		{"count", "00000000 00000001 00000000 00000401", oncrpc.ErrTooLong, "argarray"},
		{"cachethis", "00000000 00000001 00000000 00000001 0000000b " + sessHex + " 00000001 00000000 00000000 00000002", oncrpc.ErrBadEnum, "csa_cachethis"},
		{"referring lists", "00000000 00000001 00000000 00000001 0000000b " + sessHex + " 00000001 00000000 00000000 00000000 00000401", oncrpc.ErrTooLong, "csa_referring_call_lists"},
		{"recall truncate", "00000000 00000001 00000000 00000001 00000004 " + stateHex + " 00000003", oncrpc.ErrBadEnum, "truncate"},
		{"recall fh", "00000000 00000001 00000000 00000001 00000004 " + stateHex + " 00000000 00000081", oncrpc.ErrTooLong, "nfs_fh4"},
		{"recall truncated", "00000000 00000001 00000000 00000001 00000004 " + stateHex, oncrpc.ErrTruncated, "CB_RECALL4args"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c CBCompound
			err := c.Decode(testutil.Unhex(t, tt.in))
			if err == nil {
				var o CBOp
				for c.Next(&o) {
				}
				err = c.Err()
			}
			checkErr(t, err, tt.kind, tt.field)
		})
	}
}

func TestBitmap(t *testing.T) {
	m := NewBitmap(AttrType, AttrMode, 70)
	if !m.Has(AttrType) || !m.Has(AttrMode) || !m.Has(70) || m.Has(AttrSize) || m.Has(-1) || m.Has(96) {
		t.Fatalf("%x", m)
	}
	buf := make([]byte, 16)
	n := m.put(buf, 0)
	d := newDecoder(buf[:n], errResTrunc)
	var got Bitmap
	d.bitmap(&got)
	if d.Err != nil || d.Off != n || n != 16 || got != m {
		t.Fatalf("round trip %x: %x %v", m, got, d.Err)
	}
}

func TestStatusString(t *testing.T) {
	if ErrBadSession.String() != "NFS4ERR_BADSESSION" || Status(12345).String() != "NFS4ERR(12345)" {
		t.Fatal(ErrBadSession.String(), Status(12345).String())
	}
}

// DELEGRETURN's result is its status alone.
func TestDelegReturnRes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Status
	}{
		{"00000000 00000000 00000002 00000016 00000000 00000008 00000000", OK},
		// NFS4ERR_BAD_STATEID (10025).
		{"00002729 00000000 00000002 00000016 00000000 00000008 00002729", ErrBadStateid},
	} {
		in := testutil.Unhex(t, tt.in)
		var r CompoundRes
		if err := r.Decode(in); err != nil {
			t.Fatal(err)
		}
		if s, err := r.Op(OpPutFH); err != nil || s != OK {
			t.Fatalf("PUTFH %v %v", s, err)
		}
		if s, err := r.DelegReturn(); err != nil || s != tt.want {
			t.Fatalf("DELEGRETURN %v %v, want %v", s, err, tt.want)
		}
		if n, err := r.Done(); err != nil || n != len(in) {
			t.Fatalf("Done %d %v", n, err)
		}
	}
	// A GETFH result where DELEGRETURN's is expected.
	var r CompoundRes
	if err := r.Decode(testutil.Unhex(t, "00000000 00000000 00000001 0000000a 00000000 00000000")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DelegReturn(); !errors.Is(err, ErrOp) || !strings.Contains(err.Error(), "DELEGRETURN4res") {
		t.Fatalf("resop mismatch: %v", err)
	}
}
