package rpcrdma

import (
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Responder-provided Read chunks waiting for RDMA_DONE (draft-cel-nfsv4-rpcrdma-reliable-reply
// section 4.1.3): the server half keeps the context of each such reply, oldest first in
// server.waiting, until the requester's pull completion notification or DoneTimeout, and the
// receive reserved for that notification until it arrives or doneReserve × DoneTimeout.

// doneReserve × DoneTimeout is how long the receive reserved for a reply's RDMA_DONE stays
// reserved: past DoneTimeout the Read chunk is released, but a requester that pulled it in
// time may still send its RDMA_DONE, which must find a receive that no call was promised.
const doneReserve = 4

// lateDone is a reply whose Read chunk DoneTimeout released while its RDMA_DONE may still
// come: the receive reserved for it stays reserved (counted in pendingDone) until then.
type lateDone struct {
	xid   uint32
	until time.Time
}

// onDone handles RDMA_DONE, received by wc: the requester finished pulling the Read chunk
// of the reply to xid. One for a chunk already released by DoneTimeout ends that reply's
// receive reservation; one for no reply at all is dropped silently (draft section 4.1.3).
// One that came by Send With Invalidate of the chunk's window (draft section 4.1.4) has
// ended the window already: no LOCAL_INV follows, which would fail on the dead window.
func (sv *server) onDone(xid uint32, wc *datapath.Completion) {
	c := sv.c
	for k, i := range sv.waiting {
		x := &sv.ctxs[i]
		if x.hdr.XID != xid {
			continue
		}
		sv.waiting = append(sv.waiting[:k], sv.waiting[k+1:]...)
		sv.pendingDone--
		c.stats.DoneReceived++
		if wc.Invalidated && x.mwUsed && wc.InvRKey == x.mwKey {
			x.mwUsed = false
			c.stats.RemoteInvalidated++
		}
		sv.unexpose(i, x)
		return
	}
	for k := range sv.late {
		if sv.late[k].xid == xid {
			sv.late = append(sv.late[:k], sv.late[k+1:]...)
			sv.pendingDone--
			c.stats.DoneLate++
			return
		}
	}
	c.stats.DoneStray++
}

// expireDone releases the Read chunks whose requester sent no RDMA_DONE in time, keeping
// their receive reservations until doneReserve × DoneTimeout after the reply, and ends the
// reservations that reached that bound. Until then pendingDone counts them, so no further
// reply that needs a reservation is sent in a Read chunk: the receives the grant promised
// to calls are never the ones a late RDMA_DONE takes.
func (sv *server) expireDone(now time.Time) {
	for len(sv.late) > 0 && !now.Before(sv.late[0].until) {
		n := copy(sv.late, sv.late[1:])
		sv.late = sv.late[:n]
		sv.pendingDone--
	}
	for len(sv.waiting) > 0 {
		i := sv.waiting[0]
		x := &sv.ctxs[i]
		if now.Before(x.deadline) {
			return
		}
		n := copy(sv.waiting, sv.waiting[1:])
		sv.waiting = sv.waiting[:n]
		sv.c.stats.DoneTimeouts++
		// Deadlines grow in posting order, so late stays sorted by until.
		sv.late = append(sv.late, lateDone{xid: x.hdr.XID, until: x.deadline.Add((doneReserve - 1) * sv.c.cfg.DoneTimeout)})
		sv.unexpose(i, x)
	}
}

// unexpose ends a responder-provided Read chunk: its window is invalidated, so a late READ
// fails, and the context is released once that and the reply's Send have completed.
func (sv *server) unexpose(i int32, x *sctx) {
	x.waits &^= ctxWaitDone
	if x.mwUsed {
		x.mwUsed = false
		x.waits |= ctxWaitInv
		sv.c.queue(&datapath.SendWR{ID: wrID(kindCtxInv, uint32(i)), Op: datapath.OpLocalInv, Flags: datapath.FlagSignaled, InvRKey: x.mwKey})
		return
	}
	if x.waits == 0 {
		sv.release(i)
	}
}

func (sv *server) onInvDone(i uint32) {
	x := &sv.ctxs[i]
	x.waits &^= ctxWaitInv
	if x.waits == 0 {
		sv.release(int32(i))
	}
}
