// Package rpcrdma is the RPC-over-RDMA version 1 transport (RFC 8166) with RFC 8797
// connection private data, RFC 8167 bidirectional operation and the responder-provided Read
// chunk draft.
//
// The codec half of the package (header*.go, privdata*.go, errors.go) is pure and allocation
// free on its hot path:
//
//   - Header is a transport header. Encode writes it in place into a caller-owned buffer
//     (normally a registered send buffer) and Decode parses it in place from a received
//     buffer into a reused Header, returning the RPC message that follows as a sub-slice of
//     that buffer, never a copy. Layout.Size gives the exact header size the endpoints use
//     for the inline/chunk decisions of RFC 8166 section 3.5 (a requester with InlineLinux
//     reserves the Linux client's worst-case header instead); MaxHeaderSize is the
//     worst case for a sender that cannot know it (the endpoints do not call it).
//   - Decode validates what a peer sent against Limits and fails with preallocated
//     *HeaderError sentinels whose Code is the rdma_err (ERR_VERS, ERR_CHUNK) a responder owes
//     the sender; Header.ErrorReply builds that RDMA_ERROR.
//   - PrivateData, FindPrivateData and Negotiate implement the RFC 8797 exchange done once per
//     connection: what each side advertises, how a received buffer is searched for it, and the
//     inline thresholds and remote-invalidation decision that result.
//
// Buffers: the codec never keeps a reference to a buffer it is given. A payload returned by
// Decode aliases the caller's receive buffer and is valid for as long as that buffer is.
package rpcrdma
