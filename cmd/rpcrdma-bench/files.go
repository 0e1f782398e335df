package main

import (
	"os"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// stdio is the name that stands for standard input or output (results.Stdio).
const stdio = results.Stdio

// readRuns reads the results files named by files (results.ReadInputs).
func readRuns(e *env, files []string) ([]*results.Run, error) {
	return results.ReadInputs(e.stdin, files)
}

// expandDirs is results.ExpandDirs; a directory without results files is bad usage.
func expandDirs(args []string) (files, dirs []string, err error) {
	if files, dirs, err = results.ExpandDirs(args); err != nil {
		err = session.UsageError{Msg: err.Error()}
	}
	return files, dirs, err
}

// defaultInput is the argument list of a reading command given none: standard input when it
// is not a terminal (rpcrdma-bench run --out - | rpcrdma-bench report), else none.
func defaultInput(e *env, args []string) []string {
	if len(args) > 0 || e.stdin == nil {
		return args
	}
	if f, ok := e.stdin.(*os.File); ok && session.IsTerminal(f) {
		return args
	}
	if r, ok := e.stdin.(interface{ Len() int }); ok && r.Len() == 0 {
		// An empty in-memory input (tests, Main) is no input.
		return args
	}
	return []string{stdio}
}
