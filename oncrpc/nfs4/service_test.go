package nfs4

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Hand-built CB_COMPOUND4args and their results (RFC 8881 section 20).
const (
	// tag ""; minorversion 1; callback_ident 0.
	cbHdr = "00000000 00000001 00000000 "
	// CB_RECALL of dstate, truncate FALSE, fh aabbccdd.
	cbRecall = " 00000004 00000001 a0a1a2a3 a4a5a6a7 a8a9aaab 00000000 00000004 aabbccdd"
)

// holdRecalled makes c hold the delegation cbRecall names (stateid dstate on fh aabbccdd).
func holdRecalled(c *Codec) {
	c.delegated = true
	c.delegState = Stateid{Seqid: 1, Other: [OtherSize]byte{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab}}
	c.delegFH.set(FH{0xaa, 0xbb, 0xcc, 0xdd})
}

// cbSeq is CB_SEQUENCE of our session on slot with sequenceid seq, cachethis FALSE, no
// referring calls.
func cbSeq(sessHex, seq, slot string) string {
	return " 0000000b " + sessHex + " " + seq + " " + slot + " 00000000 00000000 00000000"
}

// cbSeqOK is its result: two back channel slots, so highest and target are 1.
func cbSeqOK(seq, slot string) string {
	return " 0000000b 00000000 " + sessHex + " " + seq + " " + slot + " 00000001 00000001"
}

func TestServe(t *testing.T) {
	_, c := setUp(t)
	holdRecalled(c)
	svc := c.Service()
	if p, v := svc.Program(); p != DefaultCBProgram || v != 1 {
		t.Errorf("Program %#x %d", p, v)
	}
	if got := svc.Procs(); !reflect.DeepEqual(got, []string{"cb_null", "cb_compound"}) {
		t.Errorf("Procs %q", got)
	}
	res := make([]byte, 512)
	if n, err := svc.Serve(CBProcNull, nil, res); n != 0 || err != nil {
		t.Fatalf("CB_NULL: %d %v", n, err)
	}
	if _, _, ok := c.Recall(); ok {
		t.Fatal("a recall before any came")
	}

	const other = "ffffffff 04050607 08090a0b 0c0d0e0f"
	tests := []struct {
		name, args, reply, kind string
		recall                  bool
	}{
		{"recall", cbHdr + "00000002" + cbSeq(sessHex, "00000001", "00000000") + cbRecall,
			"00000000 00000000 00000002" + cbSeqOK("00000001", "00000000") + " 00000004 00000000", "", true},
		// The same call again (the server did not get our reply), its reply not cached:
		// nothing executed again, NFS4ERR_RETRY_UNCACHED_REP (10068) after CB_SEQUENCE.
		{"replay", cbHdr + "00000002" + cbSeq(sessHex, "00000001", "00000000") + cbRecall,
			"00002754 00000000 00000002" + cbSeqOK("00000001", "00000000") + " 00000004 00002754", "cb_retry_uncached_rep", false},
		{"sequence alone, slot 1", cbHdr + "00000001" + cbSeq(sessHex, "00000001", "00000001"),
			"00000000 00000000 00000001" + cbSeqOK("00000001", "00000001"), "", false},
		// Slot 0's next is 2: 3 is NFS4ERR_SEQ_MISORDERED (10063).
		{"misordered", cbHdr + "00000002" + cbSeq(sessHex, "00000003", "00000000") + cbRecall,
			"0000274f 00000000 00000001 0000000b 0000274f", "cb_seq_misordered", false},
		// Another session: NFS4ERR_BADSESSION (10052).
		{"bad session", cbHdr + "00000002" + cbSeq(other, "00000002", "00000000") + cbRecall,
			"00002744 00000000 00000001 0000000b 00002744", "cb_badsession", false},
		// Slot 2 of two: NFS4ERR_BADSLOT (10053).
		{"bad slot", cbHdr + "00000001" + cbSeq(sessHex, "00000001", "00000002"),
			"00002745 00000000 00000001 0000000b 00002745", "cb_badslot", false},
		// CB_RECALL without CB_SEQUENCE: NFS4ERR_OP_NOT_IN_SESSION (10071).
		{"not in session", cbHdr + "00000001" + cbRecall,
			"00002757 00000000 00000001 00000004 00002757", "cb_op_not_in_session", false},
		// A second CB_SEQUENCE: NFS4ERR_SEQUENCE_POS (10064).
		{"sequence pos", cbHdr + "00000002" + cbSeq(sessHex, "00000002", "00000000") + cbSeq(sessHex, "00000002", "00000001"),
			"00002750 00000000 00000002" + cbSeqOK("00000002", "00000000") + " 0000000b 00002750", "cb_sequence_pos", false},
		// CB_GETATTR: NFS4ERR_NOTSUPP (10004), after a successful CB_SEQUENCE.
		{"notsupp", cbHdr + "00000002" + cbSeq(sessHex, "00000003", "00000000") + " 00000003 ffffffff",
			"00002714 00000000 00000002" + cbSeqOK("00000003", "00000000") + " 00000003 00002714", "cb_notsupp", false},
		// Operation 99: CB_ILLEGAL (10044) with NFS4ERR_OP_ILLEGAL.
		{"illegal", cbHdr + "00000002" + cbSeq(sessHex, "00000004", "00000000") + " 00000063",
			"0000273c 00000000 00000002" + cbSeqOK("00000004", "00000000") + " 0000273c 0000273c", "cb_op_illegal", false},
		// minorversion 0: NFS4ERR_MINOR_VERS_MISMATCH (10021), no results.
		{"minor version", "00000000 00000000 00000000 00000001" + cbSeq(sessHex, "00000005", "00000000"),
			"00002725 00000000 00000000", "cb_minor_vers_mismatch", false},
	}
	for _, tt := range tests {
		before := Now()
		clear(res)
		n, err := svc.Serve(CBProcCompound, testutil.Unhex(t, tt.args), res)
		if want := testutil.Unhex(t, tt.reply); !bytes.Equal(res[:n], want) {
			t.Errorf("%s: reply\n got %x\nwant %x", tt.name, res[:n], want)
		}
		var re *rpcproto.ResultError
		if tt.kind == "" && err != nil || tt.kind != "" && (!errors.As(err, &re) || re.Kind() != tt.kind) {
			t.Errorf("%s: error %v, want kind %q", tt.name, err, tt.kind)
		}
		st, at, ok := c.Recall()
		if ok != tt.recall || ok && (st != dstate || at < before || at > Now()) {
			t.Errorf("%s: Recall %+v %d %v", tt.name, st, at, ok)
		}
		if _, _, ok := c.Recall(); ok {
			t.Errorf("%s: a recall taken twice", tt.name)
		}
	}

	// Arguments that do not decode: GARBAGE_ARGS (no results).
	for _, args := range []string{"", "00000000 00000001", cbHdr + "00000002" + cbSeq(sessHex, "00000005", "00000000") + " 00000004 00000001"} {
		if n, err := svc.Serve(CBProcCompound, testutil.Unhex(t, args), res); n != 0 || err == nil {
			t.Errorf("%q: %d %v", args, n, err)
		}
	}
	// The truncated CB_RECALL above did not move slot 0 on: 5 is still its next.
	if n, err := svc.Serve(CBProcCompound, testutil.Unhex(t, cbHdr+"00000001"+cbSeq(sessHex, "00000005", "00000000")), res); n == 0 || err != nil {
		t.Errorf("slot 0 after garbage: %d %v", n, err)
	}
	if n, err := svc.Serve(2, nil, res); n != 0 || err == nil {
		t.Errorf("procedure 2: %d %v", n, err)
	}
	// A reply buffer too small for the results.
	if n, err := svc.Serve(CBProcCompound, testutil.Unhex(t, cbHdr+"00000001"+cbSeq(sessHex, "00000006", "00000000")), res[:20]); n != 0 || err == nil {
		t.Errorf("small reply buffer: %d %v", n, err)
	}
}

