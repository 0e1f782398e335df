package nfs3

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// knfsdReply reads a result body the Linux server sent (testdata/knfsd/README.md says how
// they were recorded).
func knfsdReply(t *testing.T, name string) []byte {
	t.Helper()
	h, err := os.ReadFile(filepath.Join("testdata", "knfsd", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(string(h)), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The decoders read the Linux server's own replies, recorded in the soft-RoCE VM on the files
// the VM prepares (a 4 MiB file of the benchmark pattern, a scratch file), to the last byte;
// and the codec's bound on each result's size holds for them.
func TestKnfsdReplies(t *testing.T) {
	c := testCodec()
	check := func(name string, used int, err error, body []byte, proc, size int) {
		t.Helper()
		if err != nil || used != len(body) {
			t.Fatalf("%s: decoded %d of %d bytes: %v", name, used, len(body), err)
		}
		if _, _, max := c.Sizes(proc, size); len(body) > max {
			t.Errorf("%s: %d bytes, above the codec's bound of %d", name, len(body), max)
		}
	}

	b := knfsdReply(t, "getattr")
	var ga GetattrRes
	n, err := ga.Decode(b)
	check("getattr", n, err, b, PGetattr, 0)
	if ga.Status != OK || ga.Attr.Type != TypeReg || ga.Attr.Size != 4<<20 {
		t.Errorf("getattr: %v %v size %d", ga.Status, ga.Attr.Type, ga.Attr.Size)
	}

	b = knfsdReply(t, "lookup")
	var lk LookupRes
	n, err = lk.Decode(b)
	check("lookup", n, err, b, PLookup, 0)
	if lk.Status != OK || len(lk.FH) == 0 || !lk.ObjAttr.Follows || lk.ObjAttr.Attr.Size != 4<<20 || !lk.DirAttr.Follows || lk.DirAttr.Attr.Type != TypeDir {
		t.Errorf("lookup: %v fh %x %+v", lk.Status, lk.FH, lk)
	}

	b = knfsdReply(t, "lookup-noent")
	n, err = lk.Decode(b)
	check("lookup-noent", n, err, b, PLookup, 0)
	if lk.Status != ErrNoEnt || lk.FH != nil || !lk.DirAttr.Follows {
		t.Errorf("lookup of a missing name: %v %+v", lk.Status, lk)
	}
	if _, err := c.DecodeResults(PLookup, 0, b, nil, 0, 0, false); err == nil || err.Error() != "NFS LOOKUP: NFS3ERR_NOENT" {
		t.Errorf("lookup of a missing name through the codec: %v", err)
	}

	// READ of 64 bytes at offset 4096: the pattern's bytes there.
	b = knfsdReply(t, "read")
	var rd ReadRes
	n, err = rd.Decode(b)
	check("read", n, err, b, PRead, 64)
	want := make([]byte, 64)
	benchprog.Fill(want, PatternSeed, 4096)
	if rd.Status != OK || rd.Count != 64 || rd.EOF || !bytes.Equal(rd.Data, want) {
		t.Errorf("read: %v count %d eof %v data %x", rd.Status, rd.Count, rd.EOF, rd.Data)
	}

	b = knfsdReply(t, "write")
	var wr WriteRes
	n, err = wr.Decode(b)
	check("write", n, err, b, PWriteSync, 8)
	if wr.Status != OK || wr.Count != 8 || wr.Committed != FileSync || !wr.Wcc.After.Follows {
		t.Errorf("write: %v count %d committed %v", wr.Status, wr.Count, wr.Committed)
	}

	b = knfsdReply(t, "commit")
	var cm CommitRes
	n, err = cm.Decode(b)
	check("commit", n, err, b, PCommit, 0)
	if cm.Status != OK {
		t.Errorf("commit: %v", cm.Status)
	}

	b = knfsdReply(t, "readdirplus")
	var rp ReaddirplusRes
	n, err = rp.Decode(b)
	check("readdirplus", n, err, b, PReaddirplus, 4096)
	names := map[string]bool{}
	it := rp.Entries
	var e Entry
	for it.Next(&e) {
		names[string(e.Name)] = true
	}
	if rp.Status != OK || !rp.EOF || !names["rpcrdma-bench.dat"] || !names["rpcrdma-bench.scratch"] || !names["."] {
		t.Errorf("readdirplus: %v eof %v names %v", rp.Status, rp.EOF, names)
	}
}
