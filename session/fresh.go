package session

import (
	"context"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// Block is a block of rounds a measuring process runs for another one (--round-block
// FIRST:ROUNDS:PROCESS): rounds First to First+Rounds-1 of the plan, its points recorded as
// Process's.
type Block struct {
	First, Rounds, Process int
}

// RunBlock measures one block of rounds in a new process and returns what it measured
// (its run, whatever its status) and why it failed; Config.Blocks.
type RunBlock func(ctx context.Context, b Block) (*results.Run, error)
