package verbs

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
)

func TestGIDLabel(t *testing.T) {
	for _, tc := range []struct {
		v2   bool
		node string
		want string
	}{{false, "CA", "IB/RoCE v1"}, {true, "CA", "RoCE v2"}, {false, "RNIC", "iWARP"}, {true, "RNIC", "iWARP"}} {
		if got := gidLabel(tc.v2, tc.node); got != tc.want {
			t.Errorf("gidLabel(%v, %q) = %q, want %q", tc.v2, tc.node, got, tc.want)
		}
	}
}

// ENOMEM from ibv_reg_mr under a finite RLIMIT_MEMLOCK says the limit and the fix; other
// errors, or an unlimited limit, pass unchanged.
func TestMemlockError(t *testing.T) {
	enomem := fmt.Errorf("ibv_reg_mr: %w", syscall.ENOMEM)
	err := memlockError(enomem, 64<<20, 8<<20, 8<<20)
	var me *MemlockError
	if !errors.As(err, &me) || !errors.Is(err, syscall.ENOMEM) {
		t.Fatalf("%v is not a MemlockError wrapping ENOMEM", err)
	}
	for _, want := range []string{"cannot allocate memory", "registering 64 MiB", "RLIMIT_MEMLOCK) is 8 MiB (hard limit 8 MiB)", "ulimit -l unlimited", "siw"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if got := memlockError(enomem, 4096, rlimInfinity, rlimInfinity); got != enomem {
		t.Errorf("unlimited: %v", got)
	}
	other := fmt.Errorf("ibv_reg_mr: %w", syscall.EINVAL)
	if got := memlockError(other, 4096, 65536, 65536); got != other {
		t.Errorf("EINVAL: %v", got)
	}
	if s := (&MemlockError{Bytes: 100, Cur: 65 << 10, Max: rlimInfinity, Err: enomem}).Error(); !strings.Contains(s, "65 KiB (hard limit unlimited)") || !strings.Contains(s, "100 B") {
		t.Errorf("%q", s)
	}
}

// The brief form fits a reject reason (141 bytes of text) with the setup step before it.
func TestMemlockErrorBrief(t *testing.T) {
	e := &MemlockError{Bytes: 100<<20 + 4096, Cur: 8<<20 + 1, Max: 64 << 30, Err: syscall.ENOMEM}
	want := "ibv_reg_mr 102404 KiB: RLIMIT_MEMLOCK 8388609 B (hard 64 GiB) is too small: raise it (ulimit -l unlimited)"
	if got := e.Brief(); got != want || len("register memory: "+got) > 141 {
		t.Fatalf("Brief() = %q (%d bytes), want %q", got, len(got), want)
	}
}
