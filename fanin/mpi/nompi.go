//go:build !mpi

package mpi

import (
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
)

// Supported says MPI is compiled in.
const Supported = false

// Init fails: this build has no MPI. The error wraps fanin.ErrNoMPI and names the ranks the
// launcher started, when its environment says.
func Init() (fanin.Comm, error) {
	if err := fanin.NoMPI(nil); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("fanin: %w", fanin.ErrNoMPI)
}
