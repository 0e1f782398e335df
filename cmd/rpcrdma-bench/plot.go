package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/plots"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// plotCommand is the plot subcommand.
func plotCommand() *command {
	return &command{
		name:    "plot",
		summary: "Draw charts (PNG, SVG) from results files: latency and throughput vs size, spectra, heatmaps, mixes vs threshold, timelines",
		usage:   "[--out DIR] [--format png,svg] [RESULTS.json|DIR|-...]",
		examples: `  rpcrdma-bench plot sweep.json                      # every chart that applies, into ./plots
  rpcrdma-bench plot --out charts --format svg old.json new.json
  rpcrdma-bench sweep --out sweep.json && rpcrdma-bench plot --out sweep-charts sweep.json
  rpcrdma-bench sweep --out - | rpcrdma-bench plot --out charts     # - or no file: standard input`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			dir := fs.String("out", "plots", "directory to write the charts into (created if needed)")
			// --dir is what 'report --format html' calls its directory; accept it here too.
			fs.StringVar(dir, "dir", "plots", "same as --out")
			_ = fs.MarkHidden("dir")
			formats := fs.String("format", "png,svg", "chart formats, comma-separated: png, svg")
			return func(e *env, args []string) int {
				return plot(e, *dir, *formats, args)
			}
		},
	}
}

func plot(e *env, dir, formats string, files []string) int {
	files, _, err := expandDirs(defaultInput(e, files))
	if err != nil {
		return fail(e, "plot", err)
	}
	if len(files) == 0 {
		return fail(e, "plot", session.Usagef("no results file given"))
	}
	var fs []string
	for _, f := range strings.Split(formats, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f != "png" && f != "svg" {
			return fail(e, "plot", session.Usagef("unknown --format %q (want png, svg or both)", f))
		}
		fs = append(fs, f)
	}
	runs, err := readRuns(e, files)
	if err != nil {
		return fail(e, "plot", session.UsageError{Msg: err.Error()})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// Said once here, not once per chart by Render.
		return fail(e, "plot", session.Usagef("--out %s: %v", dir, session.UnwrapPath(err)))
	}
	if err := session.CheckOut(filepath.Join(dir, "chart")); err != nil {
		return fail(e, "plot", session.Usagef("--out %s: cannot write charts into it: %v", dir, errors.Unwrap(err)))
	}
	paths, err := plots.Render(runs, dir, fs...)
	for _, p := range paths {
		fmt.Fprintln(e.stdout, p)
	}
	switch {
	case errors.Is(err, plots.ErrNoData):
		return fail(e, "plot", session.UsageError{Msg: err.Error()})
	case err != nil:
		// Render wrote what it could; say what it could not.
		return fail(e, "plot", err)
	}
	return exitOK
}
