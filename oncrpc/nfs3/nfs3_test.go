package nfs3

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

// Hand-built XDR pieces, from RFC 1813 section 2.5.
const (
	// fattr3: NF3REG, mode 0644, nlink 1, uid 1000, gid 1000, size 4096, used 8192,
	// rdev 0/0, fsid 0xabcd, fileid 0x42, atime, mtime, ctime.
	fattrHex = "00000001 000001a4 00000001 000003e8 000003e8" +
		"00000000 00001000 00000000 00002000 00000000 00000000" +
		"00000000 0000abcd 00000000 00000042" +
		"5f000000 00000001 5f000001 00000002 5f000002 00000003"
	postOpYes = "00000001 " + fattrHex
	postOpNo  = "00000000"
	// pre_op_attr TRUE: wcc_attr size 2048, mtime, ctime.
	preOpYes = "00000001 00000000 00000800 5f000000 00000001 5f000001 00000002"
)

var wantAttr = Fattr3{
	Type: TypeReg, Mode: 0o644, Nlink: 1, UID: 1000, GID: 1000, Size: 4096, Used: 8192,
	FSID: 0xabcd, FileID: 0x42,
	Atime: Time{0x5f000000, 1}, Mtime: Time{0x5f000001, 2}, Ctime: Time{0x5f000002, 3},
}

var (
	wantPostOp = PostOpAttr{Follows: true, Attr: wantAttr}
	wantPreOp  = PreOpAttr{Follows: true, Size: 2048, Mtime: Time{0x5f000000, 1}, Ctime: Time{0x5f000001, 2}}
	fhAABB     = FH{0xaa, 0xbb, 0xcc, 0xdd}
)

type encoder interface {
	Size() int
	Encode([]byte) (int, error)
}

func TestArgsExactBytes(t *testing.T) {
	tests := []struct {
		name string
		v    encoder
		want string
	}{
		// nfs_fh3 of 5 bytes: length, data, 3 pad bytes.
		{"getattr", &GetattrArgs{FH: FH{1, 2, 3, 4, 5}}, "00000005 01020304 05000000"},
		{"getattr empty fh", &GetattrArgs{}, "00000000"},
		// diropargs3: dir nfs_fh3, name filename3 "foo" with 1 pad byte.
		{"lookup", &LookupArgs{Dir: fhAABB, Name: []byte("foo")}, "00000004 aabbccdd 00000003 666f6f00"},
		// nfs_fh3, offset3 (hyper), count3.
		{"read", &ReadArgs{FH: FH{1, 2, 3, 4, 5, 6, 7, 8}, Offset: 0x100000200, Count: 4096},
			"00000008 01020304 05060708 00000001 00000200 00001000"},
		// nfs_fh3, offset3, count3, stable_how FILE_SYNC, opaque data<> "hello" with 3 pad bytes.
		{"write", &WriteArgs{FH: fhAABB, Offset: 0x2000, Count: 5, Stable: FileSync, Data: []byte("hello")},
			"00000004 aabbccdd 00000000 00002000 00000005 00000002 00000005 68656c6c 6f000000"},
		{"write empty", &WriteArgs{FH: fhAABB, Stable: Unstable},
			"00000004 aabbccdd 00000000 00000000 00000000 00000000 00000000"},
		// nfs_fh3, offset3 0, count3 0 (to end of file).
		{"commit", &CommitArgs{FH: fhAABB}, "00000004 aabbccdd 00000000 00000000 00000000"},
		// nfs_fh3, cookie3 7, cookieverf3, dircount 512, maxcount 8192.
		{"readdirplus", &ReaddirplusArgs{Dir: fhAABB, Cookie: 7, Verf: [8]byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}, DirCount: 512, MaxCount: 8192},
			"00000004 aabbccdd 00000000 00000007 11223344 55667788 00000200 00002000"},
		// dirpath "/export" with 1 pad byte.
		{"mount", &MountArgs{Path: "/export"}, "00000007 2f657870 6f727400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := testutil.Unhex(t, tt.want)
			buf := bytes.Repeat([]byte{0xee}, 128) // pads must be zeroed, not left over
			n, err := tt.v.Encode(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[:n], want) {
				t.Fatalf("encode\n got %x\nwant %x", buf[:n], want)
			}
			if tt.v.Size() != n {
				t.Errorf("Size %d, encoded %d", tt.v.Size(), n)
			}
			if buf[n] != 0xee {
				t.Errorf("wrote past the encoding")
			}
			if _, err := tt.v.Encode(buf[:n-1]); !errors.Is(err, oncrpc.ErrShortBuffer) {
				t.Errorf("encode into %d bytes: %v", n-1, err)
			}
		})
	}
}

