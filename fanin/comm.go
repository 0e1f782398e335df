package fanin

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Comm is the launcher's communicator: the ranks of one job (MPI_COMM_WORLD under mpirun,
// fanin/mpi) or goroutines of one process (NewLocal, for tests). Every rank calls the
// collective methods (Barrier, Gather, Bcast) in the same order; they block until the ranks
// they wait for arrive, with no timeout, so the orchestration uses them only for wire-up,
// before anything can fail mid-run, and watches the ranks over its own connections after.
type Comm interface {
	// Rank is this rank, 0 to Size()-1.
	Rank() int
	Size() int
	// Host names the host this rank runs on (MPI_Get_processor_name).
	Host() string
	// Barrier returns once every rank has entered it.
	Barrier() error
	// Gather collects every rank's b at rank 0, in rank order; the other ranks get nil.
	Gather(b []byte) ([][]byte, error)
	// Bcast returns rank 0's b at every rank (the others' b is ignored).
	Bcast(b []byte) ([]byte, error)
	// Abort ends every rank of the job with code (MPI_Abort): the way out when a rank can
	// no longer take part in the collectives the others wait in.
	Abort(code int)
	// Close leaves the job (MPI_Finalize); no method may be called after it.
	Close() error
}

// launcherSizes are the environment variables in which launchers give a rank the job's
// size: Open MPI's mpirun, Slurm's srun (the step's tasks: an allocation's SLURM_NTASKS is
// set outside srun too), MPICH's Hydra.
var launcherSizes = []string{"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "PMI_SIZE"}

// ErrNoMPI is wrapped by the error of a process launched as one of several ranks by a
// binary built without MPI.
var ErrNoMPI = errors.New("this rpcrdma-bench is built without MPI: build it with -tags mpi (cgo and libopenmpi-dev or another MPI's headers)")

// launchedSize is the job size the launcher's environment gives this process (getenv:
// os.Getenv), and the variable that said so; 1 and "" when none does. A launcher that
// starts several ranks of a binary without MPI support compiled in makes it an error
// wrapping ErrNoMPI that names the variable.
func launchedSize(getenv func(string) string) (int, string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, v := range launcherSizes {
		s := getenv(v)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, v, fmt.Errorf("%s=%q is not a rank count", v, s)
		}
		return n, v, nil
	}
	return 1, "", nil
}

// NoMPI is the error for a build without MPI support when the environment says the job has
// more than one rank (getenv: os.Getenv), nil otherwise.
func NoMPI(getenv func(string) string) error {
	n, v, err := launchedSize(getenv)
	if err != nil {
		return err
	}
	if n > 1 {
		return fmt.Errorf("launched as one of %d ranks (%s): %w", n, v, ErrNoMPI)
	}
	return nil
}
