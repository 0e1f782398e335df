//go:build !mpi

package mpi

import "github.com/rpcrdma-bench/rpcrdma-bench/fanin"

// Init fails: this build has no MPI. The error wraps fanin.ErrNoMPI and names the ranks the
// launcher started, when its environment says.
func Init() (fanin.Comm, error) {
	if err := fanin.NoMPI(nil); err != nil {
		return nil, err
	}
	return nil, fanin.ErrNoMPI
}
