package datapath

import (
	"context"
	"time"
)

// Provider is an RDMA implementation: "soft" (pure Go, in process or over TCP) or "verbs"
// (libibverbs + librdmacm).
type Provider interface {
	// Name is the provider's short name as the CLI spells it.
	Name() string
	// Devices lists the devices the provider can open, with their attributes.
	Devices() ([]DeviceInfo, error)
	// Open opens the named device; "" opens the provider's default (its first) device.
	Open(name string) (Device, error)
	// Defaults is how the provider is best driven where the user does not say.
	Defaults() Defaults
}

// Device is an opened RDMA device with a default protection domain, which Register, AllocMW
// and every queue pair created without QPConfig.PD use. All objects created from a Device
// belong to it and must be closed before it.
type Device interface {
	// Info reports the device's attributes.
	Info() DeviceInfo

	// Register registers mem for the given access in the default protection domain and
	// returns the memory region. mem must stay valid and must not move until the MR is
	// closed: providers that hand it to hardware require memory outside the Go heap (see
	// package mempool). The local key is valid for SGEs at once; the remote key for RDMA
	// READ/WRITE by the peer only if access allows it.
	Register(mem []byte, access Access) (MR, error)

	// AllocMW allocates a type 2 memory window in the default protection domain, bound later
	// by an OpBindMW work request. It returns an error wrapping ErrNotSupported where the
	// device has no memory windows.
	AllocMW() (MW, error)

	// AllocPD allocates a further protection domain (ibv_alloc_pd), so that the keys of one
	// connection are useless on another: see PD.
	AllocPD() (PD, error)

	// NewCQ creates a completion queue that can hold depth completions. One CQ may serve the
	// send and receive queues of many connections; completions carry the QP number.
	NewCQ(depth int) (CQ, error)

	// Listen starts listening for connections on addr ("host:port"; port 0 picks one).
	Listen(addr string) (Listener, error)

	// Connect resolves addr, creates a queue pair as cfg says and connects with privateData
	// (at most MaxConnectPrivateData bytes). The returned Conn is established: its
	// PeerPrivateData holds what the listener passed to Accept.
	Connect(ctx context.Context, addr string, cfg QPConfig, privateData []byte) (Conn, error)

	// Close releases the device. Objects still open are reported in the error.
	Close() error
}

// PD is a protection domain. Memory registered in a PD and windows allocated in it can be used
// only by queue pairs created in the same PD (QPConfig.PD), as on hardware: an SGE naming an
// lkey of another PD fails like a bad lkey (StatusLocalProtection), and the peer's RDMA READ
// or WRITE with an rkey of another PD fails like a bad rkey (StatusRemoteAccess at the peer);
// either breaks the connection. Binding a window of one PD on a queue pair of another, or to
// a region of another, fails with StatusMWBind.
//
// A PD must outlive what was created in it: Close fails while regions, windows or queue pairs
// of the PD are still open.
type PD interface {
	// Register is Device.Register in this PD.
	Register(mem []byte, access Access) (MR, error)
	// AllocMW is Device.AllocMW in this PD.
	AllocMW() (MW, error)
	Close() error
}

// Listener accepts incoming connection requests.
type Listener interface {
	// Accept blocks until a connection request arrives, ctx is done or the listener closes.
	Accept(ctx context.Context) (ConnRequest, error)
	// Addr is the address actually bound ("host:port").
	Addr() string
	Close() error
}

// ConnRequest is a pending incoming connection, decided by exactly one of Accept or Reject.
type ConnRequest interface {
	// PrivateData is the requester's connect private data. RDMA-CM may pad it with zeros (to
	// 56 bytes on RoCE), so decoders must not assume its length.
	PrivateData() []byte
	// RemoteAddr is the requester's address ("host:port").
	RemoteAddr() string
	// Accept creates a queue pair as cfg says and accepts with privateData (at most
	// MaxAcceptPrivateData bytes). The Conn is established when Accept returns. An Accept
	// that fails before answering the requester leaves the request undecided (bad private
	// data, no queue pair, a failed cfg.Prepare): Reject it then, so that the requester
	// learns why.
	Accept(cfg QPConfig, privateData []byte) (Conn, error)
	// Reject refuses the connection, passing privateData (at most MaxRejectPrivateData
	// bytes) to the requester, whose Connect fails with an error wrapping a *RejectedError
	// that carries it: the place for a reason the requester can show.
	Reject(privateData []byte) error
}

