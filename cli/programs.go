package cli

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs4"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Programs are the programs --program names (besides PROG[:VERS], a program's NULL
// procedure alone; without --program, the benchmark program): the one list of them, read
// by the flags, their completion and the measurement.
var Programs = []rpcproto.Descriptor{nfs3.Descriptor, nfs4.Descriptor}

// LookupProgram finds a program of Programs by name or alias (any case).
func LookupProgram(name string) (rpcproto.Descriptor, bool) {
	for _, d := range Programs {
		if d.Named(name) {
			return d, true
		}
	}
	return rpcproto.Descriptor{}, false
}

// ProgramOf is the Descriptor of p among Programs.
func ProgramOf(p *rpcproto.Program) (rpcproto.Descriptor, bool) {
	for _, d := range Programs {
		if d.Program == p {
			return d, true
		}
	}
	return rpcproto.Descriptor{}, false
}
