package oncrpc

// Reply is an ONC RPC reply header (rpc_msg with msg_type REPLY, RFC 5531 section 9) up to
// the procedure results. Which fields mean something depends on Stat:
//
//	Accepted: Verf and Accept; Low and High when Accept is ProgMismatch.
//	Denied:   Reject; Low and High when Reject is RPCMismatch; Auth when Reject is AuthError.
//
// Decode zeroes the fields that do not apply, so a reused Reply carries nothing stale.
// After Decode, Verf.Body is a sub-slice of the decoded buffer.
type Reply struct {
	XID       uint32
	Stat      ReplyStat
	Verf      OpaqueAuth
	Accept    AcceptStat
	Reject    RejectStat
	Low, High uint32 // mismatch_info: lowest and highest supported version
	Auth      AuthStat
}

// ReplyHeaderSize is the exact encoded size of an accepted reply header with this verifier
// and accept_stat: xid, msg_type, reply_stat, verf, accept_stat, and for PROG_MISMATCH the
// two versions. For SUCCESS the results follow.
func ReplyHeaderSize(verf OpaqueAuth, stat AcceptStat) int {
	n := 16 + verf.Size()
	if stat == ProgMismatch {
		n += 8
	}
	return n
}

// DeniedReplySize is the exact encoded size of a denied reply: xid, msg_type, reply_stat,
// reject_stat, then two versions (RPC_MISMATCH) or an auth_stat (AUTH_ERROR).
func DeniedReplySize(stat RejectStat) int {
	if stat == RPCMismatch {
		return 24
	}
	return 20
}

// MaxReplyHeaderSize bounds every reply header: a PROG_MISMATCH reply with a verifier body of
// MaxAuthBody. A transport subtracts it from an inline threshold the way the Linux client
// subtracts its worst-case header.
const MaxReplyHeaderSize = 16 + 8 + MaxAuthBody + 8

// Size is the exact encoded size of r (ReplyHeaderSize or DeniedReplySize).
func (r *Reply) Size() int {
	if r.Stat == Denied {
		return DeniedReplySize(r.Reject)
	}
	return ReplyHeaderSize(r.Verf, r.Accept)
}

// Encode writes the header into b and returns its length; for an accepted SUCCESS reply the
// results go at b[n:]. Errors: ErrBadEnum (Stat, Accept, Reject or Auth undefined),
// ErrTooLong (verifier body over MaxAuthBody), ErrShortBuffer.
func (r *Reply) Encode(b []byte) (int, error) {
	switch r.Stat {
	case Accepted:
		if r.Accept > SystemErr {
			return 0, errAcceptEnum
		}
		if len(r.Verf.Body) > MaxAuthBody {
			return 0, errVerfTooLong
		}
	case Denied:
		if r.Reject > AuthError {
			return 0, errRejectEnum
		}
		if r.Reject == AuthError && r.Auth > RPCSecGSSCtxProblem {
			return 0, errAuthStatEnum
		}
	default:
		return 0, errReplyStatEnum
	}
	n := r.Size()
	if len(b) < n {
		return 0, errShortReply
	}
	put32(b, 0, r.XID)
	put32(b, 4, uint32(ReplyMsg))
	put32(b, 8, uint32(r.Stat))
	if r.Stat == Denied {
		put32(b, 12, uint32(r.Reject))
		if r.Reject == RPCMismatch {
			put32(b, 16, r.Low)
			put32(b, 20, r.High)
		} else {
			put32(b, 16, uint32(r.Auth))
		}
		return n, nil
	}
	off := encodeAuth(b, 12, &r.Verf)
	put32(b, off, uint32(r.Accept))
	off += 4
	if r.Accept == ProgMismatch {
		put32(b, off, r.Low)
		put32(b, off+4, r.High)
		off += 8
	}
	return off, nil
}

// Decode decodes a reply header from b into r and returns the offset after it: for an
// accepted SUCCESS reply b[n:] is the result body; for any other outcome there are no results
// and bytes after n are left to the caller to judge. Errors: ErrTruncated, ErrBadEnum (any
// enum), ErrMsgType, ErrTooLong (verifier body over MaxAuthBody). After an error past the
// first 4 bytes, r.XID holds the xid so the requester can fail the right RPC.
func (r *Reply) Decode(b []byte) (int, error) {
	*r = Reply{}
	if len(b) < 4 {
		return 0, errReplyTrunc
	}
	r.XID = get32(b, 0)
	if len(b) < 12 {
		return 0, errReplyTrunc
	}
	switch MsgType(get32(b, 4)) {
	case ReplyMsg:
	case CallMsg:
		return 0, errNotReply
	default:
		return 0, errMsgTypeEnum
	}
	switch ReplyStat(get32(b, 8)) {
	case Accepted:
		r.Stat = Accepted
		off, err := decodeAuth(b, 12, &r.Verf, errVerfTrunc, errVerfTooLong)
		if err != nil {
			return 0, err
		}
		if len(b)-off < 4 {
			return 0, errReplyTrunc
		}
		st := AcceptStat(get32(b, off))
		if st > SystemErr {
			return 0, errAcceptEnum
		}
		r.Accept = st
		off += 4
		if st == ProgMismatch {
			if len(b)-off < 8 {
				return 0, errReplyTrunc
			}
			r.Low = get32(b, off)
			r.High = get32(b, off+4)
			off += 8
		}
		return off, nil
	case Denied:
		r.Stat = Denied
		if len(b) < 16 {
			return 0, errReplyTrunc
		}
		switch RejectStat(get32(b, 12)) {
		case RPCMismatch:
			if len(b) < 24 {
				return 0, errReplyTrunc
			}
			r.Reject = RPCMismatch
			r.Low = get32(b, 16)
			r.High = get32(b, 20)
			return 24, nil
		case AuthError:
			if len(b) < 20 {
				return 0, errReplyTrunc
			}
			st := AuthStat(get32(b, 16))
			if st > RPCSecGSSCtxProblem {
				return 0, errAuthStatEnum
			}
			r.Reject = AuthError
			r.Auth = st
			return 20, nil
		}
		return 0, errRejectEnum
	}
	return 0, errReplyStatEnum
}