func TestArgsErrors(t *testing.T) {
	long := make([]byte, 1025)
	tests := []struct {
		name  string
		v     encoder
		kind  error
		field string
	}{
		{"getattr fh 65", &GetattrArgs{FH: long[:65]}, oncrpc.ErrTooLong, "nfs_fh3"},
		{"lookup fh 65", &LookupArgs{Dir: long[:65]}, oncrpc.ErrTooLong, "nfs_fh3"},
		{"lookup name 256", &LookupArgs{Dir: fhAABB, Name: long[:256]}, oncrpc.ErrTooLong, "filename3"},
		{"read fh 65", &ReadArgs{FH: long[:65]}, oncrpc.ErrTooLong, "nfs_fh3"},
		{"write fh 65", &WriteArgs{FH: long[:65]}, oncrpc.ErrTooLong, "nfs_fh3"},
		{"write count", &WriteArgs{FH: fhAABB, Count: 4, Data: long[:5]}, ErrCount, "WRITE3args.count"},
		{"write stable 3", &WriteArgs{FH: fhAABB, Stable: 3}, oncrpc.ErrBadEnum, "stable_how"},
		{"commit fh 65", &CommitArgs{FH: long[:65]}, oncrpc.ErrTooLong, "nfs_fh3"},
		{"readdirplus fh 65", &ReaddirplusArgs{Dir: long[:65]}, oncrpc.ErrTooLong, "nfs_fh3"},
		{"mount path 1025", &MountArgs{Path: string(long)}, oncrpc.ErrTooLong, "dirpath"},
	}
	buf := make([]byte, 4096)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.v.Encode(buf)
			checkErr(t, err, tt.kind, tt.field)
		})
	}
	// The limits themselves are legal.
	for _, v := range []encoder{
		&GetattrArgs{FH: long[:64]}, &LookupArgs{Dir: long[:64], Name: long[:255]},
		&MountArgs{Path: string(long[:1024])},
	} {
		if _, err := v.Encode(buf); err != nil {
			t.Errorf("%T at the limit: %v", v, err)
		}
	}
	w := WriteArgs{FH: fhAABB, Count: 4, Data: long[:5]}
	if _, err := w.EncodeReduced(buf); !errors.Is(err, ErrCount) {
		t.Errorf("EncodeReduced with a bad count: %v", err)
	}
}

