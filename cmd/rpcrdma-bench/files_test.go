package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// --out - writes the results to standard output (the table to standard error), and report
// reads them from standard input, with "-" or with no argument at all.
func TestOutStdoutPipesIntoReport(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var js, log bytes.Buffer
	code := MainIO([]string{"fakerun", "--count", "300", "--warmup", "0", "-q", "--out", "-"}, strings.NewReader(""), &js, &log)
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
		if code := MainIO(args, bytes.NewReader(js.Bytes()), &out, &errOut); code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut.String())
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%q: csv %v: %q", args, err, out.String())
		}
		if got := rows[1][0]; got != stdinName {
			t.Errorf("%q: source column %q, want %q", args, got, stdinName)
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

// A write that fails after the measurement puts the results into a fallback file, names it,
// and never says they went where they did not.
func TestResultsFallbackWhenWriteFails(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	errDisk := errors.New("no space left on device")
	writeResults = func(string, *results.Run) error { return errDisk }
	t.Cleanup(func() { writeResults = results.WriteFile })
	out := filepath.Join(dir, "x.json")
	code, _, stderr := runMain(t, "fakerun", "--count", "200", "--warmup", "0", "-q", "--out", out)
	if code != exitFailed {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "results written to "+out) || !strings.Contains(stderr, "no space left on device") {
		t.Fatalf("stderr:\n%s", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "rpcrdma-bench-fakerun-rescued-*.json"))
	if len(files) != 1 || !strings.Contains(stderr, "results written to "+files[0]+" instead") {
		t.Fatalf("fallback files %v; stderr:\n%s", files, stderr)
	}
	r, err := results.ReadFile(files[0])
	if err != nil || len(r.Points) != 1 || r.Points[0].Throughput.RPCs == 0 {
		t.Fatalf("fallback file: %v %+v", err, r)
	}
	if strings.Count(stderr, "no space left on device") > 2 {
		t.Errorf("the error is repeated:\n%s", stderr)
	}
}

// A refused connection says what to check; other failures get no advice.
func TestHintForRefusedConnection(t *testing.T) {
	refused := fmt.Errorf("poller 0: open: rpcrdma: connect: %w", &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED})
	if h := hint(refused); !strings.Contains(h, "is 'rpcrdma-bench server' running") {
		t.Errorf("hint %q", h)
	}
	if h := hint(errors.New("checksum mismatch")); h != "" {
		t.Errorf("hint for another error: %q", h)
	}
}
