package verbs

// Config tunes the provider. The zero value is the default for every field.
type Config struct {
	// PollSpin is how many more times one CQ.Poll call polls an empty completion queue inside
	// C before it returns 0. Spinning in C saves a cgo transition per empty poll for
	// busy-polling callers; 0 polls once.
	PollSpin int

	// RNRRetry is how often a SEND that finds no receive posted at the peer is retried
	// before it fails with StatusRNRRetryExceeded and breaks the connection (the datapath
	// contract's bounded receiver-not-ready time is RNRRetry × the peer's MinRNRTimer).
	// 0 means DefaultRNRRetry; a negative value fails at once; 7 retries forever (outside
	// the contract, which wants a bound).
	RNRRetry int

	// MinRNRTimer is how long this side asks a peer to wait before retrying a SEND that
	// found no receive posted, in the InfiniBand encoding (1 = 0.01 ms ... 31 = 491.52 ms,
	// 0 = 655.36 ms; IBTA table 45). 0 means DefaultMinRNRTimer. It is set on the queue
	// pair once the connection is established, since rdma_cm offers no way to pass it.
	MinRNRTimer int

	// ImmediatePosts makes every post a C call of its own: Conn.DeferPosts then changes
	// nothing. For measuring what deferring saves.
	ImmediatePosts bool

	// Turnarounds switches on the turnaround probe of every CQ: two clock reads per poll
	// that finds work, to measure how long the poller's caller takes from the completions a
	// poll returned to the poll that posts what they caused (datapath.Turnaround). For
	// measuring where a round trip's time goes; it needs deferred posting.
	Turnarounds bool

	// InlineProbeMax is the largest max_inline_data the device probe tries (default 1024).
	// Devices report no inline limit, so the provider finds it by creating queue pairs.
	InlineProbeMax int
}

// Defaults for zero Config fields.
const (
	DefaultRNRRetry    = 6
	DefaultMinRNRTimer = 20 // 10.24 ms: 6 retries wait about 60 ms, on a par with soft's 100 ms
)
