// Command nfsfile writes the files rpcrdma-bench --program nfs3 names, on the NFS server's
// side: the read file filled with the benchmark pattern keyed by nfs3.PatternSeed at every
// offset (so that --verify can check every READ) and an empty scratch file for WRITE.
//
//	nfsfile -size 4m /export/rpcrdma-bench.dat /export/rpcrdma-bench.scratch
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

func main() {
	size := flag.String("size", "4m", "size of the read file")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: nfsfile [-size N] READFILE SCRATCHFILE")
		os.Exit(2)
	}
	n, err := workloads.ParseSize(*size)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nfsfile: -size %s: %v\n", *size, err)
		os.Exit(2)
	}
	b := make([]byte, n)
	benchprog.Fill(b, nfs3.PatternSeed, 0)
	if err := os.WriteFile(flag.Arg(0), b, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "nfsfile: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(flag.Arg(1), nil, 0o666); err != nil {
		fmt.Fprintf(os.Stderr, "nfsfile: %v\n", err)
		os.Exit(1)
	}
}