// QPConfig describes the queue pair of one connection. The zero value is not usable: the CQs
// are required; zero sizes mean the defaults below.
type QPConfig struct {
	// PD is the protection domain of the queue pair, whose regions and windows alone it may
	// use (locally and by the peer); nil means the device's default PD.
	PD PD
	// SendCQ and RecvCQ receive the completions of the send and the receive queue. They may be
	// the same CQ and may be shared by many connections.
	SendCQ, RecvCQ CQ
	// MaxSendWR and MaxRecvWR bound the outstanding work requests on each queue (default 128).
	MaxSendWR, MaxRecvWR int
	// MaxSendSGE and MaxRecvSGE bound the SGL length of one work request (default 2).
	MaxSendSGE, MaxRecvSGE int
	// MaxInlineData asks for sends of up to this many bytes to be copied into the work
	// request (FlagInline). The provider clamps it to what the device accepts and reports
	// the effective value in Conn.Caps; it never fails for asking too much.
	MaxInlineData int
	// RDMAReadDepth bounds the RDMA READs outstanding in each direction (initiator depth and
	// responder resources; default 4), clamped to the device's max_qp_rd_atom.
	RDMAReadDepth int
	// Prepare, when set, is called with the new queue pair before the connection exists:
	// Accept calls it before answering the requester, Connect before sending the request. It
	// posts the receives the peer's first messages need, since the peer may send the moment
	// the connection is established and iWARP has no receiver-not-ready retry: a Send that
	// finds no receive ends the connection. An error fails Accept (the request stays
	// undecided) or Connect, and the queue pair is destroyed.
	Prepare func(Conn) error
}

// Defaults for zero QPConfig fields.
const (
	DefaultMaxWR         = 128
	DefaultMaxSGE        = 2
	DefaultRDMAReadDepth = 4
)

// Private data limits of RDMA-CM over InfiniBand and RoCE (IBTA CM REQ, REP and REJ
// messages). iWARP's MPA messages carry more (up to 512 bytes, 256 through Linux's iw_cm),
// so these fit every transport.
const (
	MaxConnectPrivateData = 56
	MaxAcceptPrivateData  = 196
	MaxRejectPrivateData  = 148
)

// QPCaps are the effective capabilities of an established queue pair, after clamping.
type QPCaps struct {
	MaxSendWR, MaxRecvWR   int
	MaxSendSGE, MaxRecvSGE int
	MaxInlineData          int
	RDMAReadDepth          int
}

// Conn is one reliable-connected queue pair.
//
// Ordering is RC ordering: operations on the send queue execute in posting order, each
// SEND consumes the peer's oldest posted receive, and the data of an RDMA WRITE is placed
// before a SEND posted after it completes at the peer. A failed operation (local length,
// protection or remote access error) moves the connection to the error state: that work
// request completes with its error status, all others outstanding on either side complete
// with StatusFlushed, and the peer's connection breaks too.
//
// The peer may SEND as soon as the connection is established, possibly before this side's
// first PostRecv: like RC hardware, a provider retries a SEND that finds no receive posted
// for a bounded receiver-not-ready time (soft: Config.RNRTimeout; verbs: rnr_retry_count ×
// min_rnr_timer) before failing it with StatusRNRRetryExceeded. Posting on a broken
// connection either fails with an error wrapping ErrBroken or completes with StatusFlushed.
// A completion's Op is meaningful only when its Status is StatusSuccess (as in verbs).
//
// PostSend and PostRecv may be called concurrently with CQ.Poll but not concurrently with
// themselves: one poller owns a connection's queues.
type Conn interface {
	// PostSend posts wrs in order. It returns how many were posted; on error the first
	// unposted one is wrs[n]. The SGLs are read before PostSend returns (the memory they
	// name is not: it must stay untouched until the work request completes).
	PostSend(wrs []SendWR) (n int, err error)
	// PostRecv posts receive buffers; each completes with the SEND that consumed it.
	PostRecv(wrs []RecvWR) (n int, err error)
	// PeerPrivateData is the private data the peer sent while connecting, as received
	// (possibly padded by RDMA-CM). Owned by the Conn; do not modify.
	PeerPrivateData() []byte
	// QPN identifies this queue pair in Completion.QPN.
	QPN() uint32
	// Caps are the effective queue pair capabilities.
	Caps() QPCaps
	LocalAddr() string
	RemoteAddr() string
	// Err is nil while the connection works and the cause once it broke.
	Err() error
	// Close disconnects and destroys the queue pair; outstanding work requests complete
	// with StatusFlushed. The CQs stay open.
	Close() error
}

