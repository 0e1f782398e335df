package mempool

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Config describes a Region: how its memory is obtained and which pools are carved from it.
// The zero value has no pools and is rejected; every other field's zero value is the default.
type Config struct {
	// Pools are carved from the region in this order; Region.Pools returns them in the same
	// order. At least one is required.
	Pools []PoolConfig

	// HugePages asks for hugetlb pages (MAP_HUGETLB, the system's default huge page size):
	// fewer TLB misses when a large region is touched at random, and fewer pages for the NIC
	// to translate. When the system has none to give (vm.nr_hugepages too small) the region
	// falls back to normal pages with transparent huge pages requested by madvise, and
	// Info.HugePageFallback and Info.Notes say so; New does not fail for it.
	HugePages bool

	// Lock mlocks the region. Registration pins pages anyway, but locking here makes an
	// RLIMIT_MEMLOCK shortfall fail early with an explanation (see datapath.MemlockError) and keeps
	// memory the soft provider uses out of swap too.
	Lock bool

	// Access are the rights the region is registered with. Zero means local write, remote
	// read and remote write: what RPC-over-RDMA needs for chunks the peer reads or writes.
	// Ignored when New is given no device.
	Access datapath.Access
}

// PoolConfig describes one pool of fixed-size buffers.
type PoolConfig struct {
	// Name labels the pool in Info and errors ("send", "recv", "payload").
	Name string
	// Size is the size of every buffer in bytes; required.
	Size int
	// Count is the number of buffers; required.
	Count int
	// Align is the alignment of every buffer's start: a power of two no larger than the
	// system page size. Zero means 64 bytes (a cache line, so two buffers never share one)
	// for buffers smaller than a page and the page size for larger ones (payloads, so a
	// page-sized transfer touches as few pages as possible).
	Align int
	// Lazy leaves the pool's pages unfaulted at setup: memory is committed as buffers are
	// first written, so a large pool of which a connection uses little costs little. The
	// first use of each page then takes a page fault. Registration with an RDMA device pins
	// (and so commits) the pages anyway, and so does Config.Lock.
	Lazy bool
}

// DefaultAccess is the registration access used when Config.Access is zero.
const DefaultAccess = datapath.AccessLocalWrite | datapath.AccessRemoteRead | datapath.AccessRemoteWrite

const cacheLine = 64

// Info describes a Region as it was actually set up.
type Info struct {
	// Size is the length of the mapping in bytes (the pools' total, rounded up to PageSize).
	Size int `json:"size"`
	// PageSize is the size of the pages backing the mapping.
	PageSize int `json:"page_size"`
	// HugePages is true when the mapping is backed by hugetlb pages.
	HugePages bool `json:"huge_pages"`
	// HugePageFallback is true when huge pages were asked for and not available.
	HugePageFallback bool `json:"huge_page_fallback,omitempty"`
	// Locked is true when the mapping is mlocked.
	Locked bool `json:"locked"`
	// Registered is true when the region was registered with a device.
	Registered bool `json:"registered"`
	// Notes explain anything that differs from what Config asked for.
	Notes []string `json:"notes,omitempty"`
	// Pools describe the carved pools in Config order.
	Pools []PoolInfo `json:"pools"`
}

// PoolInfo describes one carved pool.
type PoolInfo struct {
	Name  string `json:"name"`
	Size  int    `json:"size"`
	Count int    `json:"count"`
	Align int    `json:"align"`
	// Stride is the distance between buffer starts (Size rounded up to Align).
	Stride int `json:"stride"`
	// Offset is where the first buffer starts in the region.
	Offset int `json:"offset"`
	// First is the region index of the pool's first buffer; its buffers are First through
	// First+Count-1.
	First uint32 `json:"first"`
	// Lazy pools were not faulted in at setup (PoolConfig.Lazy).
	Lazy bool `json:"lazy,omitempty"`
}

// Errors returned by Pool.Put. They are preallocated: Put is on the hot path.
var (
	// ErrForeign: the buffer does not belong to this pool.
	ErrForeign = errors.New("mempool: buffer belongs to another pool")
	// ErrNotOut: the buffer is already in the free list (a double Put).
	ErrNotOut = errors.New("mempool: buffer put twice")
)

