package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/plots"
	"github.com/rpcrdma-bench/rpcrdma-bench/report"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// The commands that read results files (report, plot, compare): their inputs are results
// files, directories standing for their *.json and "-" for standard input; a file that is
// not a results file is bad input (UsageError).

// Inputs expands a reading command's arguments into files (and the directories named);
// without arguments it reads standard input, unless that is a terminal or empty in memory.
func Inputs(stdin io.Reader, args []string) (files, dirs []string, err error) {
	if len(args) == 0 && stdin != nil && !noInput(stdin) {
		args = []string{results.Stdio} // rpcrdma-bench run --out - | rpcrdma-bench report
	}
	if files, dirs, err = results.ExpandDirs(args); err != nil {
		err = UsageError{err.Error()}
	}
	return files, dirs, err
}

// noInput says stdin is a terminal, or an empty in-memory input (tests).
func noInput(stdin io.Reader) bool {
	if f, ok := stdin.(*os.File); ok && session.IsTerminal(f) {
		return true
	}
	r, ok := stdin.(interface{ Len() int })
	return ok && r.Len() == 0
}

// readInputs is results.ReadInputs, its errors bad input.
func readInputs(stdin io.Reader, files []string) ([]*results.Run, error) {
	runs, err := results.ReadInputs(stdin, files)
	if err != nil {
		return nil, UsageError{err.Error()}
	}
	return runs, nil
}

// ReportConfig is the report command's settings.
type ReportConfig struct {
	// Format is text, csv, hlog, bench, switches, thresholds or html.
	Format string
	// Out is the file to write (""/"-": standard output); not for html.
	Out      string
	OutGiven bool
	// Dir is html's directory; without DirGiven, a single directory argument is used.
	Dir      string
	DirGiven bool
	// Page is html's page.
	Page report.Config
}

// Report renders the results files args name as c says, to stdout or c's files (html: the
// paths written, to stdout).
func Report(stdin io.Reader, stdout io.Writer, c ReportConfig, args []string) error {
	files, dirs, err := Inputs(stdin, args)
	if err != nil {
		return err
	}
	if c.Format == "html" {
		if c.OutGiven {
			return Usagef("--format html writes a directory: use --dir")
		}
		if !c.DirGiven && len(dirs) == 1 {
			c.Dir = dirs[0]
		}
		return reportPage(stdin, stdout, c.Dir, c.Page, files)
	}
	if len(files) == 0 {
		return Usagef("no results file given")
	}
	if f, ok := lookupFormat(ReportFormats, c.Format); !ok {
		return unknownFormat(ReportFormats, c.Format)
	} else if f.OneRun && len(files) != 1 {
		return Usagef("--format %s writes one run; got %d files", c.Format, len(files))
	}
	runs, err := readInputs(stdin, files)
	if err != nil {
		return err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = results.SourceName(f)
	}
	if c.Out == "" || c.Out == results.Stdio {
		return Render(stdout, c.Format, runs, names)
	}
	f, err := os.Create(c.Out)
	if err != nil {
		return Usagef("--out %s: %v", c.Out, UnwrapPath(err))
	}
	bw := bufio.NewWriter(f)
	err = Render(bw, c.Format, runs, names)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// reportPage writes the HTML and Markdown report of files into dir.
func reportPage(stdin io.Reader, stdout io.Writer, dir string, cfg report.Config, files []string) error {
	if len(files) == 0 {
		return Usagef("no results file given")
	}
	runs, err := readInputs(stdin, files)
	if err != nil {
		return err
	}
	for _, f := range files {
		cfg.Sources = append(cfg.Sources, results.SourceName(f))
	}
	html, md, err := report.Write(runs, dir, cfg)
	for _, p := range []string{html, md} {
		if p != "" {
			fmt.Fprintln(stdout, p)
		}
	}
	return err
}

// Plot draws the charts of the results files args name into dir, in formats (png, svg,
// comma-separated), and lists the files written to stdout.
func Plot(stdin io.Reader, stdout io.Writer, dir, formats string, args []string) error {
	files, _, err := Inputs(stdin, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return Usagef("no results file given")
	}
	var fs []string
	for _, f := range strings.Split(formats, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f != "png" && f != "svg" {
			return Usagef("unknown --format %q (want png, svg or both)", f)
		}
		fs = append(fs, f)
	}
	runs, err := readInputs(stdin, files)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// Said once here, not once per chart by Render.
		return Usagef("--out %s: %v", dir, UnwrapPath(err))
	}
	if err := CheckOut(filepath.Join(dir, "chart")); err != nil {
		return Usagef("--out %s: cannot write charts into it: %v", dir, errors.Unwrap(err))
	}
	paths, err := plots.Render(runs, dir, fs...)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	if errors.Is(err, plots.ErrNoData) {
		return UsageError{err.Error()}
	}
	return err // Render wrote what it could; err says what it could not
}

