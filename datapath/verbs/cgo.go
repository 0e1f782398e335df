//go:build verbs && cgo

package verbs

/*
#cgo LDFLAGS: -lrdmacm -libverbs
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"golang.org/x/sys/unix"
)

// errno turns a C error number into the error OpError wraps; errors.Is(err, unix.EINVAL) etc.
// work on it.
func errno(rc C.int) error {
	if rc < 0 {
		rc = -rc
	}
	if rc == 0 {
		return unix.EIO
	}
	return unix.Errno(rc)
}

func opErr(op string, rc C.int) error {
	return &datapath.OpError{Op: op, Err: errno(rc)}
}

// sgeSlice views n ibv_sge in C memory as datapath.SGE, whose layout is the same (checked by
// layoutOK).
func sgeSlice(p *C.struct_ibv_sge, n int) []datapath.SGE {
	return unsafe.Slice((*datapath.SGE)(unsafe.Pointer(p)), n)
}

// layoutOK reports whether the Go types C reads or writes in place have the C layout.
func layoutOK() bool {
	var s datapath.SGE
	var w datapath.Completion
	var cw C.struct_vb_wc
	return unsafe.Sizeof(s) == C.sizeof_struct_ibv_sge &&
		unsafe.Offsetof(s.Length) == 8 && unsafe.Offsetof(s.LKey) == 12 &&
		unsafe.Sizeof(w) == C.sizeof_struct_vb_wc &&
		unsafe.Offsetof(w.ID) == unsafe.Offsetof(cw.id) &&
		unsafe.Offsetof(w.QPN) == unsafe.Offsetof(cw.qpn) &&
		unsafe.Offsetof(w.Op) == unsafe.Offsetof(cw.op) &&
		unsafe.Offsetof(w.Status) == unsafe.Offsetof(cw.status) &&
		unsafe.Offsetof(w.ByteLen) == unsafe.Offsetof(cw.byte_len) &&
		unsafe.Offsetof(w.InvRKey) == unsafe.Offsetof(cw.inv_rkey) &&
		unsafe.Offsetof(w.Invalidated) == unsafe.Offsetof(cw.invalidated)
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

var errEOPNOTSUPP error = unix.EOPNOTSUPP

// constsOK reports whether the C side numbers opcodes and flags as package datapath does.
func constsOK() bool {
	return datapath.OpSend == C.VB_OP_SEND && datapath.OpSendInv == C.VB_OP_SEND_INV &&
		datapath.OpWrite == C.VB_OP_WRITE && datapath.OpRead == C.VB_OP_READ &&
		datapath.OpRecv == C.VB_OP_RECV && datapath.OpBindMW == C.VB_OP_BIND_MW &&
		datapath.OpLocalInv == C.VB_OP_LOCAL_INV &&
		datapath.FlagSignaled == C.VB_FLAG_SIGNALED && datapath.FlagInline == C.VB_FLAG_INLINE &&
		datapath.FlagFence == C.VB_FLAG_FENCE
}

// statusOf maps an ibv_wc_status as completions do.
func statusOf(ibv int) datapath.Status { return datapath.Status(C.vb_status(C.int(ibv))) }