// LeakError is returned by Region.Close when buffers were still out.
type LeakError struct {
	// Indexes are the region indexes of the buffers not returned, ascending.
	Indexes []uint32
	// Pools are the names of the pools they came from, parallel to Indexes.
	Pools []string
}

func (e *LeakError) Error() string {
	const maxListed = 16
	var b strings.Builder
	fmt.Fprintf(&b, "mempool: close: %d buffer(s) still out:", len(e.Indexes))
	for i, idx := range e.Indexes {
		if i == maxListed {
			fmt.Fprintf(&b, " ... and %d more", len(e.Indexes)-maxListed)
			break
		}
		fmt.Fprintf(&b, " %s#%d", e.Pools[i], idx)
	}
	return b.String()
}

// Region is one mapping registered once and carved into pools. Its methods other than the
// pools' Get and Put may be called from any goroutine but not concurrently with Close; Close
// must happen after every pool owner is done with its buffers.
type Region struct {
	mem    []byte
	mr     datapath.MR
	bufs   []*Buf // by region index
	pools  []*Pool
	info   Info
	closed bool
}

// Pool is a free list of fixed-size buffers carved from a Region.
//
// Ownership: a Pool belongs to one goroutine at a time, normally the poller that serves the
// connections using it. Get and Put take no locks and must only be called by that goroutine.
// A buffer handed to another goroutine (another poller) stays owned by this pool and must be
// handed back, by the application's own means, to this pool's goroutine to be Put; give each
// poller its own pools so that never has to happen on the hot path.
type Pool struct {
	name  string
	size  int
	first uint32
	bufs  []Buf    // the region's buffers First..First+Count-1
	free  []uint32 // stack of indexes into bufs; LIFO keeps recently used buffers cache-warm
	// Pools of different pollers are written on every Get and Put: keep each on cache lines
	// of its own. (Each pool's Bufs are a separate allocation for the same reason.)
	_ [cacheLine]byte
}

// Buf is one buffer. Its pointer is stable for the life of the Region, so callers may keep
// *Buf in their slot tables; the memory is valid until Region.Close.
type Buf struct {
	b     []byte // len == cap == the pool's Size
	addr  uint64
	lkey  uint32
	rkey  uint32
	index uint32
	out   bool
	pool  *Pool
}

// Registrar registers memory: a datapath.Device (its default protection domain) or a
// datapath.PD.
type Registrar interface {
	Register(mem []byte, access datapath.Access) (datapath.MR, error)
}

// New maps, populates, optionally locks, and registers a region holding the pools cfg
// describes with dev (a device, or a protection domain). dev may be nil to leave the region
// unregistered (tests, or memory the soft provider reads directly): then Addr is the
// virtual address and the keys are zero.
func New(dev Registrar, cfg Config) (*Region, error) {
	layout, size, err := plan(cfg)
	if err != nil {
		return nil, &datapath.OpError{Op: "mempool: config", Err: err}
	}
	lazy := false
	for _, pc := range cfg.Pools {
		lazy = lazy || pc.Lazy
	}
	m, err := mapRegion(size, cfg.HugePages, !lazy)
	if err != nil {
		return nil, err
	}
	if lazy {
		for i, pi := range layout {
			if !cfg.Pools[i].Lazy {
				// Whole pages: madvise wants an aligned start.
				start := pi.Offset &^ (m.pageSize - 1)
				end := min(len(m.mem), (pi.Offset+pi.Count*pi.Stride+m.pageSize-1)&^(m.pageSize-1))
				populate(m.mem[start:end], m.pageSize)
			}
		}
	}
	r := &Region{mem: m.mem}
	r.info = Info{
		Size:             len(m.mem),
		PageSize:         m.pageSize,
		HugePages:        m.huge,
		HugePageFallback: cfg.HugePages && !m.huge,
		Notes:            m.notes,
		Pools:            layout,
	}
	fail := func(err error) (*Region, error) {
		_ = unmap(r.mem)
		return nil, err
	}
	if cfg.Lock {
		if err := lock(r.mem); err != nil {
			return fail(err)
		}
		r.info.Locked = true
	}
	base, lkey, rkey := addrOf(r.mem), uint32(0), uint32(0)
	if dev != nil {
		access := cfg.Access
		if access == 0 {
			access = DefaultAccess
		}
		mr, err := dev.Register(r.mem, access)
		if err != nil {
			return fail(&datapath.OpError{Op: "mempool: register", Err: err})
		}
		r.mr = mr
		r.info.Registered = true
		base, lkey, rkey = mr.Addr(), mr.LKey(), mr.RKey()
	}
	total := 0
	for _, p := range layout {
		total += p.Count
	}
	r.bufs = make([]*Buf, 0, total)
	r.pools = make([]*Pool, len(layout))
	for i, pi := range layout {
		p := &Pool{
			name:  pi.Name,
			size:  pi.Size,
			first: pi.First,
			bufs:  make([]Buf, pi.Count),
			free:  make([]uint32, pi.Count),
		}
		for j := range p.bufs {
			off := pi.Offset + j*pi.Stride
			p.bufs[j] = Buf{
				b:     r.mem[off : off+pi.Size : off+pi.Size],
				addr:  base + uint64(off),
				lkey:  lkey,
				rkey:  rkey,
				index: pi.First + uint32(j),
				pool:  p,
			}
			// Reversed so the first Get returns the pool's first buffer.
			p.free[j] = uint32(pi.Count - 1 - j)
			r.bufs = append(r.bufs, &p.bufs[j])
		}
		r.pools[i] = p
	}
	return r, nil
}

