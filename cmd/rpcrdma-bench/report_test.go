package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

func sweepFile(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sweep.json")
	if code, _, stderr := runMain(t, "fakesweep", "--thresholds", "1k", "--sizes", "64,4k", "--depth", "1",
		"--count", "100", "--warmup", "0", "--out", out, "-q"); code != exitOK {
		t.Fatalf("fakesweep: %d %s", code, stderr)
	}
	return out
}

func TestReportFormats(t *testing.T) {
	f := sweepFile(t)
	for format, want := range map[string]string{
		"text":     "ECHO",
		"csv":      "procedure,class,call_bytes",
		"bench":    "BenchmarkRPC/",
		"hlog":     "#[StartTime:",
		"switches": "short   -> long    between 64 and 4k",
	} {
		code, out, errOut := runMain(t, "report", "--format", format, f)
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("--format %s: exit %d, stderr %q, output lacks %q:\n%s", format, code, errOut, want, out)
		}
	}
	dst := filepath.Join(t.TempDir(), "out.csv")
	if code, out, _ := runMain(t, "report", "--format", "csv", "--out", dst, f, f); code != exitOK || out != "" {
		t.Fatalf("--out: exit %d, stdout %q", code, out)
	}
	b, err := os.ReadFile(dst)
	if err != nil || strings.Count(string(b), "\n") != 1+2*2*2 { // a class row and a total row per point
		t.Fatalf("csv of two runs of two points: %q, %v", b, err)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema_version": 1, "bogus": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f := sweepFile(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "no results file"},
		{[]string{"report", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"report", bad}, "bogus"},
		{[]string{"report", "--format", "xml", f}, `unknown --format "xml"`},
		{[]string{"report", "--format", "html", "--out", "x.html", f}, "--dir"},
		{[]string{"report", "--format", "html"}, "no results file"},
		{[]string{"report", "--format", "hlog", f, f}, "one run"},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestReportPage(t *testing.T) {
	f := sweepFile(t)
	dir := filepath.Join(t.TempDir(), "page")
	code, out, errOut := runMain(t, "report", "--format", "html", "--dir", dir, "--title", "soft sweep", f)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	paths := strings.Fields(out)
	if len(paths) != 2 || !strings.HasSuffix(paths[0], "report.html") || !strings.HasSuffix(paths[1], "report.md") {
		t.Fatalf("paths %q", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil || !strings.Contains(string(b), "soft sweep") || !strings.Contains(string(b), "<svg") {
		t.Fatalf("page: %v", err)
	}
}

// report DIR reads every *.json in DIR in name order; --format html then writes the page
// into DIR unless --dir says otherwise. plot and compare take directories the same way.
func TestReportDir(t *testing.T) {
	dir := t.TempDir()
	// b.json is written first, with the larger threshold: name order must put a.json first.
	for _, f := range []struct{ name, th string }{{"b.json", "16k"}, {"a.json", "1k"}} {
		if code, _, stderr := runMain(t, "fakesweep", "--thresholds", f.th, "--sizes", "64,4k", "--depth", "1",
			"--count", "50", "--warmup", "0", "--out", filepath.Join(dir, f.name), "-q"); code != exitOK {
			t.Fatalf("fakesweep: %d %s", code, stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not results"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, "report", "--format", "csv", dir)
	if code != exitOK {
		t.Fatalf("csv: exit %d: %s", code, errOut)
	}
	// Each point has its one class's row and its total's row; the source column names the file.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1+2*2*2 || !strings.Contains(lines[1], ",1024,") || !strings.Contains(lines[8], ",16384,") ||
		!strings.HasPrefix(lines[1], filepath.Join(dir, "a.json")+",") || !strings.HasPrefix(lines[8], filepath.Join(dir, "b.json")+",") ||
		!strings.Contains(lines[1], ",fakesweep,soft,fake0,") {
		t.Fatalf("csv of a.json then b.json:\n%s", out)
	}

	code, out, errOut = runMain(t, "report", "--format", "html", "--title", "dir page", dir)
	if code != exitOK || strings.TrimSpace(out) != filepath.Join(dir, "report.html")+"\n"+filepath.Join(dir, "report.md") {
		t.Fatalf("html: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(b), "dir page") || !strings.Contains(string(b), "a.json") {
		t.Fatalf("page in DIR: %v", err)
	}
	// The page's own files are not results: reading the directory again still works.
	other := filepath.Join(t.TempDir(), "elsewhere")
	if code, _, errOut := runMain(t, "report", "--format", "html", "--dir", other, dir); code != exitOK {
		t.Fatalf("html --dir: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(other, "report.html")); err != nil {
		t.Fatal(err)
	}

	// One run of each point a side: compare reads the directories, and cannot tell.
	if code, _, errOut := runMain(t, "compare", dir, "--", dir); code != exitInconclusive {
		t.Fatalf("compare DIR -- DIR: exit %d: %s", code, errOut)
	}
	if code, out, errOut := runMain(t, "plot", "--out", filepath.Join(t.TempDir(), "charts"), "--format", "svg", dir); code != exitOK || !strings.Contains(out, ".svg") {
		t.Fatalf("plot DIR: exit %d, %q, %s", code, out, errOut)
	}

	empty := t.TempDir()
	for _, args := range [][]string{{"report", empty}, {"report", "--format", "html", empty}, {"plot", empty}, {"compare", empty, dir}} {
		code, _, errOut := runMain(t, args...)
		if code != exitUsage || !strings.Contains(errOut, empty+": no *.json results files") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// sweep --mix runs thresholds × mixes; report --format thresholds and the HTML page name the
// best threshold per mix.
func TestSweepMixesAndBestThreshold(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "mix.json")
	code, stdout, stderr := runMain(t, "fakesweep", "--mix", "nfs-like", "--mix", "echo/128:3,sink/32k", "--thresholds", "1k,4k,16k,64k",
		"--count", "2000", "--warmup", "0", "--out", out, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 4*2 || r.Points[0].Params.Procedure != "MIX:nfs-like" || r.Points[1].Params.Procedure != "MIX:echo_128:3+sink_32k" {
		t.Fatalf("%d points, first %+v", len(r.Points), r.Points[0].Params)
	}
	if !strings.Contains(stdout, "best inline threshold") || strings.Contains(stdout, "class switches") {
		t.Fatalf("a mix sweep ends with the best thresholds:\n%s", stdout)
	}
	code, txt, errOut := runMain(t, "report", "--format", "thresholds", out)
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	for _, mix := range []string{"MIX:nfs-like depth 16", "MIX:echo_128:3+sink_32k depth 16"} {
		for _, m := range []string{"p50", "p99", "rps"} {
			re := regexp.MustCompile(regexp.QuoteMeta(mix) + ` +` + m + ` +(1k|4k|16k|64k) `)
			if !re.MatchString(txt) {
				t.Errorf("no best threshold for %s %s:\n%s", mix, m, txt)
			}
		}
	}
	code, _, errOut = runMain(t, "report", "--format", "html", "--no-charts", "--dir", dir, out)
	if code != exitOK {
		t.Fatalf("html: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(b), `id="thresholds"`) || !strings.Contains(string(b), "MIX:nfs-like depth 16") {
		t.Fatalf("the page lacks the best thresholds: %v", err)
	}
	// A mix decides each entry's procedure and size.
	for _, f := range [][]string{{"--proc", "sink"}, {"--sizes", "4k"}} {
		args := append([]string{"fakesweep", "--mix", "nfs-like", "--count", "10", "--out="}, f...)
		if code, _, errOut := runMain(t, args...); code != exitUsage || !strings.Contains(errOut, f[0]+" has no effect with --mix") {
			t.Errorf("%v: exit %d: %s", f, code, errOut)
		}
	}
}

// report of several files names the file above each block.
func TestReportNamesEachFile(t *testing.T) {
	a := sweepFile(t)
	b := sweepFile(t)
	code, out, errOut := runMain(t, "report", a, b)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ia, ib := strings.Index(out, "== "+a+" ==\n"), strings.Index(out, "== "+b+" ==\n")
	if ia != 0 || ib <= ia || strings.Count(out, "\nrun ") != 2 {
		t.Fatalf("blocks not named by their files:\n%s", out)
	}
	if _, out, _ := runMain(t, "report", a); strings.Contains(out, "==") {
		t.Fatalf("a single file needs no name:\n%s", out)
	}
}