// CompareFiles is the compare command's settings: the base and current results files
// (arguments as Inputs takes them), how to judge and the output format.
type CompareFiles struct {
	Base, Current       []string
	Alpha               float64
	Thresholds, Metrics string
	// Format is text, markdown, json, junit or bmf.
	Format string
	// Warnings receives what the reader should know about the inputs beside the verdict (the
	// sides measured for different times); nil: nowhere.
	Warnings io.Writer
	// Reports are files to write the comparison to besides stdout, each in the format its
	// name says (see ReportFormat).
	Reports []string
	// UnderLoad is results.CompareConfig.UnderLoad.
	UnderLoad bool
	// HostTolerance is results.CompareConfig.HostTolerance as the flag gives it: 0 withholds
	// at any change of the host's speed.
	HostTolerance float64
}

// ReportFormat is the format of a --report file by its name: FILE.bmf.json Bencher Metric
// Format, FILE.json JSON, FILE.xml JUnit, FILE.md Markdown, FILE.txt text.
func ReportFormat(name string) (string, error) {
	for _, s := range []struct{ suffix, format string }{{".bmf.json", "bmf"}, {".json", "json"}, {".xml", "junit"}, {".md", "markdown"}, {".txt", "text"}} {
		if strings.HasSuffix(name, s.suffix) {
			return s.format, nil
		}
	}
	return "", Usagef("--report %s: name a .json, .bmf.json, .xml (JUnit), .md or .txt file", name)
}

// CheckReports checks that every --report file names a format and can be written, before
// anything is measured.
func CheckReports(names []string) error {
	for _, n := range names {
		if _, err := ReportFormat(n); err != nil {
			return err
		}
		if err := CheckOut(n); err != nil {
			return UsageError{strings.Replace(err.Error(), "--out", "--report", 1)}
		}
	}
	return nil
}

// WriteReports writes c to every file of names in its format: exactly the judgement the
// command exits on.
func WriteReports(names []string, c *results.Comparison) error {
	for _, n := range names {
		format, err := ReportFormat(n)
		if err != nil {
			return err
		}
		f, err := os.Create(n)
		if err != nil {
			return fmt.Errorf("--report %s: %w", n, UnwrapPath(err))
		}
		cf, _ := lookupFormat(CompareFormats, format)
		werr := cf.Write(f, c)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("--report %s: %w", n, werr)
		}
	}
	return nil
}

