//go:build mpi

package mpi_test

import (
	"bytes"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/fanin/mpi"
)

// A singleton (no mpirun): one rank whose collectives return its own bytes.
func TestSingleton(t *testing.T) {
	c, err := mpi.Init()
	if err != nil {
		t.Fatal(err)
	}
	if c.Rank() != 0 || c.Size() != 1 || c.Host() == "" {
		t.Errorf("rank %d of %d on %q", c.Rank(), c.Size(), c.Host())
	}
	if err := c.Barrier(); err != nil {
		t.Error(err)
	}
	all, err := c.Gather([]byte("hello"))
	if err != nil || len(all) != 1 || string(all[0]) != "hello" {
		t.Errorf("gather: %q, %v", all, err)
	}
	if all, err = c.Gather(nil); err != nil || len(all) != 1 || len(all[0]) != 0 {
		t.Errorf("gather of nothing: %q, %v", all, err)
	}
	b, err := c.Bcast([]byte{1, 2, 3})
	if err != nil || !bytes.Equal(b, []byte{1, 2, 3}) {
		t.Errorf("bcast: %v, %v", b, err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
}
