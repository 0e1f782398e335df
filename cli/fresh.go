package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// ParseBlock parses --round-block FIRST:ROUNDS:PROCESS.
func ParseBlock(x string) (session.Block, error) {
	parts := strings.Split(x, ":")
	var v [3]int
	if len(parts) != 3 {
		return session.Block{}, fmt.Errorf("want FIRST:ROUNDS:PROCESS, got %q", x)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return session.Block{}, fmt.Errorf("want FIRST:ROUNDS:PROCESS, each at least 1, got %q", x)
		}
		v[i] = n
	}
	return session.Block{First: v[0], Rounds: v[1], Process: v[2]}, nil
}

// blockArg is b as --round-block takes it.
func blockArg(b session.Block) string { return fmt.Sprintf("%d:%d:%d", b.First, b.Rounds, b.Process) }

// FreshProcesses is the RunBlock that runs each block in a new process of this tool: the
// command args (this invocation's command and flags) with --round-block, a results file
// in dir and -q appended; command makes the process (the tool's own binary). The
// process's output goes to log only when it fails: each block would repeat the same
// lines. An interruption reaches it as SIGINT, so that it keeps what it measured.
func FreshProcesses(command func(args []string) *exec.Cmd, args []string, dir string, log io.Writer) session.RunBlock {
	return func(ctx context.Context, b session.Block) (*results.Run, error) {
		out := filepath.Join(dir, fmt.Sprintf("process-%d.json", b.Process))
		cmd := command(append(append([]string{}, args...), "--round-block", blockArg(b), "--out", out, "-q"))
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &buf
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("process %d (rounds %d-%d): start: %w", b.Process, b.First, b.First+b.Rounds-1, err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			cmd.Process.Signal(os.Interrupt)
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				err = <-done
			}
		}
		r, rerr := results.ReadFile(out)
		os.Remove(out)
		if err != nil || rerr != nil {
			if buf.Len() > 0 {
				fmt.Fprintf(log, "process %d (rounds %d-%d):\n%s", b.Process, b.First, b.First+b.Rounds-1, buf.String())
			}
		}
		if rerr != nil {
			if err == nil {
				err = rerr
			}
			return nil, fmt.Errorf("process %d (rounds %d-%d): %w", b.Process, b.First, b.First+b.Rounds-1, err)
		}
		if err != nil && ctx.Err() == nil {
			why := err.Error()
			if r.Status.State == results.StateFailed {
				why = r.Status.Message // what failed, not only that it did
			}
			return r, fmt.Errorf("process %d (rounds %d-%d): %s", b.Process, b.First, b.First+b.Rounds-1, why)
		}
		return r, nil
	}
}
