package nfsbase

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// The indexes of the procedures every NFS version's table starts with, as workloads and the
// engine know them; a version's own follow PDir, its directory listing (READDIRPLUS, READDIR).
const (
	PNull = iota
	PGetattr
	PLookup
	PRead
	PWrite
	PWriteSync
	PCommit
	PDir
)

// Program is an NFS version's program: name, number and version; a procedure table that
// starts PNull to PDir, then more (the version's own, in the order of their indexes); and
// presets. The shared procedures carry the names workloads use (dir names the listing:
// "readdirplus", "readdir"), their numbers on the wire (numbers, by index), and their
// payloads: READ's data comes back in a Write chunk and WRITE's goes in a Read chunk when they
// do not fit inline, as the Linux client moves them; the listing's reply, sized by the
// workload (its maxcount), comes in a Reply chunk when large; the rest travels inline.
// "write" is an UNSTABLE WRITE, "write-sync" a FILE_SYNC one.
func Program(name string, number, version uint32, dir string, numbers [PDir + 1]uint32, presets map[string]string,
	more ...rpcproto.Procedure) *rpcproto.Program {
	procs := []rpcproto.Procedure{
		PNull:      {Name: "null"},
		PGetattr:   {Name: "getattr"},
		PLookup:    {Name: "lookup"},
		PRead:      {Name: "read", Payload: rpcproto.InReply, DDP: rpcproto.InReply},
		PWrite:     {Name: "write", Payload: rpcproto.InCall, DDP: rpcproto.InCall},
		PWriteSync: {Name: "write-sync", Payload: rpcproto.InCall, DDP: rpcproto.InCall},
		PCommit:    {Name: "commit"},
		PDir:       {Name: dir, Payload: rpcproto.InReply},
	}
	for p := range procs {
		procs[p].Number = numbers[p]
	}
	return &rpcproto.Program{Name: name, Number: number, Version: version, Procs: append(procs, more...), Presets: presets, External: true}
}

