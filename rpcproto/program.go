package rpcproto

import (
	"fmt"
	"strings"
)

// Dir says which messages of an RPC carry an item: none, the call, the reply or both.
type Dir uint8

const (
	None    Dir = 0
	InCall  Dir = 1
	InReply Dir = 2
	Both        = InCall | InReply
)

// Procedure is one procedure of a program as a workload and a requester see it.
type Procedure struct {
	// Name is what a workload mix calls it: lower case, as in "null" or "read".
	Name string
	// Number is the procedure number on the wire.
	Number uint32
	// Payload says which messages carry the payload a workload sizes (ECHO: both; a write:
	// the call; a read: the reply; NULL and GETATTR: none).
	Payload Dir
	// DDP says which of those payloads is a DDP-eligible item (RFC 8166 section 6), the
	// last item of its message's body, which a Read chunk (call) or a Write chunk (reply)
	// may carry. A payload that is not DDP-eligible moves inline or in a long message.
	DDP Dir
	// Setup marks a call the engine makes only to set a connection up or tear it down
	// (Conversation): a workload cannot name it.
	Setup bool
	// Alone marks a procedure that is a measurement of its own (NFSv4.1's delegation
	// recall, a conversation of two clients), which the program's Codec makes (Measurer):
	// a mix that names it names nothing else, and it runs one at a time (depth,
	// connections and pollers 1).
	Alone bool
}

// Sized reports whether the procedure takes a payload size.
func (p *Procedure) Sized() bool { return p.Payload != None }

// Sizes splits a workload's payload size into the call's and the reply's.
func (p *Procedure) Sizes(size int) (call, reply int) {
	if p.Payload&InCall != 0 {
		call = size
	}
	if p.Payload&InReply != 0 {
		reply = size
	}
	return call, reply
}

// Program is an ONC RPC program's identity and procedure table. A procedure is known by its
// index in Procs everywhere in this module (workloads, engine, results); Number is only
// for the wire.
type Program struct {
	// Name is how users select the program ("bench", "nfs3").
	Name string
	// Number and Version identify it on the wire (RFC 5531).
	Number, Version uint32
	// Procs is the procedure table; at most MaxProcs entries.
	Procs []Procedure
	// Presets are named mixes of the program's procedures, in the mix syntax of package
	// workloads ("read/4k:60,read/64k:40").
	Presets map[string]string
	// DefaultMix names the preset a workload that names no mix runs ("": none, so such a
	// workload is refused); results name a mix equal to it by that name, not its entries.
	DefaultMix string
	// External: the program is served outside this tool (an NFS/RDMA server), so calls
	// need a server's address and name its files (its Descriptor's Setup).
	External bool
}

// MaxProcs bounds a program's procedure table, for fixed arrays indexed by procedure.
const MaxProcs = 16

// Lookup returns the index of the procedure named name (any case).
func (p *Program) Lookup(name string) (int, error) {
	for i := range p.Procs {
		if !p.Procs[i].Setup && strings.EqualFold(p.Procs[i].Name, name) {
			return i, nil
		}
	}
	var names []string
	for i := range p.Procs {
		if !p.Procs[i].Setup {
			names = append(names, p.Procs[i].Name)
		}
	}
	return 0, fmt.Errorf("unknown procedure %q of program %s (want %s)", name, p.Name, strings.Join(names, ", "))
}

// Codec marshals the calls of one program in place and checks its replies, for one
// connection. The requester lays a call's payload out first and asks the codec to encode
// the arguments around it, so that payload bytes are written once, where the transport
// sends or exposes them from. Its methods run on the RPC path: they must not allocate.
//
// slot is the transport's slot the call occupies, from 0 to its credits less one: no two
// outstanding calls of a connection share one, but a slot is free again only once its call
// has finished entirely (its memory windows invalidated, its Send completed), so that the
// indices in use may reach beyond the number of calls outstanding. A protocol whose calls
// name a slot of their own (NFSv4.1's SEQUENCE) maps the transport's slot to its own; see
// Conversation for when such a slot is free again.
type Codec interface {
	// Program is the program the codec speaks.
	Program() *Program
	// Sizes returns, for procedure proc with a payload of size bytes: the XDR size of the
	// arguments, how many of those bytes precede the payload (when the call carries it, its
	// length word is the prefix's last four bytes), and the largest XDR size of the results.
	// For a procedure without payload, a codec that is not a Conversation returns the same
	// sizes for its whole life: a transport may ask once.
	// Arguments may go on after the payload and its XDR pad (NFSv4.1's WRITE is followed by
	// GETATTR): a Read chunk leaves those inline, right after the prefix.
	Sizes(proc, size int) (args, prefix, results int)
	// EncodeArgs writes proc's arguments into b, which is exactly args bytes long: the
	// prefix, then (when the call carries the payload) the payload already in place, its
	// zero pad and what follows it. With verify set, it fills the payload with content the
	// peer can check. seed is the call's own value, the same for its DecodeResults. A
	// transport need not call it for a call without arguments (args 0), nor DecodeResults
	// for an empty reply body where Sizes gives no results, unless the codec is a
	// Conversation: there is nothing to encode or check.
	EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool)
	// DecodeResults checks the results of proc in body; chunk holds the data a Write chunk
	// delivered when the reply's DDP-eligible item came in one (nil otherwise). It returns
	// the reply's payload (a sub-slice of body or chunk), or an error saying what was wrong:
	// malformed results, or a status the program defines as failure, wrapped so that
	// errors.Is finds it.
	DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error)
}

