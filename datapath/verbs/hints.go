package verbs

import (
	"bytes"
	"errors"
	"net"
	"syscall"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// gidLabel names a GID's type as ibv_devinfo and show_gids do. iWARP devices (node type
// RNIC) have GIDs made from their MAC address, which are neither InfiniBand nor RoCE: the
// GID type the kernel reports for them is meaningless, so the node type decides.
func gidLabel(roceV2 bool, nodeType string) string {
	switch {
	case nodeType == "RNIC":
		return "iWARP"
	case roceV2:
		return "RoCE v2"
	}
	return "IB/RoCE v1"
}

// iwarpNetDev names the network interface behind an iWARP GID, for which the kernel reports
// no netdev (siw on Linux 6.1: gid_attrs/ndevs reads EINVAL): iWARP devices (siw, cxgb4,
// irdma, qedr) make their GID of their netdev's MAC address followed by ten zero bytes, and
// rdma_cm matches iWARP addresses by it. It is the first of ifaces with that hardware
// address, or "" when the GID is not of that form or no interface has it.
func iwarpNetDev(gid []byte, ifaces []net.Interface) string {
	if len(gid) != 16 || !allZero(gid[6:]) || allZero(gid[:6]) {
		return ""
	}
	for _, ifi := range ifaces {
		if bytes.Equal(ifi.HardwareAddr, gid[:6]) {
			return ifi.Name
		}
	}
	return ""
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// memlockError returns err as a *datapath.MemlockError when it is ENOMEM and the limit (cur,
// max) is finite, else err unchanged.
func memlockError(err error, bytes int, cur, max uint64) error {
	if !errors.Is(err, syscall.ENOMEM) || cur == datapath.RLimInfinity {
		return err
	}
	return &datapath.MemlockError{Op: "ibv_reg_mr", Bytes: bytes, Cur: cur, Max: max, Err: err}
}
