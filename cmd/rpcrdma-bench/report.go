package main

import (
	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/report"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// reportCommand is the report subcommand.
func reportCommand() *command {
	return &command{
		name:    "report",
		summary: "Re-render results files: a table, CSV, HdrHistogram log, Go benchmark lines, class switches, best thresholds or an HTML/Markdown page",
		usage:   "[--format text|csv|hlog|bench|switches|thresholds|html] [--out FILE | --dir DIR] [RESULTS.json|DIR|-...]",
		examples: `  rpcrdma-bench report run.json                        # the table 'run' printed
  rpcrdma-bench report --format csv sweep.json > sweep.csv
  rpcrdma-bench report --format bench old*.json > old.txt   # then: benchstat old.txt new.txt
  rpcrdma-bench report --format hlog run.json > run.hlog    # HdrHistogram interval log
  rpcrdma-bench report --format switches sweep.json        # where each size changed class
  rpcrdma-bench report --format thresholds sweep-*.json    # which threshold is best per size or mix
  rpcrdma-bench report --format html --dir page --title "rxe vs soft" a.json b.json  # page/report.html and .md
  rpcrdma-bench report --format html build/demo/sweep      # every *.json there; the page goes there too

  rpcrdma-bench run --out - | rpcrdma-bench report --format csv   # - or no file: standard input

A directory argument stands for the *.json results files in it, in name order; "-" (or no
argument, when standard input is not a terminal) for a results file on standard input. With
--format html and no --dir, a single directory argument also receives the page.`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			var c session.ReportConfig
			fs.StringVar(&c.Format, "format", "text", "output: text, csv, hlog (one file only), bench (benchstat input), bmf (Bencher Metric Format: per point the median over processes with the least and greatest), switches (a sweep's class changes), thresholds (the best inline threshold per size or mix, beyond noise or not) or html (a page with charts, and its Markdown twin)")
			fs.StringVar(&c.Out, "out", "", "write to `FILE` instead of stdout (not for html)")
			fs.StringVar(&c.Dir, "dir", "report", "html: directory for report.html, report.md and the charts (default: the one directory given, else report)")
			fs.StringVar(&c.Page.Title, "title", "", "html: the page's title (default \""+report.DefaultTitle+"\")")
			fs.BoolVar(&c.Page.PNG, "png", false, "html: embed charts as PNG rather than SVG")
			fs.BoolVar(&c.Page.NoCharts, "no-charts", false, "html: tables only")
			return func(e *env, args []string) int {
				c.OutGiven, c.DirGiven = fs.Changed("out"), fs.Changed("dir")
				if err := session.Report(e.stdin, e.stdout, c, args); err != nil {
					return fail(e, "report", err)
				}
				return exitOK
			}
		},
	}
}
