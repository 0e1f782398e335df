package nfs4

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// knfsdDir holds the calls the engine made to the Linux server and its replies
// (testdata/knfsd/README.md says how they were recorded).
var knfsdDir = filepath.Join("testdata", "knfsd")

// knfsdRecorded skips the test when no recording was copied in.
func knfsdRecorded(t *testing.T) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(knfsdDir, "*.hex")); len(m) == 0 {
		t.Skip("no recording of knfsd's NFSv4.1 replies in testdata/knfsd: `make vmtest` (VMTEST_STEPS=knfsd) " +
			"records them into build/vm/out/knfsd-replies/nfs4/; copy its .hex files into oncrpc/nfs4/testdata/knfsd/")
	}
}

// knfsdHex reads testdata/knfsd/name.hex.
func knfsdHex(t *testing.T, name string) []byte {
	t.Helper()
	h, err := os.ReadFile(filepath.Join(knfsdDir, name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(string(h)), ""))
	if err != nil {
		t.Fatalf("%s.hex: %v", name, err)
	}
	return b
}

// knfsdReply is one COMPOUND the engine sent knfsd and the results knfsd sent back, decoded.
type knfsdReply struct {
	call  fcall
	body  []byte
	chunk []byte // the Write chunk's data, for a READ that came in one

	seq     SequenceRes
	exch    ExchangeIDRes
	cs      CreateSessionRes
	fh      GetFHRes
	ga      GetattrRes
	open    OpenRes
	close   CloseRes
	read    ReadRes
	write   WriteRes
	commit  CommitRes
	readdir ReaddirRes
}

