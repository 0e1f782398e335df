//go:build !mpi

package mpi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
	"github.com/rpcrdma-bench/rpcrdma-bench/fanin/mpi"
)

// Without the tag, Init says how to build MPI in, with the ranks the launcher started.
func TestInitWithoutMPI(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "4")
	_, err := mpi.Init()
	if !errors.Is(err, fanin.ErrNoMPI) || !strings.Contains(err.Error(), "-tags mpi") || !strings.Contains(err.Error(), "one of 4 ranks") {
		t.Errorf("Init: %v", err)
	}
}
