package main

import (
	"bufio"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

func init() {
	register(&command{
		name:    "report",
		summary: "Re-render results files as a table, CSV, HdrHistogram log, Go benchmark lines or class switches",
		usage:   "[--format text|csv|hlog|bench|switches] [--out FILE] RESULTS.json...",
		examples: `  rpcrdma-bench report run.json                        # the table 'run' printed
  rpcrdma-bench report --format csv sweep.json > sweep.csv
  rpcrdma-bench report --format bench old*.json > old.txt   # then: benchstat old.txt new.txt
  rpcrdma-bench report --format hlog run.json > run.hlog    # HdrHistogram interval log
  rpcrdma-bench report --format switches sweep.json        # where each size changed class`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			format := fs.String("format", "text", "output: text, csv, hlog (one file only), bench (benchstat input) or switches (a sweep's class changes)")
			out := fs.String("out", "", "write to `FILE` instead of stdout")
			return func(e *env, args []string) int {
				return report(e, *format, *out, args)
			}
		},
	})
}

func report(e *env, format, out string, files []string) int {
	if len(files) == 0 {
		return fail(e, "report", usageErrorf("no results file given"))
	}
	switch format {
	case "text", "csv", "bench", "switches":
	case "hlog":
		if len(files) != 1 {
			return fail(e, "report", usageErrorf("--format hlog writes one run; got %d files", len(files)))
		}
	default:
		return fail(e, "report", usageErrorf("unknown --format %q (want text, csv, hlog, bench or switches)", format))
	}
	runs := make([]*results.Run, 0, len(files))
	for _, f := range files {
		r, err := results.ReadFile(f)
		if err != nil {
			// A file that is not a valid results file is bad input.
			return fail(e, "report", usageError{err.Error()})
		}
		runs = append(runs, r)
	}
	w := e.stdout
	var f *os.File
	if out != "" {
		var err error
		if f, err = os.Create(out); err != nil {
			return fail(e, "report", err)
		}
	}
	var bw *bufio.Writer
	if f != nil {
		bw = bufio.NewWriter(f)
		w = bw
	}
	err := render(w, format, runs)
	if bw != nil {
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fail(e, "report", err)
	}
	return exitOK
}

func render(w io.Writer, format string, runs []*results.Run) error {
	switch format {
	case "csv":
		return results.WriteCSV(w, runs...)
	case "hlog":
		return results.WriteHlog(w, runs[0])
	case "bench":
		return results.WriteBench(w, runs...)
	case "switches":
		for _, r := range runs {
			printSwitches(&env{stdout: w}, r)
		}
		return nil
	}
	return results.WriteText(w, runs...)
}
