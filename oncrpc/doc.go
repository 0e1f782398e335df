// Package oncrpc encodes and decodes ONC RPC version 2 message headers (RFC 5531) in place,
// for a transport that keeps every message in registered memory.
//
// Encoders write into a caller-owned []byte and return the number of bytes written; decoders
// fill a caller-owned value and return the offset where the procedure arguments (call) or
// results (reply) begin. Opaque bodies (credentials, verifiers, the AUTH_SYS machine name) are
// sub-slices of the decoded buffer, never copies: they stay valid exactly as long as the
// caller keeps that buffer unchanged (for a receive buffer, until it is reposted). Nothing
// here allocates; errors are preallocated *XDRError values that wrap one of the sentinel kinds
// (ErrTruncated, ErrMsgType, ErrRPCVersion, ErrTooLong, ErrBadEnum, ErrShortBuffer), so
// callers test them with errors.Is and the hot path formats nothing.
//
// XDR padding: encoders always write zero pad bytes. Decoders require the pad bytes to be
// present (a missing pad is ErrTruncated) but ignore their content, because XDR says receivers
// ignore it (RFC 4506 section 3 only obliges the encoder; RFC 8166's terminology section,
// "XDR Round-Up": "The content of XDR pad octets is ignored by receivers") and because the
// interesting peers, the Linux kernel's svcrdma and xprtrdma, do the same (xdr_inline_decode
// skips pads unchecked): rejecting would make us fail RPCs that every other implementation
// accepts, while accepting costs nothing in safety since pad bytes are never exposed.
//
// Credentials and verifiers of any flavor decode as opaque_auth (flavor + body up to 400
// bytes, RFC 5531 section 8.2): an unknown flavor is not malformed XDR, and a server must
// answer it with AUTH_ERROR (AUTH_BADCRED or AUTH_REJECTEDCRED), which it can only do after a
// successful header decode. AUTH_SYS bodies decode separately with DecodeSysCred.
//
// The programs built on it are sub-packages: benchprog (the benchmark's own program), nfs3
// and nfs4. They write their opaque items with PutData and PutVarOpaque, and nfs3 and nfs4
// decode their results with Decoder, a sticky-error walk over a body.
package oncrpc
