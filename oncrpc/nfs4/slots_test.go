package nfs4

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// The sequenceid rules of RFC 8881 section 2.10.6 for every way a call on a slot ends, against
// the fake server's slot (which moves only on a SEQUENCE it executed): after each, the next
// call on the slot is the one the server takes.
func TestSlotOutcomes(t *testing.T) {
	s, c := setUp(t)
	args, _, _ := c.Sizes(PGetattr, 0)
	encode := func() []byte {
		b := make([]byte, args)
		c.EncodeArgs(b, PGetattr, 0, 0, 0, false)
		return b
	}
	next := func(what string) {
		t.Helper()
		if _, err := s.call(c, PGetattr, 0, 0); err != nil {
			t.Fatalf("%s: the next call: %v", what, err)
		}
	}
	kind := func(err error) string {
		var re *rpcproto.ResultError
		if errors.As(err, &re) {
			return re.Kind()
		}
		return ""
	}

	// An NFS error after SEQUENCE: the slot moved on.
	s.fail[OpGetattr] = []Status{ErrStale}
	if _, err := s.call(c, PGetattr, 0, 0); kind(err) != "nfs4err_stale" {
		t.Fatalf("GETATTR STALE: %v", err)
	}
	next("after an NFS error")

	// Executed, then the RPC failed below the codec: the slot moves on.
	s.answer(encode())
	c.Unanswered(PGetattr, 0)
	next("after an executed call without results")

	// Not executed and failed below the codec: the slot moved on wrongly, the next call is
	// SEQ_MISORDERED and steps it back, the one after is taken.
	encode()
	c.Unanswered(PGetattr, 0)
	if _, err := s.call(c, PGetattr, 0, 0); kind(err) != "nfs4err_seq_misordered" {
		t.Fatalf("after an unexecuted call without results: %v, want NFS4ERR_SEQ_MISORDERED", err)
	}
	next("after SEQ_MISORDERED")

	// SEQ_MISORDERED on a slot whose last call the server answered: the slot stays.
	s.fail[OpSequence] = []Status{ErrSeqMisordered}
	if _, err := s.call(c, PGetattr, 0, 0); kind(err) != "nfs4err_seq_misordered" {
		t.Fatal(err)
	}
	next("after SEQ_MISORDERED on a confirmed slot")

	// DELAY from SEQUENCE: the server did not take the sequenceid; the next call sends it.
	s.fail[OpSequence] = []Status{ErrDelay}
	if _, err := s.call(c, PGetattr, 0, 0); kind(err) != "nfs4err_delay" {
		t.Fatal(err)
	}
	next("after DELAY")

	// RETRY_UNCACHED_REP and SEQ_FALSE_RETRY: the server holds the sequenceid already.
	for _, st := range []Status{ErrRetryUncachedRep, ErrSeqFalseRetry} {
		b := encode()
		s.slots[0]++ // the server executed this sequenceid before
		s.fail[OpSequence] = []Status{st}
		if _, err := c.DecodeResults(PGetattr, 0, s.answer(b), nil, 0, 0, false); kind(err) != strings.ToLower(st.String()) {
			t.Fatalf("%v: %v", st, err)
		}
		next("after " + st.String())
	}

	// BADSLOT above slot 0: calls are bounded below it; on slot 0 the session is lost.
	if c.Slots() != 8 {
		t.Fatalf("Slots %d", c.Slots())
	}
	var busy [3][]byte
	for i := range busy {
		busy[i] = encode2(c, args, i)
	}
	s.fail[OpSequence] = []Status{ErrBadSlot}
	if _, err := c.DecodeResults(PGetattr, 2, s.answer(busy[2]), nil, 0, 0, false); kind(err) != "nfs4err_badslot" || c.Slots() != 2 || c.Lost() {
		t.Fatalf("BADSLOT on slot 2: %v, Slots %d, lost %v", err, c.Slots(), c.Lost())
	}
	for i := range 2 {
		if _, err := c.DecodeResults(PGetattr, i, s.answer(busy[i]), nil, 0, 0, false); err != nil {
			t.Fatal(err)
		}
	}
	s.fail[OpSequence] = []Status{ErrBadSlot}
	if _, err := s.call(c, PGetattr, 0, 0); kind(err) != "nfs4err_badslot" || !c.Lost() {
		t.Fatalf("BADSLOT on slot 0: %v, lost %v", err, c.Lost())
	}
}

// encode2 encodes a GETATTR on the transport's slot req.
func encode2(c *Codec, args, req int) []byte {
	b := make([]byte, args)
	c.EncodeArgs(b, PGetattr, 0, req, 0, false)
	return b
}

// The server's sr_target_highest_slotid and sr_highest_slotid bound Slots, up to the grant.
func TestSlotBounds(t *testing.T) {
	s, c := setUp(t)
	for _, tt := range []struct{ server, slots int }{{4, 4}, {8, 8}, {2, 2}, {32, 8}} {
		s.maxReqs = uint32(tt.server) // the fake answers highest and target maxReqs-1
		if _, err := s.call(c, PGetattr, 0, 0); err != nil {
			t.Fatal(err)
		}
		if c.Slots() != tt.slots || c.TargetHighestSlot() != uint32(tt.slots-1) {
			t.Fatalf("server at %d: Slots %d, target %d; want %d (the grant is 8)", tt.server, c.Slots(), c.TargetHighestSlot(), tt.slots)
		}
	}
}

// BADSESSION loses the session; Next makes a new one on the same client (CREATE_SESSION
// alone: the opens are the client's), counted; STALE_CLIENTID on it makes a new client first.
func TestSessionRecovery(t *testing.T) {
	s, c := setUp(t)
	s.sess[0] ^= 0xff // the server's session is another now
	if _, err := s.call(c, PGetattr, 0, 0); err == nil || !c.Lost() {
		t.Fatalf("BADSESSION: %v, lost %v", err, c.Lost())
	}
	s.calls = nil
	converse(t, s, c, false)
	if got := opNamesOf(s.calls); len(got) != 1 || got[0] != "CREATE_SESSION" || c.Lost() {
		t.Fatalf("recovery calls %q, lost %v", got, c.Lost())
	}
	if n, ids := c.Recoveries(); n != 1 || ids != 0 {
		t.Fatalf("recoveries %d, %d", n, ids)
	}
	if _, err := s.call(c, PGetattr, 0, 0); err != nil {
		t.Fatal(err)
	}

	// The client forgotten too: EXCHANGE_ID and the whole setup again.
	s.sess[0] ^= 0xff
	if _, err := s.call(c, PGetattr, 0, 0); err == nil || !c.Lost() {
		t.Fatal("no loss")
	}
	s.fail[OpCreateSession] = []Status{ErrStaleClientID}
	s.calls = nil
	converse(t, s, c, false)
	got := opNamesOf(s.calls)
	if len(got) < 4 || got[0] != "CREATE_SESSION" || got[1] != "EXCHANGE_ID" || got[2] != "CREATE_SESSION" {
		t.Fatalf("recovery calls %q", got)
	}
	if n, ids := c.Recoveries(); n != 2 || ids != 1 {
		t.Fatalf("recoveries %d, %d", n, ids)
	}
	if _, err := s.call(c, PGetattr, 0, 0); err != nil {
		t.Fatal(err)
	}
}
