package soft

import (
	"sync/atomic"
	"unsafe"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// A key is index<<8 | keyByte, as on hardware: the index names a slot in the device's key
// table and the low byte is the consumer-owned part a memory window bind changes
// (datapath.NextRKey). Index 0 is never used, so key 0 is never valid.
const keyIndexShift = 8

// region is one slot of the key table: a memory region or a memory window, in one
// protection domain.
//
// Lookups run on the peer's goroutine (in process) or the TCP reader while the owner binds,
// invalidates or deregisters, so everything a lookup reads is atomic. A window's binding
// fields change only while the window is free (not valid), and a bind publishes them by
// storing the valid key last; a reader loads the key, reads the binding and re-checks the
// key, so it never uses a binding that was torn down in between.
type region struct {
	dev *device
	pd  *pd
	idx uint32
	mw  bool

	// valid is the key that currently grants access, 0 when none does (a window not bound,
	// a region deregistered).
	valid atomic.Uint32

	// Memory region: immutable after registration.
	mem    []byte
	base   uint64
	access datapath.Access
	binds  atomic.Int32 // windows bound to this region

	// Memory window.
	lastKey atomic.Uint32 // key of the latest bind posted (MW.RKey)
	bmr     atomic.Pointer[region]
	bbase   atomic.Uint64
	blen    atomic.Uint64
	bacc    atomic.Uint32
	bqp     atomic.Pointer[conn] // the queue pair the window is bound to (type 2)
	closed  atomic.Bool
}

// addrOf is the address scheme: the real virtual address of the first byte. Registered memory
// lives outside the Go heap (mmap), so the address is stable; the same scheme works between
// processes, where it is opaque to the peer.
func addrOf(mem []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&mem[0]))) }

// within returns mem[addr-base:][:n] when [addr, addr+n) lies inside [base, base+len(mem)).
func within(mem []byte, base, addr, n uint64) ([]byte, bool) {
	size := uint64(len(mem))
	if addr < base || n > size || addr-base > size-n {
		return nil, false
	}
	off := addr - base
	return mem[off : off+n : off+n], true
}

func (d *device) slot(key uint32) *region {
	t := *d.keys.Load()
	i := key >> keyIndexShift
	if i == 0 || uint64(i) >= uint64(len(t)) {
		return nil
	}
	return t[i].Load()
}

// The key table is the device's, so that keys are unique per device as on hardware and a
// key of one PD can never alias a region of another; every lookup then checks that the
// region is in the PD of the queue pair using it (rxe compares the same two PDs).

// local resolves an SGE of a queue pair in p: only memory regions have local keys.
func (p *pd) local(lkey uint32, addr uint64, n uint32, need datapath.Access) ([]byte, bool) {
	r := p.dev.slot(lkey)
	if r == nil || r.mw || r.pd != p || r.valid.Load() != lkey || r.access&need != need {
		return nil, false
	}
	return within(r.mem, r.base, addr, uint64(n))
}

// remote resolves the target of the peer's RDMA READ or WRITE arriving on c (need is
// AccessRemoteRead or AccessRemoteWrite) through a region's or a bound window's remote key:
// the region must be in c's PD, a window bound to c itself.
func (c *conn) remoteMem(rkey uint32, addr uint64, n uint32, need datapath.Access) ([]byte, bool) {
	r := c.dev.slot(rkey)
	if r == nil || r.pd != c.pd || r.valid.Load() != rkey {
		return nil, false
	}
	if !r.mw {
		if r.access&need != need {
			return nil, false
		}
		return within(r.mem, r.base, addr, uint64(n))
	}
	mr := r.bmr.Load()
	base, size, acc := r.bbase.Load(), r.blen.Load(), datapath.Access(r.bacc.Load())
	qp := r.bqp.Load()
	if r.valid.Load() != rkey || mr == nil || qp != c || acc&need != need || mr.valid.Load() == 0 {
		return nil, false
	}
	if addr < base || uint64(n) > size || addr-base > size-uint64(n) {
		return nil, false
	}
	return within(mr.mem, mr.base, addr, uint64(n))
}

