package knfsd

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
)

// TestIntegrationKnfsdRecordReplies asks knfsd one call of every NFSv3 procedure the nfs3
// program uses, over NFS on TCP (the same XDR as over RDMA, READ's data inline), on the
// files the VM prepared, and writes each result body as hex into KNFSD_RECORD_DIR: the
// recorded replies package nfs3 tests its decoders against (oncrpc/nfs3/testdata/knfsd).
func TestIntegrationKnfsdRecordReplies(t *testing.T) {
	addr, dir := os.Getenv("KNFSD_ADDR"), os.Getenv("KNFSD_RECORD_DIR")
	if addr == "" || dir == "" {
		t.Skip("KNFSD_ADDR and KNFSD_RECORD_DIR not set: runs in the soft-RoCE VM against knfsd (make vmtest)")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := nfs3.MountConfig{MountdPort: 20048}
	f, err := c.Setup(ctx, host, "/export", "rpcrdma-bench.dat", "rpcrdma-bench.scratch")
	if err != nil {
		t.Fatal(err)
	}
	record := func(name string, proc uint32, args []byte) {
		t.Helper()
		body, err := c.Call(ctx, host, proc, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := writeHex(filepath.Join(dir, name+".hex"), body); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", name, len(body))
	}
	enc := func(e interface{ Encode([]byte) (int, error) }, n int) []byte {
		b := make([]byte, n)
		if _, err := e.Encode(b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	ga := nfs3.GetattrArgs{FH: f.Read}
	record("getattr", nfs3.ProcGetattr, enc(&ga, ga.Size()))
	la := nfs3.LookupArgs{Dir: f.Dir, Name: []byte(f.Name)}
	record("lookup", nfs3.ProcLookup, enc(&la, la.Size()))
	ln := nfs3.LookupArgs{Dir: f.Dir, Name: []byte("no-such-file")}
	record("lookup-noent", nfs3.ProcLookup, enc(&ln, ln.Size()))
	ra := nfs3.ReadArgs{FH: f.Read, Offset: 4096, Count: 64}
	record("read", nfs3.ProcRead, enc(&ra, ra.Size()))
	wa := nfs3.WriteArgs{FH: f.Write, Offset: 0, Count: 8, Stable: nfs3.FileSync, Data: []byte("rpcrdma!")}
	record("write", nfs3.ProcWrite, enc(&wa, wa.Size()))
	ca := nfs3.CommitArgs{FH: f.Write}
	record("commit", nfs3.ProcCommit, enc(&ca, ca.Size()))
	da := nfs3.ReaddirplusArgs{Dir: f.Dir, DirCount: 1024, MaxCount: 4096}
	record("readdirplus", nfs3.ProcReaddirplus, enc(&da, da.Size()))
}

// writeHex writes b to path as hex, 64 digits a line, as the codecs' tests read recordings.
func writeHex(path string, b []byte) error {
	h := hex.EncodeToString(b)
	var s strings.Builder
	for len(h) > 64 {
		s.WriteString(h[:64] + "\n")
		h = h[64:]
	}
	s.WriteString(h + "\n")
	return os.WriteFile(path, []byte(s.String()), 0o644)
}
