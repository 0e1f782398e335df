//go:build verbs && cgo

package verbs

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

type device struct {
	p    *Provider
	list **C.struct_ibv_context // from rdma_get_devices, freed on Close
	ctx  *C.struct_ibv_context
	pd   *C.struct_ibv_pd
	info datapath.DeviceInfo
	ip   net.IP // nil if the device's interface has no address

	cdev *C.struct_vb_dev // slot table, C memory

	zmu     sync.Mutex
	zombies []*zombie
	slots   []int   // free slots of cdev
	graves  []grave // released work request memory, freed a while later

	mu     sync.RWMutex
	closed bool
	mrs    map[uint32]*mr // by lkey: a bind names its range by lkey, verbs wants the MR
	nmw    int
	ncq    int
	nlis   int
	nconn  int
	npd    int // PDs from AllocPD
}

var _ datapath.Device = (*device)(nil)

func (d *device) Info() datapath.DeviceInfo { return d.info }

var errDeviceClosed = &datapath.OpError{Op: "verbs: device", Err: datapath.ErrClosed}

// track adjusts one of the open-object counters; it fails once the device is closed.
func (d *device) track(n *int, delta int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed && delta > 0 {
		return errDeviceClosed
	}
	*n += delta
	return nil
}

func ibvAccess(a datapath.Access) C.int {
	var f C.int
	if a&(datapath.AccessLocalWrite|datapath.AccessRemoteWrite) != 0 {
		// Verbs requires local write for remote write.
		f |= C.IBV_ACCESS_LOCAL_WRITE
	}
	if a&datapath.AccessRemoteWrite != 0 {
		f |= C.IBV_ACCESS_REMOTE_WRITE
	}
	if a&datapath.AccessRemoteRead != 0 {
		f |= C.IBV_ACCESS_REMOTE_READ
	}
	if a&datapath.AccessMWBind != 0 {
		f |= C.IBV_ACCESS_MW_BIND
	}
	return f
}

// Register registers mem in the default PD.
func (d *device) Register(mem []byte, access datapath.Access) (datapath.MR, error) {
	return d.register(d.pd, mem, access)
}

func (d *device) register(pd *C.struct_ibv_pd, mem []byte, access datapath.Access) (datapath.MR, error) {
	if len(mem) == 0 {
		return nil, &datapath.OpError{Op: "ibv_reg_mr", Err: errors.New("empty memory")}
	}
	m := &mr{d: d, mem: mem, access: access}
	var err error
	m.mr, err = C.vb_reg_mr(pd, C.uintptr_t(uintptr(unsafe.Pointer(&mem[0]))), C.size_t(len(mem)), ibvAccess(access))
	if m.mr == nil {
		var lim unix.Rlimit
		if errors.Is(err, unix.ENOMEM) && unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim) == nil && lim.Cur != datapath.RLimInfinity {
			// Most likely the locked-memory limit, not the machine's memory: say so
			// where it happened, with the limit and the fix.
			err = memlockError(err, len(mem), lim.Cur, lim.Max)
		} else {
			err = pinnedHint(err)
		}
		return nil, &datapath.OpError{Op: "ibv_reg_mr", Err: err}
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		C.ibv_dereg_mr(m.mr)
		return nil, errDeviceClosed
	}
	d.mrs[uint32(m.mr.lkey)] = m
	d.mu.Unlock()
	return m, nil
}

func (d *device) mrByLKey(lkey uint32) *mr {
	d.mu.RLock()
	m := d.mrs[lkey]
	d.mu.RUnlock()
	return m
}

// AllocMW allocates a window in the default PD.
func (d *device) AllocMW() (datapath.MW, error) { return d.allocMW(d.pd) }

func (d *device) allocMW(pd *C.struct_ibv_pd) (datapath.MW, error) {
	if d.info.MaxMW == 0 {
		return nil, &datapath.OpError{Op: "ibv_alloc_mw", Err: fmt.Errorf("%w: %s has no memory windows (max_mw 0)", datapath.ErrNotSupported, d.info.Name)}
	}
	w, err := C.ibv_alloc_mw(pd, C.IBV_MW_TYPE_2)
	if w == nil {
		if errors.Is(err, errEOPNOTSUPP) {
			err = fmt.Errorf("%w: %w", datapath.ErrNotSupported, err)
		}
		return nil, &datapath.OpError{Op: "ibv_alloc_mw", Err: err}
	}
	if err := d.track(&d.nmw, 1); err != nil {
		C.ibv_dealloc_mw(w)
		return nil, err
	}
	m := &mw{d: d, mw: w}
	m.rkey.Store(uint32(w.rkey))
	return m, nil
}