// Aborter is implemented by connections whose wire can tell the peer why they are closed
// (the soft provider's DISCONNECT). rdma_disconnect carries no private data, so the verbs
// provider cannot: its peer learns only that the connection was closed.
type Aborter interface {
	// Abort closes the connection as Close does and gives the peer reason (short text), whose
	// Conn.Err is then a *DisconnectError carrying it. On a connection already broken it
	// only closes.
	Abort(reason string) error
}

// Deferrer is implemented by connections whose posts can wait for the next poll of their CQ,
// so that handing work requests to the device costs no provider call of its own: with the
// verbs provider, one cgo call posts what a batch of completions caused and polls for the
// next batch, where immediate posting takes one call per PostSend and PostRecv besides.
type Deferrer interface {
	// DeferPosts makes later PostSend and PostRecv calls stage their work requests: they
	// are checked and counted against the queues' capacity as before (a full queue still
	// fails at once), and the next CQ.Poll or CQ.Wait of the connection's CQ hands them to
	// the device, receives first, before it looks for completions. Inline data (FlagInline)
	// is copied then, not before PostSend returns.
	//
	// From this call on, whoever posts on the connection polls its CQ too, never
	// concurrently with posting (a Poller's Handler does both), and the connection uses one
	// CQ for both queues (an error otherwise). If the device refuses a staged work request,
	// the connection breaks with that cause (Err): neither it nor what was staged after it
	// completes. What is still staged when the connection closes is dropped.
	DeferPosts() error
}

// CQ is a completion queue.
type CQ interface {
	// Poll moves up to len(wcs) completions into wcs without blocking and returns how many.
	// An error means the CQ itself failed (overrun), not that an operation failed: those are
	// completions with a non-success Status.
	Poll(wcs []Completion) (n int, err error)
	// Wait blocks until a completion is available (it may return at once) or timeout
	// passes, for the event-driven polling mode. It returns ErrTimeout on timeout. Callers
	// drain the CQ with Poll after every Wait. Wait re-arms notification and re-checks the
	// queue before it sleeps, so a completion that arrives between the caller's last empty
	// Poll and Wait is never missed. Wait must not race with Close.
	Wait(timeout time.Duration) error
	Close() error
}

// MR is a registered memory region.
type MR interface {
	// Bytes is the registered memory.
	Bytes() []byte
	// Addr is the address of Bytes()[0] in the scheme SGE.Addr and SendWR.RemoteAddr use.
	Addr() uint64
	LKey() uint32
	RKey() uint32
	Access() Access
	// Close deregisters the region. Work requests that still name it fail.
	Close() error
}

// MW is a type 2 memory window: a remote key bound to a range of an MR by an OpBindMW work
// request and invalidated by OpLocalInv or by the peer's OpSendInv. Each bind uses a new key
// (see NextRKey), so a stale key never reaches memory rebound later. A type 2 window is bound
// to the queue pair the bind was posted on: only that connection's peer can use its key (any
// other connection's RDMA READ or WRITE with it fails with StatusRemoteAccess), even in the
// same PD.
type MW interface {
	// RKey is the key of the latest bind posted; before the first bind it is the key
	// AllocMW assigned, as ibv_alloc_mw does, so NextRKey(RKey()) is always the next key.
	RKey() uint32
	Close() error
}

