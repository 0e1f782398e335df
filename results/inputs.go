package results

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Stdio is the name that stands for standard input among results files to read, and for
// standard output as a file to write, as vegeta and most Unix tools read it.
const Stdio = "-"

// StdinName is how outputs name results read from standard input.
const StdinName = "(stdin)"

// ReadInputs reads the results files named by files, Stdio being stdin (read once: naming it
// twice is bad input, as the second read would see nothing); the first error stops it.
func ReadInputs(stdin io.Reader, files []string) ([]*Run, error) {
	runs := make([]*Run, 0, len(files))
	seenStdin := false
	for _, f := range files {
		if f != Stdio {
			r, err := ReadFile(f)
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
		r, err := Read(stdin)
		if err != nil {
			var fe *FileError
			if errors.As(err, &fe) {
				fe.Path = StdinName
			}
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// SourceName is how outputs name the results file f.
func SourceName(f string) string {
	if f == Stdio {
		return StdinName
	}
	return f
}

// ExpandDirs replaces each directory among args by the *.json files in it, sorted by name
// (results files, by convention; a directory of a report page holds no other JSON), and
// returns the directories found. Other arguments pass through unchanged: reading them says
// what is wrong with them.
func ExpandDirs(args []string) (files, dirs []string, err error) {
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.json"))
		if err != nil {
			return nil, nil, err
		}
		if len(m) == 0 {
			return nil, nil, fmt.Errorf("%s: no *.json results files in this directory", a)
		}
		sort.Strings(m)
		files = append(files, m...)
		dirs = append(dirs, a)
	}
	return files, dirs, nil
}
