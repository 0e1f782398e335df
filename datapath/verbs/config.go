package verbs

// Config tunes the provider. The zero value is the default for every field.
type Config struct {
	// PollSpin is how many more times one CQ.Poll call polls an empty completion queue inside
	// C before it returns 0. Spinning in C saves a cgo transition per empty poll for
	// busy-polling callers; 0 polls once.
	PollSpin int

	// RNRRetry is how often a SEND that finds no receive posted at the peer is retried (0 to
	// 7; 7 retries forever). The default 0 fails it at once with StatusRNRRetryExceeded and
	// breaks the connection, as the datapath contract specifies; RPC-over-RDMA's credits
	// guarantee a posted receive, so a retry only hides a bug.
	RNRRetry int

	// InlineProbeMax is the largest max_inline_data the device probe tries (default 1024).
	// Devices report no inline limit, so the provider finds it by creating queue pairs.
	InlineProbeMax int
}

func (c Config) inlineProbeMax() int {
	if c.InlineProbeMax <= 0 {
		return 1024
	}
	return c.InlineProbeMax
}

func (c Config) rnrRetry() int {
	return min(max(c.RNRRetry, 0), 7)
}
