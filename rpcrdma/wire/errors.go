package wire

// ErrCode is an rdma_err value carried by an RDMA_ERROR message (RFC 8166 section 4.5).
type ErrCode uint32

const (
	// ErrCodeVers: the receiver does not support the header's rdma_vers; an RDMA_ERROR with
	// this code carries the lowest and highest version the sender supports.
	ErrCodeVers ErrCode = 1
	// ErrCodeChunk: the header or its chunk lists could not be parsed.
	ErrCodeChunk ErrCode = 2
)

func (c ErrCode) String() string {
	switch c {
	case ErrCodeVers:
		return "ERR_VERS"
	case ErrCodeChunk:
		return "ERR_CHUNK"
	}
	return "ERR_UNKNOWN"
}

// HeaderError is a transport header that could not be decoded, or a header value that
// cannot be encoded. Every HeaderError is one of the preallocated sentinels below, so that
// the receive path returns them without allocating; compare with errors.Is and get the
// RDMA_ERROR code a responder owes the sender with errors.As and Code, or use
// Header.ErrorReply.
type HeaderError struct {
	code ErrCode
	msg  string
}

func (e *HeaderError) Error() string { return e.msg }

// Code is the rdma_err value a responder sends back for a call that failed to decode with
// this error: ErrCodeVers for ErrVersion, ErrCodeChunk for every other decode error, and 0
// for encode-side errors, which never come from a peer.
func (e *HeaderError) Code() ErrCode { return e.code }

// Decode errors. Each names the first thing found wrong.
var (
	// ErrTruncated: the buffer ends inside the fixed fields, a chunk list, a segment or the
	// error body; or a segment count claims more segments than the buffer holds.
	ErrTruncated = &HeaderError{ErrCodeChunk, "rpcrdma: header truncated"}
	// ErrVersion: rdma_vers is not 1. The XID has been decoded into Header.XID so that a
	// responder can answer with ERR_VERS (RFC 8166 section 4.5.1).
	ErrVersion = &HeaderError{ErrCodeVers, "rpcrdma: unsupported RPC-over-RDMA version"}
	// ErrProc: rdma_proc is RDMA_MSGP (deprecated, RFC 8166 section 4.6.1) or unknown.
	ErrProc = &HeaderError{ErrCodeChunk, "rpcrdma: unsupported rdma_proc"}
	// ErrDiscriminator: an XDR optional-data discriminator is neither 0 nor 1.
	ErrDiscriminator = &HeaderError{ErrCodeChunk, "rpcrdma: chunk list discriminator not 0 or 1"}
	// ErrPosition: a Read segment's position is not a multiple of 4 (RFC 8166 section 3.4.5).
	ErrPosition = &HeaderError{ErrCodeChunk, "rpcrdma: read segment position not a multiple of 4"}
	// ErrChunkLength: the segment lengths of one chunk add up to more than 2^32-1 bytes, so
	// the chunk cannot be an XDR data item.
	ErrChunkLength = &HeaderError{ErrCodeChunk, "rpcrdma: chunk length overflows uint32"}
	// ErrTooManySegments: a chunk list has more segments than Limits allows.
	ErrTooManySegments = &HeaderError{ErrCodeChunk, "rpcrdma: too many segments"}
	// ErrTooManyChunks: the Write list has more chunks than Limits allows.
	ErrTooManyChunks = &HeaderError{ErrCodeChunk, "rpcrdma: too many write chunks"}
	// ErrNoChunks: an RDMA_NOMSG message has no chunks at all, so its RPC message is nowhere
	// (RFC 8166 section 4.5.2).
	ErrNoChunks = &HeaderError{ErrCodeChunk, "rpcrdma: RDMA_NOMSG without chunks"}
	// ErrNoMsgRead: an RDMA_NOMSG message carries Read chunks not at position zero, which
	// need an inline RPC message to be inserted into (RFC 8166 section 3.4.5).
	ErrNoMsgRead = &HeaderError{ErrCodeChunk, "rpcrdma: RDMA_NOMSG with a Read chunk not at position zero"}
	// ErrErrCode: an RDMA_ERROR message carries an unknown rdma_err. Such a message is
	// dropped, never answered (RFC 8166 section 4.5).
	ErrErrCode = &HeaderError{ErrCodeChunk, "rpcrdma: unknown rdma_err in RDMA_ERROR"}
)

// Encode errors: the caller's header value or buffer is wrong, not the peer.
var (
	// ErrShortBuffer: the destination is smaller than EncodedSize.
	ErrShortBuffer = &HeaderError{0, "rpcrdma: buffer too small for header"}
	// ErrWriteCounts: Header.WriteCounts does not add up to len(Header.WriteList), or holds a
	// negative count.
	ErrWriteCounts = &HeaderError{0, "rpcrdma: write chunk counts do not match write segments"}
	// ErrEncodeProc: the header's Proc cannot be sent (RDMA_MSGP, unknown values).
	ErrEncodeProc = &HeaderError{0, "rpcrdma: cannot encode this rdma_proc"}
	// ErrEncodeErrCode: an RDMA_ERROR header with an rdma_err other than ERR_VERS or
	// ERR_CHUNK.
	ErrEncodeErrCode = &HeaderError{0, "rpcrdma: cannot encode this rdma_err"}
)
