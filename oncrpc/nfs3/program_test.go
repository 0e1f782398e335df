package nfs3

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

func testCodec() *Codec {
	return &Codec{F: Files{Dir: FH{1, 2, 3, 4}, Name: "f.dat", Read: FH{5, 6, 7, 8, 9, 10, 11, 12},
		Size: 1 << 20, Seed: PatternSeed, Write: FH{9, 9, 9, 9}}}
}

// readRes builds READ3resok: status OK, no attributes, count, eof, data.
func readRes(status Status, data []byte, inline bool) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(status))
	b = binary.BigEndian.AppendUint32(b, 0) // post_op_attr: no attributes
	if status != OK {
		return b
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	b = binary.BigEndian.AppendUint32(b, 0) // eof false
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	if inline {
		b = append(b, data...)
		b = append(b, make([]byte, pad4(len(data))-len(data))...)
	}
	return b
}

// Every procedure's arguments fill exactly the size Sizes gives, and are the RFC's XDR of
// the codec's files: what the args types encode.
func TestCodecArgs(t *testing.T) {
	c := testCodec()
	for proc := range Prog.Procs {
		for _, size := range []int{0, 5, 4096} {
			args, prefix, results := c.Sizes(proc, size)
			if prefix > args || results < 0 {
				t.Fatalf("%s %d: sizes %d %d %d", Prog.Procs[proc].Name, size, args, prefix, results)
			}
			b := bytes.Repeat([]byte{0xee}, args+8)
			c.EncodeArgs(b[:args], proc, size, 0, 7, false)
			if !bytes.Equal(b[args:], bytes.Repeat([]byte{0xee}, 8)) {
				t.Fatalf("%s %d: wrote past the arguments", Prog.Procs[proc].Name, size)
			}
			var want []byte
			switch proc {
			case PRead:
				a := ReadArgs{FH: c.F.Read, Offset: c.readOffset(size, 7), Count: uint32(size)}
				want = make([]byte, a.Size())
				a.Encode(want)
			case PGetattr:
				a := GetattrArgs{FH: c.F.Read}
				want = make([]byte, a.Size())
				a.Encode(want)
			case PLookup:
				a := LookupArgs{Dir: c.F.Dir, Name: []byte(c.F.Name)}
				want = make([]byte, a.Size())
				a.Encode(want)
			case PWrite, PWriteSync:
				stable := Unstable
				if proc == PWriteSync {
					stable = FileSync
				}
				a := WriteArgs{FH: c.F.Write, Offset: nfsbase.WriteOffset(size, 7), Count: uint32(size), Stable: stable, Data: b[prefix : prefix+size]}
				want = make([]byte, a.Size())
				a.Encode(want)
			case PReaddirplus:
				// dircount as the Linux client sends it (fs/nfs/nfs3xdr.c,
				// encode_readdirplus3args): equal to maxcount.
				a := ReaddirplusArgs{Dir: c.F.Dir, DirCount: uint32(size), MaxCount: uint32(size)}
				want = make([]byte, a.Size())
				a.Encode(want)
			default:
				continue
			}
			if !bytes.Equal(b[:args], want) {
				t.Errorf("%s %d:\n got %x\nwant %x", Prog.Procs[proc].Name, size, b[:args], want)
			}
		}
	}
}

