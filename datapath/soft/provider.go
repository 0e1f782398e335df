package soft

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Config configures the provider. The zero value is the default for every field.
type Config struct {
	// RNRTimeout is how long a SEND waits for the peer to post a receive before it fails
	// with StatusRNRRetryExceeded and breaks the connection: the emulated RNR retry budget
	// (rnr_retry × RNR timer on hardware). 0 means DefaultRNRTimeout; a negative value fails
	// at once, like rnr_retry_count 0.
	RNRTimeout time.Duration
	// MaxInlineData is the device's inline limit reported in DeviceInfo and used to clamp
	// QPConfig.MaxInlineData. 0 means DefaultMaxInlineData.
	MaxInlineData int
	// HandshakeTimeout bounds how long a TCP listener waits for a connecting peer's CONNECT
	// frame before it closes the socket, so that a peer that opens connections and says
	// nothing holds no resources. 0 means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// RetryTimeout bounds how long a request sent over TCP (a SEND, WRITE or READ request)
	// may go unanswered: when the peer has answered nothing for between RetryTimeout and
	// twice it while requests are outstanding, the oldest completes with
	// StatusRetryExceeded and the connection breaks. It is the emulated transport retry
	// budget (local ACK timeout × retry_cnt on RC hardware), which keeps a peer that never
	// answers an RDMA READ from holding the connection and its memory forever. 0 means
	// DefaultRetryTimeout. In process the peer always answers at once.
	RetryTimeout time.Duration
	// CompletionDelay and Bandwidth are a test instrument, not a model of hardware: a known
	// slowdown for measuring how well a regression gate detects one. CompletionDelay, when
	// positive, holds every completion of this provider's devices back from Poll for that
	// long after it happened (after its poller first found it, which for a polling consumer
	// is at once). Bandwidth, when positive (bits per second), makes every byte
	// posted through them (SEND and RDMA WRITE payloads, RDMA READ sinks) pass one link of
	// that rate, shared by the whole provider: a completion is polled only once the link
	// carried every byte posted before it. PostCost, when positive, makes every send queue
	// work request cost its poster that long, spun out before it executes: time added to the
	// poster's own work, so its effect on a run grows in proportion to it. Zero for all
	// three costs nothing.
	CompletionDelay time.Duration
	Bandwidth       float64
	PostCost        time.Duration
}

// Defaults for zero Config fields and the device limits the provider reports.
const (
	DefaultRNRTimeout       = 100 * time.Millisecond
	DefaultMaxInlineData    = 256
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultRetryTimeout     = 5 * time.Second

	maxQPWR     = 16384
	maxSGE      = 32
	maxCQE      = 1 << 20
	maxQPRdAtom = 16
	maxMW       = 1 << 16
	maxKeys     = 1 << 24 // the index bits of a key

	// DeviceName is the one device the provider has.
	DeviceName = "soft0"
	// Name is the provider's name as the CLI spells it.
	Name = "soft"
	// InprocPrefix starts every in-process address ("inproc:name"); any other address is
	// "host:port" over TCP.
	InprocPrefix = "inproc:"
)

// Provider is the soft provider. Use New; the zero value is not usable.
type Provider struct {
	cfg  Config
	slow *slowdown // nil: no slowdown
}

var _ datapath.Provider = (*Provider)(nil)

