package rpcrdma

import (
	"strconv"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// MemoryMode says how chunk memory is made visible to the peer.
type MemoryMode uint8

const (
	// MemoryPreregistered exposes every chunk through the one registration of the
	// connection's buffer region, made at setup: no registration work per RPC, and the peer
	// holds a key that stays valid for the connection's life (the zero-copy mode).
	MemoryPreregistered MemoryMode = iota
	// MemoryWindows binds a memory window with a freshly rotated key over each chunk of
	// each RPC and invalidates it when the RPC ends, locally (LOCAL_INV) or, when remote
	// invalidation was negotiated, by the responder's Send With Invalidate. This is what the
	// Linux client does with FRWR and what it costs; the region itself carries no remote
	// rights in this mode, so a stale key always fails.
	MemoryWindows
)

// MarshalText and UnmarshalText make a MemoryMode read as its name in configs and results
// files.
func (m MemoryMode) MarshalText() ([]byte, error) {
	if m > MemoryWindows {
		return nil, &ConfigError{Field: "Memory", Reason: "unknown memory mode"}
	}
	return []byte(m.String()), nil
}

func (m *MemoryMode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "preregistered", "":
		*m = MemoryPreregistered
	case "windows":
		*m = MemoryWindows
	default:
		return &ConfigError{Field: "Memory", Reason: "unknown memory mode " + strconv.Quote(string(b))}
	}
	return nil
}

func (m MemoryMode) String() string {
	switch m {
	case MemoryPreregistered:
		return "preregistered"
	case MemoryWindows:
		return "windows"
	}
	return "memory(invalid)"
}

// InlineRule says when a requester moves a message out of its Send into chunks.
type InlineRule uint8

const (
	// InlineExact sends a message inline whenever its exact transport header and RPC
	// message fit the inline threshold.
	InlineExact InlineRule = iota
	// InlineLinux does as the Linux client: a call inline only when its RPC message fits the
	// send threshold less the largest call header (rpcrdma_max_call_header_size), a reply
	// only when it fits the receive threshold less the largest reply header, for the 3
	// segments of an FRWR device that maps 1 MiB at once (linuxMaxCallHeader,
	// linuxMaxReplyHeader).
	InlineLinux
)

// The Linux client's worst-case headers (net/sunrpc/xprtrdma/rpc_rdma.c) for
// re_max_rdma_segs 3: 7 fixed words, a Read list of 3 chunks and a one-segment Reply chunk
// for a call; 7 fixed words and a Write chunk of 3 segments for a reply.
const (
	linuxMaxCallHeader  = 28 + 3*24 + 4 + 16 + 4
	linuxMaxReplyHeader = 28 + 4 + 3*16 + 4
)

// MarshalText and UnmarshalText make an InlineRule read as its name in configs and results
// files.
func (r InlineRule) MarshalText() ([]byte, error) {
	if r > InlineLinux {
		return nil, &ConfigError{Field: "InlineRule", Reason: "unknown inline rule"}
	}
	return []byte(r.String()), nil
}

func (r *InlineRule) UnmarshalText(b []byte) error {
	switch string(b) {
	case "exact", "":
		*r = InlineExact
	case "linux":
		*r = InlineLinux
	default:
		return &ConfigError{Field: "InlineRule", Reason: "unknown inline rule " + strconv.Quote(string(b)) + " (want exact or linux)"}
	}
	return nil
}

func (r InlineRule) String() string {
	switch r {
	case InlineExact:
		return "exact"
	case InlineLinux:
		return "linux"
	}
	return "inline-rule(invalid)"
}

