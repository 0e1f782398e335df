package benchprog

import (
	"encoding/binary"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

// The program's identity (see the package comment).
const (
	Program uint32 = 0x2f0c8166
	Version uint32 = 1
)

// Procedure numbers, which are also the procedures' indexes in Prog's table (untyped, so
// they serve as either).
const (
	ProcNull   = 0
	ProcEcho   = 1
	ProcSink   = 2
	ProcSource = 3
)

// MaxData bounds every opaque in the program: decoders reject longer length words, so that
// offsets stay far from overflow on any platform and a hostile length cannot name a
// multi-gigabyte buffer.
const MaxData = 1 << 30

var (
	// ErrProc, ErrNoDDP and ErrChunk are oncrpc's kinds, shared by every program.
	ErrProc, ErrNoDDP, ErrChunk = oncrpc.ErrProc, oncrpc.ErrNoDDP, oncrpc.ErrChunk
)

var (
	errEchoTrunc    = oncrpc.NewXDRError("echo opaque", oncrpc.ErrTruncated)
	errEchoLong     = oncrpc.NewXDRError("echo opaque", oncrpc.ErrTooLong)
	errEchoShort    = oncrpc.NewXDRError("echo opaque", oncrpc.ErrShortBuffer)
	errSinkTrunc    = oncrpc.NewXDRError("sink_args", oncrpc.ErrTruncated)
	errSinkLong     = oncrpc.NewXDRError("sink_args.data", oncrpc.ErrTooLong)
	errSinkShort    = oncrpc.NewXDRError("sink_args", oncrpc.ErrShortBuffer)
	errSinkBool     = oncrpc.NewXDRError("sink_args.verify", oncrpc.ErrBadEnum)
	errSinkChunk    = oncrpc.NewXDRError("sink_args.data", ErrChunk)
	errSinkResTrunc = oncrpc.NewXDRError("sink_res", oncrpc.ErrTruncated)
	errSinkResShort = oncrpc.NewXDRError("sink_res", oncrpc.ErrShortBuffer)
	errSinkResEnum  = oncrpc.NewXDRError("sink_res.check", oncrpc.ErrBadEnum)
	errSrcTrunc     = oncrpc.NewXDRError("source_args", oncrpc.ErrTruncated)
	errSrcShort     = oncrpc.NewXDRError("source_args", oncrpc.ErrShortBuffer)
	errSrcBool      = oncrpc.NewXDRError("source_args.fill", oncrpc.ErrBadEnum)
	errSrcResTrunc  = oncrpc.NewXDRError("source_res", oncrpc.ErrTruncated)
	errSrcResLong   = oncrpc.NewXDRError("source_res.data", oncrpc.ErrTooLong)
	errSrcResShort  = oncrpc.NewXDRError("source_res", oncrpc.ErrShortBuffer)
	errSrcResEnum   = oncrpc.NewXDRError("source_res.stat", oncrpc.ErrBadEnum)
	errSrcResChunk  = oncrpc.NewXDRError("source_res.data", ErrChunk)
	errProc         = oncrpc.NewXDRError("procedure", ErrProc)
	errNoDDP        = oncrpc.NewXDRError("procedure", ErrNoDDP)
)

func pad4(n int) int { return (n + 3) &^ 3 }

func get32(b []byte, off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }

func put32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }

func putBool(b []byte, off int, v bool) {
	if v {
		put32(b, off, 1)
	} else {
		put32(b, off, 0)
	}
}

// getBool decodes an XDR bool; only 0 and 1 are legal (RFC 4506 section 4.4).
func getBool(b []byte, off int) (v, ok bool) {
	switch get32(b, off) {
	case 0:
		return false, true
	case 1:
		return true, true
	}
	return false, false
}

// getData decodes an opaque<> at off, whose length word is already known to be in b; returns
// the data (capped, so the pad is not exposed) and the offset after the pad, ok=false if b
// ends early.
func getData(b []byte, off int, n uint32) (data []byte, end int, ok bool) {
	start := off + 4
	end = start + pad4(int(n))
	if end > len(b) {
		return nil, 0, false
	}
	return b[start : start+int(n) : start+int(n)], end, true
}

// DDPData locates the DDP-eligible data item of procedure proc's arguments (reply false) or
// results (reply true) in body, an encoded argument or result body: either whole, or reduced
// (the data item and its pad removed, "Reducing an XDR Stream", RFC 8166 section 3.4.1). It returns the item's XDR
// position relative to the start of body (a multiple of 4, just after its length word) and its
// length in bytes, without pad.
//
// A transport moving the item by RDMA moves exactly body[off:off+n]: a Read chunk's Position
// is the RPC header length plus off, and the reduced Payload stream is body[:off] (the item is
// last in every body of this program, so nothing follows its pad). XDR pad bytes are never
// sent in the chunk; the receiver reinserts none, because the decoders here take the item from
// the chunk itself (SinkArgs.DecodeReduced, SourceRes.DecodeReduced). Errors: ErrProc,
// ErrNoDDP (NULL, ECHO), or a truncated/too-long error if body ends before the length word.
func DDPData(proc uint32, reply bool, body []byte) (off, n int, err error) {
	switch proc {
	case ProcNull, ProcEcho:
		return 0, 0, errNoDDP
	case ProcSink:
		if reply {
			return 0, 0, errNoDDP
		}
		return dataItem(body, sinkPrefix, errSinkTrunc, errSinkLong)
	case ProcSource:
		if !reply {
			return 0, 0, errNoDDP
		}
		return dataItem(body, sourcePrefix, errSrcResTrunc, errSrcResLong)
	}
	return 0, 0, errProc
}

// dataItem locates the data item whose length word ends a body's fixed prefix; trunc and long
// are the body type's errors for a short prefix and a length over MaxData.
func dataItem(body []byte, prefix int, trunc, long error) (off, n int, err error) {
	if len(body) < prefix {
		return 0, 0, trunc
	}
	l := get32(body, prefix-4)
	if l > MaxData {
		return 0, 0, long
	}
	return prefix, int(l), nil
}
