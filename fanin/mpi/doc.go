// Package mpi is fanin.Comm over MPI's MPI_COMM_WORLD, through cgo (build tag mpi; Debian:
// libopenmpi-dev, found with pkg-config's mpi-c). Open MPI's handles (MPI_COMM_WORLD,
// MPI_BYTE) are macros cgo cannot name, so the calls go through small static C wrappers.
// Every MPI call runs on one goroutine locked to the OS thread that called
// MPI_Init_thread (MPI_THREAD_FUNNELED is all it asks for); C never keeps a Go pointer.
// Errors return (MPI_ERRORS_RETURN) as Go errors with MPI's text.
//
// Built without the tag, Init returns an error wrapping fanin.ErrNoMPI that says how to
// build it in, and says how many ranks the launcher started when its environment tells.
package mpi
