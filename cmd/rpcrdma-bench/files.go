package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
		err = usageError{err.Error()}
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

// checkOut makes sure the results can be written to path before anything is measured: its
// directory exists and takes a new file, and path is not a directory. "" (no file) and "-"
// (standard output) always can. The probe file is removed again.
func checkOut(path string) error {
	if path == "" || path == stdio {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--out %s: is a directory (name a file in it)", path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".probe-*")
	if err != nil {
		return fmt.Errorf("--out %s: cannot create the results file: %w", path, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// unwrapPath drops the *PathError's temporary probe name, which would only confuse: the
// user named path, not the probe.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
