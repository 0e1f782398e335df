package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// Format is an output format of report or compare: its name, what the help says of it and
// how it writes. The two lists below are the only places formats are named: validation,
// help, completion and the writers all read them.
type Format[W any] struct {
	Name, Help string
	// OneRun: the format writes a single run (report's hlog).
	OneRun bool
	// Write writes in the format; nil for html, which writes a directory (reportPage).
	Write W
}

// ReportFormats are report's formats, in the order the help lists them.
var ReportFormats = []Format[func(w io.Writer, runs []*results.Run, names []string) error]{
	{Name: "text", Help: "the table each command prints", Write: writeText},
	{Name: "csv", Help: "a row per class and per procedure", Write: func(w io.Writer, runs []*results.Run, names []string) error {
		return results.WriteCSVSources(w, names, runs...)
	}},
	{Name: "hlog", Help: "HdrHistogram interval log, one file only", OneRun: true, Write: func(w io.Writer, runs []*results.Run, _ []string) error {
		return results.WriteHlog(w, runs[0])
	}},
	{Name: "bench", Help: "benchstat input", Write: func(w io.Writer, runs []*results.Run, _ []string) error { return results.WriteBench(w, runs...) }},
	{Name: "bmf", Help: "Bencher Metric Format", Write: func(w io.Writer, runs []*results.Run, _ []string) error { return results.WriteBMF(w, runs) }},
	{Name: "switches", Help: "a sweep's class changes", Write: writeSwitches},
	{Name: "thresholds", Help: "the best inline threshold per size or mix, beyond noise or not", Write: func(w io.Writer, runs []*results.Run, _ []string) error {
		return results.WriteThresholdsOf(w, runs, 0)
	}},
	{Name: "html", Help: "a page with charts, and its Markdown twin, in --dir"},
}

// CompareFormats are compare's formats, in the order the help lists them; a --report file
// takes the format its name's suffix says.
var CompareFormats = []Format[func(io.Writer, *results.Comparison) error]{
	{Name: "text", Write: results.WriteCompareText},
	{Name: "markdown", Write: results.WriteCompareMarkdown},
	{Name: "json", Write: results.WriteCompareJSON},
	{Name: "junit", Write: results.WriteCompareJUnit},
	{Name: "bmf", Help: "Bencher Metric Format", Write: results.WriteCompareBMF},
}

// lookupFormat finds name in fs.
func lookupFormat[W any](fs []Format[W], name string) (Format[W], bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return Format[W]{}, false
}

// FormatNames are the names of fs.
func FormatNames[W any](fs []Format[W]) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return names
}

// FormatHelp is the help of a --format flag over fs: "text, csv (a row per ...) or html".
func FormatHelp[W any](fs []Format[W]) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name
		if f.Help != "" {
			parts[i] += " (" + f.Help + ")"
		}
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// unknownFormat is the usage error of a --format that fs does not have.
func unknownFormat[W any](fs []Format[W], name string) error {
	names := FormatNames(fs)
	return Usagef("unknown --format %q (want %s or %s)", name, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

func writeSwitches(w io.Writer, runs []*results.Run, names []string) error {
	for i, r := range runs {
		if len(runs) > 1 {
			fmt.Fprintf(w, "\n== %s ==", names[i])
		}
		WriteSwitches(w, r)
	}
	return nil
}