func checkErr(t *testing.T, err, kind error, field string) {
	t.Helper()
	var e *oncrpc.XDRError
	if !errors.Is(err, kind) || !errors.As(err, &e) || e.Field != field {
		t.Fatalf("err = %v, want %v on %q", err, kind, field)
	}
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
	{"getattr ok", "00000000 " + fattrHex, &GetattrRes{}, &GetattrRes{Attr: wantAttr}},
	// GETATTR3resfail is void.
	{"getattr stale", "00000046", &GetattrRes{}, &GetattrRes{Status: ErrStale}},
	// A status RFC 1813 does not list is data, not an error.
	{"getattr status 12345", "00003039", &GetattrRes{}, &GetattrRes{Status: 12345}},
	// LOOKUP3resok: object nfs_fh3, obj_attributes, dir_attributes.
	{"lookup ok", "00000000 00000004 aabbccdd " + postOpYes + postOpNo, &LookupRes{},
		&LookupRes{FH: fhAABB, ObjAttr: wantPostOp}},
	// LOOKUP3resfail: dir_attributes only.
	{"lookup noent", "00000002 " + postOpYes, &LookupRes{}, &LookupRes{Status: ErrNoEnt, DirAttr: wantPostOp}},
	// READ3resok: file_attributes, count 5, eof TRUE, data "hello" + 3 pad bytes.
	{"read ok", "00000000 " + postOpYes + "00000005 00000001 00000005 68656c6c 6f000000", &ReadRes{},
		&ReadRes{Attr: wantPostOp, Count: 5, EOF: true, Data: []byte("hello")}},
	{"read ok empty", "00000000 " + postOpNo + "00000000 00000000 00000000", &ReadRes{},
		&ReadRes{Data: []byte{}}},
	// READ3resfail: file_attributes.
	{"read io", "00000005 " + postOpNo, &ReadRes{}, &ReadRes{Status: ErrIO}},
	// WRITE3resok: wcc_data (before, after), count 5, committed FILE_SYNC, writeverf3.
	{"write ok", "00000000 " + preOpYes + postOpYes + "00000005 00000002 01020304 05060708", &WriteRes{},
		&WriteRes{Wcc: WccData{wantPreOp, wantPostOp}, Count: 5, Committed: FileSync, Verf: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}},
	// WRITE3resfail: wcc_data with neither side.
	{"write nospc", "0000001c 00000000 00000000", &WriteRes{}, &WriteRes{Status: ErrNoSpc}},
	// COMMIT3resok: wcc_data, writeverf3.
	{"commit ok", "00000000 " + preOpYes + postOpNo + "01020304 05060708", &CommitRes{},
		&CommitRes{Wcc: WccData{Before: wantPreOp}, Verf: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}},
	// COMMIT3resfail: wcc_data.
	{"commit jukebox", "00002718 00000000 " + postOpYes, &CommitRes{},
		&CommitRes{Status: ErrJukebox, Wcc: WccData{After: wantPostOp}}},
	// READDIRPLUS3resfail: dir_attributes.
	{"readdirplus bad cookie", "00002713 " + postOpYes, &ReaddirplusRes{},
		&ReaddirplusRes{Status: ErrBadCookie, DirAttr: wantPostOp}},
	// READDIRPLUS3resok with no entries (entries pointer FALSE) and eof FALSE.
	{"readdirplus empty", "00000000 " + postOpNo + "11223344 55667788 00000000 00000000", &ReaddirplusRes{},
		&ReaddirplusRes{Verf: [8]byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}}},
	// mountres3_ok: fhandle3, auth_flavors {AUTH_SYS, RPCSEC_GSS}.
	{"mount ok", "00000000 00000004 aabbccdd 00000002 00000001 00000006", &MountRes{},
		&MountRes{FH: fhAABB, AuthFlavors: 2, flavors: []byte{0, 0, 0, 1, 0, 0, 0, 6}}},
	// mountres3 failure arm is void.
	{"mount acces", "0000000d", &MountRes{}, &MountRes{Status: MountErrAcces}},
}

// readdirplusHex is a READDIRPLUS3resok with two entries: "." with attributes and a handle,
// "foo" with neither; the list ends the directory.
const readdirplusHex = "00000000 " + postOpNo + "11223344 55667788" +
	"00000001 00000000 00000042 00000001 2e000000 00000000 00000001 " + postOpYes + "00000001 00000004 aabbccdd" +
	"00000001 00000000 00000043 00000003 666f6f00 00000000 00000002 " + postOpNo + "00000000" +
	"00000000 00000001"

func TestResDecode(t *testing.T) {
	for _, tt := range resVectors {
		t.Run(tt.name, func(t *testing.T) {
			in := testutil.Unhex(t, tt.in)
			n, err := tt.v.Decode(append(in, 0xde, 0xad, 0xbe, 0xef))
			if err != nil || n != len(in) {
				t.Fatalf("decode: %d, %v", n, err)
			}
			if !reflect.DeepEqual(tt.v, tt.want) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", tt.v, tt.want)
			}
			checkTruncation(t, tt.v, in)
		})
	}
}

