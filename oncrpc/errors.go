package oncrpc

import "errors"

// The kinds of failure. Every error a function here returns is an *XDRError that wraps one of
// these, so errors.Is(err, ErrTruncated) works and Error() names the field at fault.
var (
	// ErrTruncated: the input ends before the item being decoded (including its XDR pad).
	ErrTruncated = errors.New("truncated")
	// ErrMsgType: msg_type is a valid enum value but not the one expected (a reply where a
	// call was decoded, or the reverse).
	ErrMsgType = errors.New("wrong message type")
	// ErrRPCVersion: a call's rpcvers is not 2. The Call's XID is set; a server answers with
	// a denied reply, RPC_MISMATCH low 2 high 2 (RFC 5531 section 9).
	ErrRPCVersion = errors.New("rpcvers is not 2")
	// ErrTooLong: an opaque or array is longer than the protocol allows (auth body > 400
	// bytes, machinename > 255 bytes, more than 16 gids).
	ErrTooLong = errors.New("longer than the protocol allows")
	// ErrBadEnum: an enum field holds a value the protocol does not define.
	ErrBadEnum = errors.New("invalid enum value")
	// ErrShortBuffer: the encode buffer is smaller than the encoding.
	ErrShortBuffer = errors.New("buffer too small")

	// The kinds of the RPC programs' codecs (benchprog, nfs3), about procedures and the
	// DDP-eligible data items RFC 8166 lets chunks carry.

	// ErrProc: the procedure number is not one of the program's.
	ErrProc = errors.New("unknown procedure")
	// ErrNoDDP: the procedure's arguments or results (or, for a result, its failure arm)
	// have no DDP-eligible data item.
	ErrNoDDP = errors.New("no DDP-eligible data item")
	// ErrChunk: the bytes a chunk delivered do not match the length word of the data item
	// they stand for (they must be that length, or that length rounded up to four).
	ErrChunk = errors.New("chunk length does not match the data item")
)

// XDRError is a decode or encode failure: which field and what kind of failure. Values are
// preallocated so that returning one never allocates; treat them as read-only.
type XDRError struct {
	Field string // the XDR item at fault, as named in RFC 5531: "cred", "rpcvers", ...
	Err   error  // one of the Err* kinds
}

func (e *XDRError) Error() string { return "oncrpc: " + e.Field + ": " + e.Err.Error() }
func (e *XDRError) Unwrap() error { return e.Err }

// NewXDRError is the error of kind about the XDR item field; programs built on this package
// (benchprog, nfs3) name their own items with it.
func NewXDRError(field string, kind error) *XDRError { return &XDRError{Field: field, Err: kind} }

var (
	errMsgTrunc      = NewXDRError("rpc_msg", ErrTruncated)
	errCallTrunc     = NewXDRError("call header", ErrTruncated)
	errReplyTrunc    = NewXDRError("reply header", ErrTruncated)
	errCredTrunc     = NewXDRError("cred", ErrTruncated)
	errVerfTrunc     = NewXDRError("verf", ErrTruncated)
	errCredTooLong   = NewXDRError("cred body", ErrTooLong)
	errVerfTooLong   = NewXDRError("verf body", ErrTooLong)
	errNotCall       = NewXDRError("msg_type", ErrMsgType)
	errNotReply      = NewXDRError("msg_type", ErrMsgType)
	errMsgTypeEnum   = NewXDRError("msg_type", ErrBadEnum)
	errRPCVers       = NewXDRError("rpcvers", ErrRPCVersion)
	errReplyStatEnum = NewXDRError("reply_stat", ErrBadEnum)
	errAcceptEnum    = NewXDRError("accept_stat", ErrBadEnum)
	errRejectEnum    = NewXDRError("reject_stat", ErrBadEnum)
	errAuthStatEnum  = NewXDRError("auth_stat", ErrBadEnum)
	errShortCall     = NewXDRError("call header", ErrShortBuffer)
	errShortReply    = NewXDRError("reply header", ErrShortBuffer)

	errSysTrunc       = NewXDRError("authsys_parms", ErrTruncated)
	errSysMachineLong = NewXDRError("authsys_parms.machinename", ErrTooLong)
	errSysGidsLong    = NewXDRError("authsys_parms.gids", ErrTooLong)
	errSysShort       = NewXDRError("authsys_parms", ErrShortBuffer)
	errSysTooLong     = NewXDRError("authsys_parms", ErrTooLong)
)
