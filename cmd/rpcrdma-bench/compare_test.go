package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func fakeResults(t *testing.T, cmd string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), cmd+".json")
	if code, _, stderr := runMain(t, cmd, "--mix", "echo/64", "--depth", "1", "--count", "300", "--warmup", "0", "--out", out, "-q"); code != exitOK {
		t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
	}
	return out
}

// The CI gate: a point 50 times slower regresses beyond any sensible threshold (exit 1);
// the same file against itself does not (exit 0).
func TestCompareGate(t *testing.T) {
	fast, slow := fakeResults(t, "fakerun"), fakeResults(t, "fakeslowrun")
	code, out, errOut := runMain(t, "compare", "--threshold", "p50=+10%,throughput=-10%", "--metrics", "p50,rps", fast, slow)
	if code != exitFailed || !strings.Contains(out, "regressed") {
		t.Fatalf("fast vs slow: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runMain(t, "compare", "--threshold", "all=5%", "--format", "markdown", fast, "--", fast)
	if code != exitOK || !strings.Contains(out, "| ") {
		t.Fatalf("same vs same: exit %d\n%s", code, out)
	}
}

func TestCompareBadInput(t *testing.T) {
	f := fakeResults(t, "fakerun")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", f}, "want BASE CURRENT"},
		{[]string{"compare", f, f, f}, "want BASE CURRENT"},
		{[]string{"compare", "--", f}, "at least one base"},
		{[]string{"compare", "--threshold", "p99=10", f, f}, `"p99=10"`},
		{[]string{"compare", "--metrics", "p42", f, f}, `"p42"`},
		{[]string{"compare", "--alpha", "2", f, f}, "--alpha"},
		{[]string{"compare", "--format", "html", f, f}, `"html"`},
		{[]string{"compare", f, filepath.Join(t.TempDir(), "none.json")}, "none.json"},
	} {
		if code, _, errOut := runMain(t, tc.args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}
