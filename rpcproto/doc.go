// Package rpcproto is the vocabulary the engine, the workloads and the results share: the
// message classes of RPC-over-RDMA (RFC 8166 section 3.5) and the RPC programs a requester
// drives, described procedure by procedure.
//
// # Classes
//
// Kind is the class a user names and a result is filed under: short (one Send), chunked
// (DDP-eligible data by RDMA Read or Write, the rest in a Send) or long (the whole message by
// RDMA). Class is how one message actually travelled, finer than its kind because a chunked
// call uses a Read chunk and a chunked reply a Write chunk, and a long reply may come back in
// a Reply chunk or in a responder-provided Read chunk. Class.Kind is the one mapping between
// the two.
//
// # Programs
//
// A Program is an ONC RPC program's identity and its procedure table: for each procedure,
// the name a workload uses, its number on the wire, which messages carry the payload a
// workload sizes, and which of those payloads is a DDP-eligible item (RFC 8166 section 6),
// the only data a Read or Write chunk may carry. The engine decides message classes from the
// table, and the workloads derive call and reply sizes from it; neither knows any program's
// procedures by name.
//
// A Codec marshals one program's arguments in place and checks its results. A program whose
// calls need per-connection state (an NFS file handle) gives each connection its own Codec.
//
// # Measurements of a program's own
//
// A procedure measured alone (Procedure.Alone) is no call but a measurement the program
// defines over several connections, such as NFSv4.1's delegation recall. Its Codec is a
// Measurer, which makes a Measurement: a state machine that says which calls to make on which
// connection as their replies come in, and when a measured request completes with which
// Figures. The engine drives it through a Driver and knows nothing of its protocol.
package rpcproto