// Config configures one endpoint. The zero value is usable: every zero field means the
// default given in its comment.
type Config struct {
	// SendSize and RecvSize are the inline sizes this endpoint advertises in its RFC 8797
	// private data: the largest Send it will make and the largest it can receive. Multiples
	// of 1024 from 1024 to 262144; default 4096 (the Linux client's default). Receive
	// buffers are exactly RecvSize bytes.
	SendSize int `json:"send_size"`
	RecvSize int `json:"recv_size"`
	// NoPrivateData sends no RFC 8797 message, as an RFC 8166-only peer would; the peer then
	// uses the 1024-byte defaults for this side.
	NoPrivateData bool `json:"no_private_data,omitempty"`
	// RemoteInvalidate sets the R bit. A requester sets it only in MemoryWindows mode,
	// because in MemoryPreregistered mode every chunk shares the region's key and
	// invalidating it would end the connection; the bit is silently cleared there.
	RemoteInvalidate bool `json:"remote_invalidate"`
	// ResponderRead enables responder-provided Position Zero Read chunks
	// (draft-cel-nfsv4-rpcrdma-reliable-reply): a requester offers no Reply chunk where it
	// would need one and pulls the reply from the responder's Read chunk instead; a responder
	// sends a reply that does not fit the requester's reply resources in one. It takes effect
	// only when both ends enable it (advertised in the private data extension block, see
	// TRANSPORT.md).
	ResponderRead bool `json:"responder_read"`
	// DoneInvalidate makes a requester send RDMA_DONE by Send With Invalidate of the
	// responder's Read chunk key when both ends set the R bit (the reliable-reply draft's
	// section 4.1.4 SHOULD). Off by default: the draft gives version 1 no way for a
	// responder to say its Read chunk keys may be invalidated, and a responder that does not
	// expect it breaks the connection on its LOCAL_INV of the dead key. One that arrives
	// after the responder's DoneTimeout names a key already invalidated, and the responder's
	// device fails that receive: the connection breaks.
	DoneInvalidate bool `json:"done_invalidate,omitempty"`
	// InlineRule is when a requester's calls and replies leave the Send for chunks; default
	// InlineExact.
	InlineRule InlineRule `json:"inline_rule"`
	// DoneTimeout is how long a responder keeps a responder-provided Read chunk exposed
	// waiting for RDMA_DONE before it releases it anyway. Default 1s.
	DoneTimeout time.Duration `json:"done_timeout_ns"`
	// ReadTimeout is how long the RDMA Reads that pull Read chunks may all go unanswered
	// (none completing while some are outstanding) before the connection fails with
	// ErrReadTimeout: the buffers they fill cannot be given to other calls while they may
	// still land, so a peer that answers late would hold them as long as it likes. Default
	// 2s: a loaded host can stall a process for most of a second.
	ReadTimeout time.Duration `json:"read_timeout_ns,omitempty"`

	// Credits is, for a requester, the credit value it requests and so the most calls it
	// can ever have outstanding; for a responder, the most credits it grants (it grants
	// min(requested, Credits), never 0) and so the receives it keeps posted for calls.
	// Default 64.
	Credits int `json:"credits"`
	// ReverseCredits enables RFC 8167 reverse-direction calls. For a requester, it is the
	// credit it grants to the responder's calls, for which it posts that many extra
	// receives; for a responder, the credit it requests for its own calls to the requester.
	// Reverse calls flow only when both ends set it. 0 disables the reverse direction.
	ReverseCredits int `json:"reverse_credits"`

	// Memory selects how chunks are registered; default MemoryPreregistered.
	Memory MemoryMode `json:"memory"`
	// MaxPayload is the largest DDP-eligible payload (ECHO, SINK or SOURCE data) one RPC
	// carries, which sizes the chunk buffers. Default 256 KiB.
	MaxPayload int `json:"max_payload"`
	// Verify fills outgoing payloads with a per-RPC pattern and checks incoming ones: a
	// requester checks ECHO and SOURCE replies, a responder checks ECHO and SINK arguments
	// and fills SOURCE results. An RPC whose data does not match fails with ErrVerify.
	Verify bool `json:"verify"`

	// Codec marshals this end's calls and checks their replies: the RPC program a requester
	// drives, or, on a responder, the program of its reverse calls. Nil means the benchmark
	// program (benchprog.Codec). The responder side always serves the benchmark program.
	Codec rpcproto.Codec `json:"-"`
	// Service, on a requester, answers the peer's reverse calls (RFC 8167) with its program,
	// such as NFSv4.1's callbacks, instead of the benchmark program. A requester with a
	// Service and ReverseCredits takes the reverse direction as enabled by the upper layer
	// (RFC 8167 section 7; NFSv4.1's CREATE_SESSION with CONN_BACK_CHAN), without the private
	// data's word for it, and posts receives for the peer's calls from the start.
	Service rpcproto.Service `json:"-"`
	// Served, when set, is called on the connection's goroutine as each reverse call's reply
	// is known sent: the call's procedure (its number in the program), the class it came in
	// (short; chunked with a Read chunk; long in a Position Zero Read chunk), the time from
	// its arrival to the reply's Send completion, and whether it failed (Service.Serve's
	// error, or a call of a program or procedure the Service does not define, whose number
	// may lie beyond Service.Procs). It must not allocate.
	Served func(proc uint32, class rpcproto.Kind, ns int64, failed bool) `json:"-"`
	// Cred is the credential of this end's calls (RFC 5531 section 8.2); the zero value is
	// AUTH_NONE, which servers answer only for NULL. NFS servers want AUTH_SYS
	// (oncrpc.SysCred). Its encoding must leave the call header within the room before the
	// payload (about 160 bytes: a short machine name, few gids).
	Cred oncrpc.OpaqueAuth `json:"-"`

	// Limits bound the chunk lists accepted from the peer; zero fields take the defaults of
	// DefaultEndpointLimits.
	Limits wire.Limits `json:"limits"`

	// CQ, when set, is a completion queue shared with other connections (one poller serving
	// many): it must be deep enough for all of them, the connection does not close it, and
	// its completions are fed to Conn.Handle (see Mux) instead of polled by Progress. Nil
	// gives the connection its own CQ.
	CQ datapath.CQ `json:"-"`
}