// New returns a provider with cfg's zero fields set to the defaults.
func New(cfg Config) *Provider {
	if cfg.RNRTimeout == 0 {
		cfg.RNRTimeout = DefaultRNRTimeout
	}
	if cfg.MaxInlineData <= 0 {
		cfg.MaxInlineData = DefaultMaxInlineData
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.RetryTimeout <= 0 {
		cfg.RetryTimeout = DefaultRetryTimeout
	}
	return &Provider{cfg: cfg, slow: newSlowdown(cfg.CompletionDelay, cfg.Bandwidth, cfg.PostCost)}
}

func (p *Provider) Name() string { return Name }

func (p *Provider) info() datapath.DeviceInfo {
	return datapath.DeviceInfo{
		Name:          DeviceName,
		Provider:      Name,
		NodeType:      "soft",
		MaxInlineData: p.cfg.MaxInlineData,
		MaxSGE:        maxSGE,
		MaxQPWR:       maxQPWR,
		MaxCQE:        maxCQE,
		MaxQPRdAtom:   maxQPRdAtom,
		MaxMRSize:     1 << 40,
		MaxMW:         maxMW,
		Ports:         []datapath.PortInfo{{Num: 1, State: "ACTIVE", ActiveMTU: 4096, LinkLayer: "soft"}},
	}
}

func (p *Provider) Devices() ([]datapath.DeviceInfo, error) {
	return []datapath.DeviceInfo{p.info()}, nil
}

// Open opens a new instance of the device: each Open is its own protection domain, so two
// Opens behave like two hosts' devices.
func (p *Provider) Open(name string) (datapath.Device, error) {
	if name != "" && name != DeviceName {
		return nil, &datapath.OpError{Op: "soft: open " + name, Err: errNoDevice}
	}
	d := &device{p: p, info: p.info()}
	d.def = &pd{dev: d}
	t := make([]atomic.Pointer[region], 1, 64)
	d.keys.Store(&t)
	return d, nil
}

// device is one opened device: a key table, its default protection domain and counts of the
// objects open on it.
type device struct {
	p    *Provider
	info datapath.DeviceInfo
	def  *pd

	mu     sync.Mutex // serialises key table growth and the counts
	keys   atomic.Pointer[[]atomic.Pointer[region]]
	nextKB uint32 // varies the key byte of new keys
	nMR    int
	nMW    int
	nCQ    int
	nConn  int
	nLn    int
	nPD    int // PDs from AllocPD
	closed bool
	// lingers are the closed TCP connections whose peer may not have read our DISCONNECT
	// yet: each channel closes when the peer closed its end too. Close waits for them.
	lingers []<-chan struct{}
}

// pd is a protection domain: the regions, windows and queue pairs that may use each other.
type pd struct {
	dev *device
	// Guarded by dev.mu.
	nMR, nMW, nConn int
	closed          bool
}

var _ datapath.PD = (*pd)(nil)

// AllocPD allocates a protection domain of its own.
func (d *device) AllocPD() (datapath.PD, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, &datapath.OpError{Op: "soft: alloc PD", Err: datapath.ErrClosed}
	}
	d.nPD++
	return &pd{dev: d}, nil
}

func (p *pd) Register(mem []byte, access datapath.Access) (datapath.MR, error) {
	return p.dev.register(p, mem, access)
}

func (p *pd) AllocMW() (datapath.MW, error) { return p.dev.allocMW(p) }

// Close releases the PD; what was created in it must be closed first, as ibv_dealloc_pd
// requires (EBUSY).
func (p *pd) Close() error {
	d := p.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.closed {
		return &datapath.OpError{Op: "soft: dealloc PD", Err: datapath.ErrClosed}
	}
	if n := p.nMR + p.nMW + p.nConn; n != 0 {
		return &datapath.OpError{Op: "soft: dealloc PD", Err: &OpenObjectsError{MRs: p.nMR, MWs: p.nMW, Conns: p.nConn}}
	}
	p.closed = true
	d.nPD--
	return nil
}

// pdOf resolves QPConfig.PD.
func (d *device) pdOf(v datapath.PD) (*pd, error) {
	if v == nil {
		return d.def, nil
	}
	p, ok := v.(*pd)
	if !ok || p.dev != d {
		return nil, errForeignPD
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.closed {
		return nil, errForeignPD
	}
	return p, nil
}

var _ datapath.Device = (*device)(nil)

func (d *device) Info() datapath.DeviceInfo { return d.info }

// add puts r into a free slot at the end of the key table. Indexes are not reused, so a
// stale key can never name a later object.
func (d *device) add(r *region) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || r.pd.closed {
		return datapath.ErrClosed
	}
	t := *d.keys.Load()
	if len(t) >= maxKeys {
		return errNoKeys
	}
	if len(t) == cap(t) {
		nt := make([]atomic.Pointer[region], len(t), 2*cap(t))
		for i := range t {
			nt[i].Store(t[i].Load())
		}
		t = nt
	}
	r.idx = uint32(len(t))
	t = t[:len(t)+1]
	t[r.idx].Store(r)
	d.keys.Store(&t)
	d.nextKB += 0x3b
	key := r.idx<<keyIndexShift | d.nextKB&0xff
	r.lastKey.Store(key)
	if r.mw {
		d.nMW++
		r.pd.nMW++
	} else {
		r.valid.Store(key)
		d.nMR++
		r.pd.nMR++
	}
	return nil
}