// Compare judges c's current results against its base ones and writes the comparison to
// stdout in c's format.
func Compare(stdin io.Reader, stdout io.Writer, c CompareFiles) (*results.Comparison, error) {
	base, _, err := results.ExpandDirs(c.Base)
	if err != nil {
		return nil, UsageError{err.Error()}
	}
	cur, _, err := results.ExpandDirs(c.Current)
	if err != nil {
		return nil, UsageError{err.Error()}
	}
	if len(base) == 0 || len(cur) == 0 {
		return nil, Usagef("need at least one base and one current results file")
	}
	cf, ok := lookupFormat(CompareFormats, c.Format)
	if !ok {
		return nil, unknownFormat(CompareFormats, c.Format)
	}
	write := cf.Write
	if err := CheckReports(c.Reports); err != nil {
		return nil, err
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		return nil, Usagef("--alpha %g is not in (0, 1)", c.Alpha)
	}
	cfg, err := CompareConfig(c.Alpha, c.Thresholds, c.Metrics)
	if err != nil {
		return nil, err
	}
	cfg.UnderLoad, cfg.HostTolerance = c.UnderLoad, hostTolerance(c.HostTolerance)
	if slices.Contains(base, results.Stdio) && slices.Contains(cur, results.Stdio) {
		return nil, Usagef(`"-" (standard input) can be one side only`)
	}
	b, err := readInputs(stdin, base)
	if err != nil {
		return nil, err
	}
	cr, err := readInputs(stdin, cur)
	if err != nil {
		return nil, err
	}
	cmp, err := results.Compare(b, cr, cfg)
	if err != nil {
		if errors.Is(err, results.ErrNothingToCompare) {
			if why := incompleteNote(b, cr); why != "" {
				return nil, UsageError{err.Error() + "; " + why}
			}
		}
		return nil, UsageError{err.Error()}
	}
	if w := durationWarning(b, cr); w != "" && c.Warnings != nil {
		fmt.Fprintln(c.Warnings, w)
	}
	if err := write(stdout, cmp); err != nil {
		return cmp, err
	}
	return cmp, WriteReports(c.Reports, cmp)
}

// incompleteNote says why a side may have nothing to compare: compare judges complete points
// only, and a fan-in point with a failed rank is incomplete. "" when every point is complete.
func incompleteNote(base, cur []*results.Run) string {
	var parts []string
	for _, side := range []struct {
		name string
		runs []*results.Run
	}{{"base", base}, {"current", cur}} {
		total, cut := 0, 0
		var causes []string
		for _, r := range side.runs {
			for i := range r.Points {
				p := &r.Points[i]
				total++
				if p.Complete {
					continue
				}
				cut++
				if p.FanIn != nil {
					for _, f := range p.FanIn.Failed {
						c := fmt.Sprintf("rank %d (host %s) failed: %s", f.Rank, f.Host, f.Cause)
						if !slices.Contains(causes, c) {
							causes = append(causes, c)
						}
					}
				}
			}
		}
		if cut == 0 {
			continue
		}
		s := fmt.Sprintf("%s has %d incomplete point(s) of %d, which compare leaves out", side.name, cut, total)
		if len(causes) > 0 {
			s += " (" + strings.Join(causes, "; ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// durationWarning is a warning when base and current runs were asked for different measured
// times per point (--duration): latency tails and rates depend on it, so their change is
// partly the setting's. "" when they agree or a file does not say.
func durationWarning(base, cur []*results.Run) string {
	side := func(runs []*results.Run) []string {
		var ds []string
		for _, r := range runs {
			if d := r.PointDuration(); d != "" && !slices.Contains(ds, d) {
				ds = append(ds, d)
			}
		}
		slices.Sort(ds)
		return ds
	}
	b, c := side(base), side(cur)
	if len(b) == 0 || len(c) == 0 || slices.Equal(b, c) {
		return ""
	}
	return fmt.Sprintf("warning: base and current measured for different times per point (--duration %s vs %s): the tails and rates compared depend on it",
		strings.Join(b, ","), strings.Join(c, ","))
}

// hostTolerance is a --host-tolerance as results.CompareConfig takes it, where 0 is the
// default: the flag's 0 asks for the strictest check.
func hostTolerance(pct float64) float64 {
	if pct == 0 {
		return math.SmallestNonzeroFloat64
	}
	return pct
}
