package rpcproto

// Measurer is a Conversation whose program has procedures measured alone (Procedure.Alone):
// it makes the Measurement of each. A program with such a procedure has its Descriptor's
// Setup return a Codec that is a Measurer; the engine knows the measurement through it
// alone.
type Measurer interface {
	Conversation
	// Measure returns a new Measurement of procedure proc for one requester, or an error
	// when proc is not a procedure measured alone.
	Measure(proc int) (Measurement, error)
}

// Measurement is a procedure measured alone that no single call makes (NFSv4.1's delegation
// recall, a conversation of two clients): a state machine over Conns connections, each its
// own Conversation (Measurer.NewConn, set up before the first Begin and torn down after the
// last Release), which its driver moves with the replies to the calls it asks for.
//
// The contract: the driver connects and sets up the connections in order, handing each to
// Connected. It then calls Begin for each measured request the workload submits, Reply for
// the outcome of every call the Measurement made through Driver.Call (each exactly once, as
// it comes in), and Step each time it has polled for replies. A request is complete when
// the Measurement calls Driver.Done. To end, the driver calls Stop, goes on polling (Reply,
// Step) until Settled, then makes each call Release returns alone and waits for its
// reply, which does not go to Reply, before tearing the connections down. An error from
// any method ends the measurement: the state of the server's clients is no longer known.
// Every method runs on the driver's goroutine, and Driver's methods only within them.
type Measurement interface {
	// Conns is how many connections it needs.
	Conns() int
	// Connected takes connection i's Conversation once set up; an error says it cannot
	// take its part (NFSv4.1's holder without a back channel cannot be recalled).
	Connected(i int, cv Conversation) error
	// Begin starts a measured request and reports true, or reports false, calling nothing,
	// while the measurement is not ready for one (the driver offers it again later).
	Begin(d Driver) (bool, error)
	// Reply gives the outcome of call proc on connection i: err is the call's error, from
	// its results or from the transport.
	Reply(d Driver, i, proc int, err error) error
	// Step makes the calls that wait on time or on the server's own calls rather than on
	// a reply (NFSv4.1: the next delegation asked for, DELEGRETURN once CB_RECALL came).
	Step(d Driver) error
	// Stop says no more requests will Begin: the measurement takes nothing more to hold.
	Stop()
	// Settled reports, after Stop, that no call is outstanding and none will be made but
	// Release's.
	Settled() bool
	// Release returns the next call that gives back what the measurement holds (NFSv4.1:
	// a delegation, returned and its file closed), connection and procedure, and true;
	// false once nothing is held.
	Release() (i, proc int, ok bool)
}

// Driver is what runs a Measurement: it makes its calls and records its figures.
type Driver interface {
	// Call submits procedure proc (a Setup procedure, with no payload) on connection i;
	// its outcome comes to Measurement.Reply.
	Call(i, proc int) error
	// Done completes the measured request Begin started, with its figures.
	Done(f Figures)
	// Declined counts a try the server declined, which is no request (NFSv4.1: an OPEN
	// that asked for a read delegation and got none).
	Declined()
}

// Figures are what one measured request found, as a results file's recalls hold them
// (results.Recorder.RecordRecall): times in nanoseconds.
type Figures struct {
	// CallbackNs runs from the request's first call to the arrival of the server's call
	// it waits for (NFSv4.1: the conflicting OPEN's first sending to CB_RECALL).
	CallbackNs int64
	// AnswerNs is the round trip of the call that answers the server's (DELEGRETURN).
	AnswerNs int64
	// TotalNs runs from the request's first call to its last call's success.
	TotalNs int64
	// Retries are the calls the server asked to make again (NFS4ERR_DELAY answers).
	Retries uint64
}