// The delegation procedures: open with a read delegation, return it, close; a conflicting
// open answered NFS4ERR_DELAY until the delegation is back.
func TestDelegation(t *testing.T) {
	s, c := setUp(t)
	c.SetRecallFile("r")
	s.deleg = true
	if _, err := s.call(c, PDelegOpen, 0, 1); err != nil {
		t.Fatal(err)
	}
	if !c.Delegated() {
		t.Fatal("no delegation")
	}
	if o := s.calls[0]; o.share[0] != ShareAccessRead|ShareAccessWantReadDel || o.names[0] != "r" || o.owners[0] != "deleg" || o.fhs[0] != "ROOT" {
		t.Errorf("OPEN %+v", o)
	}
	if _, err := s.call(c, PDelegReturn, 0, 1); err != nil {
		t.Fatal(err)
	}
	if d := s.calls[1]; d.fhs[0] != "RECALL" || d.stateids[0] != delegState || c.Delegated() {
		t.Errorf("DELEGRETURN %+v, delegated %v", d, c.Delegated())
	}
	if _, err := s.call(c, PDelegClose, 0, 1); err != nil {
		t.Fatal(err)
	}
	if cl := s.calls[2]; cl.fhs[0] != "RECALL" || cl.stateids[0] != openState("r") {
		t.Errorf("CLOSE %+v", cl)
	}

	s.fail[OpOpen] = []Status{ErrDelay}
	_, err := s.call(c, PDelegConflict, 0, 2)
	var re *rpcproto.ResultError
	if !errors.As(err, &re) || !re.Later() || re.Kind() != "nfs4err_delay" || !strings.Contains(err.Error(), "DELEG-CONFLICT") {
		t.Fatalf("conflict DELAY: %v", err)
	}
	if _, err := s.call(c, PDelegConflict, 0, 2); err != nil {
		t.Fatal(err)
	}
	if o := s.calls[4]; o.share[0] != ShareAccessWrite|ShareAccessWantNoDeleg || o.names[0] != "r" {
		t.Errorf("conflicting OPEN %+v", o)
	}
	if _, err := s.call(c, PDelegClose, 0, 2); err != nil {
		t.Fatal(err)
	}
	if cl := s.calls[5]; cl.stateids[0] != openState("r") {
		t.Errorf("CLOSE %+v", cl)
	}
}
