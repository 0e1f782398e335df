package rpcrdma

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// faultQP stands between a Conn and its queue pair and injects faults into the work
// requests the engine posts: a broken or hostile peer made from a correct one. It sees each
// batch before the provider does, so what it rewrites is what goes on the wire.
type faultQP struct {
	datapath.Conn
	c *Conn

	// suppressDone turns every RDMA_DONE Send for a call of this side into a zero-length RDMA WRITE: it completes
	// as the Send would, and the peer receives nothing (exercises the responder's timeout).
	// The sender's Stats still count it as sent.
	suppressDone bool
	// corrupt flips the first payload byte of each call that carries one, and of each reply
	// whose payload is in a sink buffer (SOURCE results).
	corrupt bool
	// mangle rewrites the transport header of the next call Send.
	mangle func([]byte)
	// mangleReply rewrites the first SGE of the next reply Send: the transport header, with
	// the RPC message after it only for replies that carry none.
	mangleReply func([]byte)
	// beforeSend runs before each batch of sends is posted, after the receives.
	beforeSend func()
	// callSent sees each call Send as posted: its slot and SGL.
	callSent func(s *slot, sgl []datapath.SGE)
}

// faults returns c's fault injector, putting it between c and its queue pair the first time.
func faults(c *Conn) *faultQP {
	if f, ok := c.qp.(*faultQP); ok {
		return f
	}
	f := &faultQP{Conn: c.qp, c: c}
	c.qp = f
	return f
}

// Abort keeps the provider's reason-carrying close visible through the wrapper.
func (f *faultQP) Abort(reason string) error {
	if a, ok := f.Conn.(datapath.Aborter); ok {
		return a.Abort(reason)
	}
	return f.Conn.Close()
}

func (f *faultQP) PostSend(wrs []datapath.SendWR) (int, error) {
	if f.beforeSend != nil {
		f.beforeSend()
	}
	for k := range wrs {
		wr := &wrs[k]
		idx := uint32(wr.ID & (1<<wrKindShift - 1))
		switch wr.ID >> wrKindShift {
		case kindCallSend:
			s := &f.c.cl.slots[idx]
			if f.callSent != nil {
				f.callSent(s, wr.SGL)
			}
			if f.mangle != nil {
				f.mangle(s.send.Bytes()[:wr.SGL[0].Length])
				f.mangle = nil
			}
			procs := f.c.cl.codec.Program().Procs
			if f.corrupt && s.call.Size > 0 && procs[s.call.Proc].Sized() && procs[s.call.Proc].Payload&rpcproto.InCall != 0 {
				s.out.Bytes()[headroom] ^= 0xff
			}
		case kindReplySend:
			x := &f.c.sv.ctxs[idx]
			if f.mangleReply != nil {
				f.mangleReply(x.send.Bytes()[:wr.SGL[0].Length])
				f.mangleReply = nil
			}
			if f.corrupt && x.sink != nil {
				x.sink.Bytes()[headroom] ^= 0xff
			}
		case kindDoneSend:
			if f.suppressDone {
				wr.Op, wr.InvRKey, wr.SGL, wr.Flags = datapath.OpWrite, 0, nil, wr.Flags&^datapath.FlagInline
			}
		}
	}
	return f.Conn.PostSend(wrs)
}