// checkTruncation decodes every proper prefix of a valid body: each must be ErrTruncated.
func checkTruncation(t *testing.T, v decodable, in []byte) {
	t.Helper()
	for i := range len(in) {
		if _, err := v.Decode(in[:i]); !errors.Is(err, oncrpc.ErrTruncated) {
			t.Fatalf("prefix %d of %d: %v", i, len(in), err)
		}
	}
}

// Decoding into a value left over from another result leaves nothing stale.
func TestResDecodeReused(t *testing.T) {
	for _, tt := range resVectors {
		for _, other := range resVectors {
			if reflect.TypeOf(other.v) != reflect.TypeOf(tt.v) {
				continue
			}
			v := reflect.New(reflect.TypeOf(tt.v).Elem()).Interface().(decodable)
			if _, err := v.Decode(testutil.Unhex(t, other.in)); err != nil {
				t.Fatal(err)
			}
			if _, err := v.Decode(testutil.Unhex(t, tt.in)); err != nil || !reflect.DeepEqual(v, tt.want) {
				t.Fatalf("%s after %s: %+v, %v", tt.name, other.name, v, err)
			}
		}
	}
}

func TestReaddirplus(t *testing.T) {
	in := testutil.Unhex(t, readdirplusHex)
	var r ReaddirplusRes
	n, err := r.Decode(in)
	if err != nil || n != len(in) {
		t.Fatalf("decode: %d, %v", n, err)
	}
	if r.Status != OK || r.DirAttr.Follows || r.Verf != [8]byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88} || !r.EOF || r.Entries.Len() != 2 {
		t.Fatalf("header: %+v", r)
	}
	want := []Entry{
		{FileID: 0x42, Name: []byte("."), Cookie: 1, Attr: wantPostOp, HasFH: true, FH: fhAABB},
		{FileID: 0x43, Name: []byte("foo"), Cookie: 2},
	}
	for pass := range 2 { // iterating a copy leaves r.Entries whole
		it := r.Entries
		var e Entry
		var got []Entry
		for it.Next(&e) {
			got = append(got, e)
		}
		if !reflect.DeepEqual(got, want) || it.Len() != 0 {
			t.Fatalf("pass %d: entries %+v", pass, got)
		}
		if it.Next(&e) {
			t.Fatal("Next after the end")
		}
	}
	checkTruncation(t, &r, in)
}

func TestResErrors(t *testing.T) {
	entry := func(fields string) string {
		return "00000000 " + postOpNo + "00000000 00000000 00000001 00000000 00000001" + fields
	}
	tests := []struct {
		name  string
		v     decodable
		in    string
		kind  error
		field string
	}{
		{"lookup fh 65", &LookupRes{}, "00000000 00000041", oncrpc.ErrTooLong, "nfs_fh3"},
		{"lookup obj bool 2", &LookupRes{}, "00000000 00000000 00000002", oncrpc.ErrBadEnum, "post_op_attr.attributes_follow"},
		{"lookup fail dir bool 2", &LookupRes{}, "00000002 00000002", oncrpc.ErrBadEnum, "post_op_attr.attributes_follow"},
		{"read attr bool -1", &ReadRes{}, "00000000 ffffffff", oncrpc.ErrBadEnum, "post_op_attr.attributes_follow"},
		{"read eof 2", &ReadRes{}, "00000000 00000000 00000000 00000002 00000000", oncrpc.ErrBadEnum, "READ3resok.eof"},
		{"read data long", &ReadRes{}, "00000000 00000000 40000001 00000000 40000001", oncrpc.ErrTooLong, "READ3resok.data"},
		{"read count", &ReadRes{}, "00000000 00000000 00000005 00000000 00000004 01020304", ErrCount, "READ3resok.count"},
		{"read data short", &ReadRes{}, "00000000 00000000 00000005 00000000 00000005 01020304 05", oncrpc.ErrTruncated, "READ3res"},
		{"write pre bool 2", &WriteRes{}, "00000000 00000002", oncrpc.ErrBadEnum, "pre_op_attr.attributes_follow"},
		{"write post bool 2", &WriteRes{}, "00000000 00000000 00000002", oncrpc.ErrBadEnum, "post_op_attr.attributes_follow"},
		{"write committed 3", &WriteRes{}, "00000000 00000000 00000000 00000005 00000003 00000000 00000000", oncrpc.ErrBadEnum, "stable_how"},
		{"commit pre bool 7", &CommitRes{}, "00000005 00000007", oncrpc.ErrBadEnum, "pre_op_attr.attributes_follow"},
		{"readdirplus follows 2", &ReaddirplusRes{}, "00000000 00000000 00000000 00000000 00000002", oncrpc.ErrBadEnum, "entryplus3.nextentry"},
		{"readdirplus name 256", &ReaddirplusRes{}, entry("00000100"), oncrpc.ErrTooLong, "filename3"},
		{"readdirplus handle bool 2", &ReaddirplusRes{}, entry("00000000 00000000 00000000 00000000 00000002"), oncrpc.ErrBadEnum, "post_op_fh3.handle_follows"},
		{"readdirplus handle 65", &ReaddirplusRes{}, entry("00000000 00000000 00000000 00000000 00000001 00000041"), oncrpc.ErrTooLong, "nfs_fh3"},
		{"readdirplus eof 2", &ReaddirplusRes{}, "00000000 00000000 00000000 00000000 00000000 00000002", oncrpc.ErrBadEnum, "dirlistplus3.eof"},
		{"mount fh 65", &MountRes{}, "00000000 00000041", oncrpc.ErrTooLong, "fhandle3"},
		{"mount flavors huge", &MountRes{}, "00000000 00000000 40000000", oncrpc.ErrTooLong, "mountres3_ok.auth_flavors"},
		{"mount flavors short", &MountRes{}, "00000000 00000000 00000003 00000001 00000001", oncrpc.ErrTruncated, "mountres3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.v.Decode(testutil.Unhex(t, tt.in))
			checkErr(t, err, tt.kind, tt.field)
		})
	}
}

