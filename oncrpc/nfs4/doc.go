// Package nfs4 is the requester's side of NFS version 4.1 (RFC 8881) as a benchmark client
// speaks it, and the client's side of its backchannel: it encodes COMPOUND calls, decodes
// their results, decodes the server's CB_COMPOUND calls and encodes their results.
//
// Every call is a COMPOUND (procedure 1 of program 100003 version 4): a tag, minor version
// 1, and an array of operations, each an opnum and its arguments; the result is a status, the
// tag, and one result per operation up to and including the first that failed (RFC 8881
// sections 16.2 and 2.10.6). In a session every COMPOUND starts with SEQUENCE. The XDR of
// the operations here (RFC 8881 sections 3, 18 and 20; abbreviated; every result starts with
// nfsstat4 status and its ok arm is shown):
//
//	COMPOUND4args  { utf8str_cs tag; uint32 minorversion; nfs_argop4 argarray<>; }
//	COMPOUND4res   { nfsstat4 status; utf8str_cs tag; nfs_resop4 resarray<>; }
//	stateid4       { uint32 seqid; opaque other[12]; }    nfs_fh4: opaque<128>
//	fattr4         { bitmap4 attrmask (uint32<>); opaque attr_vals<>; }
//
//	SEQUENCE (53)        args: sessionid4; sequenceid4; slotid4 slot, highest_slot; bool cachethis
//	                     ok:   sessionid4; sequenceid4; slotid4 slot, highest, target_highest; uint32 status_flags
//	PUTROOTFH (24), GETFH (10): args void; ok: void / nfs_fh4
//	PUTFH (22)           args: nfs_fh4                 LOOKUP (15) args: component4 name
//	GETATTR (9)          args: bitmap4                 ok: fattr4
//	OPEN (18)            args: seqid4 0; uint32 share_access, share_deny; open_owner4 {clientid4; opaque owner<1024>};
//	                           openflag4 (OPEN4_NOCREATE | OPEN4_CREATE UNCHECKED4 fattr4); open_claim4 (CLAIM_NULL component4)
//	                     ok:   stateid4; change_info4 {bool; changeid4 before, after}; uint32 rflags; bitmap4 attrset;
//	                           open_delegation4 (NONE | READ {stateid4; bool recall; nfsace4} |
//	                           WRITE {stateid4; bool recall; nfs_space_limit4; nfsace4} | NONE_EXT {why; [bool]})
//	CLOSE (4)            args: seqid4 0; stateid4                        ok: stateid4
//	DELEGRETURN (8)      args: stateid4                                  result: status
//	READ (25)            args: stateid4; offset4; count4                 ok: bool eof; opaque data<>
//	WRITE (38)           args: stateid4; offset4; stable_how4; opaque data<>
//	                     ok:   count4; stable_how4 committed; verifier4
//	COMMIT (5)           args: offset4; count4                           ok: verifier4
//	READDIR (26)         args: nfs_cookie4; verifier4; count4 dircount, maxcount; bitmap4
//	                     ok:   verifier4; entry4 *entries {nfs_cookie4; component4; fattr4; *next}; bool eof
//	EXCHANGE_ID (42)     args: client_owner4 {verifier4; opaque ownerid<1024>}; uint32 flags; SP4_NONE; nfs_impl_id4 impl<1>
//	                     ok:   clientid4; sequenceid4; uint32 flags; state_protect4_r; server_owner4 {uint64; opaque<1024>};
//	                           opaque scope<1024>; nfs_impl_id4 impl<1>
//	CREATE_SESSION (43)  args: clientid4; sequenceid4; uint32 flags; channel_attrs4 fore, back; uint32 cb_program;
//	                           callback_sec_parms4 <> (AUTH_NONE | AUTH_SYS authsys_parms)
//	                     ok:   sessionid4; sequenceid4; uint32 flags; channel_attrs4 fore, back
//	                     channel_attrs4: count4 headerpad, maxreq, maxresp, maxresp_cached, maxops, maxreqs; uint32 rdma_ird<1>
//	RECLAIM_COMPLETE (58) args: bool one_fs   DESTROY_SESSION (44) args: sessionid4   DESTROY_CLIENTID (57) args: clientid4
//
//	CB_COMPOUND4args     { utf8str_cs tag; uint32 minorversion; uint32 callback_ident; nfs_cb_argop4 argarray<>; }
//	CB_SEQUENCE (11)     args: sessionid4; sequenceid4; slotid4 slot, highest; bool cachethis; referring_call_list4 <>
//	                     ok:   sessionid4; sequenceid4; slotid4 slot, highest, target_highest
//	CB_RECALL (4)        args: stateid4; bool truncate; nfs_fh4          result: status
//
// GETATTR and READDIR decode the attributes of StatAttrs (what the Linux client asks for a
// stat) and supported_attrs; an attribute list naming any other is ErrAttr, since fattr4
// does not give an attribute's length.
//
// # DDP-eligible items
//
// As for NFSv3 (RFC 8267 section 4), the Linux client moves the data of WRITE in a Read
// chunk and the data of READ in a Write chunk, and takes large READDIR replies in a Reply
// chunk (decoded as any reply). Neither item need be last in its COMPOUND: the reduced XDR
// stream (RFC 8166 section 3.4.1) ends the item with its length word and continues with the
// next operation. Compound.WriteReduced encodes a WRITE so and Compound.DDP returns the
// item's position; CompoundRes.DecodeReduced takes the READ data from the Write chunk. A
// measured WRITE is followed by GETATTR of change, size and times, as the Linux client sends
// it: with the data in a Read chunk, the GETATTR stays inline after the WRITE's length word.
//
// # The program
//
// Prog and Codec make NFSv4.1 a program of package rpcproto, with the procedures and presets
// NFSv3 shares (package nfsbase). Codec is a Conversation: every connection is a client of its
// own (EXCHANGE_ID with Config.Owner and the connection's number), with a session whose fore
// channel has a slot per requester credit and whose back channel is the connection; it then
// sends RECLAIM_COMPLETE, finds the root, File and Scratch, and opens File for reading and
// Scratch for writing without delegations. CREATE_SESSION carries Linux's client's flags
// (PERSIST, CONN_BACK_CHAN), no ca_rdma_ird, and back channel sizes as Linux sizes them (the
// smaller inline threshold, at most a page, less the transport header). Closing, it closes
// both files and destroys the session and the client ID (each alone in its COMPOUND, as Linux
// sends them). NFS4ERR_DELAY and NFS4ERR_GRACE fail a call with a Later error: the step is
// made again.
//
// The session's fore channel is a slot table of the codec's own (slotTable), sized by the
// server's grant and bounded by its sr_highest_slotid and NFS4ERR_BADSLOT (Slots). A call
// takes the lowest free slot when EncodeArgs encodes it, whatever the transport's slot index,
// and names the highest slot in use as sa_highest_slotid; the slot is free again when
// DecodeResults or Unanswered tells how the call ended, with its sequenceid moved by RFC 8881
// section 2.10.6's rule for that outcome. BADSESSION and DEADSESSION lose the session (Lost):
// Next then makes a new one on the same connection, and a new client ID first when the
// server answers STALE_CLIENTID (Recoveries counts both).
//
// The connection's Service answers CB_NULL and CB_COMPOUND: CB_SEQUENCE (RFC 8881 section
// 20.9: our session, a back channel slot, its next sequenceid; its last is a retry, answered
// from the slot's one cached reply or with NFS4ERR_RETRY_UNCACHED_REP, never executed again),
// CB_RECALL (checked against the delegation held, as Linux's client checks it, and kept for
// Recall with its arrival on Now's clock), any other callback NFS4ERR_NOTSUPP and an undefined
// one CB_ILLEGAL. The Setup procedures PDelegOpen, PDelegConflict, PDelegReturn and
// PDelegClose drive a delegation recall on the file SetRecallFile names.
//
// # The delegation recall
//
// PRecall ("recall") is measured alone: Codec is an rpcproto.Measurer whose Measure makes the
// recall's state machine over two connections, the holder and the conflicter, each its own
// client. Between requests the holder opens the next of RecallFiles files (RecallFile) for
// reading asking for a read delegation; one refused is closed and the next tried, every
// 100 ms after 8 refusals in a row. A request is the conflicter's OPEN of that file for
// writing, from its first sending to its success: the server answers NFS4ERR_DELAY and
// recalls the delegation (CB_RECALL on the holder's connection), the holder sends
// DELEGRETURN once CB_RECALL is in, the conflicting OPEN is made again once DELEGRETURN's
// reply is, and both clients then close the file. Its figures are the wait for CB_RECALL,
// DELEGRETURN's round trip, the whole conflict and the NFS4ERR_DELAY answers; a holder
// without a back channel, or a server reporting it down, is an error. Before the
// connections are torn down, a delegation held is returned and its file closed.
//
// # Conventions
//
// The codecs follow package oncrpc and nfs3: encoders write into a caller-owned []byte;
// decoders fill caller-owned values whose opaque fields are sub-slices of the input; nothing
// allocates; errors are preallocated *oncrpc.XDRError values naming the RFC's XDR item
// (operation results by their name, "READ4res") and wrapping oncrpc.ErrTruncated,
// ErrTooLong, ErrBadEnum, ErrShortBuffer, or this package's ErrOp, ErrAttr, ErrState,
// ErrChunk. An nfsstat4 is data, not an error. Pad bytes are written as zeros and ignored on
// decode.
package nfs4
