package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if err != nil || strings.Count(string(b), "\n") != 1+2*2 {
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