// knfsdDecode reads the recording name (its call, its results and, with chunk, its Write
// chunk's data), checks that the call's operations are ops, and decodes the results against
// them to the last byte: every result NFS4_OK, SEQUENCE's naming the call's session, slot 0
// and sequenceid.
func knfsdDecode(t *testing.T, name string, chunk bool, ops ...uint32) *knfsdReply {
	t.Helper()
	k := &knfsdReply{call: parseCall(t, knfsdHex(t, name+".call")), body: knfsdHex(t, name)}
	if !slices.Equal(k.call.ops, ops) {
		t.Fatalf("%s: a call of operations %v, want %v", name, k.call.ops, ops)
	}
	var r CompoundRes
	var err error
	if chunk {
		k.chunk = knfsdHex(t, name+".data")
		err = r.DecodeReduced(k.body, k.chunk)
	} else {
		err = r.Decode(k.body)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if r.Status != OK || r.N != len(ops) {
		t.Fatalf("%s: COMPOUND %v with %d results, want NFS4_OK with %d", name, r.Status, r.N, len(ops))
	}
	for _, op := range ops {
		var st Status
		switch op {
		case OpSequence:
			err, st = r.Sequence(&k.seq), k.seq.Status
		case OpExchangeID:
			err, st = r.ExchangeID(&k.exch), k.exch.Status
		case OpCreateSession:
			err, st = r.CreateSession(&k.cs), k.cs.Status
		case OpGetFH:
			err, st = r.GetFH(&k.fh), k.fh.Status
		case OpGetattr:
			err, st = r.Getattr(&k.ga), k.ga.Status
		case OpOpen:
			err, st = r.Open(&k.open), k.open.Status
		case OpClose:
			err, st = r.Close(&k.close), k.close.Status
		case OpRead:
			err, st = r.Read(&k.read), k.read.Status
		case OpWrite:
			err, st = r.Write(&k.write), k.write.Status
		case OpCommit:
			err, st = r.Commit(&k.commit), k.commit.Status
		case OpReaddir:
			err, st = r.Readdir(&k.readdir), k.readdir.Status
		default:
			st, err = r.Op(op)
		}
		if err != nil || st != OK {
			t.Fatalf("%s: %s: %v %v", name, opNames[op], st, err)
		}
	}
	if n, err := r.Done(); err != nil || n != len(k.body) {
		t.Fatalf("%s: decoded %d of %d bytes: %v", name, n, len(k.body), err)
	}
	if ops[0] == OpSequence {
		s, c := &k.seq, &k.call
		if s.SessionID != c.sess || s.SlotID != 0 || c.slot != 0 || s.SequenceID != c.seqid || s.HighestSlotID < s.SlotID {
			t.Errorf("%s: SEQUENCE of session %x slot %d seqid %d came back %+v", name, c.sess, c.slot, c.seqid, s)
		}
	}
	return k
}

// knfsdBound checks the codec's bound on a reply's results, which sizes the engine's
// receive buffers and Reply chunks.
func knfsdBound(t *testing.T, name string, k *knfsdReply, bound int) {
	t.Helper()
	if len(k.body) > bound {
		t.Errorf("%s: %d bytes of results, above the codec's bound of %d", name, len(k.body), bound)
	}
}

// The decoders read the Linux server's replies to the engine's own session setup and
// teardown, recorded over RPC-over-RDMA in the soft-RoCE VM, to the last byte; each says
// what knfsd must answer, and the codec's bound on each step's results holds for them.
func TestKnfsdSession(t *testing.T) {
	knfsdRecorded(t)
	c := newTestConn(t, 4096)
	bound := func(name string, k *knfsdReply, s step) {
		t.Helper()
		c.step = s
		_, _, max := c.stepSizes()
		knfsdBound(t, name, k, max)
	}

	ex := knfsdDecode(t, "exchange_id", false, OpExchangeID)
	bound("exchange_id", ex, stExchangeID)
	if x := ex.exch; x.ClientID == 0 || x.Flags&ExchgIDFlagConfirmedR != 0 || x.StateProtect != SP4None || len(x.ServerMajorID) == 0 {
		t.Errorf("exchange_id: a new client's owner %q came back %+v", ex.call.exchOwner, x)
	}

	cs := knfsdDecode(t, "create_session", false, OpCreateSession)
	bound("create_session", cs, stCreateSession)
	call, s := &cs.call, &cs.cs
	if call.csClient != ex.exch.ClientID || call.csSeq != ex.exch.SequenceID {
		t.Errorf("create_session: called for client %#x sequence %d, EXCHANGE_ID gave %#x %d",
			call.csClient, call.csSeq, ex.exch.ClientID, ex.exch.SequenceID)
	}
	if s.SessionID == (SessionID{}) || s.Sequence != call.csSeq || s.Flags&CreateSessionFlagConnBackChan == 0 {
		t.Errorf("create_session: session %x sequence %d (sent %d) flags %#x, want the back channel bound to the connection",
			s.SessionID, s.Sequence, call.csSeq, s.Flags)
	}
	// Sent as Linux's client sends it (PERSIST and CONN_BACK_CHAN, no ca_rdma_ird); knfsd
	// keeps no persistent reply cache and does not grant PERSIST.
	if call.csFlags != CreateSessionFlagPersist|CreateSessionFlagConnBackChan || call.fore.ird != nil || call.back.ird != nil ||
		s.Flags&CreateSessionFlagPersist != 0 {
		t.Errorf("create_session: sent flags %#x, ird %v %v; granted flags %#x", call.csFlags, call.fore.ird, call.back.ird, s.Flags)
	}
	// The channels: at most what the call asked (ca_maxrequestsize, ca_maxresponsesize,
	// ca_maxoperations and ca_maxrequests are words 1, 2, 4 and 5), a slot at least, and in
	// the back channel room for CB_SEQUENCE and CB_RECALL.
	for _, ch := range []struct {
		name string
		got  ChannelAttrs
		ask  attrs6
	}{{"fore", s.Fore, call.fore}, {"back", s.Back, call.back}} {
		g, a := ch.got, ch.ask.w
		if g.MaxRequestSize == 0 || g.MaxRequestSize > a[1] || g.MaxResponseSize == 0 || g.MaxResponseSize > a[2] ||
			g.MaxOperations > a[4] || g.MaxRequests == 0 || g.MaxRequests > a[5] {
			t.Errorf("create_session: %s channel %+v granted for %v asked", ch.name, g, a)
		}
	}
	if s.Back.MaxOperations < 2 {
		t.Errorf("create_session: back channel of %d operations, want CB_SEQUENCE and CB_RECALL", s.Back.MaxOperations)
	}

	rc := knfsdDecode(t, "reclaim_complete", false, OpSequence, OpReclaimComplete)
	bound("reclaim_complete", rc, stReclaimComplete)
	if rc.seq.SessionID != s.SessionID {
		t.Errorf("reclaim_complete: SEQUENCE of session %x, CREATE_SESSION made %x", rc.seq.SessionID, s.SessionID)
	}

	root := knfsdDecode(t, "putrootfh", false, OpSequence, OpPutRootFH, OpGetFH)
	bound("putrootfh", root, stRootFH)
	if len(root.fh.FH) == 0 {
		t.Error("putrootfh: an empty file handle")
	}

	files := map[string]*knfsdReply{}
	for _, f := range []struct {
		name, file string
		s          step
		size       uint64 // 0: any
	}{{"lookup-file", "rpcrdma-bench.dat", stFile, 4 << 20}, {"lookup-scratch", "rpcrdma-bench.scratch", stScratch, 0}} {
		k := knfsdDecode(t, f.name, false, OpSequence, OpPutRootFH, OpLookup, OpGetFH, OpGetattr)
		bound(f.name, k, f.s)
		a := &k.ga.Attr
		if !slices.Equal(k.call.names, []string{f.file}) || len(k.fh.FH) == 0 || !a.Mask.Has(AttrType) || !a.Mask.Has(AttrSize) ||
			a.Type != TypeReg || f.size != 0 && a.Size != f.size {
			t.Errorf("%s: LOOKUP of %q: fh %x, %v of %d bytes (attributes %v)", f.name, k.call.names, k.fh.FH, a.Type, a.Size, a.Mask)
		}
		files[f.name] = k
	}

	opens := map[string]*knfsdReply{}
	for _, o := range []struct {
		name, file string
		s          step
	}{{"open-file", "rpcrdma-bench.dat", stOpenRead}, {"open-scratch", "rpcrdma-bench.scratch", stOpenWrite}} {
		k := knfsdDecode(t, o.name, false, OpSequence, OpPutFH, OpOpen)
		bound(o.name, k, o.s)
		// The call asked for no delegation (OPEN4_SHARE_ACCESS_WANT_NO_DELEG).
		if !slices.Equal(k.call.names, []string{o.file}) || k.open.Stateid.Other == ([12]byte{}) ||
			k.open.DelegType != DelegNone && k.open.DelegType != DelegNoneExt {
			t.Errorf("%s: OPEN of %q: %+v", o.name, k.call.names, k.open)
		}
		opens[o.name] = k
	}

	// With verify, the setup reads the start of the file to check its pattern.
	rd := knfsdDecode(t, "read-file", false, OpSequence, OpPutFH, OpRead)
	bound("read-file", rd, stCheckFile)
	if n := len(rd.read.Data); n == 0 || n != int(rd.call.readCount) || rd.read.EOF ||
		benchprog.Verify(rd.read.Data, benchprog.FileSeed, rd.call.readOff) >= 0 {
		t.Errorf("read-file: READ of %d at %d: %d bytes eof %v, not the pattern", rd.call.readCount, rd.call.readOff, n, rd.read.EOF)
	}
	if !bytes.Equal([]byte(rd.call.fhs[0]), files["lookup-file"].fh.FH) {
		t.Errorf("read-file: PUTFH %x, not the file's %x", rd.call.fhs[0], files["lookup-file"].fh.FH)
	}

	for _, cl := range []struct {
		name, open string
		s          step
	}{{"close-file", "open-file", stCloseRead}, {"close-scratch", "open-scratch", stCloseWrite}} {
		k := knfsdDecode(t, cl.name, false, OpSequence, OpPutFH, OpClose)
		bound(cl.name, k, cl.s)
		if k.call.stateids[0].Other != opens[cl.open].open.Stateid.Other {
			t.Errorf("%s: CLOSE of %+v, OPEN gave %+v", cl.name, k.call.stateids[0], opens[cl.open].open.Stateid)
		}
	}

	ds := knfsdDecode(t, "destroy_session", false, OpDestroySession)
	bound("destroy_session", ds, stDestroySession)
	if ds.call.destroySess != s.SessionID {
		t.Errorf("destroy_session: of %x, CREATE_SESSION made %x", ds.call.destroySess, s.SessionID)
	}
	dc := knfsdDecode(t, "destroy_clientid", false, OpDestroyClientID)
	bound("destroy_clientid", dc, stDestroyClientID)
	if dc.call.destroyClient != ex.exch.ClientID {
		t.Errorf("destroy_clientid: of %#x, EXCHANGE_ID gave %#x", dc.call.destroyClient, ex.exch.ClientID)
	}
}

// The decoders read the Linux server's replies to one call of every measured procedure (and
// a READ whose data came in a Write chunk), to the last byte; each says what knfsd must
// answer on the VM's files (a 4 MiB file of the pattern, a scratch file), the codec's bound
// on its results holds, and the engine's DecodeResults takes it.
func TestKnfsdProcedures(t *testing.T) {
	knfsdRecorded(t)
	c := newTestConn(t, 4096)
	cs := knfsdDecode(t, "create_session", false, OpCreateSession)
	lk := knfsdDecode(t, "lookup-file", false, OpSequence, OpPutRootFH, OpLookup, OpGetFH, OpGetattr)
	c.session = cs.cs.SessionID
	engine := func(name string, k *knfsdReply, proc, size int) {
		t.Helper()
		_, _, max := c.Sizes(proc, size)
		knfsdBound(t, name, k, max)
		c.table.slots[0].last = k.call.seqid - 1
		c.table.of[0], c.table.slots[0].busy, c.table.slots[0].sent = 0, true, k.call.seqid // the call held slot 0
		if _, err := c.DecodeResults(proc, 0, k.body, k.chunk, size, 0, false); err != nil {
			t.Errorf("%s: the engine's DecodeResults: %v", name, err)
		}
	}

	l := knfsdDecode(t, "lookup", false, OpSequence, OpPutFH, OpLookup, OpGetFH, OpGetattr)
	engine("lookup", l, PLookup, 0)
	if !slices.Equal(l.call.names, []string{"rpcrdma-bench.dat"}) || !bytes.Equal(l.fh.FH, lk.fh.FH) ||
		l.ga.Attr.Type != TypeReg || l.ga.Attr.Size != 4<<20 || !l.ga.Attr.Mask.Has(AttrFileID) {
		t.Errorf("lookup of %q: fh %x (setup's %x), %+v", l.call.names, l.fh.FH, lk.fh.FH, l.ga.Attr)
	}

	ga := knfsdDecode(t, "getattr", false, OpSequence, OpPutFH, OpGetattr)
	engine("getattr", ga, PGetattr, 0)
	if a := &ga.ga.Attr; !a.Mask.Has(AttrType) || !a.Mask.Has(AttrSize) || a.Type != TypeReg || a.Size != 4<<20 ||
		a.FileID != l.ga.Attr.FileID || a.NumLinks != 1 {
		t.Errorf("getattr: %+v, want a regular file of 4 MiB, one link, file id %d", *a, l.ga.Attr.FileID)
	}
	if fh := ga.call.fhs[0]; fh != string(lk.fh.FH) {
		t.Errorf("getattr: PUTFH %x, not the file's %x", fh, lk.fh.FH)
	}

	for _, r := range []struct {
		name  string
		size  int
		chunk bool
	}{{"read", 64, false}, {"read-chunk", 8192, true}} {
		k := knfsdDecode(t, r.name, r.chunk, OpSequence, OpPutFH, OpRead)
		engine(r.name, k, PRead, r.size)
		d := k.read.Data
		if int(k.call.readCount) != r.size || len(d) != r.size || k.read.EOF || benchprog.Verify(d, benchprog.FileSeed, k.call.readOff) >= 0 {
			t.Errorf("%s: READ of %d at %d: %d bytes eof %v, not the pattern there", r.name, k.call.readCount, k.call.readOff, len(d), k.read.EOF)
		}
	}
	// The reply to a READ of 8192 bytes carries its data in the Write chunk alone.
	var rr CompoundRes
	var seq SequenceRes
	var inline ReadRes
	err := rr.Decode(knfsdHex(t, "read-chunk"))
	if err == nil {
		err = rr.Sequence(&seq)
	}
	if err == nil {
		_, err = rr.Op(OpPutFH)
	}
	if err == nil {
		err = rr.Read(&inline)
	}
	if err == nil {
		t.Errorf("read-chunk: %d bytes of data inline", len(inline.Data))
	}

	w := knfsdDecode(t, "write", false, OpSequence, OpPutFH, OpWrite, OpGetattr)
	engine("write", w, PWrite, 8)
	if w.call.writeStable != uint32(Unstable) || len(w.call.writeData) != 8 || w.write.Count != 8 {
		t.Errorf("write: %d bytes %v: %+v", len(w.call.writeData), StableHow(w.call.writeStable), w.write)
	}
	// The GETATTR after WRITE, as the Linux client asks it: change, size and the times.
	if m := w.ga.Attr.Mask; !m.Has(AttrChange) || !m.Has(AttrSize) || !m.Has(AttrTimeModify) || w.ga.Attr.Size < 8 {
		t.Errorf("write: GETATTR %+v, want change, size of at least 8 bytes and time_modify", w.ga.Attr)
	}
	ws := knfsdDecode(t, "write-sync", false, OpSequence, OpPutFH, OpWrite, OpGetattr)
	engine("write-sync", ws, PWriteSync, 8)
	if ws.call.writeStable != uint32(FileSync) || ws.write.Count != 8 || ws.write.Committed != FileSync || ws.write.Verf != w.write.Verf {
		t.Errorf("write-sync: %+v, want 8 bytes FILE_SYNC with the verifier %x", ws.write, w.write.Verf)
	}

	cm := knfsdDecode(t, "commit", false, OpSequence, OpPutFH, OpCommit)
	engine("commit", cm, PCommit, 0)
	if cm.commit.Verf != w.write.Verf {
		t.Errorf("commit: verifier %x, WRITE's %x", cm.commit.Verf, w.write.Verf)
	}

	rd := knfsdDecode(t, "readdir", false, OpSequence, OpPutFH, OpReaddir)
	engine("readdir", rd, PReaddir, 4096)
	it := rd.readdir.Entries
	n := it.Len()
	var e Entry
	for it.Next(&e) {
		// RFC 8881 section 18.23.4: never "." nor "..".
		if len(e.Name) == 0 || string(e.Name) == "." || string(e.Name) == ".." || !e.Attr.Mask.Has(AttrType) || e.Attr.Type == 0 {
			t.Errorf("readdir: entry %q cookie %d %v", e.Name, e.Cookie, e.Attr.Type)
		}
		n--
	}
	if rd.readdir.Entries.Len() == 0 || n != 0 || rd.call.readdirMax != 4096 {
		t.Errorf("readdir: %d entries (%d not walked) for maxcount %d", rd.readdir.Entries.Len(), n, rd.call.readdirMax)
	}

	oc := knfsdDecode(t, "open-close", false, OpSequence, OpPutFH, OpOpen, OpClose)
	engine("open-close", oc, POpenClose, 0)
	// CLOSE's own stateid is meaningless in NFSv4.1 (knfsd sends a special one).
	if !slices.Equal(oc.call.names, []string{"rpcrdma-bench.dat"}) || oc.open.Stateid.Other == ([12]byte{}) ||
		oc.call.stateids[0] != closeCurrent {
		t.Errorf("open-close: OPEN of %q gave %+v; CLOSE of %+v", oc.call.names, oc.open.Stateid, oc.call.stateids)
	}
}
