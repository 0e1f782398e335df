//go:build mpi

package mpi

/*
#cgo pkg-config: mpi-c
#include <mpi.h>

static int rb_init(int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, provided);
	if (rc == MPI_SUCCESS)
		rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	return rc;
}
static int rb_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int rb_size(int *n) { return MPI_Comm_size(MPI_COMM_WORLD, n); }
static int rb_processor_name(char *name, int *len) { return MPI_Get_processor_name(name, len); }
static int rb_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int rb_gather_len(int n, int *lens) {
	return MPI_Gather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
}
static int rb_gatherv(const void *b, int n, void *all, const int *lens, const int *displs) {
	return MPI_Gatherv(b, n, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
}
static int rb_bcast_len(int *n) { return MPI_Bcast(n, 1, MPI_INT, 0, MPI_COMM_WORLD); }
static int rb_bcast(void *b, int n) { return MPI_Bcast(b, n, MPI_BYTE, 0, MPI_COMM_WORLD); }
static int rb_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int rb_finalize(void) { return MPI_Finalize(); }
static void rb_error_string(int code, char *s, int *len) {
	if (MPI_Error_string(code, s, len) != MPI_SUCCESS)
		*len = 0;
}
static int rb_max_processor_name(void) { return MPI_MAX_PROCESSOR_NAME; }
static int rb_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
)

// comm runs every MPI call on its own locked thread.
type comm struct {
	calls      chan func()
	rank, size int
	host       string
	closed     bool
}

// Error is a failed MPI call: which and MPI's text for its code.
type Error struct {
	Op   string
	Code int
	Text string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (MPI error %d)", e.Op, e.Text, e.Code) }

func mpiErr(op string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	buf := make([]byte, int(C.rb_max_error_string())+1)
	var n C.int
	C.rb_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return &Error{Op: op, Code: int(rc), Text: string(buf[:n])}
}

// Init initialises MPI (MPI_Init_thread) and returns MPI_COMM_WORLD as a fanin.Comm.
func Init() (fanin.Comm, error) {
	c := &comm{calls: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // MPI_THREAD_FUNNELED: every call from this thread
		var provided, rank, size C.int
		if err := mpiErr("MPI_Init_thread", C.rb_init(&provided)); err != nil {
			ready <- err
			return
		}
		if provided < C.MPI_THREAD_FUNNELED {
			C.rb_finalize()
			ready <- fmt.Errorf("MPI_Init_thread: this MPI provides thread level %d, below MPI_THREAD_FUNNELED", provided)
			return
		}
		err := errors.Join(mpiErr("MPI_Comm_rank", C.rb_rank(&rank)), mpiErr("MPI_Comm_size", C.rb_size(&size)))
		name := make([]byte, int(C.rb_max_processor_name())+1)
		var n C.int
		err = errors.Join(err, mpiErr("MPI_Get_processor_name", C.rb_processor_name((*C.char)(unsafe.Pointer(&name[0])), &n)))
		if err != nil {
			C.rb_finalize()
			ready <- err
			return
		}
		c.rank, c.size, c.host = int(rank), int(size), string(name[:n])
		ready <- nil
		for f := range c.calls {
			f()
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return c, nil
}

// do runs f on the MPI thread.
func (c *comm) do(f func()) {
	done := make(chan struct{})
	c.calls <- func() {
		f()
		close(done)
	}
	<-done
}

func (c *comm) Rank() int    { return c.rank }
func (c *comm) Size() int    { return c.size }
func (c *comm) Host() string { return c.host }

func (c *comm) Barrier() (err error) {
	c.do(func() { err = mpiErr("MPI_Barrier", C.rb_barrier()) })
	return err
}

// ptr is the address of b's first byte, nil for an empty b (C reads it only during the call).
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func (c *comm) Gather(b []byte) (all [][]byte, err error) {
	c.do(func() {
		lens := make([]C.int, c.size)
		if err = mpiErr("MPI_Gather", C.rb_gather_len(C.int(len(b)), &lens[0])); err != nil {
			return
		}
		displs := make([]C.int, c.size)
		total := 0
		if c.rank == 0 {
			for i, n := range lens {
				displs[i] = C.int(total)
				total += int(n)
			}
		}
		buf := make([]byte, total)
		if err = mpiErr("MPI_Gatherv", C.rb_gatherv(ptr(b), C.int(len(b)), ptr(buf), &lens[0], &displs[0])); err != nil || c.rank != 0 {
			return
		}
		all = make([][]byte, c.size)
		for i, n := range lens {
			all[i] = buf[displs[i] : int(displs[i])+int(n)]
		}
	})
	return all, err
}

func (c *comm) Bcast(b []byte) (out []byte, err error) {
	c.do(func() {
		n := C.int(len(b))
		if err = mpiErr("MPI_Bcast", C.rb_bcast_len(&n)); err != nil {
			return
		}
		out = make([]byte, int(n))
		if c.rank == 0 {
			copy(out, b)
		}
		err = mpiErr("MPI_Bcast", C.rb_bcast(ptr(out), n))
	})
	return out, err
}

func (c *comm) Abort(code int) {
	c.do(func() { C.rb_abort(C.int(code)) })
}

func (c *comm) Close() (err error) {
	if c.closed {
		return nil
	}
	c.closed = true
	c.do(func() { err = mpiErr("MPI_Finalize", C.rb_finalize()) })
	close(c.calls)
	return err
}
