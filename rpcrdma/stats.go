package rpcrdma

import "github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

// ClassCounts count messages by class.
type ClassCounts struct {
	Short         uint64 `json:"short"`
	ReadChunk     uint64 `json:"read_chunk"`
	WriteChunk    uint64 `json:"write_chunk"`
	PosZeroRead   uint64 `json:"pos0_read"`
	ReplyChunk    uint64 `json:"reply_chunk"`
	ResponderRead uint64 `json:"responder_read"`
}

func (cc *ClassCounts) add(c rpcproto.Class) {
	switch c {
	case rpcproto.ClassShort:
		cc.Short++
	case rpcproto.ClassReadChunk:
		cc.ReadChunk++
	case rpcproto.ClassWriteChunk:
		cc.WriteChunk++
	case rpcproto.ClassPosZeroRead:
		cc.PosZeroRead++
	case rpcproto.ClassReplyChunk:
		cc.ReplyChunk++
	case rpcproto.ClassResponderRead:
		cc.ResponderRead++
	}
}

// Total is the sum over the classes.
func (cc ClassCounts) Total() uint64 {
	return cc.Short + cc.ReadChunk + cc.WriteChunk + cc.PosZeroRead + cc.ReplyChunk + cc.ResponderRead
}

// OpCount counts work requests of one RDMA operation and the bytes they moved.
type OpCount struct {
	Count uint64 `json:"count"`
	Bytes uint64 `json:"bytes"`
}

func (o *OpCount) add(n int) {
	o.Count++
	o.Bytes += uint64(n)
}

// Stats are an endpoint's counters. They are plain fields updated by the poller goroutine;
// read them after the run.
type Stats struct {
	// Params are the negotiated connection parameters.
	Params Params `json:"params"`

	// Calls counts the calls this side sent by class (Short, ReadChunk, PosZeroRead);
	// Replies the replies it sent (Short, WriteChunk, ReplyChunk, ResponderRead).
	Calls   ClassCounts `json:"calls"`
	Replies ClassCounts `json:"replies"`
	// RepliesReceived counts the replies to this side's calls by the class they came in.
	RepliesReceived ClassCounts `json:"replies_received"`
	// Completed and Failed count this side's RPCs by outcome; Served the peer's calls
	// answered with an RPC reply whose Send completed.
	Completed uint64 `json:"completed"`
	Failed    uint64 `json:"failed"`
	Served    uint64 `json:"served"`

	// RDMA operations posted (Recv: completed) and their bytes.
	Send    OpCount `json:"send"`
	SendInv OpCount `json:"send_inv"`
	Write   OpCount `json:"write"`
	Read    OpCount `json:"read"`
	Recv    OpCount `json:"recv"`
	// Memory window work: binds, local invalidations, and receives the peer invalidated
	// for us (Send With Invalidate).
	Binds             uint64 `json:"binds"`
	LocalInvs         uint64 `json:"local_invs"`
	RemoteInvalidated uint64 `json:"remote_invalidated"`
	// PeerRead and PeerWrite are the RDMA Reads and Writes the peer made on this side's
	// chunks, one per segment, known from the calls (their Read chunks, which the responder
	// must pull) and the replies (the Write and Reply chunk lengths returned): how a requester
	// counts the responder's data movement when the responder is another process.
	PeerRead  OpCount `json:"peer_read"`
	PeerWrite OpCount `json:"peer_write"`

	// Credit is the latest credit grant received for this side's calls, MaxCredit the
	// largest; Granted the latest grant this side sent, MaxOutstanding the most calls it
	// ever had outstanding at once.
	Credit         uint32 `json:"credit"`
	MaxCredit      uint32 `json:"max_credit"`
	Granted        uint32 `json:"granted"`
	MaxOutstanding int    `json:"max_outstanding"`
	// MaxServing is the most of the peer's calls this side held at once, received and not
	// yet answered: never more than the credits it granted.
	MaxServing int `json:"max_serving"`
	// RegisteredBytes is the connection's registered memory (Conn.RegisteredBytes).
	RegisteredBytes int `json:"registered_bytes"`
	// SinkWaits counts the peer's calls that waited for a buffer of their poller's shared
	// sink pool (ServeConfig.SinkBuffers).
	SinkWaits uint64 `json:"sink_waits"`

	// RDMA_ERROR messages sent and received; ReplyOverruns are replies this side could not
	// fit into the requester's reply resources (answered with ERR_CHUNK).
	ErrorsSent     uint64 `json:"errors_sent"`
	ErrorsReceived uint64 `json:"errors_received"`
	ReplyOverruns  uint64 `json:"reply_overruns"`
	// RDMA_DONE: sent, received for a waiting Read chunk, received for none (dropped, as
	// the draft requires), Read chunks released by DoneTimeout instead, and RDMA_DONE
	// received for such a chunk after its timeout (while its receive was still reserved).
	DoneSent     uint64 `json:"done_sent"`
	DoneReceived uint64 `json:"done_received"`
	DoneStray    uint64 `json:"done_stray"`
	DoneTimeouts uint64 `json:"done_timeouts"`
	DoneLate     uint64 `json:"done_late"`
	// StrayReplies are replies whose XID matched no outstanding call (dropped).
	StrayReplies uint64 `json:"stray_replies"`
	// Broken is set once the connection broke.
	Broken bool `json:"broken"`
}