func TestMountResFlavors(t *testing.T) {
	var r MountRes
	if _, err := r.Decode(testutil.Unhex(t, "00000000 00000004 aabbccdd 00000002 00000001 00000006")); err != nil {
		t.Fatal(err)
	}
	if r.AuthFlavors != 2 || r.AuthFlavor(0) != oncrpc.FlavorSys || r.AuthFlavor(1) != oncrpc.FlavorGSS {
		t.Fatalf("%+v", r)
	}
}

func TestReduced(t *testing.T) {
	a := WriteArgs{FH: fhAABB, Offset: 1, Count: 5, Stable: DataSync, Data: []byte("hello")}
	full := make([]byte, 64)
	m, err := a.Encode(full)
	if err != nil {
		t.Fatal(err)
	}
	red := make([]byte, 64)
	n, err := a.EncodeReduced(red)
	if err != nil || n != a.ReducedSize() || n != 28 {
		t.Fatalf("EncodeReduced: %d %v", n, err)
	}
	// Reduction is exactly "drop data and pad": the reduced body is the full body's prefix.
	if !bytes.Equal(red[:n], full[:n]) || m != n+8 {
		t.Fatalf("reduced %x vs full %x", red[:n], full[:m])
	}
	for _, body := range [][]byte{full[:m], red[:n]} {
		if off, l, err := DDPData(ProcWrite, false, body); err != nil || off != n || l != 5 {
			t.Fatalf("DDPData(WRITE call, %d bytes): %d %d %v", len(body), off, l, err)
		}
	}
	if _, err := a.EncodeReduced(red[:n-1]); !errors.Is(err, oncrpc.ErrShortBuffer) {
		t.Errorf("EncodeReduced into %d bytes: %v", n-1, err)
	}

	// A READ reply with its data in a Write chunk: the reduced body ends with the length word.
	whole := testutil.Unhex(t, "00000000 "+postOpYes+"00000005 00000001 00000005 68656c6c 6f000000")
	off, l, err := DDPData(ProcRead, true, whole)
	if err != nil || off != len(whole)-8 || l != 5 {
		t.Fatalf("DDPData(READ reply): %d %d %v", off, l, err)
	}
	reduced := whole[:off]
	for _, chunk := range [][]byte{[]byte("hello"), []byte("hello\x00\x00\x00")} {
		var r ReadRes
		k, err := r.DecodeReduced(reduced, chunk)
		if err != nil || k != off || string(r.Data) != "hello" || r.Count != 5 || !r.EOF || &r.Data[0] != &chunk[0] || r.Attr != wantPostOp {
			t.Fatalf("DecodeReduced(%q): %+v %d %v", chunk, r, k, err)
		}
	}
	for _, chunk := range [][]byte{[]byte("hell"), []byte("hello\x00\x00\x00\x00"), nil} {
		var r ReadRes
		_, err := r.DecodeReduced(reduced, chunk)
		checkErr(t, err, ErrChunk, "READ3resok.data")
	}
	for i := range len(reduced) {
		var r ReadRes
		if _, err := r.DecodeReduced(reduced[:i], []byte("hello")); !errors.Is(err, oncrpc.ErrTruncated) {
			t.Fatalf("reduced prefix %d: %v", i, err)
		}
	}
	// A failed READ has no data item: its chunk comes back empty.
	fail := testutil.Unhex(t, "00000005 "+postOpNo)
	var r ReadRes
	if k, err := r.DecodeReduced(fail, nil); err != nil || k != 8 || r.Status != ErrIO || r.Data != nil {
		t.Fatalf("failed READ: %+v %d %v", r, k, err)
	}
	if _, err := r.DecodeReduced(fail, []byte("x")); !errors.Is(err, ErrChunk) {
		t.Errorf("failed READ with chunk bytes: %v", err)
	}
}

