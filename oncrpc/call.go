package oncrpc

// Call is an ONC RPC call header (rpc_msg with msg_type CALL, RFC 5531 section 9) up to the
// procedure arguments. After Decode, Cred.Body and Verf.Body are sub-slices of the decoded
// buffer.
type Call struct {
	XID  uint32
	Prog uint32
	Vers uint32
	Proc uint32
	Cred OpaqueAuth
	Verf OpaqueAuth
}

// CallHeaderSize is the exact encoded size of a call header with this credential and
// verifier: xid, msg_type, rpcvers, prog, vers, proc, then the two opaque_auth.
func CallHeaderSize(cred, verf OpaqueAuth) int { return 24 + cred.Size() + verf.Size() }

// MaxCallHeaderSize bounds every call header: both opaque_auth bodies at MaxAuthBody.
const MaxCallHeaderSize = 24 + 2*(8+MaxAuthBody)

// Size is CallHeaderSize(c.Cred, c.Verf).
func (c *Call) Size() int { return CallHeaderSize(c.Cred, c.Verf) }

// Encode writes the header into b and returns its length; the arguments go at b[n:].
// Errors: ErrTooLong (a body over MaxAuthBody), ErrShortBuffer.
func (c *Call) Encode(b []byte) (int, error) {
	if len(c.Cred.Body) > MaxAuthBody {
		return 0, errCredTooLong
	}
	if len(c.Verf.Body) > MaxAuthBody {
		return 0, errVerfTooLong
	}
	if len(b) < c.Size() {
		return 0, errShortCall
	}
	put32(b, 0, c.XID)
	put32(b, 4, uint32(CallMsg))
	put32(b, 8, RPCVersion)
	put32(b, 12, c.Prog)
	put32(b, 16, c.Vers)
	put32(b, 20, c.Proc)
	off := encodeAuth(b, 24, &c.Cred)
	return encodeAuth(b, off, &c.Verf), nil
}

// Decode decodes a call header from b into c and returns the offset of the arguments, so
// b[n:] is the argument body. Errors: ErrTruncated, ErrBadEnum and ErrMsgType (msg_type),
// ErrRPCVersion, ErrTooLong (an opaque_auth body over MaxAuthBody). With ErrRPCVersion, and
// with any error after the first 4 bytes, c.XID holds the xid so a server can answer; the
// other fields are then unspecified.
func (c *Call) Decode(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, errCallTrunc
	}
	c.XID = get32(b, 0)
	if len(b) < 8 {
		return 0, errCallTrunc
	}
	switch MsgType(get32(b, 4)) {
	case CallMsg:
	case ReplyMsg:
		return 0, errNotCall
	default:
		return 0, errMsgTypeEnum
	}
	if len(b) < 12 {
		return 0, errCallTrunc
	}
	// rpcvers comes before the fields whose layout it governs; a server answers any other
	// version with RPC_MISMATCH (RFC 5531 section 9), so it is checked before the rest.
	if get32(b, 8) != RPCVersion {
		return 0, errRPCVers
	}
	if len(b) < 24 {
		return 0, errCallTrunc
	}
	c.Prog = get32(b, 12)
	c.Vers = get32(b, 16)
	c.Proc = get32(b, 20)
	off, err := decodeAuth(b, 24, &c.Cred, errCredTrunc, errCredTooLong)
	if err != nil {
		return 0, err
	}
	return decodeAuth(b, off, &c.Verf, errVerfTrunc, errVerfTooLong)
}

// Peek reads the xid and msg_type of an RPC message without decoding the rest: a receiver
// that carries both directions (RFC 8167 backchannel) uses it to route a message to the call
// or the reply decoder.
func Peek(b []byte) (xid uint32, t MsgType, err error) {
	if len(b) < 8 {
		return 0, 0, errMsgTrunc
	}
	t = MsgType(get32(b, 4))
	if t != CallMsg && t != ReplyMsg {
		return get32(b, 0), t, errMsgTypeEnum
	}
	return get32(b, 0), t, nil
}
