package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// stdio is the name that stands for standard input (report, plot, compare) or standard
// output (--out of run, client and sweep), as vegeta and most Unix tools read it.
const stdio = "-"

// stdinName is how outputs name results read from standard input.
const stdinName = "(stdin)"

// readRuns reads the results files named by files, "-" being standard input (read once:
// naming it twice is bad input, as the second read would see nothing).
func readRuns(e *env, files []string) ([]*results.Run, error) {
	runs := make([]*results.Run, 0, len(files))
	seenStdin := false
	for _, f := range files {
		if f != stdio {
			r, err := results.ReadFile(f)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
			continue
		}
		if seenStdin {
			return nil, errors.New(`"-" (standard input) given twice`)
		}
		seenStdin = true
		r, err := results.Read(e.stdin)
		if err != nil {
			var fe *results.FileError
			if errors.As(err, &fe) {
				fe.Path = stdinName
			}
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// sourceName is how outputs name the results file f.
func sourceName(f string) string {
	if f == stdio {
		return stdinName
	}
	return f
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
