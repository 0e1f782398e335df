package workloads

import (
	"fmt"
	"runtime"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// lockAndPin locks the calling goroutine to its OS thread and, for cpu >= 0, pins that
// thread to cpu. The thread is never unlocked: when the goroutine ends, the runtime ends the
// thread with it, so its changed affinity never leaks into other goroutines. An unpinned
// poller that blocks when idle (event, hybrid) is not locked: waking a parked goroutine costs
// the runtime far less than handing a locked thread back its goroutine (a futex wake and a
// thread switch per wait), and nothing ties it to one thread.
func lockAndPin(cpu int, poll datapath.Poll) error {
	if cpu < 0 && poll.Mode != datapath.PollBusy {
		return nil
	}
	runtime.LockOSThread()
	if cpu < 0 {
		return nil
	}
	if err := datapath.PinThread(cpu); err != nil {
		return &PinError{CPU: cpu, Err: err}
	}
	return nil
}

// PinError is a poller thread that could not be pinned to its CPU.
type PinError struct {
	CPU int
	Err error
}

func (e *PinError) Error() string { return fmt.Sprintf("pin poller to cpu %d: %v", e.CPU, e.Err) }
func (e *PinError) Unwrap() error { return e.Err }
