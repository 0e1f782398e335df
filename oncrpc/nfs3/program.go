package nfs3

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Prog is NFS version 3 as a workload names it: nfsbase's procedures (their payloads and
// chunks as the Linux client moves them) and presets, with the procedure numbers of RFC 1813.
var Prog = nfsbase.Program("nfs3", Program, Version, "readdirplus", [...]uint32{ProcNull, ProcGetattr, ProcLookup,
	ProcRead, ProcWrite, ProcWrite, ProcCommit, ProcReaddirplus}, nfsbase.Presets("readdirplus"))

// Indexes of the procedures in Prog's table, the numbers workloads and the engine use: those
// of package nfsbase, the listing READDIRPLUS.
const (
	PNull, PGetattr, PLookup, PRead = nfsbase.PNull, nfsbase.PGetattr, nfsbase.PLookup, nfsbase.PRead
	PWrite, PWriteSync, PCommit     = nfsbase.PWrite, nfsbase.PWriteSync, nfsbase.PCommit
	PReaddirplus                    = nfsbase.PDir
)

// Files are the file handles a Codec's calls name, found once per run (Setup).
type Files struct {
	// Dir is the export's root: LOOKUP looks Name up in it, READDIRPLUS lists it.
	Dir  FH
	Name string
	// Read is the file READ and GETATTR name, Size its size in bytes. With verify, its
	// content must be the benchmark pattern keyed by Seed at every file offset
	// (benchprog.Fill(b, Seed, offset)).
	Read FH
	Size uint64
	Seed uint64
	// Write is the scratch file WRITE and COMMIT name.
	Write FH
}

// PatternSeed is the seed of the content of a file prepared for READ verification.
const PatternSeed = benchprog.FileSeed

// WriteSpan bounds the scratch file: a WRITE goes to one of the slots of its size in the
// first WriteSpan bytes (to offset 0 when it is larger).
const WriteSpan = nfsbase.WriteSpan

// Codec is the requester's NFSv3: it marshals calls on f's files in place and checks their
// results, counting every status other than NFS3_OK as a failure named by procedure and
// status. It allocates nothing per RPC.
type Codec struct {
	F Files
}

var _ rpcproto.Codec = (*Codec)(nil)

// Program returns Prog.
func (*Codec) Program() *rpcproto.Program { return Prog }

// Result sizes: the largest each result can be (RFC 1813 XDR).
const (
	postOpAttrMax = 4 + fattr3Size
	wccDataMax    = 4 + 24 + postOpAttrMax // pre_op_attr (size, mtime, ctime), post_op_attr
	readResPrefix = 4 + postOpAttrMax + 4 + 4 + 4
)

// Sizes implements rpcproto.Codec.
func (c *Codec) Sizes(proc, size int) (args, prefix, results int) {
	f := &c.F
	switch proc {
	case PGetattr:
		n := f.Read.size()
		return n, n, 4 + fattr3Size
	case PLookup:
		n := f.Dir.size() + 4 + pad4(len(f.Name))
		return n, n, 4 + 4 + MaxFH + 2*postOpAttrMax
	case PRead:
		n := f.Read.size() + 12
		return n, n, readResPrefix + pad4(size)
	case PWrite, PWriteSync:
		n := f.Write.size() + 20
		return n + pad4(size), n, 4 + wccDataMax + 4 + 4 + VerfSize
	case PCommit:
		n := f.Write.size() + 12
		return n, n, 4 + wccDataMax + VerfSize
	case PReaddirplus:
		n := f.Dir.size() + 8 + VerfSize + 8
		// knfsd budgets the entries, the list's end and eof from maxcount and puts the
		// directory's attributes and the cookie verifier before them, outside it (as the
		// Linux client's NFS3_readdirres_sz allows for).
		return n, n, 4 + postOpAttrMax + VerfSize + size
	}
	return 0, 0, 0
}

// readOffset is where READ of size bytes reads for a call's seed (nfsbase.ReadOffset).
func (c *Codec) readOffset(size int, seed uint64) uint64 {
	return nfsbase.ReadOffset(c.F.Size, size, seed)
}

