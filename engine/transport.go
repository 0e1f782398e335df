package engine

import "github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"

// Transport is the transport engine's own knobs as the command line sets them: the
// "transport" member of a results file's config (results/SCHEMA.md). They are deliberately not part
// of results.Params, which identifies a point for compare: runs that differ only here (say
// pre-registered against windows memory) measure the same points and compare as such.
type Transport struct {
	// Memory is how chunk memory is exposed: "preregistered" (the connection's one
	// registration, no work per RPC) or "windows" (a memory window bound and invalidated
	// per chunk of each RPC, as the Linux client does with FRWR).
	Memory rpcrdma.MemoryMode `json:"memory"`
	// RemoteInvalidate sets the R bit of the RFC 8797 private data: replies may then
	// invalidate the requester's window by Send With Invalidate. A requester offers it only
	// with windows memory.
	RemoteInvalidate bool `json:"remote_invalidate,omitempty"`
	// ResponderRead offers responder-provided Read chunks (long replies pulled by the
	// requester, acknowledged with RDMA_DONE); both ends must offer it.
	ResponderRead bool `json:"responder_read,omitempty"`
	// DoneInvalidate sends RDMA_DONE by Send With Invalidate of the responder's Read chunk
	// key when both ends set the R bit (rpcrdma.Config.DoneInvalidate).
	DoneInvalidate bool `json:"done_invalidate,omitempty"`
	// Credits is the credit value a requester requests (0: each point's depth); a server's
	// grant is the server's --credits.
	Credits int `json:"credits,omitempty"`
	// SendSize and RecvSize, when not zero, are the inline sizes advertised for sending and
	// receiving instead of the threshold (which then sets only the other direction).
	SendSize int `json:"send_size,omitempty"`
	RecvSize int `json:"recv_size,omitempty"`
	// InlineRule is when the requester leaves the Send for chunks: "exact" (its exact
	// header) or "linux" (the Linux client's worst-case header).
	InlineRule rpcrdma.InlineRule `json:"inline_rule"`
}

// Apply sets the knobs on an endpoint config whose inline sizes are already the threshold's.
func (t *Transport) Apply(c *rpcrdma.Config) {
	c.Memory = t.Memory
	c.RemoteInvalidate = t.RemoteInvalidate
	c.ResponderRead = t.ResponderRead
	c.DoneInvalidate = t.DoneInvalidate
	c.InlineRule = t.InlineRule
	if t.SendSize != 0 {
		c.SendSize = t.SendSize
	}
	if t.RecvSize != 0 {
		c.RecvSize = t.RecvSize
	}
}
