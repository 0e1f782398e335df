package datapathtest

import (
	"os"
	"syscall"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Env describes the provider under test. Zero fields take the defaults noted.
type Env struct {
	// Provider is the provider under test (required).
	Provider datapath.Provider
	// Device is the device both ends open ("" opens the provider's default).
	Device string
	// OneDevice makes both ends share one opened Device (one protection domain), as when a
	// soft-RoCE device talks to itself. Otherwise each end opens its own. Ignored across
	// processes.
	OneDevice bool
	// ListenAddr is where passive halves listen: "127.0.0.1:0", "inproc:", ... (required).
	// Each case listens afresh, so a port must be 0 or the case's listener reuses it.
	ListenAddr string
	// Timeout bounds each case (default 10 s); a case that waits longer fails.
	Timeout time.Duration
	// PeerName, when set, runs the passive halves in another process: the test binary
	// re-executed with DATAPATHTEST_PEER=PeerName, whose TestMain calls ServePeer with a
	// lookup that maps PeerName back to this Env.
	PeerName string
}

func (e *Env) timeout() time.Duration {
	if e.Timeout > 0 {
		return e.Timeout
	}
	return 10 * time.Second
}

// Alloc returns n bytes of page-aligned anonymous memory outside the Go heap, as registered
// memory must be, and the function that unmaps it.
func Alloc(n int) ([]byte, func() error, error) {
	page := os.Getpagesize()
	size := max((n+page-1)&^(page-1), page)
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, &datapath.OpError{Op: "mmap", Err: err}
	}
	return b[:n:n], func() error { return syscall.Munmap(b[:size]) }, nil
}
