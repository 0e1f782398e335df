//go:build !linux

package results

import (
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

func uname() (release, version string) { return "", "" }

func rusage() (user, sys time.Duration, err error) {
	return 0, 0, &datapath.OpError{Op: "getrusage", Err: datapath.ErrNotSupported}
}
