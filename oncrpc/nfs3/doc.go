// Package nfs3 is the requester's side of NFS version 3 and MOUNT version 3 (RFC 1813 and its
// appendix I): it encodes the arguments of the procedures a benchmark client issues and
// decodes their results, and it finds the data item an RPC-over-RDMA transport moves by
// chunk. A small TCP client (Mount, Unmount) obtains the root file handle from mountd.
//
// The procedures and their XDR (RFC 1813 sections 2.5, 2.6, 3.3; abbreviated):
//
//	typedef opaque nfs_fh3<64>;  typedef string filename3<>;  /* <=255 here, as in Linux */
//	union post_op_attr switch (bool attributes_follow) { case TRUE: fattr3 attributes; case FALSE: void; };
//	union pre_op_attr  switch (bool attributes_follow) { case TRUE: wcc_attr attributes; case FALSE: void; };
//	struct wcc_data { pre_op_attr before; post_op_attr after; };
//
//	GETATTR (1)      args: nfs_fh3 object
//	                 ok:   fattr3                                  fail: void
//	LOOKUP (3)       args: nfs_fh3 dir; filename3 name
//	                 ok:   nfs_fh3 object; post_op_attr obj, dir   fail: post_op_attr dir
//	READ (6)         args: nfs_fh3 file; offset3 offset; count3 count
//	                 ok:   post_op_attr; count3 count; bool eof; opaque data<>   fail: post_op_attr
//	WRITE (7)        args: nfs_fh3 file; offset3 offset; count3 count; stable_how stable; opaque data<>
//	                 ok:   wcc_data; count3 count; stable_how committed; writeverf3 verf   fail: wcc_data
//	READDIRPLUS (17) args: nfs_fh3 dir; cookie3 cookie; cookieverf3 verf; count3 dircount, maxcount
//	                 ok:   post_op_attr dir; cookieverf3 verf; entryplus3 *entries; bool eof
//	                 fail: post_op_attr dir
//	                 entryplus3: fileid3; filename3; cookie3; post_op_attr; post_op_fh3; entryplus3 *next
//	COMMIT (21)      args: nfs_fh3 file; offset3 offset; count3 count
//	                 ok:   wcc_data; writeverf3 verf               fail: wcc_data
//
//	MNT (1)          args: dirpath<1024>
//	                 ok:   fhandle3 fhandle<64>; int auth_flavors<>  fail: void
//	UMNT (3)         args: dirpath<1024>                           result: void
//
// # DDP-eligible items
//
// RFC 1813 predates RPC-over-RDMA: the NFS upper-layer binding (RFC 8267, which replaced RFC
// 5667) names the items that may move by direct data placement, and the Linux client
// (net/sunrpc/xprtrdma) chooses among them. It moves exactly two: the data of a READ reply, which the server writes into the
// client's Write chunk, and the data of a WRITE call, which the server reads from the client's
// Read chunk. Both are the last item of their body, so the reduced XDR stream (RFC 8166
// section 3.4.1) ends with the item's length word: WriteArgs.EncodeReduced writes it,
// ReadRes.DecodeReduced takes the data from the chunk, DDPData locates the item in a body.
// Replies that may be large but whose bytes are not bulk data (READDIR, READDIRPLUS,
// READLINK) come whole in a Reply chunk and decode with the ordinary Decode; everything else
// travels inline.
//
// # Conventions
//
// The codecs follow package oncrpc: encoders write into a caller-owned []byte and return the
// bytes written; decoders fill a caller-owned value and return the offset consumed; opaque
// data (file handles, names, READ data) are sub-slices of the input, valid as long as the
// caller keeps it; nothing allocates (only Mount and Unmount, off the hot path, do); errors
// are preallocated *oncrpc.XDRError values naming the RFC's XDR item and wrapping
// oncrpc.ErrTruncated, ErrTooLong, ErrBadEnum, ErrShortBuffer, or this package's ErrChunk,
// ErrCount, ErrProc, ErrNoDDP. Pad bytes are written as zeros and ignored on decode. A
// result's nfsstat3 is data, not an error: a status other than NFS3_OK, including one RFC
// 1813 does not list, decodes the RFC's failure arm and returns no error. A result decoder
// takes b, the body after an accepted SUCCESS reply header, zeroes every field outside the arm
// it decoded (a reused value carries nothing stale) and leaves them unspecified after an error.
package nfs3
