package main

import (
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// checkCPUs fails when a CPU of --cpus is not one this process may run on, before anything
// is measured.
func checkCPUs(cpus []int) error {
	if err := datapath.CheckCPUs(cpus); err != nil {
		return fmt.Errorf("--cpus: %w", err)
	}
	return nil
}