// Conversation is a Codec whose connections each hold state that calls over the connection
// itself set up before measuring and tear down after: NFSv4.1's client ID and session, whose
// SEQUENCE follows the requester's slots. The engine gives every connection its own
// (NewConn), makes the conversation's calls one at a time (Next, then Submit, then
// DecodeResults, whose error ends the conversation), and neither times nor counts them.
type Conversation interface {
	Codec
	// NewConn returns the Conversation of one more connection; it shares what is fixed for
	// the run (the file names, the client's identity) and nothing a call changes.
	NewConn() Conversation
	// Service answers the server's calls on the connection (NFSv4.1's callbacks), nil for
	// none: it goes into the connection's configuration before it connects.
	Service() Service
	// Start gives what the connection negotiated, once connected and before the first Next.
	Start(ConnInfo)
	// Next returns the next call to make, a Setup procedure and its payload size, and true;
	// false once the connection is set up (closing false) or torn down (closing true).
	Next(closing bool) (proc, size int, ok bool)
	// Slots is the most calls the connection may have outstanding once set up (the
	// session's slots, as the server bounds them now), 0 for no bound beyond the credits.
	// The engine bounds the connection's calls by it (rpcrdma.Conn.LimitCalls) after each
	// batch of results.
	Slots() int
	// Unanswered tells the conversation that the call on slot ended without results it
	// could decode: its reply failed below the codec (an RDMA_ERROR, an RPC reject, a
	// reply the transport refused) or the connection broke. The server may have executed
	// it.
	//
	// The slot contract: for every call EncodeArgs encoded, the transport calls exactly one
	// of DecodeResults and Unanswered, when the reply arrives or the call fails, in the same
	// step that stops counting it against the connection's calls outstanding (before any
	// other call can be submitted), so that a conversation whose own slots number Slots()
	// always finds one free for the next call.
	// A call that gets no reply at all keeps its slot until the connection ends.
	Unanswered(proc, slot int)
	// Lost reports that the connection's state was lost (NFSv4.1: the server answered
	// BADSESSION or DEADSESSION): the engine stops submitting on the connection, waits for
	// its calls outstanding to end, and sets it up again with Next(false), whose calls
	// restore the state (a new session; a new client ID when the server forgot the old).
	Lost() bool
}

// ConnInfo is what a Conversation learns of its connection.
type ConnInfo struct {
	// SendSize and RecvSize are the negotiated inline thresholds: the largest message this
	// side sends inline and the largest it receives.
	SendSize, RecvSize int
	// MaxPayload is the largest DDP-eligible item a call or reply carries (in a chunk).
	MaxPayload int
	// Credits are the calls this side may have outstanding, ReverseCredits the server's
	// calls it takes at once (0: no reverse direction).
	Credits, ReverseCredits int
}

// Service answers the calls a server makes to its requester over the requester's own
// connection (RFC 8167 reverse direction), such as NFSv4.1's callbacks. It runs on the RPC
// path, on the connection's goroutine: it must not allocate.
type Service interface {
	// Program is the program and version it answers.
	Program() (prog, vers uint32)
	// Procs names its procedures by number for the results ("cb_null", "cb_compound"); a
	// call of a number beyond them is answered PROC_UNAVAIL.
	Procs() []string
	// Serve answers a call of procedure proc whose arguments are args: it writes the
	// results into res and returns their length. A non-nil error with a length of 0 means
	// the arguments did not decode (the reply is GARBAGE_ARGS); with a length, the reply
	// is sent and the call counts as failed by the error's kind (a *ResultError), as an
	// answer of NFS4ERR_NOTSUPP does.
	Serve(proc uint32, args, res []byte) (int, error)
}

// ResultError is an RPC that came back well formed but failed by its program's or the
// benchmark's rules: a verification failure, or a status the program defines as failure
// (NFS3ERR_NOENT). Kind names it in results files' per-kind error counts. Codecs return
// preallocated values, so failing allocates nothing.
type ResultError struct {
	msg, kind string
	later     bool
}

// NewResultError returns a ResultError with the given message and kind (a short stable name such as
// "verify" or "nfs3err_noent"). Call it once, at initialization.
func NewResultError(kind, msg string) *ResultError { return &ResultError{msg: msg, kind: kind} }

func (e *ResultError) Error() string { return e.msg }

// Kind is the error's kind for results files.
func (e *ResultError) Kind() string { return e.kind }

// NewLaterError is NewResultError for a status that asks the caller to try again later
// (NFS4ERR_DELAY, NFS4ERR_GRACE): a Conversation's calls that fail so are made again.
func NewLaterError(kind, msg string) *ResultError {
	return &ResultError{msg: msg, kind: kind, later: true}
}

// Later reports whether the server asked for the call to be tried again later.
func (e *ResultError) Later() bool { return e.later }

// ErrVerify: payload verification failed: the data received is not the pattern sent.
var ErrVerify = NewResultError("verify", "payload verification failed")

// NullProgram is the program numbered prog, version vers, known only by its NULL procedure
// (number 0, no arguments, no results): enough to measure any ONC RPC server's transport.
func NullProgram(prog, vers uint32) *Program {
	return &Program{
		Name:    fmt.Sprintf("%d:%d", prog, vers),
		Number:  prog,
		Version: vers,
		Procs:   []Procedure{{Name: "null"}},
	}
}

// NullCodec is the Codec of a program whose procedures carry no arguments and whose results
// are not examined, such as a NullProgram.
type NullCodec struct{ P *Program }

var _ Codec = NullCodec{}

// Program returns c.P.
func (c NullCodec) Program() *Program { return c.P }

// Sizes returns no arguments and no results.
func (NullCodec) Sizes(proc, size int) (args, prefix, results int) { return 0, 0, 0 }

// EncodeArgs writes nothing.
func (NullCodec) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {}

// DecodeResults accepts any results.
func (NullCodec) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	return nil, nil
}
