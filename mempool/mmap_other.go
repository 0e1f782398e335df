//go:build !linux

package mempool

import (
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

type mapping struct {
	mem      []byte
	pageSize int
	huge     bool
	notes    []string
}

// The module is Linux-first: registered memory relies on MAP_POPULATE, MAP_HUGETLB and
// MADV_DONTFORK.
func mapRegion(size int, huge, populateAll bool) (mapping, error) {
	return mapping{}, &datapath.OpError{Op: fmt.Sprintf("mempool: mmap %d bytes", size), Err: datapath.ErrNotSupported}
}

func unmap(mem []byte) error { return nil }

func lock(mem []byte) error {
	return &datapath.OpError{Op: "mempool: mlock", Err: datapath.ErrNotSupported}
}

func populate(mem []byte, page int) {}
