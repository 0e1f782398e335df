package nfs4

import (
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// callbacks is a connection's callback service: CB_NULL, and CB_COMPOUND with CB_SEQUENCE
// and CB_RECALL (every other callback is answered NFS4ERR_NOTSUPP, or CB_ILLEGAL).
type callbacks struct {
	c     *Codec
	slots []backSlot // the back channel's
}

// backSlot is a back channel slot: the sequenceid of its last CB_COMPOUND and, when the
// server asked for it to be cached (csa_cachethis), its reply (RFC 8881 section
// 2.10.6.1.3: a reply cache of one per slot).
type backSlot struct {
	seq    uint32
	cached bool
	reply  []byte
	fail   error // the cached reply's failure, counted again with it
}

// reset makes n back channel slots for a new session, with room to cache replies of up to
// size bytes.
func (s *callbacks) reset(n, size int) {
	if len(s.slots) != n || len(s.slots) > 0 && cap(s.slots[0].reply) < size {
		s.slots = make([]backSlot, n)
		for i := range s.slots {
			s.slots[i].reply = make([]byte, 0, size)
		}
	}
	for i := range s.slots {
		s.slots[i].seq, s.slots[i].cached = 0, false
	}
}

var cbProcs = []string{"cb_null", "cb_compound"}

// Program is the callback program (Config.CBProgram), version 1.
func (s *callbacks) Program() (prog, vers uint32) { return s.c.cfg.CBProgram, 1 }

// Procs names CB_NULL and CB_COMPOUND.
func (s *callbacks) Procs() []string { return cbProcs }

// Serve answers CB_NULL and CB_COMPOUND (RFC 8881 section 20). A CB_COMPOUND must start with
// CB_SEQUENCE of this connection's session on a slot of the back channel, whose sequenceid
// is the slot's next (a new call) or its last (a retry: the slot's cached reply when the
// server asked for one, else, as Linux's client answers, CB_SEQUENCE's result and
// NFS4ERR_RETRY_UNCACHED_REP for the operation after it, executing nothing again). A
// CB_RECALL is checked as Linux's client checks it: NFS4ERR_BADHANDLE unless it names the
// file of the delegation held, NFS4ERR_BAD_STATEID unless it names that delegation's
// stateid; else it is answered NFS4_OK and recorded for Recall. Failures are answered and
// returned as errors named "cb_" and the status ("cb_notsupp", "cb_badsession").
func (s *callbacks) Serve(proc uint32, args, res []byte) (int, error) {
	now := Now()
	switch proc {
	case CBProcNull:
		return 0, nil
	case CBProcCompound:
	default:
		return 0, ErrProc
	}
	var cb CBCompound
	if err := cb.Decode(args); err != nil {
		return 0, err
	}
	var r CBReply
	r.Start(res, cb.Tag)
	if cb.MinorVersion != MinorVersion {
		n, err := r.Finish(ErrMinorVersMismatch)
		if err != nil {
			return 0, err
		}
		return n, cbError(ErrMinorVersMismatch)
	}
	var (
		op       CBOp
		fail     error
		slot     = -1 // the CB_SEQUENCE's slot, to move on once the COMPOUND decoded
		seqid    uint32
		replay   bool
		cache    bool
		recall   Stateid
		recalled bool
	)
walk:
	for i := 0; cb.Next(&op); i++ {
		switch {
		case replay:
			// A retry whose reply was not cached: nothing runs twice, and the operation
			// after CB_SEQUENCE says why (RFC 8881 section 2.10.6.1.3).
			code := op.Op
			if op.Illegal() {
				code = CBOpIllegal
			}
			r.Result(code, ErrRetryUncachedRep)
			fail = cbError(ErrRetryUncachedRep)
			break walk
		case !op.Decoded():
			r.Unsupported(&op)
			fail = errCBNotSupp
			if op.Illegal() {
				fail = errCBIllegal
			}
			break walk
		case op.Op == CBOpSequence && i > 0:
			r.Sequence(ErrSequencePos, nil)
			fail = cbError(ErrSequencePos)
			break walk
		case op.Op == CBOpSequence:
			a := &op.Sequence
			st := s.check(a)
			if st != OK {
				r.Sequence(st, nil)
				fail = cbError(st)
				break walk
			}
			slot, seqid, cache = int(a.SlotID), a.SequenceID, a.CacheThis
			replay = seqid == s.slots[slot].seq
			if b := &s.slots[slot]; replay && b.cached {
				return copy(res, b.reply), b.fail
			}
			top := uint32(len(s.slots) - 1)
			r.Sequence(OK, &CBSequenceRes{SessionID: a.SessionID, SequenceID: seqid, SlotID: a.SlotID,
				HighestSlotID: top, TargetHighestSlotID: top})
		case i == 0: // a CB_RECALL outside a session
			r.Recall(ErrOpNotInSession)
			fail = cbError(ErrOpNotInSession)
			break walk
		default:
			st := s.c.recallStatus(&op.Recall)
			r.Recall(st)
			if st != OK {
				fail = cbError(st)
				break walk
			}
			recall, recalled = op.Recall.Stateid, true
		}
	}
	if err := cb.Err(); err != nil {
		return 0, err
	}
	n, err := r.Finish(OK)
	if err != nil {
		return 0, err
	}
	if slot >= 0 && !replay {
		b := &s.slots[slot]
		b.seq, b.cached, b.fail = seqid, cache && n <= cap(b.reply), fail
		if b.cached {
			b.reply = append(b.reply[:0], res[:n]...)
		}
	}
	if recalled {
		c := s.c
		c.mu.Lock()
		if !c.recalled || c.recall != recall {
			c.recall, c.recallAt, c.recalled = recall, now, true
		}
		c.mu.Unlock()
	}
	return n, fail
}

// recallStatus checks a CB_RECALL against the delegation held, as Linux's client does
// (nfs4_callback_recall): NFS4ERR_BADHANDLE when no delegation is held on its file,
// NFS4ERR_BAD_STATEID when the one held has another stateid (a seqid of 0 matches any).
func (c *Codec) recallStatus(a *CBRecallArgs) Status {
	c.mu.Lock()
	held, st := c.delegated, c.delegState
	c.mu.Unlock()
	if !held || string(a.FH) != string(c.delegFH.fh()) {
		return ErrBadHandle
	}
	if a.Stateid.Other != st.Other || a.Stateid.Seqid != st.Seqid && a.Stateid.Seqid != 0 && st.Seqid != 0 {
		return ErrBadStateid
	}
	return OK
}

// check checks a CB_SEQUENCE against the session and the back channel's slots (RFC 8881
// section 20.9.3).
func (s *callbacks) check(a *CBSequenceArgs) Status {
	switch {
	case s.c.session == SessionID{} || a.SessionID != s.c.session:
		return ErrBadSession
	case a.SlotID >= uint32(len(s.slots)):
		return ErrBadSlot
	}
	last := s.slots[a.SlotID].seq
	if a.SequenceID == last+1 || a.SequenceID == last && last != 0 {
		return OK
	}
	return ErrSeqMisordered
}

var (
	errCBNotSupp = rpcproto.NewResultError("cb_notsupp", "NFSv4.1 CB_COMPOUND: a callback this client does not implement (NFS4ERR_NOTSUPP)")
	errCBIllegal = rpcproto.NewResultError("cb_op_illegal", "NFSv4.1 CB_COMPOUND: an operation no callback has (CB_ILLEGAL)")
	errCBOther   = rpcproto.NewResultError("cb_other", "NFSv4.1 CB_COMPOUND: answered a status this client does not name")
)

// cbErrs are the failures of a CB_COMPOUND by status, made once.
var cbErrs = func() map[Status]*rpcproto.ResultError {
	m := map[Status]*rpcproto.ResultError{}
	for st := range statusNames {
		m[st] = rpcproto.NewResultError("cb_"+strings.ToLower(strings.TrimPrefix(st.String(), "NFS4ERR_")),
			"NFSv4.1 CB_COMPOUND: answered "+st.String())
	}
	return m
}()

func cbError(st Status) error {
	if e, ok := cbErrs[st]; ok {
		return e
	}
	return errCBOther
}
