//go:build !(verbs && cgo)

package verbs

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

func TestStubSaysHowToBuild(t *testing.T) {
	p := New(Config{})
	_, err := p.Devices()
	if !errors.Is(err, datapath.ErrNotSupported) {
		t.Fatalf("Devices: %v, want ErrNotSupported", err)
	}
	if _, err := p.Open(""); !errors.Is(err, datapath.ErrNotSupported) || !strings.Contains(err.Error(), "-tags verbs") {
		t.Fatalf("Open: %v, want ErrNotSupported naming -tags verbs", err)
	}
}
