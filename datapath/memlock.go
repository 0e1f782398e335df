package datapath

import (
	"fmt"
	"strconv"
)

// RLimInfinity is RLIM_INFINITY: an unlimited RLIMIT_MEMLOCK.
const RLimInfinity = ^uint64(0)

// MemlockError is memory that could not be pinned (mlock, or an ibv_reg_mr, which pins
// what it registers) while the process's locked-memory limit RLIMIT_MEMLOCK was finite: the
// limit, not the machine's memory, is the likely cause, so the error says so with the
// numbers and the fix. siw charges registrations to the limit even for root; any NIC does
// for other users.
type MemlockError struct {
	// Op is what pinned the memory: "mlock", "ibv_reg_mr".
	Op string
	// Bytes is how much it tried to pin.
	Bytes int
	// Cur and Max are RLIMIT_MEMLOCK's soft and hard limits in bytes (RLimInfinity is
	// unlimited).
	Cur, Max uint64
	// Err is the errno (ENOMEM, or EPERM from mlock).
	Err error
}

func (e *MemlockError) Error() string {
	return fmt.Sprintf("%s %s: %v: the locked-memory limit (RLIMIT_MEMLOCK) is %s (hard limit %s), counting memory "+
		"this process has already pinned (siw enforces it even for root): raise it, e.g. 'ulimit -l unlimited' in the "+
		"shell that starts rpcrdma-bench (LimitMEMLOCK=infinity for a systemd unit, a memlock line in "+
		"/etc/security/limits.conf for a user; processes with CAP_IPC_LOCK are not limited)",
		e.Op, ByteSize(uint64(e.Bytes)), e.Err, limitText(e.Cur), limitText(e.Max))
}

// Brief is the cause and the fix in a line short enough for a reject reason (rpcrdma puts it
// into the reject's private data, which holds 141 bytes of text).
func (e *MemlockError) Brief() string {
	return fmt.Sprintf("%s %s: RLIMIT_MEMLOCK %s (hard %s) is too small: raise it (ulimit -l unlimited)",
		e.Op, ByteSize(uint64(e.Bytes)), limitText(e.Cur), limitText(e.Max))
}

func (e *MemlockError) Unwrap() error { return e.Err }

func limitText(n uint64) string {
	if n == RLimInfinity {
		return "unlimited"
	}
	return ByteSize(n)
}

// ByteSize is n in the largest binary unit that divides it exactly: "64 MiB", "100 B".
func ByteSize(n uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatUint(n, 10) + " B"
}