// plan validates cfg and lays the pools out, returning their descriptions and the total
// number of bytes they need.
func plan(cfg Config) ([]PoolInfo, int, error) {
	if len(cfg.Pools) == 0 {
		return nil, 0, errors.New("no pools configured")
	}
	page := os.Getpagesize()
	// Bounds keep every offset and index arithmetic below far from overflow.
	const maxRegion = 1 << 40
	var out []PoolInfo
	off, count := 0, 0
	for i, pc := range cfg.Pools {
		name := pc.Name
		if name == "" {
			name = fmt.Sprintf("pool%d", i)
		}
		if pc.Size <= 0 || pc.Size > maxRegion {
			return nil, 0, fmt.Errorf("pool %q: buffer size %d out of range (1..%d)", name, pc.Size, int64(maxRegion))
		}
		if pc.Count <= 0 {
			return nil, 0, fmt.Errorf("pool %q: buffer count %d must be positive", name, pc.Count)
		}
		align := pc.Align
		if align == 0 {
			align = cacheLine
			if pc.Size >= page {
				align = page
			}
		}
		if align < 0 || align&(align-1) != 0 || align > page {
			return nil, 0, fmt.Errorf("pool %q: alignment %d is not a power of two up to the page size %d", name, pc.Align, page)
		}
		stride := (pc.Size + align - 1) &^ (align - 1)
		off = (off + align - 1) &^ (align - 1)
		if pc.Count > (maxRegion-off)/stride || count+pc.Count > math.MaxUint32 {
			return nil, 0, fmt.Errorf("pool %q: %d buffers of %d bytes exceed the region limit of %d bytes", name, pc.Count, stride, int64(maxRegion))
		}
		out = append(out, PoolInfo{Name: name, Size: pc.Size, Count: pc.Count, Align: align, Stride: stride, Offset: off, First: uint32(count), Lazy: pc.Lazy})
		off += stride * pc.Count
		count += pc.Count
	}
	return out, off, nil
}

// Pools returns the region's pools in Config order.
func (r *Region) Pools() []*Pool { return r.pools }

// Pool returns the pool with the given name, or nil.
func (r *Region) Pool(name string) *Pool {
	for _, p := range r.pools {
		if p.name == name {
			return p
		}
	}
	return nil
}

// Buf returns the buffer with the given region index, or nil when there is none: it maps a
// work request id back to its buffer.
func (r *Region) Buf(index uint32) *Buf {
	if int64(index) >= int64(len(r.bufs)) {
		return nil
	}
	return r.bufs[index]
}

// MR is the region's memory registration, nil when unregistered.
func (r *Region) MR() datapath.MR { return r.mr }

// Bytes is the whole mapping.
func (r *Region) Bytes() []byte { return r.mem }

// Info describes the region as it was set up.
func (r *Region) Info() Info { return r.info }