// invalidate implements OpLocalInv (from is nil: any queue pair of the PD may post it) and
// the receiving end of OpSendInv (from is the queue pair it arrived on, which must be the
// one the window is bound to). Only a bound window's current key can be invalidated (a plain
// registration has no invalidation on hardware either; that needs a fast-registration MR).
func (p *pd) invalidate(from *conn, rkey uint32) bool {
	r := p.dev.slot(rkey)
	if r == nil || !r.mw || r.pd != p || (from != nil && r.bqp.Load() != from) {
		return false
	}
	return r.unbind(rkey)
}

// unbind invalidates the window's binding if rkey is its current key.
func (r *region) unbind(rkey uint32) bool {
	if !r.valid.CompareAndSwap(rkey, 0) {
		return false
	}
	r.bqp.Store(nil)
	if mr := r.bmr.Swap(nil); mr != nil {
		mr.binds.Add(-1)
	}
	return true
}

// bind implements OpBindMW posted on c. Type 2 windows bind only while free (IBTA
// o10-36.2.2), only with a key of their own index, and only when the window, the region and
// the queue pair share one PD; the window is then bound to c. Remote write needs local write
// on the region.
func (c *conn) bind(w *mw, lkey uint32, addr uint64, n uint32, rkey uint32, acc datapath.Access) bool {
	r := w.r
	if r.pd != c.pd || r.closed.Load() || rkey>>keyIndexShift != r.idx || r.valid.Load() != 0 {
		return false
	}
	mr := c.dev.slot(lkey)
	if mr == nil || mr.mw || mr.pd != c.pd || mr.valid.Load() != lkey || mr.access&datapath.AccessMWBind == 0 {
		return false
	}
	if acc&datapath.AccessRemoteWrite != 0 && mr.access&datapath.AccessLocalWrite == 0 {
		return false
	}
	if _, ok := within(mr.mem, mr.base, addr, uint64(n)); !ok {
		return false
	}
	mr.binds.Add(1)
	r.bmr.Store(mr)
	r.bbase.Store(addr)
	r.blen.Store(uint64(n))
	r.bacc.Store(uint32(acc & (datapath.AccessRemoteRead | datapath.AccessRemoteWrite)))
	r.bqp.Store(c)
	r.valid.Store(rkey)
	return true
}

// mr is a registered memory region.
type mr struct{ r *region }

var _ datapath.MR = (*mr)(nil)

func (m *mr) Bytes() []byte           { return m.r.mem }
func (m *mr) Addr() uint64            { return m.r.base }
func (m *mr) LKey() uint32            { return m.r.key() }
func (m *mr) RKey() uint32            { return m.r.key() }
func (m *mr) Access() datapath.Access { return m.r.access }

func (r *region) key() uint32 { return r.lastKey.Load() }

func (m *mr) Close() error {
	r := m.r
	if r.binds.Load() != 0 {
		return &datapath.OpError{Op: "soft: deregister MR", Err: errMRBound}
	}
	if !r.closed.CompareAndSwap(false, true) {
		return &datapath.OpError{Op: "soft: deregister MR", Err: datapath.ErrClosed}
	}
	r.valid.Store(0)
	r.dev.release(r)
	return nil
}

// mw is a type 2 memory window.
type mw struct{ r *region }

var _ datapath.MW = (*mw)(nil)

// RKey is the key of the latest bind posted; before the first bind it is the key the
// window was allocated with, as ibv_alloc_mw reports it, so the first bind uses
// datapath.NextRKey(RKey()) like every later one.
func (w *mw) RKey() uint32 { return w.r.lastKey.Load() }

func (w *mw) Close() error {
	r := w.r
	if !r.closed.CompareAndSwap(false, true) {
		return &datapath.OpError{Op: "soft: dealloc MW", Err: datapath.ErrClosed}
	}
	if k := r.valid.Load(); k != 0 {
		r.unbind(k)
	}
	r.dev.release(r)
	return nil
}
