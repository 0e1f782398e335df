package report

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"os"
	"path/filepath"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// Config adjusts a report. The zero value gives report.html and report.md titled
// "rpcrdma-bench report", with every chart, and no generation time.
type Config struct {
	// Title heads the page and names it in the browser; DefaultTitle when empty.
	Title string
	// Name is the base name of the two files written into the directory: Name.html and
	// Name.md; "report" when empty. It must be a plain file name, without a path separator.
	Name string
	// Sources say where each run came from, usually its results file's path, shown with the
	// run. Empty, or exactly one per run.
	Sources []string
	// Generated, when not zero, is printed on the page as the time the report was made. Zero
	// keeps the output a function of the runs alone, as golden tests and reproducible
	// artefacts need.
	Generated time.Time
	// PNG embeds the charts in the HTML page as base64 PNG data URIs instead of inline SVG:
	// larger and blurred when zoomed, but shown by viewers that drop inline SVG.
	PNG bool
	// NoCharts leaves the charts out of both files (tables only), and writes no PNG files.
	NoCharts bool
}

// DefaultTitle is the page title when Config.Title is empty.
const DefaultTitle = "rpcrdma-bench report"

// ErrNoRuns is returned by Write when it is given no runs.
var ErrNoRuns = errors.New("report: no runs given")

//go:embed templates
var templates embed.FS

var (
	htmlTmpl = htmltemplate.Must(htmltemplate.New("report.html.tmpl").ParseFS(templates, "templates/report.html.tmpl"))
	mdTmpl   = texttemplate.Must(texttemplate.New("report.md.tmpl").Funcs(texttemplate.FuncMap{
		"md": mdEscape, "table": mdTable, "fence": mdFence,
	}).ParseFS(templates, "templates/report.md.tmpl"))
)

// Write writes the report of runs into dir (created if needed): Name.html, Name.md, and the
// charts as PNG files named after them (latency-p50.png, ...) for the Markdown to reference,
// replacing files of the same names. It returns the two paths.
//
// A run without points is reported (its status and message say why) but not charted; a failed
// or interrupted run is reported with its status. A chart that cannot be drawn (a corrupt
// histogram) is left out and named in the page's notes; Write then still writes both files and
// returns their paths together with the error. Other failures (no runs, a nil run, Sources of
// the wrong length, a file that cannot be written) return empty paths and the error.
func Write(runs []*results.Run, dir string, cfg Config) (htmlPath, mdPath string, err error) {
	name := cfg.Name
	if name == "" {
		name = "report"
	}
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", "", fmt.Errorf("report: name %q is not a plain file name", name)
	}
	pg, charts, chartErr := build(runs, cfg)
	if pg == nil {
		return "", "", chartErr
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("report: %w", err)
	}
	for _, c := range charts {
		if err := writeAtomic(filepath.Join(dir, c.PNGFile), c.png); err != nil {
			return "", "", err
		}
	}
	var h, m bytes.Buffer
	if err := htmlTmpl.Execute(&h, pg); err != nil {
		return "", "", fmt.Errorf("report: render html: %w", err)
	}
	if err := mdTmpl.Execute(&m, pg); err != nil {
		return "", "", fmt.Errorf("report: render markdown: %w", err)
	}
	htmlPath, mdPath = filepath.Join(dir, name+".html"), filepath.Join(dir, name+".md")
	if err := writeAtomic(htmlPath, h.Bytes()); err != nil {
		return "", "", err
	}
	if err := writeAtomic(mdPath, m.Bytes()); err != nil {
		return "", "", err
	}
	return htmlPath, mdPath, chartErr
}

// writeAtomic writes b to path through a temporary file and a rename, so that a reader never
// sees half a report.
func writeAtomic(path string, b []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
			err = fmt.Errorf("report: write %s: %w", path, err)
		}
	}()
	if _, err = f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
