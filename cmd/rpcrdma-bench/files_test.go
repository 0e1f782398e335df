package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// --out - writes the results to standard output (the table to standard error), and report
// reads them from standard input, with "-" or with no argument at all.
func TestOutStdoutPipesIntoReport(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var js, log bytes.Buffer
	code := testCLI.MainIO([]string{"fakerun", "--count", "300", "--warmup", "0", "-q", "--out", "-"}, strings.NewReader(""), &js, &log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log.String())
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Fatalf("--out - created files %v", files)
	}
	if !strings.Contains(log.String(), "MIX") || strings.Contains(log.String(), "results written") {
		t.Fatalf("stderr should hold the table and claim no file:\n%s", log.String())
	}
	r, err := results.Read(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatalf("stdout is not a results file: %v\n%s", err, js.String())
	}
	for _, args := range [][]string{{"report", "--format", "csv"}, {"report", "--format", "csv", "-"}} {
		var out, errOut bytes.Buffer
		if code := testCLI.MainIO(args, bytes.NewReader(js.Bytes()), &out, &errOut); code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut.String())
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%q: csv %v: %q", args, err, out.String())
		}
		if got := rows[1][0]; got != results.StdinName {
			t.Errorf("%q: source column %q, want %q", args, got, results.StdinName)
		}
	}
	if len(r.Points) != 1 || r.Points[0].Throughput.RPCs == 0 {
		t.Fatalf("points %+v", r.Points)
	}
	// Standard input named on both sides of compare is refused, not read twice.
	if code, _, errOut := runMain(t, "compare", "-", "--", "-"); code != exitUsage || !strings.Contains(errOut, "one side only") {
		t.Fatalf("compare - -- -: exit %d: %s", code, errOut)
	}
}

// An --out that cannot be created fails at once, before anything is measured.
func TestOutUnwritableFailsBeforeMeasuring(t *testing.T) {
	dir := t.TempDir()
	for _, out := range []string{filepath.Join(dir, "nonexistent", "x.json"), dir} {
		code, stdout, stderr := runMain(t, "fakerun", "--count", "50", "--warmup", "0", "-q", "--out", out)
		if code != exitUsage || !strings.Contains(stderr, "--out "+out) {
			t.Errorf("--out %s: exit %d, stderr %q", out, code, stderr)
		}
		if strings.Contains(stderr, "point") || stdout != "" || strings.Contains(stderr, "results written") {
			t.Errorf("--out %s measured or claimed a write:\nstdout %q\nstderr %q", out, stdout, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("probe files left behind: %v", entries)
	}
}