func (d *device) NewCQ(depth int) (datapath.CQ, error) {
	if depth <= 0 {
		depth = datapath.DefaultMaxWR
	}
	depth = min(depth, d.info.MaxCQE)
	var rc C.int
	c := C.vb_cq_open(d.cdev, d.ctx, C.int(depth), &rc)
	if c == nil {
		return nil, &datapath.OpError{Op: "ibv_create_cq", Err: pinnedHint(errno(rc))}
	}
	if err := d.track(&d.ncq, 1); err != nil {
		C.vb_cq_close(c)
		return nil, err
	}
	if d.info.VendorID == C.VB_RXE_VENDOR_ID {
		c.rxe_inv_quirk = 1
	}
	if d.p.cfg.Turnarounds {
		c.probe = 1
	}
	return &cq{d: d, c: c, h: C.uintptr_t(uintptr(unsafe.Pointer(c))), fd: int(c.ch.fd), spin: C.int(max(d.p.cfg.PollSpin, 0)), conns: map[uint32]*conn{}}, nil
}

func (d *device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errDeviceClosed
	}
	var open []string
	for _, o := range []struct {
		n    int
		what string
	}{{len(d.mrs), "MR"}, {d.nmw, "MW"}, {d.ncq, "CQ"}, {d.nlis, "listener"}, {d.nconn, "connection"}, {d.npd, "PD"}} {
		if o.n > 0 {
			open = append(open, fmt.Sprintf("%d %s", o.n, o.what))
		}
	}
	if len(open) > 0 {
		return &datapath.OpError{Op: "verbs: close " + d.info.Name, Err: errors.New("still open: " + strings.Join(open, ", "))}
	}
	d.reap(func(*zombie) bool { return true })
	d.zmu.Lock()
	d.bury(0) // every CQ is closed: nothing polls any more
	d.zmu.Unlock()
	if rc := C.ibv_dealloc_pd(d.pd); rc != 0 {
		return opErr("ibv_dealloc_pd", rc)
	}
	C.rdma_free_devices(d.list)
	C.free(unsafe.Pointer(d.cdev))
	d.closed = true
	return nil
}

// pd is a protection domain from AllocPD.
type pd struct {
	d      *device
	pd     *C.struct_ibv_pd
	closed atomic.Bool
}

var _ datapath.PD = (*pd)(nil)

// AllocPD allocates a protection domain (ibv_alloc_pd) on the device's context.
func (d *device) AllocPD() (datapath.PD, error) {
	p, err := C.ibv_alloc_pd(d.ctx)
	if p == nil {
		if err == nil {
			err = unix.ENOMEM
		}
		return nil, &datapath.OpError{Op: "ibv_alloc_pd", Err: err}
	}
	if err := d.track(&d.npd, 1); err != nil {
		C.ibv_dealloc_pd(p)
		return nil, err
	}
	return &pd{d: d, pd: p}, nil
}

func (p *pd) Register(mem []byte, access datapath.Access) (datapath.MR, error) {
	return p.d.register(p.pd, mem, access)
}

func (p *pd) AllocMW() (datapath.MW, error) { return p.d.allocMW(p.pd) }

// Close deallocates the PD; ibv_dealloc_pd fails with EBUSY while regions, windows or queue
// pairs of the PD exist (a closed connection's queue pair lingers a while: see retire).
func (p *pd) Close() error {
	if p.closed.Swap(true) {
		return &datapath.OpError{Op: "ibv_dealloc_pd", Err: datapath.ErrClosed}
	}
	p.d.reap(func(z *zombie) bool { return z.pd == p.pd })
	if rc := C.ibv_dealloc_pd(p.pd); rc != 0 {
		p.closed.Store(false)
		return opErr("ibv_dealloc_pd", rc)
	}
	p.d.track(&p.d.npd, -1)
	return nil
}

// pdOf resolves QPConfig.PD.
func (d *device) pdOf(v datapath.PD) (*C.struct_ibv_pd, error) {
	if v == nil {
		return d.pd, nil
	}
	p, ok := v.(*pd)
	if !ok || p.d != d || p.closed.Load() {
		return nil, errors.New("QPConfig.PD must be an open PD of this device")
	}
	return p.pd, nil
}

type mr struct {
	d      *device
	mr     *C.struct_ibv_mr
	mem    []byte
	access datapath.Access
	closed bool
}

var _ datapath.MR = (*mr)(nil)

func (m *mr) Bytes() []byte           { return m.mem }
func (m *mr) Addr() uint64            { return uint64(uintptr(unsafe.Pointer(&m.mem[0]))) }
func (m *mr) LKey() uint32            { return uint32(m.mr.lkey) }
func (m *mr) RKey() uint32            { return uint32(m.mr.rkey) }
func (m *mr) Access() datapath.Access { return m.access }