func TestDDPData(t *testing.T) {
	for _, c := range []struct {
		proc  uint32
		reply bool
		body  string
		kind  error
		field string
	}{
		{ProcNull, false, "", ErrNoDDP, "procedure"},
		{ProcRead, false, "00000000 00000000 00000000 00000000", ErrNoDDP, "procedure"},
		{ProcWrite, true, "00000000 00000000 00000000", ErrNoDDP, "procedure"},
		{ProcReaddirplus, true, "", ErrNoDDP, "procedure"},
		{ProcCommit, false, "", ErrNoDDP, "procedure"},
		{22, false, "", ErrProc, "procedure"},
		{ProcRead, true, "00000005 00000000", ErrNoDDP, "procedure"},
		{ProcRead, true, "000000", oncrpc.ErrTruncated, "READ3res"},
		{ProcRead, true, "00000000 00000000 00000000 00000000", oncrpc.ErrTruncated, "READ3res"},
		{ProcRead, true, "00000000 00000002", oncrpc.ErrBadEnum, "post_op_attr.attributes_follow"},
		{ProcRead, true, "00000000 00000000 00000000 00000000 7fffffff", oncrpc.ErrTooLong, "READ3resok.data"},
		{ProcWrite, false, "00000004 aabbccdd 00000000", oncrpc.ErrTruncated, "WRITE3args"},
		{ProcWrite, false, "00000041", oncrpc.ErrTooLong, "nfs_fh3"},
		{ProcWrite, false, "00000000 00000000 00000000 00000000 00000000 ffffffff", oncrpc.ErrTooLong, "WRITE3args.data"},
	} {
		_, _, err := DDPData(c.proc, c.reply, testutil.Unhex(t, c.body))
		var e *oncrpc.XDRError
		if !errors.Is(err, c.kind) || !errors.As(err, &e) || e.Field != c.field {
			t.Errorf("proc %d reply %v %q: %v, want %v on %q", c.proc, c.reply, c.body, err, c.kind, c.field)
		}
	}
}

func TestInPlace(t *testing.T) {
	buf := bytes.Repeat([]byte{0xee}, 64)
	a := WriteArgs{FH: fhAABB, Stable: Unstable}
	a.Data = buf[a.ReducedSize():][:13]
	for i := range a.Data {
		a.Data[i] = byte(i)
	}
	a.Count = 13
	n, err := a.Encode(buf)
	if err != nil || n != 28+16 {
		t.Fatal(n, err)
	}
	if !bytes.Equal(buf[41:44], []byte{0, 0, 0}) || buf[40] != 12 {
		t.Errorf("payload or pad wrong: %x", buf[28:44])
	}
}

func TestEnumStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{OK.String(), "NFS3_OK"}, {ErrAcces.String(), "NFS3ERR_ACCES"},
		{ErrNotSync.String(), "NFS3ERR_NOT_SYNC"}, {ErrBadCookie.String(), "NFS3ERR_BAD_COOKIE"},
		{ErrJukebox.String(), "NFS3ERR_JUKEBOX"}, {Status(3).String(), "NFS3ERR(3)"},
		{Status(10009).String(), "NFS3ERR(10009)"},
		{MountOK.String(), "MNT3_OK"}, {MountErrAcces.String(), "MNT3ERR_ACCES"},
		{MountErrServerFault.Error(), "MNT3ERR_SERVERFAULT"}, {MountStat(7).String(), "MNT3ERR(7)"},
		{FileSync.String(), "FILE_SYNC"}, {StableHow(3).String(), "stable_how(invalid)"},
		{TypeFIFO.String(), "NF3FIFO"}, {FileType(0).String(), "ftype3(invalid)"}, {FileType(8).String(), "ftype3(invalid)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	// Every name RFC 1813 section 2.6 lists, in order.
	names := "NFS3_OK NFS3ERR_PERM NFS3ERR_NOENT NFS3ERR_IO NFS3ERR_NXIO NFS3ERR_ACCES NFS3ERR_EXIST " +
		"NFS3ERR_XDEV NFS3ERR_NODEV NFS3ERR_NOTDIR NFS3ERR_ISDIR NFS3ERR_INVAL NFS3ERR_FBIG " +
		"NFS3ERR_NOSPC NFS3ERR_ROFS NFS3ERR_MLINK NFS3ERR_NAMETOOLONG NFS3ERR_NOTEMPTY NFS3ERR_DQUOT " +
		"NFS3ERR_STALE NFS3ERR_REMOTE NFS3ERR_BADHANDLE NFS3ERR_NOT_SYNC NFS3ERR_BAD_COOKIE " +
		"NFS3ERR_NOTSUPP NFS3ERR_TOOSMALL NFS3ERR_SERVERFAULT NFS3ERR_BADTYPE NFS3ERR_JUKEBOX"
	values := []Status{0, 1, 2, 5, 6, 13, 17, 18, 19, 20, 21, 22, 27, 28, 30, 31, 63, 66, 69, 70, 71,
		10001, 10002, 10003, 10004, 10005, 10006, 10007, 10008}
	for i, name := range strings.Fields(names) {
		if values[i].String() != name {
			t.Errorf("%d: %s, want %s", values[i], values[i], name)
		}
	}
}

// WRITE3args of every handle length and a range of data lengths: the data item DDPData finds
// is Data, at ReducedSize, and the pads are zero.
func TestWriteArgsRoundTrip(t *testing.T) {
	buf := make([]byte, 512)
	data := make([]byte, 100)
	for i := range data {
		data[i] = byte(i + 1)
	}
	for fl := range MaxFH + 1 {
		for dl := range 9 {
			a := WriteArgs{FH: bytes.Repeat([]byte{0xfe}, fl), Offset: uint64(fl), Count: uint32(dl * 11), Stable: StableHow(dl % 3), Data: data[:dl*11]}
			for i := range buf {
				buf[i] = 0xee
			}
			n, err := a.Encode(buf)
			if err != nil || n != a.Size() || n%4 != 0 {
				t.Fatalf("fh %d data %d: %d %v", fl, dl*11, n, err)
			}
			off, l, err := DDPData(ProcWrite, false, buf[:n])
			if err != nil || off != a.ReducedSize() || !bytes.Equal(buf[off:off+l], a.Data) ||
				!bytes.Equal(buf[off+l:n], make([]byte, n-off-l)) || !bytes.Equal(buf[4+fl:pad4(4+fl)], make([]byte, pad4(4+fl)-4-fl)) {
				t.Fatalf("fh %d data %d: %x", fl, dl*11, buf[:n])
			}
		}
	}
}
