package verbs

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
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
	var me *datapath.MemlockError
	if !errors.As(err, &me) || !errors.Is(err, syscall.ENOMEM) {
		t.Fatalf("%v is not a MemlockError wrapping ENOMEM", err)
	}
	for _, want := range []string{"cannot allocate memory", "ibv_reg_mr 64 MiB", "RLIMIT_MEMLOCK) is 8 MiB (hard limit 8 MiB)", "ulimit -l unlimited", "siw"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if got := memlockError(enomem, 4096, datapath.RLimInfinity, datapath.RLimInfinity); got != enomem {
		t.Errorf("unlimited: %v", got)
	}
	other := fmt.Errorf("ibv_reg_mr: %w", syscall.EINVAL)
	if got := memlockError(other, 4096, 65536, 65536); got != other {
		t.Errorf("EINVAL: %v", got)
	}
	if s := (&datapath.MemlockError{Op: "ibv_reg_mr", Bytes: 100, Cur: 65 << 10, Max: datapath.RLimInfinity, Err: enomem}).Error(); !strings.Contains(s, "65 KiB (hard limit unlimited)") || !strings.Contains(s, "100 B") {
		t.Errorf("%q", s)
	}
}

// The brief form fits a reject reason (141 bytes of text) with the setup step before it.
func TestMemlockErrorBrief(t *testing.T) {
	e := &datapath.MemlockError{Op: "ibv_reg_mr", Bytes: 100<<20 + 4096, Cur: 8<<20 + 1, Max: 64 << 30, Err: syscall.ENOMEM}
	want := "ibv_reg_mr 102404 KiB: RLIMIT_MEMLOCK 8388609 B (hard 64 GiB) is too small: raise it (ulimit -l unlimited)"
	if got := e.Brief(); got != want || len("register memory: "+got) > 141 {
		t.Fatalf("Brief() = %q (%d bytes), want %q", got, len(got), want)
	}
}

// An iWARP GID (siw's on dummy0 in the VM: the MAC, then ten zero bytes) names the interface
// with that MAC; other GIDs, and MACs no interface has, name none.
func TestIWARPNetDev(t *testing.T) {
	mac := func(s string) net.HardwareAddr {
		m, err := net.ParseMAC(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ifaces := []net.Interface{
		{Index: 1, Name: "lo"},
		{Index: 2, Name: "eth0", HardwareAddr: mac("52:54:00:12:34:56")},
		{Index: 3, Name: "dummy0", HardwareAddr: mac("b6:ba:ef:7e:94:f3")},
		{Index: 4, Name: "dummy0.7", HardwareAddr: mac("b6:ba:ef:7e:94:f3")}, // a VLAN: the parent's MAC
	}
	for _, tc := range []struct {
		gid  string
		want string
	}{
		{"b6ba:ef7e:94f3:0000:0000:0000:0000:0000", "dummy0"},
		{"5254:0012:3456:0000:0000:0000:0000:0000", "eth0"},
		{"0000:0000:0000:0000:0000:0000:0000:0000", ""}, // no MAC: not lo's
		{"b6ba:ef7e:94f4:0000:0000:0000:0000:0000", ""}, // no interface has it
		{"b6ba:ef7e:94f3:0000:0000:0000:0000:0001", ""}, // not MAC-and-zeros
		{"fe80:0000:0000:0000:5054:00ff:fe12:3456", ""}, // RoCE's link-local GID of eth0
		{"0000:0000:0000:0000:0000:ffff:0a00:020f", ""}, // RoCE's IPv4-mapped GID
	} {
		raw := net.ParseIP(tc.gid)
		if raw == nil {
			t.Fatalf("bad GID %s", tc.gid)
		}
		if got := iwarpNetDev(raw, ifaces); got != tc.want {
			t.Errorf("iwarpNetDev(%s) = %q, want %q", tc.gid, got, tc.want)
		}
	}
	if got := iwarpNetDev(make([]byte, 4), ifaces); got != "" {
		t.Errorf("iwarpNetDev of 4 bytes = %q, want none", got)
	}
}
