package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/report"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
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
						return fail(e, "report", usageErrorf("--format html writes a directory: use --dir"))
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

// expandDirs replaces each directory among args by the *.json files in it, sorted by name
// (results files, by convention; a directory of a report page holds no other JSON), and
// returns the directories found. Other arguments pass through unchanged: reading them says
// what is wrong with them.
func expandDirs(args []string) (files, dirs []string, err error) {
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
			return nil, nil, usageErrorf("%s: no *.json results files in this directory", a)
		}
		sort.Strings(m)
		files = append(files, m...)
		dirs = append(dirs, a)
	}
	return files, dirs, nil
}

// reportPage writes the HTML and Markdown report of files into dir.
func reportPage(e *env, dir string, cfg report.Config, files []string) int {
	if len(files) == 0 {
		return fail(e, "report", usageErrorf("no results file given"))
	}
	runs, err := readRuns(e, files)
	if err != nil {
		return fail(e, "report", usageError{err.Error()})
	}
	for _, f := range files {
		cfg.Sources = append(cfg.Sources, sourceName(f))
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
		return fail(e, "report", usageErrorf("no results file given"))
	}
	switch format {
	case "text", "csv", "bench", "switches", "thresholds":
	case "hlog":
		if len(files) != 1 {
			return fail(e, "report", usageErrorf("--format hlog writes one run; got %d files", len(files)))
		}
	default:
		return fail(e, "report", usageErrorf("unknown --format %q (want text, csv, hlog, bench, switches, thresholds or html)", format))
	}
	runs, err := readRuns(e, files)
	if err != nil {
		// A file that is not a valid results file is bad input.
		return fail(e, "report", usageError{err.Error()})
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = sourceName(f)
	}
	w := e.stdout
	var f *os.File
	if out != "" && out != stdio {
		if f, err = os.Create(out); err != nil {
			return fail(e, "report", usageErrorf("--out %s: %v", out, unwrapPath(err)))
		}
	}
	var bw *bufio.Writer
	if f != nil {
		bw = bufio.NewWriter(f)
		w = bw
	}
	err = render(w, format, runs, names)
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

// render writes runs, read from the files names, in format.
func render(w io.Writer, format string, runs []*results.Run, names []string) error {
	switch format {
	case "csv":
		return results.WriteCSVSources(w, names, runs...)
	case "hlog":
		return results.WriteHlog(w, runs[0])
	case "bench":
		return results.WriteBench(w, runs...)
	case "thresholds":
		return results.WriteThresholdsOf(w, runs, 0)
	case "switches":
		for i, r := range runs {
			if len(runs) > 1 {
				fmt.Fprintf(w, "\n== %s ==", names[i])
			}
			printSwitches(&env{stdout: w}, r)
		}
		return nil
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if len(runs) > 1 {
			// Several blocks look alike: say which file each one is.
			fmt.Fprintf(w, "== %s ==\n", names[i])
		}
		if err := results.WriteText(w, r); err != nil {
			return err
		}
	}
	if q := results.Quality(runs); q != "" {
		fmt.Fprintln(w, q)
	}
	return nil
}