// NextRKey returns rkey with its low 8 bits (the consumer-owned key byte) incremented, as
// ibv_inc_rkey does: the key to give the next bind of the same window.
func NextRKey(rkey uint32) uint32 {
	return rkey&^0xff | (rkey+1)&0xff
}

// Access are memory access rights.
type Access uint32

const (
	AccessLocalWrite Access = 1 << iota
	AccessRemoteWrite
	AccessRemoteRead
	// AccessMWBind allows memory windows to be bound to the region.
	AccessMWBind
)

// SGE is one scatter/gather element: Length bytes at Addr inside the MR whose local key is
// LKey.
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// Opcode is the operation of a work request or completion.
type Opcode uint8

const (
	OpSend     Opcode = iota + 1 // SEND
	OpSendInv                    // SEND_WITH_INV: a SEND that also invalidates InvRKey at the peer
	OpWrite                      // RDMA WRITE of the SGL to RemoteAddr/RKey
	OpRead                       // RDMA READ from RemoteAddr/RKey into the SGL
	OpRecv                       // a receive completion
	OpBindMW                     // bind MW to the range SGL[0] with BindAccess and key RKey
	OpLocalInv                   // invalidate InvRKey locally
)

var opcodeNames = [...]string{"INVALID", "SEND", "SEND_WITH_INV", "RDMA_WRITE", "RDMA_READ", "RECV", "BIND_MW", "LOCAL_INV"}

func (o Opcode) String() string {
	if int(o) < len(opcodeNames) {
		return opcodeNames[o]
	}
	return "OPCODE_UNKNOWN"
}

// SendFlags modify a send-queue work request.
type SendFlags uint8

const (
	// FlagSignaled asks for a completion on success; failures always complete. An unsignaled
	// work request's resources are released by the next signaled completion on the queue.
	FlagSignaled SendFlags = 1 << iota
	// FlagInline copies the data into the work request at post time (up to
	// QPCaps.MaxInlineData bytes), so the memory is free again when PostSend returns (with
	// Deferrer.DeferPosts, once the next poll of the CQ has handed it to the device).
	FlagInline
	// FlagFence waits for prior RDMA READs to complete before this work request starts.
	FlagFence
)

// SendWR is a send-queue work request.
type SendWR struct {
	// ID comes back in the Completion; by convention an index into the caller's slot table.
	// It must be below MaxWRID.
	ID    uint64
	Op    Opcode
	Flags SendFlags
	// SGL is the local memory: the data to SEND or WRITE, the destination of a READ, or for
	// OpBindMW the one range to bind.
	SGL []SGE
	// RemoteAddr and RKey name the peer's memory for OpWrite and OpRead; RKey is the new key
	// for OpBindMW.
	RemoteAddr uint64
	RKey       uint32
	// InvRKey is the key OpSendInv invalidates at the peer and OpLocalInv invalidates here.
	InvRKey uint32
	// MW and BindAccess are the window and its rights for OpBindMW. A bind covers at least
	// one byte: zero-length type 2 binds are invalid.
	MW         MW
	BindAccess Access
}

// MaxWRID bounds work request ids: the verbs provider keeps the top 16 bits of the 64-bit
// wr_id for its own bookkeeping (the opcode an errored completion lacks, queue slots).
const MaxWRID = 1 << 48

// RecvWR is a receive-queue work request: the buffer the next incoming SEND lands in.
type RecvWR struct {
	ID  uint64 // below MaxWRID
	SGL []SGE
}

// Completion reports a finished work request.
type Completion struct {
	ID     uint64
	QPN    uint32
	Op     Opcode
	Status Status
	// ByteLen is the number of bytes received (receives) or transferred (RDMA READ).
	ByteLen uint32
	// InvRKey is the key the peer invalidated with SEND_WITH_INV (receives only; valid when
	// Invalidated is set).
	InvRKey     uint32
	Invalidated bool
}