// Close deregisters and unmaps the region. Buffers still out are reported in a *LeakError
// (the region is unmapped anyway: the memory is gone and must not be touched). Every pool
// owner must be done before Close.
func (r *Region) Close() error {
	if r.closed {
		return &datapath.OpError{Op: "mempool: close", Err: datapath.ErrClosed}
	}
	r.closed = true
	var errs []error
	var leak LeakError
	for _, b := range r.bufs {
		if b.out {
			leak.Indexes = append(leak.Indexes, b.index)
			leak.Pools = append(leak.Pools, b.pool.name)
		}
	}
	if len(leak.Indexes) > 0 {
		sort.Sort(byIndex(leak))
		errs = append(errs, &leak)
	}
	for _, p := range r.pools {
		p.free = p.free[:0] // a Get after Close finds nothing rather than unmapped memory
	}
	if r.mr != nil {
		if err := r.mr.Close(); err != nil {
			errs = append(errs, &datapath.OpError{Op: "mempool: deregister", Err: err})
		}
	}
	if err := unmap(r.mem); err != nil {
		errs = append(errs, err)
	}
	r.mem = nil
	return errors.Join(errs...)
}

type byIndex LeakError

func (l byIndex) Len() int           { return len(l.Indexes) }
func (l byIndex) Less(i, j int) bool { return l.Indexes[i] < l.Indexes[j] }
func (l byIndex) Swap(i, j int) {
	l.Indexes[i], l.Indexes[j] = l.Indexes[j], l.Indexes[i]
	l.Pools[i], l.Pools[j] = l.Pools[j], l.Pools[i]
}

// Get takes a buffer from the free list, or returns nil when the pool is exhausted (the
// caller's flow control, such as RPC-over-RDMA credits, should make that rare). The buffer is
// the caller's until Put. Only the pool's owning goroutine may call Get.
func (p *Pool) Get() *Buf {
	n := len(p.free)
	if n == 0 {
		return nil
	}
	b := &p.bufs[p.free[n-1]]
	p.free = p.free[:n-1]
	b.out = true
	return b
}

// Put returns a buffer taken with Get. It returns ErrForeign for a buffer of another pool
// and ErrNotOut for one already returned, leaving the free list untouched. Only the pool's
// owning goroutine may call Put.
func (p *Pool) Put(b *Buf) error {
	if b == nil || b.pool != p {
		return ErrForeign
	}
	if !b.out {
		return ErrNotOut
	}
	b.out = false
	p.free = append(p.free, b.index-p.first) // never grows: cap is Count
	return nil
}

// Buf returns the pool's buffer with the given region index, or nil if it is not this
// pool's.
func (p *Pool) Buf(index uint32) *Buf {
	i := index - p.first // wraps to a large value below first
	if int64(i) >= int64(len(p.bufs)) {
		return nil
	}
	return &p.bufs[i]
}

// Name is the pool's name.
func (p *Pool) Name() string { return p.name }

// Size is the size of each buffer.
func (p *Pool) Size() int { return p.size }

// Cap is the number of buffers in the pool.
func (p *Pool) Cap() int { return len(p.bufs) }

// Free is the number of buffers in the free list.
func (p *Pool) Free() int { return len(p.free) }

// Bytes is the buffer's memory: Size bytes, capacity Size.
func (b *Buf) Bytes() []byte { return b.b }

// Index names the buffer within its region (see Region.Buf).
func (b *Buf) Index() uint32 { return b.index }

// Pool is the pool the buffer belongs to.
func (b *Buf) Pool() *Pool { return b.pool }

// Addr is the address of Bytes()[0] in the MR's scheme: what an SGE names locally and what
// the peer names, with RKey, to RDMA READ or WRITE this buffer (an RPC-over-RDMA chunk
// segment's offset, RFC 8166 section 3.4.3).
func (b *Buf) Addr() uint64 { return b.addr }

// LKey is the region's local key.
func (b *Buf) LKey() uint32 { return b.lkey }

// RKey is the region's remote key: the segment handle to advertise for this buffer.
func (b *Buf) RKey() uint32 { return b.rkey }

// SGE describes the first n bytes of the buffer. n is clamped to [0, Size] so an SGE never
// names memory outside the buffer.
func (b *Buf) SGE(n int) datapath.SGE {
	return b.Sub(0, n)
}

// Sub describes n bytes starting at off. off and n are clamped to the buffer, so the SGE
// never names memory outside it.
func (b *Buf) Sub(off, n int) datapath.SGE {
	size := len(b.b)
	off = min(max(off, 0), size)
	n = min(max(n, 0), size-off)
	return datapath.SGE{Addr: b.addr + uint64(off), Length: uint32(n), LKey: b.lkey}
}
