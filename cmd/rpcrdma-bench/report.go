package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/report"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

func init() {
	register(&command{
		name:    "report",
		summary: "Re-render results files: a table, CSV, HdrHistogram log, Go benchmark lines, class switches or an HTML/Markdown page",
		usage:   "[--format text|csv|hlog|bench|switches|html] [--out FILE | --dir DIR] RESULTS.json...",
		examples: `  rpcrdma-bench report run.json                        # the table 'run' printed
  rpcrdma-bench report --format csv sweep.json > sweep.csv
  rpcrdma-bench report --format bench old*.json > old.txt   # then: benchstat old.txt new.txt
  rpcrdma-bench report --format hlog run.json > run.hlog    # HdrHistogram interval log
  rpcrdma-bench report --format switches sweep.json        # where each size changed class
  rpcrdma-bench report --format html --dir page --title "rxe vs soft" a.json b.json  # page/report.html and .md`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			format := fs.String("format", "text", "output: text, csv, hlog (one file only), bench (benchstat input), switches (a sweep's class changes) or html (a page with charts, and its Markdown twin)")
			out := fs.String("out", "", "write to `FILE` instead of stdout (not for html)")
			var page report.Config
			dir := fs.String("dir", "report", "html: directory for report.html, report.md and the charts")
			fs.StringVar(&page.Title, "title", "", "html: the page's title (default \""+report.DefaultTitle+"\")")
			fs.BoolVar(&page.PNG, "png", false, "html: embed charts as PNG rather than SVG")
			fs.BoolVar(&page.NoCharts, "no-charts", false, "html: tables only")
			return func(e *env, args []string) int {
				if *format == "html" {
					if fs.Changed("out") {
						return fail(e, "report", usageErrorf("--format html writes a directory: use --dir"))
					}
					return reportPage(e, *dir, page, args)
				}
				return reportFiles(e, *format, *out, args)
			}
		},
	})
}

// reportPage writes the HTML and Markdown report of files into dir.
func reportPage(e *env, dir string, cfg report.Config, files []string) int {
	if len(files) == 0 {
		return fail(e, "report", usageErrorf("no results file given"))
	}
	runs, err := results.ReadFiles(files...)
	if err != nil {
		return fail(e, "report", usageError{err.Error()})
	}
	cfg.Sources = files
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
		return fail(e, "report", usageErrorf("no results file given"))
	}
	switch format {
	case "text", "csv", "bench", "switches":
	case "hlog":
		if len(files) != 1 {
			return fail(e, "report", usageErrorf("--format hlog writes one run; got %d files", len(files)))
		}
	default:
		return fail(e, "report", usageErrorf("unknown --format %q (want text, csv, hlog, bench, switches or html)", format))
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
