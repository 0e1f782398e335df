package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotWritesCharts(t *testing.T) {
	f := sweepFile(t)
	dir := filepath.Join(t.TempDir(), "charts")
	code, out, errOut := runMain(t, "plot", "--out", dir, "--format", "svg", f)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	paths := strings.Fields(out)
	if len(paths) == 0 {
		t.Fatal("no chart written")
	}
	for _, p := range paths {
		if !strings.HasSuffix(p, ".svg") {
			t.Errorf("%s is not an SVG", p)
		}
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestPlotBadInput(t *testing.T) {
	f := sweepFile(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plot"}, "no results file"},
		{[]string{"plot", "--format", "gif", f}, `"gif"`},
		{[]string{"plot", filepath.Join(t.TempDir(), "none.json")}, "none.json"},
	} {
		if code, _, errOut := runMain(t, tc.args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}
