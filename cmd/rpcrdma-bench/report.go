package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/report"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
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
			format := fs.String("format", "text", "output: text, csv, hlog (one file only), bench (benchstat input), switches (a sweep's class changes), thresholds (the best inline threshold per size or mix, beyond noise or not) or html (a page with charts, and its Markdown twin)")
			out := fs.String("out", "", "write to `FILE` instead of stdout (not for html)")
			var page report.Config
			dir := fs.String("dir", "report", "html: directory for report.html, report.md and the charts (default: the one directory given, else report)")
			fs.StringVar(&page.Title, "title", "", "html: the page's title (default \""+report.DefaultTitle+"\")")
			fs.BoolVar(&page.PNG, "png", false, "html: embed charts as PNG rather than SVG")
			fs.BoolVar(&page.NoCharts, "no-charts", false, "html: tables only")
			return func(e *env, args []string) int {
				files, dirs, err := expandDirs(defaultInput(e, args))
				if err != nil {
					return fail(e, "report", err)
				}
				if *format == "html" {
					if fs.Changed("out") {
						return fail(e, "report", session.Usagef("--format html writes a directory: use --dir"))
					}
					if !fs.Changed("dir") && len(dirs) == 1 {
						*dir = dirs[0]
					}
					return reportPage(e, *dir, page, files)
				}
				return reportFiles(e, *format, *out, files)
			}
		},
	}
}

// reportPage writes the HTML and Markdown report of files into dir.
func reportPage(e *env, dir string, cfg report.Config, files []string) int {
	if len(files) == 0 {
		return fail(e, "report", session.Usagef("no results file given"))
	}
	runs, err := readRuns(e, files)
	if err != nil {
		return fail(e, "report", session.UsageError{Msg: err.Error()})
	}
	for _, f := range files {
		cfg.Sources = append(cfg.Sources, results.SourceName(f))
	}
	html, md, err := report.Write(runs, dir, cfg)
	for _, p := range []string{html, md} {
		if p != "" {
			fmt.Fprintln(e.stdout, p)
		}
	}
	if err != nil {
		return fail(e, "report", err)
	}
	return exitOK
}

func reportFiles(e *env, format, out string, files []string) int {
	if len(files) == 0 {
		return fail(e, "report", session.Usagef("no results file given"))
	}
	switch format {
	case "text", "csv", "bench", "switches", "thresholds":
	case "hlog":
		if len(files) != 1 {
			return fail(e, "report", session.Usagef("--format hlog writes one run; got %d files", len(files)))
		}
	default:
		return fail(e, "report", session.Usagef("unknown --format %q (want text, csv, hlog, bench, switches, thresholds or html)", format))
	}
	runs, err := readRuns(e, files)
	if err != nil {
		// A file that is not a valid results file is bad input.
		return fail(e, "report", session.UsageError{Msg: err.Error()})
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = results.SourceName(f)
	}
	w := e.stdout
	var f *os.File
	if out != "" && out != stdio {
		if f, err = os.Create(out); err != nil {
			return fail(e, "report", session.Usagef("--out %s: %v", out, session.UnwrapPath(err)))
		}
	}
	var bw *bufio.Writer
	if f != nil {
		bw = bufio.NewWriter(f)
		w = bw
	}
	err = session.Render(w, format, runs, names)
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