func (m *mr) Close() error {
	d := m.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if m.closed {
		return &datapath.OpError{Op: "ibv_dereg_mr", Err: datapath.ErrClosed}
	}
	if rc := C.ibv_dereg_mr(m.mr); rc != 0 {
		return opErr("ibv_dereg_mr", rc)
	}
	delete(d.mrs, uint32(m.mr.lkey))
	m.closed = true
	return nil
}

type mw struct {
	d      *device
	mw     *C.struct_ibv_mw
	rkey   atomic.Uint32
	closed atomic.Bool
}

var _ datapath.MW = (*mw)(nil)

func (w *mw) RKey() uint32 { return w.rkey.Load() }

func (w *mw) Close() error {
	if w.closed.Swap(true) {
		return &datapath.OpError{Op: "ibv_dealloc_mw", Err: datapath.ErrClosed}
	}
	if rc := C.ibv_dealloc_mw(w.mw); rc != 0 {
		w.closed.Store(false)
		return opErr("ibv_dealloc_mw", rc)
	}
	w.d.track(&w.d.nmw, -1)
	return nil
}

// zombie is the queue pair of a closed connection, kept in the error state until its flushed
// completions are surely in the CQ.
type zombie struct {
	qp       *C.struct_ibv_qp
	pd       *C.struct_ibv_pd
	q        *C.struct_vb_qp
	scq, rcq *cq
	at       time.Time
}

// zombieLinger is how long a closed connection's queue pair outlives it at most, unless its
// CQs close first. Flushing takes microseconds; the margin covers a loaded machine.
const zombieLinger = time.Second

func (d *device) retire(qp *C.struct_ibv_qp, q *C.struct_vb_qp, scq, rcq *cq) {
	d.zmu.Lock()
	d.zombies = append(d.zombies, &zombie{qp: qp, pd: qp.pd, q: q, scq: scq, rcq: rcq, at: time.Now()})
	d.zmu.Unlock()
}

var errTooManyQPs = &datapath.OpError{Op: "rdma_create_qp", Err: fmt.Errorf("more than %d queue pairs on one device", C.VB_MAX_QPS)}

// claim gives q a slot in the device's table.
func (d *device) claim(q *C.struct_vb_qp) error {
	d.zmu.Lock()
	defer d.zmu.Unlock()
	if len(d.slots) == 0 {
		return errTooManyQPs
	}
	// The slot freed longest ago: a completion left in a CQ by a destroyed queue pair names
	// its slot, and must find it free or another's (vb_cq_poll drops it) even when the device
	// has given the queue pair's number to a new one (siw reuses the lowest free number).
	slot := d.slots[0]
	d.slots = d.slots[1:]
	q.slot = C.int(slot)
	C.vb_dev_set(d.cdev, C.int(slot), q)
	return nil
}

// grave is the C memory of a released queue pair. A poller may have loaded its pointer from
// the slot table just before the release, so it is freed only when no poll call can still
// be using it.
type grave struct {
	q  *C.struct_vb_qp
	at time.Time
}

// release frees q's slot (the memory follows later); its queue pair is gone. Callers hold
// d.zmu.
func (d *device) release(q *C.struct_vb_qp) {
	C.vb_dev_set(d.cdev, q.slot, nil)
	d.slots = append(d.slots, int(q.slot))
	d.graves = append(d.graves, grave{q, time.Now()})
}

// bury frees the released memory older than age. Callers hold d.zmu.
func (d *device) bury(age time.Duration) {
	kept := d.graves[:0]
	for _, g := range d.graves {
		// A queue pair closed with work staged stays on its CQ's pending list until that
		// CQ's next poll (or its Close) takes it off.
		if time.Since(g.at) >= age && atomic.LoadInt32((*int32)(unsafe.Pointer(&g.q.linked))) == 0 {
			C.vb_qp_free(g.q)
		} else {
			kept = append(kept, g)
		}
	}
	clear(d.graves[len(kept):])
	d.graves = kept
}

// reap destroys the lingering queue pairs for which dead says so.
func (d *device) reap(dead func(*zombie) bool) {
	d.zmu.Lock()
	defer d.zmu.Unlock()
	kept := d.zombies[:0]
	for _, z := range d.zombies {
		if dead(z) {
			// The slot first: a completion the destruction flushes, polled meanwhile on
			// another thread, must find it free (vb_cq_poll drops it), not the queue pair
			// whose number the device may give to the next one.
			d.release(z.q)
			C.ibv_destroy_qp(z.qp)
		} else {
			kept = append(kept, z)
		}
	}
	clear(d.zombies[len(kept):])
	d.zombies = kept
	d.bury(zombieLinger)
}
