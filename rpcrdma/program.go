package rpcrdma

import (
	"errors"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
)

// The benchmark program (package oncrpc/benchprog) as the server half serves it: results
// are encoded in place next to their data so that every reply is one contiguous message in
// registered memory, whatever class carries it.

const (
	sinkArgsPrefix  = 16 // seed, verify, length (benchprog SinkArgs.ReducedSize)
	sourceResPrefix = 8  // stat, length (benchprog SourceRes.ReducedSize)
)

// serve decodes the call in x and answers it.
func (sv *server) serve(i int32, x *sctx) {
	c := sv.c
	call := &sv.rpc
	off, err := decodeCall(x.msg, call)
	rep := &sv.rep
	*rep = oncrpc.Reply{XID: call.XID, Stat: oncrpc.Accepted, Accept: oncrpc.Success}
	if sv.svc != nil && err == nil {
		sv.serveService(i, x, x.msg[off:])
		return
	}
	switch {
	case err != nil && errors.Is(err, oncrpc.ErrRPCVersion):
		rep.Stat, rep.Reject, rep.Low, rep.High = oncrpc.Denied, oncrpc.RPCMismatch, oncrpc.RPCVersion, oncrpc.RPCVersion
	case err != nil:
		if len(x.msg) < 4 {
			sv.errorReply(i, x, wire.ErrCodeChunk)
			return
		}
		rep.XID = be32(x.msg)
		rep.Accept = oncrpc.GarbageArgs
	case call.Prog != benchprog.Program:
		rep.Accept = oncrpc.ProgUnavail
	case call.Vers != benchprog.Version:
		rep.Accept, rep.Low, rep.High = oncrpc.ProgMismatch, benchprog.Version, benchprog.Version
	case call.Proc > benchprog.ProcSource:
		rep.Accept = oncrpc.ProcUnavail
	}
	if rep.Stat != oncrpc.Accepted || rep.Accept != oncrpc.Success {
		sv.replySmall(i, x, nil)
		return
	}
	body := x.msg[off:]
	switch call.Proc {
	case benchprog.ProcNull:
		sv.replySmall(i, x, nil)
	case benchprog.ProcEcho:
		var e benchprog.Echo
		if _, err := e.Decode(body); err != nil {
			rep.Accept = oncrpc.GarbageArgs
			sv.replySmall(i, x, nil)
			return
		}
		// The result is the argument: encode the reply header in place right before the
		// data, over the call's own header, so the reply message is contiguous where the
		// data already lies.
		buf, start := x.sink, 0
		if !x.pos0 {
			buf, start = x.recv, x.recvOff()
		}
		dataOff := start + off + 4
		msgOff := dataOff - 4 - replyHeaderSize
		b := buf.Bytes()
		putReply(b[msgOff:], rep)
		ee := benchprog.Echo{Data: b[dataOff : dataOff+len(e.Data)]}
		ee.Encode(b[dataOff-4:])
		sv.reply(i, x, buf, msgOff, replyHeaderSize+ee.Size(), -1, 0)
	case benchprog.ProcSink:
		var a benchprog.SinkArgs
		if x.chunk != nil {
			_, err = a.DecodeReduced(body, x.chunk)
		} else {
			_, err = a.Decode(body)
		}
		if err != nil {
			rep.Accept = oncrpc.GarbageArgs
			sv.replySmall(i, x, nil)
			return
		}
		res := benchprog.SinkRes{Count: uint32(len(a.Data))}
		if a.Verify {
			res.Check = benchprog.CheckOK
			if bad := benchprog.Verify(a.Data, a.Seed, 0); bad >= 0 {
				res.Check, res.BadOffset = benchprog.CheckBad, uint32(bad)
			}
		}
		sv.replySmall(i, x, &res)
	case benchprog.ProcSource:
		var a benchprog.SourceArgs
		if _, err := a.Decode(body); err != nil {
			rep.Accept = oncrpc.GarbageArgs
			sv.replySmall(i, x, nil)
			return
		}
		if !sv.needSink(i, x, resumeServe) {
			return
		}
		res := benchprog.SourceRes{}
		b := x.sink.Bytes()
		if int(a.Size) > c.cfg.MaxPayload {
			res.Stat = benchprog.SourceTooBig
		} else {
			res.Data = b[headroom : headroom+int(a.Size)]
			if a.Fill {
				benchprog.Fill(res.Data, a.Seed, 0)
			}
		}
		msgOff := headroom - sourceResPrefix - replyHeaderSize
		putReply(b[msgOff:], rep)
		res.Encode(b[headroom-sourceResPrefix:])
		sv.reply(i, x, x.sink, msgOff, replyHeaderSize+res.Size(), headroom, len(res.Data))
	}
}

// recvOff is where x.msg starts in its receive buffer: the message is what follows the
// transport header, up to the received length.
func (x *sctx) recvOff() int {
	b := x.recv.Bytes()
	// msg is b[hdrLen:byteLen] and shares b's backing array: cap(msg) = cap(b) - hdrLen.
	return cap(b) - cap(x.msg)
}

// replySmall answers with a reply built in the context's send buffer (after room for the
// transport header): the RPC reply header and, for SINK, its result.
func (sv *server) replySmall(i int32, x *sctx, res *benchprog.SinkRes) {
	b := x.send.Bytes()
	n := putReply(b[smallOff:], &sv.rep)
	if res != nil {
		m, _ := res.Encode(b[smallOff+n:])
		n += m
	}
	sv.reply(i, x, x.send, smallOff, n, -1, 0)
}

// serveService answers a reverse call with Config.Service, inline: the requester exposes
// nothing for a reverse reply, as the Linux client does not.
func (sv *server) serveService(i int32, x *sctx, args []byte) {
	call, rep := &sv.rpc, &sv.rep
	switch {
	case call.Prog != sv.svcProg[0]:
		rep.Accept = oncrpc.ProgUnavail
	case call.Vers != sv.svcProg[1]:
		rep.Accept, rep.Low, rep.High = oncrpc.ProgMismatch, sv.svcProg[1], sv.svcProg[1]
	case call.Proc >= uint32(sv.svcProcs):
		rep.Accept = oncrpc.ProcUnavail
	}
	b := x.send.Bytes()
	n := 0
	x.svcProc = int32(min(call.Proc, 1<<30))
	if rep.Accept == oncrpc.Success {
		// The results go after the reply header, within what the peer receives inline.
		room := min(len(b), smallOff+sv.c.params.Inline.SendSize-wire.MinHeaderSize)
		var err error
		n, err = sv.svc.Serve(call.Proc, args, b[smallOff+replyHeaderSize:room])
		x.svcFailed = err != nil
		if err != nil && n == 0 {
			rep.Accept = oncrpc.GarbageArgs
		}
	} else {
		x.svcFailed = true
	}
	m := putReply(b[smallOff:], rep)
	if rep.Accept != oncrpc.Success {
		n = 0
	}
	sv.reply(i, x, x.send, smallOff, m+n, -1, 0)
}
