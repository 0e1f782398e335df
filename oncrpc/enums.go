package oncrpc

// RPCVersion is the only ONC RPC protocol version (rpcvers, RFC 5531 section 9).
const RPCVersion = 2

// MsgType is msg_type: a message is a call or a reply.
type MsgType uint32

const (
	CallMsg  MsgType = 0 // CALL
	ReplyMsg MsgType = 1 // REPLY
)

func (t MsgType) String() string {
	switch t {
	case CallMsg:
		return "CALL"
	case ReplyMsg:
		return "REPLY"
	}
	return "msg_type(invalid)"
}

// ReplyStat is reply_stat: the call was accepted or denied.
type ReplyStat uint32

const (
	Accepted ReplyStat = 0 // MSG_ACCEPTED
	Denied   ReplyStat = 1 // MSG_DENIED
)

func (s ReplyStat) String() string {
	switch s {
	case Accepted:
		return "MSG_ACCEPTED"
	case Denied:
		return "MSG_DENIED"
	}
	return "reply_stat(invalid)"
}

// AcceptStat is accept_stat, the outcome of an accepted call.
type AcceptStat uint32

const (
	Success      AcceptStat = 0 // SUCCESS: results follow
	ProgUnavail  AcceptStat = 1 // PROG_UNAVAIL
	ProgMismatch AcceptStat = 2 // PROG_MISMATCH: lowest and highest supported version follow
	ProcUnavail  AcceptStat = 3 // PROC_UNAVAIL
	GarbageArgs  AcceptStat = 4 // GARBAGE_ARGS
	SystemErr    AcceptStat = 5 // SYSTEM_ERR
)

var acceptNames = [...]string{"SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR"}

func (s AcceptStat) String() string {
	if int(s) < len(acceptNames) {
		return acceptNames[s]
	}
	return "accept_stat(invalid)"
}

// RejectStat is reject_stat, why a call was denied.
type RejectStat uint32

const (
	RPCMismatch RejectStat = 0 // RPC_MISMATCH: lowest and highest rpcvers follow
	AuthError   RejectStat = 1 // AUTH_ERROR: an AuthStat follows
)

func (s RejectStat) String() string {
	switch s {
	case RPCMismatch:
		return "RPC_MISMATCH"
	case AuthError:
		return "AUTH_ERROR"
	}
	return "reject_stat(invalid)"
}

// AuthStat is auth_stat, why authentication failed (RFC 5531 section 9; values 13 and 14
// are RPCSEC_GSS's, RFC 2203).
type AuthStat uint32

const (
	AuthOK               AuthStat = 0
	AuthBadCred          AuthStat = 1
	AuthRejectedCred     AuthStat = 2
	AuthBadVerf          AuthStat = 3
	AuthRejectedVerf     AuthStat = 4
	AuthTooWeak          AuthStat = 5
	AuthInvalidResp      AuthStat = 6
	AuthFailed           AuthStat = 7
	AuthKerbGeneric      AuthStat = 8
	AuthTimeExpire       AuthStat = 9
	AuthTktFile          AuthStat = 10
	AuthDecode           AuthStat = 11
	AuthNetAddr          AuthStat = 12
	RPCSecGSSCredProblem AuthStat = 13
	RPCSecGSSCtxProblem  AuthStat = 14
)

var authNames = [...]string{
	"AUTH_OK", "AUTH_BADCRED", "AUTH_REJECTEDCRED", "AUTH_BADVERF", "AUTH_REJECTEDVERF",
	"AUTH_TOOWEAK", "AUTH_INVALIDRESP", "AUTH_FAILED", "AUTH_KERB_GENERIC", "AUTH_TIMEEXPIRE",
	"AUTH_TKT_FILE", "AUTH_DECODE", "AUTH_NET_ADDR", "RPCSEC_GSS_CREDPROBLEM", "RPCSEC_GSS_CTXPROBLEM",
}

func (s AuthStat) String() string {
	if int(s) < len(authNames) {
		return authNames[s]
	}
	return "auth_stat(invalid)"
}

// Flavor is auth_flavor. The set is open (RFC 5531 section 8.2 assigns numbers through IANA),
// so any value decodes; these are the ones this project names.
type Flavor uint32

const (
	FlavorNone  Flavor = 0 // AUTH_NONE
	FlavorSys   Flavor = 1 // AUTH_SYS (AUTH_UNIX)
	FlavorShort Flavor = 2 // AUTH_SHORT
	FlavorDH    Flavor = 3 // AUTH_DH
	FlavorGSS   Flavor = 6 // RPCSEC_GSS
)

func (f Flavor) String() string {
	switch f {
	case FlavorNone:
		return "AUTH_NONE"
	case FlavorSys:
		return "AUTH_SYS"
	case FlavorShort:
		return "AUTH_SHORT"
	case FlavorDH:
		return "AUTH_DH"
	case FlavorGSS:
		return "RPCSEC_GSS"
	}
	return "auth_flavor(other)"
}
