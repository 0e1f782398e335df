package session

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// Print prints the table of the session's results to stdout (to stderr when the results
// themselves go to standard output, out "-") and how it ended to stderr, for command; it
// returns false when the run did not complete or its results were not written where asked.
func (o *Outcome) Print(stdout, stderr io.Writer, command, out string) (ok bool) {
	ok = o.Run.Status.State == results.StateComplete
	if o.WriteErr != nil {
		// Never lose a measurement, never claim a write that did not happen.
		ok = false
		if !o.WriteErrLogged {
			fmt.Fprintf(stderr, "rpcrdma-bench %s: %v\n", command, o.WriteErr)
		}
		switch {
		case o.Rescued:
			fmt.Fprintf(stderr, "results written to %s instead\n", o.Written)
		case o.RescueErr != nil:
			fmt.Fprintf(stderr, "results NOT written: the fallback failed too: %v\n", o.RescueErr)
		}
	}
	table := stdout
	if out == Stdout {
		table = stderr
	}
	measured := false
	for _, p := range o.Run.Points {
		measured = measured || p.RTT.Count > 0 || p.Throughput.RPCs > 0
	}
	if measured {
		// A table of nothing would only repeat the failure printed below.
		if werr := results.WriteText(table, o.Run); werr != nil {
			fmt.Fprintf(stderr, "rpcrdma-bench %s: %v\n", command, werr)
		}
	}
	switch o.Run.Status.State {
	case results.StateFailed:
		fmt.Fprintf(stderr, "rpcrdma-bench %s: failed: %s%s\n", command, o.Run.Status.Message, hint(o.Err))
	case results.StateInterrupted:
		fmt.Fprintf(stderr, "rpcrdma-bench %s: interrupted: %d point(s) kept\n", command, len(o.Run.Points))
	}
	if o.Written != "" && !o.Rescued {
		fmt.Fprintf(stderr, "results written to %s\n", o.Written)
	}
	return ok
}

// hint is advice for a failure whose cause is commonly a setup mistake, "" for others.
func hint(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused"):
		return "\n  (is 'rpcrdma-bench server' running at that address, on that port, with the same provider?)"
	}
	var de *datapath.DisconnectError
	if errors.As(err, &de) && de.Reason == "" {
		return "\n  (it gave no reason: on verbs rdma_disconnect carries none; the server's log says why)"
	}
	return ""
}