// Presets are the named mixes of every NFS version: what an NFS client's traffic looks like
// for reading, writing, metadata and a mix of the three, with sizes around the inline
// thresholds people compare. readdir names the version's directory listing procedure
// ("readdirplus", "readdir"); extra adds the version's own, as name and mix pairs.
func Presets(readdir string, extra ...string) map[string]string {
	m := map[string]string{
		"nfs-read":  "read/4k:50,read/64k:30,read/1m:20",
		"nfs-write": "write/4k:50,write/64k:30,write/1m:20",
		"nfs-meta":  "getattr:60,lookup:30," + readdir + "/8k:10",
		"nfs-mix":   "getattr:30,lookup:10,read/4k:25,read/64k:10,write/4k:15,write/64k:5,commit:5",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// WriteSpan bounds the scratch file: a WRITE goes to one of the slots of its size in the
// first WriteSpan bytes (to offset 0 when it is larger).
const WriteSpan = 4 << 20

// ReadOffset is where a READ of size bytes of a file of fileSize bytes reads for a call's
// seed: a block-aligned offset inside the file, spread over it.
func ReadOffset(fileSize uint64, size int, seed uint64) uint64 {
	if size == 0 || fileSize < uint64(size) {
		return 0
	}
	blocks := fileSize / uint64(size)
	return (spread(seed) % blocks) * uint64(size)
}

// WriteOffset is where a WRITE of size bytes writes for a call's seed: one of the slots of
// its size in the first WriteSpan bytes of the scratch file.
func WriteOffset(size int, seed uint64) uint64 {
	slots := uint64(max(1, WriteSpan/max(size, 1)))
	return (spread(seed) % slots) * uint64(size)
}

// spread mixes a call's seed so that every bit of it moves the offset: seeds of one
// requester slot differ only in their high bits (the XID's generation).
func spread(seed uint64) uint64 { return (seed * 0x9e3779b97f4a7c15) >> 32 }

// Status is a version's status type (nfsstat3, nfsstat4): a number that names itself.
type Status interface {
	~uint32
	String() string
}

// sharedNames name the nfsstat values that NFSv3 and NFSv4 share, after the version's prefix
// ("NFS3ERR_"): NFSv4 keeps NFSv3's numbers and names (RFC 7530 section 13.1).
var sharedNames = map[uint32]string{
	1: "PERM", 2: "NOENT", 5: "IO", 17: "EXIST", 20: "NOTDIR", 21: "ISDIR", 22: "INVAL", 28: "NOSPC",
	30: "ROFS", 63: "NAMETOOLONG", 70: "STALE", 10001: "BADHANDLE", 10003: "BAD_COOKIE",
	10004: "NOTSUPP", 10005: "TOOSMALL", 10006: "SERVERFAULT",
}

// StatusNames are a version's status names for StatusName: 0 as VERSION_OK, the shared
// statuses and the version's own (named after the prefix) as VERSIONERR_NAME.
func StatusNames[S ~uint32](version string, own map[S]string) map[S]string {
	m := map[S]string{0: version + "_OK"}
	for st, n := range sharedNames {
		m[S(st)] = version + "ERR_" + n
	}
	for st, n := range own {
		m[st] = version + "ERR_" + n
	}
	return m
}

// StatusName is s's name in names, else prefix and its number ("NFS4ERR(10099)").
func StatusName[S ~uint32](names map[S]string, prefix string, s S) string {
	if n, ok := names[s]; ok {
		return n
	}
	return prefix + "(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// Failure is the failure of a call answered st: kind its name in lower case; a Later error
// (the call is made again) when later says so.
func Failure[S Status](st S, msg string, later func(S) bool) *rpcproto.ResultError {
	kind := strings.ToLower(st.String())
	if later != nil && later(st) {
		return rpcproto.NewLaterError(kind, msg)
	}
	return rpcproto.NewResultError(kind, msg)
}

// Failures are the failures of each procedure of a program by status, made once so that
// failing allocates nothing.
type Failures struct {
	m     map[[2]uint32]*rpcproto.ResultError
	other *rpcproto.ResultError
}

// NewFailures makes prog's failures for every status of names, each saying "VERSION PROC:
// STATUS" (version as "NFS" or "NFSv4.1"); other is the failure of a status names lacks.
func NewFailures[S Status](prog *rpcproto.Program, names map[S]string, version string, later func(S) bool, other *rpcproto.ResultError) *Failures {
	f := &Failures{m: map[[2]uint32]*rpcproto.ResultError{}, other: other}
	for p := range prog.Procs {
		name := strings.ToUpper(prog.Procs[p].Name)
		for st := range names {
			f.m[[2]uint32{uint32(p), uint32(st)}] = Failure(st, version+" "+name+": "+st.String(), later)
		}
	}
	return f
}

// Of is the failure of procedure proc answered st.
func (f *Failures) Of(proc int, st uint32) error {
	if e, ok := f.m[[2]uint32{uint32(proc), st}]; ok {
		return e
	}
	return f.other
}

// ByNumber holds a value for each procedure (or operation) number of a version, made once
// from the number's name, so that finding one costs an index, not a hash: the decoders'
// errors of each procedure's arguments and results.
type ByNumber[T any] struct {
	t     []T
	other T
}

// NewByNumber makes mk(name) for each number of names; Of returns other for the rest.
func NewByNumber[T any](names map[uint32]string, mk func(name string) T, other T) ByNumber[T] {
	var top uint32
	for n := range names {
		top = max(top, n)
	}
	b := ByNumber[T]{t: make([]T, top+1), other: other}
	for i := range b.t {
		b.t[i] = other
	}
	for n, name := range names {
		b.t[n] = mk(name)
	}
	return b
}

// Of is the value of number n.
func (b *ByNumber[T]) Of(n uint32) T {
	if n < uint32(len(b.t)) {
		return b.t[n]
	}
	return b.other
}

// Entry is a directory entry type (entryplus3, entry4) whose pointer decodes an entry from
// just after its value-follows word (which List reads), returning the bytes it took or an
// *oncrpc.XDRError.
type Entry[E any] interface {
	*E
	Decode(b []byte) (int, error)
}

// List is a directory listing's entries, validated by the decoder that made it: iterate with
// a copy, it := res.Entries; for it.Next(&e) { ... }.
type List[E any, P Entry[E]] struct {
	raw []byte // from the first entry's value-follows word to the list's closing FALSE
	n   int
}

// NewList is the list of the n entries in raw.
func NewList[E any, P Entry[E]](raw []byte, n int) List[E, P] {
	if n == 0 {
		return List[E, P]{}
	}
	return List[E, P]{raw: raw, n: n}
}

// DecodeList decodes the entries of a listing at d's offset, each after a TRUE value-follows
// word (else follows), up to the FALSE that ends them; the list is empty if d failed. entry
// decodes one into a scratch Entry of the caller's: one of DecodeList's would escape to the heap.
func DecodeList[E any, P Entry[E]](d *oncrpc.Decoder, follows *oncrpc.XDRError, entry func(b []byte) (int, error)) List[E, P] {
	start, n := d.Off, 0
	for d.Bool(follows) {
		m, err := entry(d.B[d.Off:])
		if err != nil {
			d.Fail(err.(*oncrpc.XDRError))
			break
		}
		d.Take(m)
		n++
	}
	if d.Err != nil {
		return List[E, P]{}
	}
	return NewList[E, P](d.B[start:d.Off], n)
}

// Len is the number of entries (left to iterate, for a copy being iterated).
func (l *List[E, P]) Len() int { return l.n }

// Next decodes the next entry into e and reports whether there was one.
func (l *List[E, P]) Next(e *E) bool {
	if l.n == 0 {
		return false
	}
	// Decode checked that each of the n entries comes after a TRUE value-follows word.
	if len(l.raw) < 4 || binary.BigEndian.Uint32(l.raw) != 1 {
		l.n = 0
		return false
	}
	n, err := P(e).Decode(l.raw[4:])
	if err != nil {
		l.n = 0
		return false
	}
	l.raw = l.raw[4+n:]
	l.n--
	return true
}

// CheckRegular checks that the file name, of type typ as the server said it, is a regular
// file: what a run reads and writes.
func CheckRegular(name string, regular bool, typ any) error {
	if !regular {
		return fmt.Errorf("%s: not a regular file (%v)", name, typ)
	}
	return nil
}

// CheckSize checks that the file a run reads, name, of size bytes, holds its largest read.
func CheckSize(name string, size uint64, largest int) error {
	if largest > 0 && size < uint64(largest) {
		return fmt.Errorf("%s: %d bytes, smaller than the largest read (%d): use a larger file or smaller reads", name, size, largest)
	}
	return nil
}

// Credential is the AUTH_SYS credential the calls of every NFS version carry: sys, or
// without it this process's user and group and a short host name.
func Credential(sys *oncrpc.SysCred) (oncrpc.OpaqueAuth, error) {
	if sys == nil {
		host, _ := os.Hostname() // the name is informative only: an empty one will do
		// Short, so that the credential fits in front of every call's arguments in
		// registered memory (rpcrdma.Config.Cred).
		if len(host) > 32 {
			host = host[:32]
		}
		sys = &oncrpc.SysCred{
			Stamp:       uint32(time.Now().Unix()),
			MachineName: []byte(host),
			UID:         uint32(os.Getuid()),
			GID:         uint32(os.Getgid()),
		}
	}
	body := make([]byte, sys.Size())
	if _, err := sys.Encode(body); err != nil {
		return oncrpc.OpaqueAuth{}, err
	}
	return oncrpc.OpaqueAuth{Flavor: oncrpc.FlavorSys, Body: body}, nil
}
