package nfs4

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

func sysCred(t testing.TB) oncrpc.OpaqueAuth {
	sc := oncrpc.SysCred{MachineName: []byte("vm"), NGids: 1}
	b := make([]byte, sc.Size())
	if _, err := sc.Encode(b); err != nil {
		t.Fatal(err)
	}
	return oncrpc.OpaqueAuth{Flavor: oncrpc.FlavorSys, Body: b}
}

var testInfo = rpcproto.ConnInfo{SendSize: 4096, RecvSize: 4096, MaxPayload: 1 << 20, Credits: 16, ReverseCredits: 2}

func newTestConn(t testing.TB, largest int) *Codec {
	tmpl := New(Config{File: "f", Scratch: "s", LargestRead: largest, Owner: "bench", Cred: sysCred(t)})
	c := tmpl.NewConn().(*Codec)
	c.Start(testInfo)
	return c
}

// converse runs c's conversation against s until Next says it is over, failing the test on
// an error.
func converse(t testing.TB, s *fakeServer, c *Codec, closing bool) {
	t.Helper()
	for range 20 {
		proc, size, ok := c.Next(closing)
		if !ok {
			return
		}
		if proc != PSession || size != 0 {
			t.Fatalf("Next: %d/%d", proc, size)
		}
		if _, err := s.call(c, proc, size, 0); err != nil {
			t.Fatalf("closing %v: %v", closing, err)
		}
	}
	t.Fatal("the conversation does not end")
}

func opNamesOf(calls []fcall) []string {
	var out []string
	for _, c := range calls {
		var n []string
		for _, op := range c.ops {
			n = append(n, opNames[op])
		}
		out = append(out, strings.Join(n, " "))
	}
	return out
}