func (d *device) release(r *region) {
	d.mu.Lock()
	defer d.mu.Unlock()
	(*d.keys.Load())[r.idx].Store(nil)
	if r.mw {
		d.nMW--
		r.pd.nMW--
	} else {
		d.nMR--
		r.pd.nMR--
	}
}

func (d *device) count(p *int, delta int) {
	d.mu.Lock()
	*p += delta
	d.mu.Unlock()
}

// Register registers mem in the default PD.
func (d *device) Register(mem []byte, access datapath.Access) (datapath.MR, error) {
	return d.register(d.def, mem, access)
}

// register registers mem in p. Like ibv_reg_mr, remote write (and window binds that grant it)
// require local write.
func (d *device) register(p *pd, mem []byte, access datapath.Access) (datapath.MR, error) {
	const op = "soft: register MR"
	if len(mem) == 0 {
		return nil, &datapath.OpError{Op: op, Err: errEmptyMR}
	}
	if access&datapath.AccessRemoteWrite != 0 && access&datapath.AccessLocalWrite == 0 {
		return nil, &datapath.OpError{Op: op, Err: errRemoteWriteNeedsLocal}
	}
	r := &region{dev: d, pd: p, mem: mem[:len(mem):len(mem)], base: addrOf(mem), access: access}
	if err := d.add(r); err != nil {
		return nil, &datapath.OpError{Op: op, Err: err}
	}
	return &mr{r}, nil
}

// AllocMW allocates a window in the default PD.
func (d *device) AllocMW() (datapath.MW, error) { return d.allocMW(d.def) }

func (d *device) allocMW(p *pd) (datapath.MW, error) {
	d.mu.Lock()
	full := d.nMW >= maxMW
	d.mu.Unlock()
	if full {
		return nil, &datapath.OpError{Op: "soft: alloc MW", Err: errNoKeys}
	}
	r := &region{dev: d, pd: p, mw: true}
	if err := d.add(r); err != nil {
		return nil, &datapath.OpError{Op: "soft: alloc MW", Err: err}
	}
	return &mw{r}, nil
}

func (d *device) NewCQ(depth int) (datapath.CQ, error) {
	if depth <= 0 || depth > maxCQE {
		return nil, &datapath.OpError{Op: "soft: create CQ", Err: errCQDepth}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, &datapath.OpError{Op: "soft: create CQ", Err: datapath.ErrClosed}
	}
	d.nCQ++
	return newCQ(d, depth), nil
}

func (d *device) Listen(addr string) (datapath.Listener, error) {
	if name, ok := strings.CutPrefix(addr, InprocPrefix); ok {
		return listenInproc(d, name)
	}
	return listenTCP(d, addr)
}

func (d *device) Connect(ctx context.Context, addr string, cfg datapath.QPConfig, pd []byte) (datapath.Conn, error) {
	const op = "soft: connect"
	if len(pd) > datapath.MaxConnectPrivateData {
		return nil, &datapath.OpError{Op: op, Err: errPrivateDataTooLong}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, datapath.DefaultConnectTimeout)
		defer cancel()
	}
	if name, ok := strings.CutPrefix(addr, InprocPrefix); ok {
		return connectInproc(ctx, d, name, cfg, pd)
	}
	return connectTCP(ctx, d, addr, cfg, pd)
}

