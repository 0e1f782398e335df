// Package wire encodes and decodes what RPC-over-RDMA puts on the wire outside the RPC
// message itself: the version 1 transport header (RFC 8166 section 4), the RFC 8797
// connection private data, this program's private data extension block, and its reject
// reason block. It knows nothing of connections, buffers' registration or credits; the
// rpcrdma engine does.
//
//   - Header is a transport header (RFC 8166 sections 4.2-4.5): RDMA_MSG and RDMA_NOMSG
//     with their Read list, Write list and Reply chunk, RDMA_ERROR (ERR_VERS, ERR_CHUNK),
//     and RDMA_DONE as the responder-provided Read chunk draft revives it. Encode writes
//     it in place into a caller-owned buffer (normally a registered send buffer); Decode
//     parses it in place from a received buffer into a reused Header and returns the RPC
//     message that follows as a sub-slice of that buffer, never a copy. Layout.Size gives
//     the exact header size for the inline/chunk decisions of RFC 8166 section 3.5;
//     MaxHeaderSize is the worst case for a sender that cannot know it.
//   - Decode validates what a peer sent against Limits and fails with preallocated
//     *HeaderError sentinels whose Code is the rdma_err a responder owes the sender
//     (RFC 8166 section 4.5); Header.ErrorReply builds that RDMA_ERROR.
//   - PrivateData, FindPrivateData and Negotiate are the RFC 8797 exchange (sections 4
//     and 5): what each side advertises, how a received buffer is searched for it, and the
//     inline thresholds and remote-invalidation decision that result. Ext is this program's
//     extension block after it (responder-provided Read chunks, RFC 8167 reverse direction).
//   - EncodeRejectReason and DecodeRejectReason carry a refusal's reason in a CM reject's
//     private data (RFC 8797 defines none; the block is this program's own).
//
// Contract: Header.Encode and Decode, FindPrivateData, Negotiate and the Ext functions
// allocate nothing (a Header's slices grow to the largest lists it sees, then stay); no
// decoder panics on any input a peer can send, and none reads or writes outside the buffer
// given. EncodeRejectReason, used once per refusal, returns a new slice. The codec
// keeps no reference to a buffer: a payload returned by Decode aliases the caller's receive
// buffer and is valid for as long as that buffer is. A Header belongs to one goroutine.
package wire