func TestConversation(t *testing.T) {
	s := newFakeServer(t)
	c := newTestConn(t, 4096)
	if c.Slots() != 0 {
		t.Fatalf("Slots %d before the session", c.Slots())
	}
	// A GRACE reply to the first OPEN: the step fails Later and is made again.
	s.fail[OpOpen] = []Status{ErrGrace}
	var later error
	for range 20 {
		proc, size, ok := c.Next(false)
		if !ok {
			break
		}
		if _, err := s.call(c, proc, size, 0); err != nil {
			var re *rpcproto.ResultError
			if !errors.As(err, &re) || !re.Later() || re.Kind() != "nfs4err_grace" || !strings.Contains(err.Error(), "OPEN f") {
				t.Fatalf("GRACE: %v", err)
			}
			later = err
		}
	}
	if later == nil {
		t.Fatal("no GRACE error")
	}
	want := []string{
		"EXCHANGE_ID",
		"CREATE_SESSION",
		"SEQUENCE RECLAIM_COMPLETE",
		"SEQUENCE PUTROOTFH GETFH",
		"SEQUENCE PUTROOTFH LOOKUP GETFH GETATTR",
		"SEQUENCE PUTROOTFH LOOKUP GETFH GETATTR",
		"SEQUENCE PUTFH OPEN", // GRACE
		"SEQUENCE PUTFH OPEN",
		"SEQUENCE PUTFH OPEN",
	}
	if got := opNamesOf(s.calls); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls\n got %q\nwant %q", got, want)
	}
	calls := s.calls
	if calls[0].exchOwner != "bench/1" || calls[0].exchFlags != ExchgIDFlagSuppMovedRefer|ExchgIDFlagBindPrincState {
		t.Errorf("EXCHANGE_ID owner %q flags %#x", calls[0].exchOwner, calls[0].exchFlags)
	}
	cs := calls[1]
	if cs.csClient != s.client || cs.csSeq != 1 || cs.csFlags != CreateSessionFlagPersist|CreateSessionFlagConnBackChan ||
		cs.csProg != DefaultCBProgram || cs.secFlavor != uint32(oncrpc.FlavorSys) {
		t.Errorf("CREATE_SESSION %+v", cs)
	}
	// fore: headerpad 0, 1 MiB + 1 KiB each way, cached 512, 8 ops, 16 slots, no ird; back:
	// the inline sizes (capped at a page) less the transport header, 2 ops, 2 slots.
	if cs.fore.w != [6]uint32{0, 1<<20 + 1024, 1<<20 + 1024, 512, 8, 16} || cs.fore.ird != nil ||
		cs.back.w != [6]uint32{0, 4068, 4068, 0, 2, 2} || cs.back.ird != nil {
		t.Errorf("channel attrs fore %+v back %+v", cs.fore, cs.back)
	}
	if got := calls[4].names[0] + calls[5].names[0]; got != "fs" {
		t.Errorf("LOOKUP %q", got)
	}
	for i, want := range []uint32{ShareAccessRead | ShareAccessWantNoDeleg, ShareAccessRead | ShareAccessWantNoDeleg, ShareAccessWrite | ShareAccessWantNoDeleg} {
		o := calls[6+i]
		if o.share[0] != want || o.fhs[0] != "ROOT" {
			t.Errorf("OPEN %d: share %#x under %q", i, o.share[0], o.fhs[0])
		}
	}
	// Every call after CREATE_SESSION is on slot 0, the lowest free, with its next
	// sequenceid (the GRACE reply's SEQUENCE succeeded, so the retry has the next), and
	// names slot 0 the highest in use.
	for i, call := range calls[2:] {
		if call.sess != sess || call.slot != 0 || call.seqid != uint32(i+1) || call.high != 0 {
			t.Errorf("call %d: SEQUENCE %x slot %d seqid %d highest %d", i+2, call.sess, call.slot, call.seqid, call.high)
		}
	}
	// The server grants 8 of the 16 slots asked for.
	if c.Slots() != 8 || !c.BackChannel() {
		t.Errorf("Slots %d, back channel %v", c.Slots(), c.BackChannel())
	}

	// Measured calls use what setup found.
	s.calls = nil
	if _, err := s.call(c, PRead, 4096, 3); err != nil {
		t.Fatal(err)
	}
	if r := s.calls[0]; r.fhs[0] != "FILE" || r.stateids[0] != openState("f") || r.readCount != 4096 || r.slot != 0 || r.seqid != 8 || r.high != 0 {
		t.Errorf("READ %+v", r)
	}

	s.calls = nil
	converse(t, s, c, true)
	want = []string{"SEQUENCE PUTFH CLOSE", "SEQUENCE PUTFH CLOSE", "DESTROY_SESSION", "DESTROY_CLIENTID"}
	if got := opNamesOf(s.calls); !reflect.DeepEqual(got, want) {
		t.Fatalf("closing calls\n got %q\nwant %q", got, want)
	}
	if s.calls[0].fhs[0] != "FILE" || s.calls[0].stateids[0] != openState("f") ||
		s.calls[1].fhs[0] != "SCRATCH" || s.calls[1].stateids[0] != openState("s") ||
		s.calls[2].destroySess != sess || s.calls[3].destroyClient != s.client {
		t.Errorf("closing calls %+v", s.calls)
	}
	if _, _, ok := c.Next(true); ok {
		t.Error("Next after teardown")
	}
}

// With a NULL-only mix no file is looked up or opened; closing a conversation that failed
// half-way undoes only what was done.
func TestConversationPartial(t *testing.T) {
	s := newFakeServer(t)
	c := newTestConn(t, -1)
	converse(t, s, c, false)
	want := []string{"EXCHANGE_ID", "CREATE_SESSION", "SEQUENCE RECLAIM_COMPLETE"}
	if got := opNamesOf(s.calls); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}

	s = newFakeServer(t)
	s.fail[OpCreateSession] = []Status{ErrClidInUse}
	c = newTestConn(t, 0)
	if _, err := s.call(c, PSession, 0, 0); err != nil {
		t.Fatal(err)
	}
	_, err := s.call(c, PSession, 0, 0)
	var re *rpcproto.ResultError
	if !errors.As(err, &re) || re.Later() || re.Kind() != "nfs4err_clid_inuse" || !strings.Contains(err.Error(), "CREATE_SESSION") {
		t.Fatalf("CREATE_SESSION refused: %v", err)
	}
	s.calls = nil
	converse(t, s, c, true)
	if got := opNamesOf(s.calls); !reflect.DeepEqual(got, []string{"DESTROY_CLIENTID"}) {
		t.Fatalf("closing calls %q", got)
	}
}

