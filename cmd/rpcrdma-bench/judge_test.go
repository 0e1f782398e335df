package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// autoRounds is the most rounds any point of the results file out ran.
func autoRounds(t *testing.T, out string) int {
	t.Helper()
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range r.Points {
		n = max(n, p.Round)
	}
	return n
}

// sweep --repeat auto --baseline is the CI gate in one command: against a baseline without
// the slowdown, a 1 ms completion delay regresses p50 at the first look, long before the
// budget, and the command exits as compare does (1); against a baseline of one run no look
// can be conclusive (one run against five bounds no interval: 1/6 > alpha), so every round of
// the budget runs and it exits 3.
func TestRepeatAutoAgainstBaseline(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	point := []string{"quietsweep", "--thresholds", "4k", "--sizes", "64", "--depth", "1", "--count", "100", "--warmup", "0", "-q"}
	if code, _, stderr := runMain(t, append(point, "--repeat", "6", "--out", base)...); code != exitOK {
		t.Fatalf("baseline: exit %d: %s", code, stderr)
	}
	cur := filepath.Join(dir, "cur.json")
	code, stdout, stderr := runMain(t, append(point, "--repeat", "auto:12", "--baseline", base, "--metrics", "p50",
		"--soft-delay", "1ms", "--out", cur)...)
	if code != results.ExitRegression || !strings.Contains(stdout, "verdict: regressed") {
		t.Fatalf("exit %d, want 1 (regressed): %s\n%s", code, stdout, stderr)
	}
	if n := autoRounds(t, cur); n >= 12 {
		t.Errorf("ran %d rounds: a 1 ms delay should be decided before the budget of 12", n)
	}

	small := filepath.Join(dir, "small.json")
	if code, _, stderr := runMain(t, append(point, "--out", small)...); code != exitOK {
		t.Fatalf("small baseline: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runMain(t, append(point, "--repeat", "auto:5", "--baseline", dir+"/small*.json", "--metrics", "p50", "--out", cur)...)
	if code != exitInconclusive || !strings.Contains(stdout, "5 of at most 5 rounds") {
		t.Fatalf("exit %d, want 3 (inconclusive) after the budget's 5 rounds: %s\n%s", code, stdout, stderr)
	}
	if n := autoRounds(t, cur); n != 5 {
		t.Errorf("ran %d rounds, want the budget's 5", n)
	}
}

// What --repeat auto and the judgement flags cannot do is bad usage, named.
func TestRepeatAutoUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--repeat", "auto"}, "give --baseline, or sweep two or more --thresholds"},
		{[]string{"sweep", "--thresholds", "4k", "--repeat", "auto:3"}, "give --baseline, or sweep two or more --thresholds"},
		{[]string{"sweep", "--threshold", "p50=5%"}, "--threshold judges against a baseline"},
		{[]string{"run", "--repeat", "auto:0"}, "auto[:BUDGET]"},
		{[]string{"run", "--repeat", "auto:x"}, "auto[:BUDGET]"},
		{[]string{"sweep", "--thresholds", "1k,4k", "--sizes", "64,4k,64k,1m", "--repeat", "auto:3"}, "need"},
		{[]string{"run", "--baseline", "/nonexistent/*.json"}, "no such file"},
	} {
		code, _, stderr := runMain(t, append(tc.args, "--out=", "-q")...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 naming %q: %s", tc.args, code, tc.want, stderr)
		}
	}
}

// The gate writes the judgement it exits on to every --report file, each in its format;
// a base point the current side did not measure is a failed measurement (exit 4), not a
// regression, and says so in every report.
func TestGateReports(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	point := []string{"quietsweep", "--thresholds", "4k", "--depth", "1", "--count", "100", "--warmup", "0", "-q"}
	if code, _, stderr := runMain(t, append(point, "--sizes", "64,2k", "--repeat", "6", "--out", base)...); code != exitOK {
		t.Fatalf("baseline: exit %d: %s", code, stderr)
	}
	reports := []string{filepath.Join(dir, "v.json"), filepath.Join(dir, "v.xml"), filepath.Join(dir, "v.md"), filepath.Join(dir, "v.bmf.json")}
	args := append(point, "--sizes", "64", "--repeat", "5", "--baseline", base, "--metrics", "p50", "--out", filepath.Join(dir, "cur.json"))
	for _, r := range reports {
		args = append(args, "--report", r)
	}
	code, stdout, stderr := runMain(t, args...)
	if code != results.ExitFailed || !strings.Contains(stdout, "verdict: failed (exit 4)") || !strings.Contains(stderr, "failed (exit 4)") {
		t.Fatalf("exit %d, want 4 (a base point missing): %s\n%s", code, stdout, stderr)
	}
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var js struct {
		Verdict  string `json:"verdict"`
		ExitCode int    `json:"exit_code"`
		Headline string `json:"headline"`
	}
	if err := json.Unmarshal([]byte(read(reports[0])), &js); err != nil || js.ExitCode != code || js.Verdict != "failed" || !strings.Contains(stdout, js.Headline) {
		t.Errorf("JSON report %+v (%v), the command exited %d:\n%s", js, err, code, stdout)
	}
	if x := read(reports[1]); !strings.Contains(x, `<error type="missing"`) {
		t.Errorf("JUnit report:\n%s", x)
	}
	if md := read(reports[2]); !strings.HasPrefix(md, "**verdict: failed (exit 4)") {
		t.Errorf("Markdown report:\n%s", md)
	}
	var bmf map[string]map[string]struct {
		Value float64 `json:"value"`
	}
	if err := json.Unmarshal([]byte(read(reports[3])), &bmf); err != nil || len(bmf) != 1 {
		t.Errorf("BMF report %v: %s", err, read(reports[3]))
	}
}
