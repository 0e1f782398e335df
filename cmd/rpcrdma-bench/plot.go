package main

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/spf13/pflag"
)

// plotCommand is the plot subcommand.
func plotCommand() *command {
	return &command{
		name:    "plot",
		summary: "Draw charts (PNG, SVG) from results files: latency and throughput vs size, spectra, heatmaps, mixes vs threshold, timelines, fan-in ranks",
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
				if err := cli.Plot(e.stdin, e.stdout, *dir, *formats, args); err != nil {
					return fail(e, "plot", err)
				}
				return exitOK
			}
		},
	}
}
