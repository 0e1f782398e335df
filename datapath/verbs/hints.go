package verbs

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"syscall"
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

// MemlockError is an ibv_reg_mr that failed with ENOMEM while the process's locked-memory
// limit (RLIMIT_MEMLOCK) was finite: registering memory pins it and counts against that
// limit — siw enforces it even for root, and any NIC does for other users — so the limit,
// not the machine's memory, is the likely cause. It says so, with the numbers and the fix.
type MemlockError struct {
	// Bytes is the size of the registration that failed.
	Bytes int
	// Cur and Max are the soft and hard RLIMIT_MEMLOCK in bytes.
	Cur, Max uint64
	Err      error
}

func (e *MemlockError) Error() string {
	return fmt.Sprintf("%v registering %s: the locked-memory limit (RLIMIT_MEMLOCK) is %s (hard limit %s), and registered memory counts against it "+
		"(siw enforces it even for root): raise it, e.g. 'ulimit -l unlimited' in the shell that starts rpcrdma-bench "+
		"(LimitMEMLOCK=infinity for a systemd unit, a memlock line in /etc/security/limits.conf for a user)",
		e.Err, byteSize(uint64(e.Bytes)), limitText(e.Cur), limitText(e.Max))
}

// Brief is the cause and the fix in a line short enough for a reject reason (rpcrdma puts it
// into the reject's private data, which holds 141 bytes of text).
func (e *MemlockError) Brief() string {
	return fmt.Sprintf("ibv_reg_mr %s: RLIMIT_MEMLOCK %s (hard %s) is too small: raise it (ulimit -l unlimited)",
		byteSize(uint64(e.Bytes)), limitText(e.Cur), limitText(e.Max))
}

func (e *MemlockError) Unwrap() error { return e.Err }

// memlockError returns err as a *MemlockError when it is ENOMEM and the limit lim (soft,
// hard) is finite, else err unchanged.
func memlockError(err error, bytes int, cur, max uint64) error {
	if !errors.Is(err, syscall.ENOMEM) || cur == rlimInfinity {
		return err
	}
	return &MemlockError{Bytes: bytes, Cur: cur, Max: max, Err: err}
}

// rlimInfinity is RLIM_INFINITY.
const rlimInfinity = ^uint64(0)

func limitText(n uint64) string {
	if n == rlimInfinity {
		return "unlimited"
	}
	return byteSize(n)
}

// byteSize writes n in the largest binary unit that divides it: 8 MiB, 65 KiB, 100 B.
func byteSize(n uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}