// READ data is checked against the file's pattern at the offset read, inline or from a Write
// chunk; a status is a failure named by procedure and status; a short read fails.
func TestCodecReadResults(t *testing.T) {
	c := testCodec()
	const size = 4096
	off := c.readOffset(size, 3)
	if off%size != 0 || off+size > c.F.Size {
		t.Fatalf("offset %d", off)
	}
	data := make([]byte, size)
	benchprog.Fill(data, PatternSeed, off)
	for _, inline := range []bool{true, false} {
		var chunk []byte
		if !inline {
			chunk = data
		}
		got, err := c.DecodeResults(PRead, 0, readRes(OK, data, inline), chunk, size, 3, true)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("inline %v: %v", inline, err)
		}
		if _, err := c.DecodeResults(PRead, 0, readRes(OK, data, inline), chunk, size, 4, true); !errors.Is(err, rpcproto.ErrVerify) && c.readOffset(size, 4) != off {
			t.Fatalf("inline %v, another offset's data: %v", inline, err)
		}
	}
	_, err := c.DecodeResults(PRead, 0, readRes(ErrNoEnt, nil, true), nil, size, 3, false)
	var k interface{ Kind() string }
	if !errors.As(err, &k) || k.Kind() != "nfs3err_noent" || err.Error() != "NFS READ: NFS3ERR_NOENT" {
		t.Fatalf("NOENT: %v", err)
	}
	if _, err := c.DecodeResults(PRead, 0, readRes(OK, data[:100], true), nil, size, 3, false); !errors.Is(err, errShortRead) {
		t.Fatalf("short read: %v", err)
	}
	if _, err := c.DecodeResults(PRead, 0, readRes(OK, data, true)[:30], nil, size, 3, false); err == nil {
		t.Fatal("truncated result accepted")
	}
	if _, err := c.DecodeResults(PGetattr, 0, binary.BigEndian.AppendUint32(nil, 99999), nil, 0, 0, false); !errors.Is(err, errStatusOther) {
		t.Fatalf("unknown status: %v", err)
	}
}

// The codec allocates nothing per RPC, failures included.
func TestCodecZeroAllocs(t *testing.T) {
	c := testCodec()
	const size = 4096
	b := make([]byte, 8192)
	data := make([]byte, size)
	benchprog.Fill(data, PatternSeed, c.readOffset(size, 3))
	ok := readRes(OK, data, false)
	bad := readRes(ErrAcces, nil, true)
	n := testing.AllocsPerRun(100, func() {
		c.EncodeArgs(b, PRead, size, 0, 3, true)
		c.EncodeArgs(b, PWrite, size, 0, 3, true)
		c.EncodeArgs(b, PLookup, 0, 0, 3, true)
		c.DecodeResults(PRead, 0, ok, data, size, 3, true)
		c.DecodeResults(PRead, 0, bad, nil, size, 3, true)
	})
	if n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

// The table says what the Linux client moves by chunks: READ's reply data and WRITE's call
// data are DDP-eligible, nothing else is.
func TestProgTable(t *testing.T) {
	for i, p := range Prog.Procs {
		want := rpcproto.None
		switch i {
		case PRead:
			want = rpcproto.InReply
		case PWrite, PWriteSync:
			want = rpcproto.InCall
		}
		if p.DDP != want {
			t.Errorf("%s: DDP %v, want %v", p.Name, p.DDP, want)
		}
	}
	if _, err := Prog.Lookup("READ"); err != nil {
		t.Fatal(err)
	}
}

// knfsdReaddirplus builds the largest READDIRPLUS3res knfsd sends for maxcount (fs/nfsd:
// nfsd3_init_dirlist_pages budgets the entries, their list's closing FALSE and eof from
// maxcount; nfs3svc_encode_readdirres puts the directory's attributes and the cookie verifier
// before them, outside that budget): entries filling the budget to the byte.
func knfsdReaddirplus(maxcount int) []byte {
	u32 := func(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
	u64 := func(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }
	attr := func(b []byte) []byte { return append(u32(b, 1), make([]byte, fattr3Size)...) }
	b := u32(nil, uint32(OK))
	b = attr(b)                              // dir_attributes
	b = append(b, make([]byte, VerfSize)...) // cookieverf
	budget := maxcount - 8                   // the closing FALSE and eof are inside maxcount
	for id := uint64(1); budget > 0; id++ {
		// An entry with attributes and a 32-byte handle while another fits after it, then
		// one without either whose name takes up the rest.
		full, bare := 4+8+8+8+4+fattr3Size+4+4+32, 4+8+4+8+4+4
		e := u32(nil, 1)
		e = u64(e, id)
		if budget >= full+bare {
			e = u32(e, 4)
			e = append(e, "name"...)
			e = u64(e, id)
			e = attr(e)
			e = u32(u32(e, 1), 32)
			e = append(e, make([]byte, 32)...)
		} else {
			n := budget - bare
			e = u32(e, uint32(n))
			e = append(e, bytes.Repeat([]byte{'n'}, n)...)
			e = u64(e, id)
			e = u32(u32(e, 0), 0)
		}
		b = append(b, e...)
		budget -= len(e)
	}
	return u32(u32(b, 0), 1) // no more entries; eof
}

// The codec's bound on READDIRPLUS results is exactly the largest reply knfsd sends for the
// maxcount it asks for, so that a Reply chunk of that size always holds it.
func TestReaddirplusResultsBound(t *testing.T) {
	c := testCodec()
	for _, maxcount := range []int{1024, 4096, 8192, 32768} {
		body := knfsdReaddirplus(maxcount)
		var r ReaddirplusRes
		if n, err := r.Decode(body); err != nil || n != len(body) || r.Status != OK || !r.EOF {
			t.Fatalf("maxcount %d: the built reply decodes %d of %d bytes: %v", maxcount, n, len(body), err)
		}
		if _, _, results := c.Sizes(PReaddirplus, maxcount); results != len(body) {
			t.Errorf("readdirplus at maxcount %d: knfsd's largest reply is %d bytes, the codec's bound %d", maxcount, len(body), results)
		}
	}
}

// writeRes builds WRITE3resok with no attributes: status, count, committed, verifier.
func writeRes(status Status, count uint32, committed StableHow) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(status))
	b = binary.BigEndian.AppendUint64(b, 0) // wcc_data: no pre-op, no post-op attributes
	if status != OK {
		return b
	}
	b = binary.BigEndian.AppendUint32(b, count)
	b = binary.BigEndian.AppendUint32(b, uint32(committed))
	return append(b, make([]byte, VerfSize)...)
}

