package main

import (
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
	if code != exitFailed || !strings.Contains(stdout, "verdict: regressed") {
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