// DefaultEndpointLimits are the Limits an endpoint applies when Config.Limits fields are
// zero: enough for any sender that keeps one chunk per list in a few segments, as Linux
// does, while bounding the send buffer that echoes the Write list in a reply.
var DefaultEndpointLimits = wire.Limits{ReadSegments: 8, WriteChunks: 2, WriteSegments: 8, ReplySegments: 8}

// Defaults.
const (
	DefaultInline      = 4096
	DefaultCredits     = 64
	DefaultMaxPayload  = 256 << 10
	DefaultDoneTimeout = time.Second
	DefaultReadTimeout = 2 * time.Second
)

func (c Config) withDefaults() Config {
	if c.Codec == nil {
		c.Codec = &benchprog.Codec{}
	}
	if c.SendSize == 0 {
		c.SendSize = DefaultInline
	}
	if c.RecvSize == 0 {
		c.RecvSize = DefaultInline
	}
	if c.Credits == 0 {
		c.Credits = DefaultCredits
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = DefaultMaxPayload
	}
	if c.DoneTimeout == 0 {
		c.DoneTimeout = DefaultDoneTimeout
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	d := DefaultEndpointLimits
	if c.Limits.ReadSegments <= 0 {
		c.Limits.ReadSegments = d.ReadSegments
	}
	if c.Limits.WriteChunks <= 0 {
		c.Limits.WriteChunks = d.WriteChunks
	}
	if c.Limits.WriteSegments <= 0 {
		c.Limits.WriteSegments = d.WriteSegments
	}
	if c.Limits.ReplySegments <= 0 {
		c.Limits.ReplySegments = d.ReplySegments
	}
	return c
}

// Validate reports the first field of c whose value no endpoint can use, as a *ConfigError
// naming it; zero fields mean their defaults. Dial, Accept and Serve check the same.
func (c Config) Validate() error { return c.withDefaults().validate() }

func (c Config) validate() error {
	for _, s := range []struct {
		name string
		v    int
	}{{"SendSize", c.SendSize}, {"RecvSize", c.RecvSize}} {
		if s.v < wire.MinInline || s.v > wire.MaxInline || s.v%1024 != 0 {
			return &ConfigError{Field: s.name, Reason: "must be a multiple of 1024 from 1024 to 262144"}
		}
	}
	if c.Credits < 1 || c.Credits > maxSlots/4 {
		return &ConfigError{Field: "Credits", Reason: "must be from 1 to 8192"}
	}
	if c.ReverseCredits < 0 || c.ReverseCredits > maxSlots/4 {
		return &ConfigError{Field: "ReverseCredits", Reason: "must be from 0 to 8192"}
	}
	if c.MaxPayload < 0 || c.MaxPayload > 1<<30 {
		return &ConfigError{Field: "MaxPayload", Reason: "must be from 0 to 1 GiB"}
	}
	if c.Memory > MemoryWindows {
		return &ConfigError{Field: "Memory", Reason: "unknown memory mode"}
	}
	if c.InlineRule > InlineLinux {
		return &ConfigError{Field: "InlineRule", Reason: "unknown inline rule"}
	}
	if c.DoneTimeout < 0 {
		return &ConfigError{Field: "DoneTimeout", Reason: "must not be negative"}
	}
	if c.ReadTimeout < 0 {
		return &ConfigError{Field: "ReadTimeout", Reason: "must not be negative"}
	}
	call := oncrpc.Call{Cred: c.Cred}
	if len(c.Cred.Body) > 400 || call.Size() > headroom-maxArgsPrefix {
		return &ConfigError{Field: "Cred", Reason: "credential too large for the call header's room (" + strconv.Itoa(headroom-maxArgsPrefix) + " bytes)"}
	}
	return nil
}

// ConfigError is a Config field with an unusable value.
type ConfigError struct {
	Field, Reason string
}

func (e *ConfigError) Error() string { return "rpcrdma: config: " + e.Field + " " + e.Reason }