// A FILE_SYNC WRITE that the server committed less stably fails, named; an UNSTABLE one may
// come back at any level. NFS3ERR_JUKEBOX is counted as itself.
func TestCodecWriteResults(t *testing.T) {
	c := testCodec()
	var k interface{ Kind() string }
	for _, tc := range []struct {
		proc      int
		committed StableHow
		kind      string // "" for success
	}{
		{PWriteSync, FileSync, ""},
		{PWriteSync, DataSync, "nfs3_write_not_file_sync"},
		{PWriteSync, Unstable, "nfs3_write_not_file_sync"},
		{PWrite, Unstable, ""},
		{PWrite, FileSync, ""},
	} {
		_, err := c.DecodeResults(tc.proc, 0, writeRes(OK, 512, tc.committed), nil, 512, 1, false)
		switch {
		case tc.kind == "" && err != nil:
			t.Errorf("%s committed %v: %v", Prog.Procs[tc.proc].Name, tc.committed, err)
		case tc.kind != "" && (!errors.As(err, &k) || k.Kind() != tc.kind):
			t.Errorf("%s committed %v: got %v, want an error of kind %s", Prog.Procs[tc.proc].Name, tc.committed, err, tc.kind)
		}
	}
	_, err := c.DecodeResults(PWrite, 0, writeRes(ErrJukebox, 0, 0), nil, 512, 1, false)
	if !errors.As(err, &k) || k.Kind() != "nfs3err_jukebox" || err.Error() != "NFS WRITE: NFS3ERR_JUKEBOX" {
		t.Errorf("JUKEBOX: %v", err)
	}
}

// The calls of one requester slot, whose seeds differ only above bit 16 (the XID's
// generation), READ and WRITE every block of their size in turn, not one block forever.
func TestOffsetsSpread(t *testing.T) {
	c := testCodec()
	c.F.Size = 4 << 20
	const size = 1 << 20
	reads, writes := map[uint64]bool{}, map[uint64]bool{}
	for gen := range uint64(64) {
		seed := 0x12345 + gen<<16
		reads[c.readOffset(size, seed)] = true
		writes[nfsbase.WriteOffset(size, seed)] = true
	}
	if len(reads) != 4 || len(writes) != 4 {
		t.Errorf("one slot's 64 calls of 1 MiB read %d and wrote %d of the 4 blocks", len(reads), len(writes))
	}
}
