package nfs4

import (
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// callbacks is a connection's callback service: CB_NULL, and CB_COMPOUND with CB_SEQUENCE
// and CB_RECALL (every other callback is answered NFS4ERR_NOTSUPP, or CB_ILLEGAL).
type callbacks struct {
	c   *Codec
	seq []uint32 // the back channel's slots: the last sequenceid of each
}

var cbProcs = []string{"cb_null", "cb_compound"}

// Program is the callback program (Config.CBProgram), version 1.
func (s *callbacks) Program() (prog, vers uint32) { return s.c.cfg.CBProgram, 1 }

// Procs names CB_NULL and CB_COMPOUND.
func (s *callbacks) Procs() []string { return cbProcs }

// Serve answers CB_NULL and CB_COMPOUND (RFC 8881 section 20). A CB_COMPOUND must start with
// CB_SEQUENCE of this connection's session on a slot of the back channel, whose sequenceid
// is the slot's next (a new call) or its last (a retry, answered again); CB_RECALL is
// answered NFS4_OK and recorded for Recall. Failures are answered and returned as errors
// named "cb_" and the status ("cb_notsupp", "cb_badsession").
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
		recall   Stateid
		recalled bool
	)
walk:
	for i := 0; cb.Next(&op); i++ {
		switch {
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
			slot, seqid = int(a.SlotID), a.SequenceID
			replay = seqid == s.seq[slot]
			top := uint32(len(s.seq) - 1)
			r.Sequence(OK, &CBSequenceRes{SessionID: a.SessionID, SequenceID: seqid, SlotID: a.SlotID,
				HighestSlotID: top, TargetHighestSlotID: top})
		case i == 0: // a CB_RECALL outside a session
			r.Recall(ErrOpNotInSession)
			fail = cbError(ErrOpNotInSession)
			break walk
		default:
			recall, recalled = op.Recall.Stateid, true
			r.Recall(OK)
		}
	}
	if err := cb.Err(); err != nil {
		return 0, err
	}
	n, err := r.Finish(OK)
	if err != nil {
		return 0, err
	}
	if slot >= 0 {
		s.seq[slot] = seqid
	}
	if recalled && !replay {
		c := s.c
		c.mu.Lock()
		c.recall, c.recallAt, c.recalled = recall, now, true
		c.mu.Unlock()
	}
	return n, fail
}

// check checks a CB_SEQUENCE against the session and the back channel's slots (RFC 8881
// section 20.9.3).
func (s *callbacks) check(a *CBSequenceArgs) Status {
	switch {
	case s.c.session == SessionID{} || a.SessionID != s.c.session:
		return ErrBadSession
	case a.SlotID >= uint32(len(s.seq)):
		return ErrBadSlot
	}
	last := s.seq[a.SlotID]
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