// With verify, setting up reads the beginning of File to check that it holds the pattern.
func TestConversationVerify(t *testing.T) {
	for _, other := range []bool{false, true} {
		s := newFakeServer(t)
		s.other = other
		c := New(Config{File: "f", Scratch: "s", LargestRead: 100, Verify: true}).NewConn().(*Codec)
		c.Start(testInfo)
		var err error
		for range 20 {
			if _, _, ok := c.Next(false); !ok {
				break
			}
			if _, err = s.call(c, PSession, 0, 0); err != nil {
				break
			}
		}
		last := s.calls[len(s.calls)-1]
		if got := opNamesOf(s.calls[len(s.calls)-1:]); got[0] != "SEQUENCE PUTFH READ" || last.readCount != 100 || last.readOff != 0 || last.fhs[0] != "FILE" {
			t.Fatalf("last call %q %+v", got, last)
		}
		if other != (err != nil) || other && !strings.Contains(err.Error(), "f does not hold the benchmark pattern") {
			t.Fatalf("other data %v: %v", other, err)
		}
	}
}

func TestConversationErrors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		largest int
		size    uint64
		fail    map[uint32][]Status
		want    string
	}{
		{"small file", 1 << 20, 4096, nil, "f: 4096 bytes, smaller than the largest read (1048576)"},
		{"noent", 0, 4096, map[uint32][]Status{OpLookup: {ErrNoEnt}}, "NFSv4.1 LOOKUP f: NFS4ERR_NOENT"},
		{"reclaim complete already", 0, 4096, map[uint32][]Status{OpReclaimComplete: {ErrCompleteAlready}, OpOpen: {ErrAccess}}, "NFSv4.1 OPEN f: NFS4ERR_ACCESS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeServer(t)
			s.size, s.fail = tt.size, tt.fail
			c := newTestConn(t, tt.largest)
			var err error
			for range 20 {
				if _, _, ok := c.Next(false); !ok {
					break
				}
				if _, err = s.call(c, PSession, 0, 0); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// setUp returns a connection set up against a fake server.
func setUp(t testing.TB) (*fakeServer, *Codec) {
	s := newFakeServer(t)
	c := newTestConn(t, 4096)
	converse(t, s, c, false)
	s.calls = nil
	return s, c
}

// Calls take the lowest free session slot whatever the transport's slot (never one the
// server did not grant), name the highest slot in use, and each slot has its own
// sequenceid, moved on by every call the server took and not by one whose SEQUENCE failed.
func TestSessionSlots(t *testing.T) {
	s := newFakeServer(t)
	s.maxReqs = 2
	c := newTestConn(t, 4096)
	converse(t, s, c, false)
	s.calls = nil
	if c.Slots() != 2 {
		t.Fatalf("Slots %d, want the grant of 2", c.Slots())
	}
	args, _, _ := c.Sizes(PGetattr, 0)
	encode := func(req int) []byte {
		b := make([]byte, args)
		c.EncodeArgs(b, PGetattr, 0, req, 0, false)
		return b
	}
	// Two calls outstanding on transport slots 9 and 3, answered in the other order; then
	// transport slot 15 finds slot 0 free again.
	b9, b3 := encode(9), encode(3)
	r9, r3 := s.answer(b9), s.answer(b3)
	if _, err := c.DecodeResults(PGetattr, 3, r3, nil, 0, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DecodeResults(PGetattr, 9, r9, nil, 0, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.call(c, PGetattr, 0, 15); err != nil {
		t.Fatal(err)
	}
	s.fail[OpSequence] = []Status{ErrDelay}
	if _, err := s.call(c, PGetattr, 0, 1); err == nil || !strings.Contains(err.Error(), "NFS4ERR_DELAY") {
		t.Fatalf("SEQUENCE DELAY: %v", err)
	}
	if _, err := s.call(c, PGetattr, 0, 1); err != nil {
		t.Fatal(err)
	}
	var got [][3]uint32
	for _, call := range s.calls {
		got = append(got, [3]uint32{call.slot, call.seqid, call.high})
	}
	setup := s.slots[0] - 3 // slot 0's sequenceid after the setup
	want := [][3]uint32{{0, setup + 1, 0}, {1, 1, 1}, {0, setup + 2, 0}, {0, setup + 3, 0}, {0, setup + 3, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("slot, seqid, highest\n got %v\nwant %v", got, want)
	}
	// A reply naming another slot or sequenceid than the call is not taken.
	b := encode(1)
	reply := s.answer(b)
	encode(2)
	if _, err := c.DecodeResults(PGetattr, 2, reply, nil, 0, 0, false); !errors.Is(err, errSeqMismatch) {
		t.Fatalf("another slot's reply: %v", err)
	}
}

// The measured procedures' calls, byte for byte (RFC 8881 XDR, assembled by hand).
func TestMeasuredExactBytes(t *testing.T) {
	c := newTestConn(t, 4096)
	c.session, c.slots, c.clientID = sess, 16, 0x0102030405060708
	c.root.set(FH("R"))
	c.file.set(FH{0xf1, 0xf2, 0xf3, 0xf4})
	c.scratch.set(FH{0x5c})
	c.fileSize = 4096
	c.readState = state
	c.writeState = dstate
	const (
		hdr = "00000000 00000001 " // tag "", minorversion 1
		// SEQUENCE sessionid; sequenceid 1; slot 0, the lowest free (transport slot 2); highest 0,
		// the highest with a call outstanding; cachethis FALSE.
		seq2 = "00000035 " + sessHex + " 00000001 00000000 00000000 00000000"
		// ... sequenceid 2 (the slot's second call).
		seq2b = "00000035 " + sessHex + " 00000002 00000000 00000000 00000000"
	)
	tests := []struct {
		name       string
		proc, size int
		prefill    string // the payload the requester laid out
		want       string
		prefix     int
	}{
		// PUTFH f1f2f3f4; GETATTR {type change size fsid fileid; mode ... time_modify}.
		{"getattr", PGetattr, 0, "", hdr + "00000003 " + seq2 + " 00000016 00000004 f1f2f3f4 00000009 00000002 0010011a 0030a23a", -1},
		// PUTFH; READ stateid, offset 0 (the file holds one 4 KiB block), count 4096.
		{"read", PRead, 4096, "", hdr + "00000003 " + seq2b + " 00000016 00000004 f1f2f3f4 00000019 " + stateHex + " 00000000 00000000 00001000", -1},
		// PUTFH 5c; WRITE stateid, offset 0, UNSTABLE4, data "hello" + pad; GETATTR {change
		// size; time_metadata time_modify}, as the Linux client follows a WRITE.
		{"write", PWrite, 5, "68656c6c 6fffffff", hdr + "00000004 00000035 " + sessHex + " 00000003 00000000 00000000 00000000" +
			" 00000016 00000001 5c000000 00000026 00000001 a0a1a2a3 a4a5a6a7 a8a9aaab 00000000 00000000 00000000 00000005 68656c6c 6f000000" +
			" 00000009 00000002 00000018 00300000", 12 + 36 + 12 + 36},
		// ... FILE_SYNC4.
		{"write-sync", PWriteSync, 4, "01020304", hdr + "00000004 00000035 " + sessHex + " 00000004 00000000 00000000 00000000" +
			" 00000016 00000001 5c000000 00000026 00000001 a0a1a2a3 a4a5a6a7 a8a9aaab 00000000 00000000 00000002 00000004 01020304" +
			" 00000009 00000002 00000018 00300000", 12 + 36 + 12 + 36},
		// PUTFH 5c; COMMIT 0, 0.
		{"commit", PCommit, 0, "", hdr + "00000003 00000035 " + sessHex + " 00000005 00000000 00000000 00000000" +
			" 00000016 00000001 5c000000 00000005 00000000 00000000 00000000", -1},
		// PUTFH "R"; LOOKUP "f"; GETFH; GETATTR, as the Linux client looks a name up.
		{"lookup", PLookup, 0, "", hdr + "00000005 00000035 " + sessHex + " 00000006 00000000 00000000 00000000" +
			" 00000016 00000001 52000000 0000000f 00000001 66000000 0000000a 00000009 00000002 0010011a 0030a23a", -1},
		// PUTFH "R"; READDIR cookie 0, verifier 0, dircount = maxcount = 8192, StatAttrs.
		{"readdir", PReaddir, 8192, "", hdr + "00000003 00000035 " + sessHex + " 00000007 00000000 00000000 00000000" +
			" 00000016 00000001 52000000 0000001a 00000000 00000000 00000000 00000000 00002000 00002000 00000002 0010011a 0030a23a", -1},
		// PUTFH "R"; OPEN seqid 0, READ|WANT_NO_DELEG, deny NONE, owner {clientid, "oc000002"},
		// NOCREATE, CLAIM_NULL "f"; CLOSE seqid 0, the current stateid {1, 0...}.
		{"open-close", POpenClose, 0, "", hdr + "00000004 00000035 " + sessHex + " 00000008 00000000 00000000 00000000" +
			" 00000016 00000001 52000000 00000012 00000000 00000401 00000000 01020304 05060708 00000008 6f633030 30303032" +
			" 00000000 00000000 00000001 66000000 00000004 00000000 00000001 00000000 00000000 00000000", -1},
	}
	for _, tt := range tests {
		want := testutil.Unhex(t, tt.want)
		args, prefix, _ := c.Sizes(tt.proc, tt.size)
		wantPrefix := tt.prefix
		if wantPrefix < 0 {
			wantPrefix = len(want) // no payload in the call
		}
		if args != len(want) || prefix != wantPrefix {
			t.Errorf("%s: Sizes args %d prefix %d, want %d %d", tt.name, args, prefix, len(want), wantPrefix)
			continue
		}
		b := bytes.Repeat([]byte{0xee}, args)
		copy(b[prefix:], testutil.Unhex(t, tt.prefill))
		c.EncodeArgs(b, tt.proc, tt.size, 2, 0, false)
		if !bytes.Equal(b, want) || c.encErr != nil {
			t.Errorf("%s: %v\n got %x\nwant %x", tt.name, c.encErr, b, want)
		}
		c.table.end(2, outcomeDone) // as if the server took the call
	}
}

// Measured results: decoded, checked and verified.
func TestMeasuredResults(t *testing.T) {
	s, c := setUp(t)
	for _, proc := range []int{PGetattr, PCommit, POpenClose} {
		if _, err := s.call(c, proc, 0, 1); err != nil {
			t.Fatalf("%s: %v", Prog.Procs[proc].Name, err)
		}
	}
	if got := s.calls[2].owners[0]; got != "oc000001" {
		t.Errorf("open-close owner %q", got)
	}

	// READ of the pattern, in a Write chunk, verified at its offset.
	const size = 4096
	args, _, _ := c.Sizes(PRead, size)
	b := make([]byte, args)
	seed := uint64(12345)
	c.EncodeArgs(b, PRead, size, 0, seed, true)
	call := parseCall(t, b)
	data := make([]byte, size)
	benchprog.Fill(data, benchprog.FileSeed, call.readOff)
	var w xw
	w.u32(0).u32(0).u32(3).u32(OpSequence).u32(0).raw(sess[:]).u32(call.seqid).u32(0).u32(7).u32(7).u32(0).
		u32(OpPutFH).u32(0).u32(OpRead).u32(0).u32(0).u32(size)
	got, err := c.DecodeResults(PRead, 0, w.b, data, size, seed, true)
	if err != nil || &got[0] != &data[0] {
		t.Fatalf("READ: %v", err)
	}
	// The next call on the slot: the data is not the pattern at its offset.
	c.EncodeArgs(b, PRead, size, 0, seed, true)
	binary.BigEndian.PutUint32(w.b[12+8+16:], call.seqid+1) // after the header, opnum, status, sessionid
	data[100] ^= 1
	if _, err := c.DecodeResults(PRead, 0, w.b, data, size, seed, true); !errors.Is(err, rpcproto.ErrVerify) {
		t.Fatalf("READ of other data: %v", err)
	}

	// WRITE with verify carries the pattern of its seed; a short count fails it.
	args, prefix, _ := c.Sizes(PWriteSync, size)
	b = make([]byte, args)
	c.EncodeArgs(b, PWriteSync, size, 0, seed, true)
	if benchprog.Verify(b[prefix:prefix+size], seed, 0) >= 0 {
		t.Fatal("WRITE data is not the pattern")
	}
	call = parseCall(t, b)
	reply := func(count uint32, committed StableHow) []byte {
		var w xw
		w.u32(0).u32(0).u32(3).u32(OpSequence).u32(0).raw(sess[:]).u32(call.seqid).u32(0).u32(7).u32(7).u32(0).
			u32(OpPutFH).u32(0).u32(OpWrite).u32(0).u32(count).u32(uint32(committed)).u64(0)
		return w.b
	}
	if _, err := c.DecodeResults(PWriteSync, 0, reply(size, Unstable), nil, size, seed, true); !errors.Is(err, errNotFileSync) {
		t.Fatalf("FILE_SYNC answered UNSTABLE: %v", err)
	}
	c.EncodeArgs(b, PWriteSync, size, 0, seed, true)
	call = parseCall(t, b)
	if _, err := c.DecodeResults(PWriteSync, 0, reply(size-1, FileSync), nil, size, seed, true); !errors.Is(err, errShortWrite) {
		t.Fatalf("short WRITE: %v", err)
	}

	// A failed operation is the procedure's failure by status.
	s.fail[OpGetattr] = []Status{ErrStale}
	s.slots[0] = c.table.slots[0].last // the calls above went by the server
	_, err = s.call(c, PGetattr, 0, 5)
	var re *rpcproto.ResultError
	if !errors.As(err, &re) || re.Kind() != "nfs4err_stale" || err.Error() != "NFSv4.1 GETATTR: NFS4ERR_STALE" {
		t.Fatalf("GETATTR STALE: %v", err)
	}
}

// TestConversationExport: with an export path, the root the files are named in is looked up
// component by component from the server's root, before the files, in the same COMPOUNDs.
func TestConversationExport(t *testing.T) {
	s := newFakeServer(t)
	tmpl := New(Config{File: "f", Scratch: "s", LargestRead: 4096, Owner: "bench", Cred: sysCred(t), Export: "/srv//nfs/"})
	c := tmpl.NewConn().(*Codec)
	c.Start(testInfo)
	converse(t, s, c, false)
	want := []string{
		"EXCHANGE_ID",
		"CREATE_SESSION",
		"SEQUENCE RECLAIM_COMPLETE",
		"SEQUENCE PUTROOTFH LOOKUP LOOKUP GETFH",
		"SEQUENCE PUTROOTFH LOOKUP LOOKUP LOOKUP GETFH GETATTR",
		"SEQUENCE PUTROOTFH LOOKUP LOOKUP LOOKUP GETFH GETATTR",
		"SEQUENCE PUTFH OPEN",
		"SEQUENCE PUTFH OPEN",
	}
	if got := opNamesOf(s.calls); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls\n got %q\nwant %q", got, want)
	}
	if got := strings.Join(s.calls[3].names, "/") + " " + strings.Join(s.calls[4].names, "/"); got != "srv/nfs srv/nfs/f" {
		t.Errorf("LOOKUPs %q", got)
	}
	if string(c.file.fh()) != "FILE" || string(c.scratch.fh()) != "SCRATCH" {
		t.Errorf("files' handles %q %q", c.file.fh(), c.scratch.fh())
	}
}