// Close waits (at most closeLinger) until the peers of its closed TCP connections have closed
// their ends, so that a process exiting right after does not reset a connection before the
// peer read the DISCONNECT, then releases the device.
func (d *device) Close() error {
	d.mu.Lock()
	lingers := d.lingers
	d.lingers = nil
	d.mu.Unlock()
	deadline := time.After(closeLinger)
wait:
	for _, ch := range lingers {
		select {
		case <-ch:
		case <-deadline:
			break wait
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return &datapath.OpError{Op: "soft: close device", Err: datapath.ErrClosed}
	}
	if n := d.nMR + d.nMW + d.nCQ + d.nConn + d.nLn + d.nPD; n != 0 {
		return &datapath.OpError{Op: "soft: close device", Err: &OpenObjectsError{
			MRs: d.nMR, MWs: d.nMW, CQs: d.nCQ, Conns: d.nConn, Listeners: d.nLn, PDs: d.nPD}}
	}
	d.closed = true
	return nil
}

// OpenObjectsError reports what was still open when a device or a PD was closed.
type OpenObjectsError struct{ MRs, MWs, CQs, Conns, Listeners, PDs int }

func (e *OpenObjectsError) Error() string {
	return "objects still open: " + strconv.Itoa(e.MRs) + " MRs, " + strconv.Itoa(e.MWs) +
		" MWs, " + strconv.Itoa(e.CQs) + " CQs, " + strconv.Itoa(e.Conns) + " connections, " +
		strconv.Itoa(e.Listeners) + " listeners, " + strconv.Itoa(e.PDs) + " PDs"
}

var (
	errNoDevice              = errors.New("no such device (soft has only " + DeviceName + ")")
	errEmptyMR               = errors.New("empty memory")
	errRemoteWriteNeedsLocal = errors.New("remote write access requires local write access")
	errNoKeys                = errors.New("out of keys")
	errMRBound               = errors.New("memory windows are still bound to the region")
	errCQDepth               = errors.New("CQ depth out of range")
	errPrivateDataTooLong    = errors.New("private data too long")
	errForeignPD             = errors.New("PD is not an open PD of this soft device")
	errCQOverrun             = &datapath.OpError{Op: "soft: poll CQ", Err: errors.New("CQ overrun")}
	errCQClosed              = &datapath.OpError{Op: "soft: poll CQ", Err: datapath.ErrClosed}
	errTooManySGE            = &datapath.OpError{Op: "soft: post", Err: errors.New("too many SGEs")}
	errInlineTooLong         = &datapath.OpError{Op: "soft: post", Err: errors.New("inline data too long")}
	errBadOpcode             = &datapath.OpError{Op: "soft: post", Err: errors.New("invalid opcode for the send queue")}
	errBadMW                 = &datapath.OpError{Op: "soft: post", Err: errors.New("bind needs a soft MW and exactly one SGE")}
	errPostBroken            = &datapath.OpError{Op: "soft: post", Err: datapath.ErrBroken}
	errPostClosed            = &datapath.OpError{Op: "soft: post", Err: datapath.ErrClosed}
	errQueueFull             = datapath.ErrQueueFull
)

// Defaults: goroutines of this process make soft's completions (the peer's poster in
// process, the socket readers over TCP), so a spinning poller competes with them for the
// CPUs and the scheduler sets the figures. Pollers block (in process at depth 16 on 2 cores:
// about 3 times the RPC/s of spinning, and a steadier p50), the runtime gets exactly the Ps
// they need, and a responder in the measuring process spins for a fixed time only (an
// adaptive spin grown to the time between completions holds the CPU they need: run, 2 cores,
// 26k to 32k RPC/s adaptive against 69k to 72k fixed). Its peer is in process.
func (p *Provider) Defaults() datapath.Defaults {
	return datapath.Defaults{
		MeasuringPoll: datapath.Poll{Mode: datapath.PollEvent},
		ServerPoll:    datapath.Poll{Mode: datapath.PollEvent},
		LocalSpin:     datapath.DefaultHybridSpin,
		ExactProcs:    true,
		LocalAddr:     InprocPrefix + "rpcrdma-bench-" + strconv.Itoa(os.Getpid()),
	}
}