// EncodeArgs implements rpcproto.Codec.
func (c *Codec) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {
	f := &c.F
	switch proc {
	case PGetattr:
		a := GetattrArgs{FH: f.Read}
		a.Encode(b)
	case PLookup:
		off := oncrpc.PutVarOpaque(b, 0, f.Dir)
		putString(b, off, f.Name)
	case PRead:
		a := ReadArgs{FH: f.Read, Offset: c.readOffset(size, seed), Count: uint32(size)}
		a.Encode(b)
	case PWrite, PWriteSync:
		stable := Unstable
		if proc == PWriteSync {
			stable = FileSync
		}
		pre := f.Write.size() + 20
		data := b[pre : pre+size]
		if verify {
			benchprog.Fill(data, seed, 0)
		}
		a := WriteArgs{FH: f.Write, Offset: nfsbase.WriteOffset(size, seed), Count: uint32(size), Stable: stable, Data: data}
		a.Encode(b)
	case PCommit:
		a := CommitArgs{FH: f.Write}
		a.Encode(b)
	case PReaddirplus:
		// dircount equal to maxcount, as the Linux client sends it (fs/nfs/nfs3xdr.c).
		a := ReaddirplusArgs{Dir: f.Dir, DirCount: uint32(size), MaxCount: uint32(size)}
		a.Encode(b)
	}
}

// putString writes s as an XDR string at off without converting it to a []byte (which
// would allocate).
func putString(b []byte, off int, s string) int {
	put32(b, off, uint32(len(s)))
	n := copy(b[off+4:], s)
	end := off + 4 + pad4(n)
	clear(b[off+4+n : end])
	return end
}

// DecodeResults implements rpcproto.Codec.
func (c *Codec) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	var st Status
	var data []byte
	var err error
	switch proc {
	case PNull:
		return nil, nil
	case PGetattr:
		var r GetattrRes
		_, err = r.Decode(body)
		st = r.Status
	case PLookup:
		var r LookupRes
		_, err = r.Decode(body)
		st = r.Status
	case PRead:
		var r ReadRes
		if chunk != nil {
			_, err = r.DecodeReduced(body, chunk)
		} else {
			_, err = r.Decode(body)
		}
		st, data = r.Status, r.Data
		if err == nil && st == OK && len(data) != size {
			return nil, errShortRead
		}
		if err == nil && st == OK && verify && benchprog.Verify(data, c.F.Seed, c.readOffset(size, seed)) >= 0 {
			return nil, rpcproto.ErrVerify
		}
	case PWrite, PWriteSync:
		var r WriteRes
		_, err = r.Decode(body)
		st = r.Status
		if err == nil && st == OK && int(r.Count) != size {
			return nil, errShortWrite
		}
		if err == nil && st == OK && proc == PWriteSync && r.Committed != FileSync {
			return nil, errNotFileSync
		}
	case PCommit:
		var r CommitRes
		_, err = r.Decode(body)
		st = r.Status
	case PReaddirplus:
		var r ReaddirplusRes
		_, err = r.Decode(body)
		st = r.Status
	}
	if err != nil {
		return nil, err
	}
	if st != OK {
		return nil, statusError(proc, st)
	}
	return data, nil
}

var (
	errShortRead  = rpcproto.NewResultError("nfs3_short_read", "NFS READ: fewer bytes than asked for (past the end of the file, or more than the server reads at once: its FSINFO rtmax)")
	errShortWrite = rpcproto.NewResultError("nfs3_short_write", "NFS WRITE: the server wrote fewer bytes than sent")
	// RFC 1813 section 3.3.7: committed must be at least as stable as asked for.
	errNotFileSync = rpcproto.NewResultError("nfs3_write_not_file_sync", "NFS WRITE: a FILE_SYNC write came back committed less stably")
)

// statusErrs are the failures of each procedure by status, made once: failing allocates
// nothing.
var statusErrs = nfsbase.NewFailures(Prog, statusNames, "NFS", nil, errStatusOther)

var errStatusOther = rpcproto.NewResultError("nfs3err_other", "NFS: a status RFC 1813 does not define")

func statusError(proc int, st Status) error { return statusErrs.Of(proc, uint32(st)) }
