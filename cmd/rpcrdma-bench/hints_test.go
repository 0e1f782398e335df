package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Flags as Go's flag package and perftest spell them fail with a pointer to this tool's
// flag; a misspelt preset gets a suggestion; out-of-range counts and depths name the flag.
func TestFlagHints(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fakerun", "-duration", "1s"}, "long flags take two dashes: --duration"},
		{[]string{"fakerun", "-warmup=0"}, "long flags take two dashes: --warmup"},
		{[]string{"fakerun", "-duratoin", "1s"}, "did you mean --duration?"},
		{[]string{"fakerun", "-s", "64"}, "perftest's -s SIZE is --sizes SIZE"},
		{[]string{"fakerun", "-n", "1000"}, "perftest's -n ITERS is --count N"},
		{[]string{"fakerun", "-D", "2"}, "-D 2 is --duration 2s"},
		{[]string{"fakerun", "-t", "4"}, "perftest's -t DEPTH is --depth N"},
		{[]string{"fakerun", "--mix", "nfs_like"}, "did you mean --mix nfs-like?"},
		{[]string{"fakesweep", "--mix", "nfs_like"}, "did you mean --mix nfs-like?"},
		{[]string{"fakerun", "--mix", "ecoh"}, "did you mean --mix echo?"},
		{[]string{"fakerun", "--count", "-1"}, `invalid argument "-1" for "--count" flag`},
		{[]string{"fakerun", "--depth", "100000"}, `invalid argument "100000" for "--depth" flag: want one depth, an integer in [1, 65536]`},
		{[]string{"fakerun", "--depth", "0"}, `for "--depth" flag`},
		{[]string{"fakesweep", "--count", "-1"}, `invalid argument "-1" for "--count" flag`},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 with %q", tc.args, code, errOut, tc.want)
		}
	}
	// The sweep's -s is not perftest's if it had no --sizes... it has: the hint holds there too.
	if _, _, errOut := runMain(t, "fakesweep", "-s", "64"); !strings.Contains(errOut, "--sizes") {
		t.Errorf("sweep -s: %q", errOut)
	}
	// A flag the command lacks gets no hint towards it: server has no --sizes.
	if _, _, errOut := runMain(t, "server", "-s", "64"); strings.Contains(errOut, "perftest") {
		t.Errorf("server -s: %q", errOut)
	}
}

// The top-level help lists every exit status, inconclusive among them.
func TestHelpListsExitStatuses(t *testing.T) {
	_, out, _ := runMain(t, "help")
	for _, want := range []string{"  0  ok", "  1  a run failed", "  2  bad usage", "  3  inconclusive"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

// A results file holding a JSON array is refused in JSON's terms, not Go's.
func TestJSONArrayResultsFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "a.json")
	if err := os.WriteFile(f, []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runMain(t, "report", f)
	if code != exitUsage || !strings.Contains(errOut, "holds a JSON array, not a results object") || strings.Contains(errOut, "struct") || strings.Contains(errOut, "json.RawMessage") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// compare says when the two sides were measured for different times per point.
func TestCompareWarnsOfDifferentDurations(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")
	for _, f := range []struct{ out, d string }{{a, "20ms"}, {b, "20ms"}, {c, "30ms"}} {
		if code, _, errOut := runMain(t, "fakerun", "--mix", "echo/64", "--duration", f.d, "--warmup", "0", "-q", "--out", f.out); code != exitOK {
			t.Fatalf("fakerun: exit %d: %s", code, errOut)
		}
	}
	if _, _, errOut := runMain(t, "compare", a, b); strings.Contains(errOut, "different times") {
		t.Errorf("same durations: %q", errOut)
	}
	if _, _, errOut := runMain(t, "compare", a, c); !strings.Contains(errOut, "warning: base and current measured for different times per point (--duration 20ms vs 30ms)") {
		t.Errorf("20ms vs 30ms: %q", errOut)
	}
}

// -q prints no line per point; without it, a log gets one per point.
func TestQuietPrintsNoPointLines(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.json")
	args := []string{"fakesweep", "--sizes", "64,4k", "--thresholds", "4k", "--duration", "20ms", "--warmup", "0", "--interval", "0", "--out", out}
	code, _, stderr := runMain(t, append(args, "-q")...)
	if code != exitOK || strings.Contains(stderr, "point [") {
		t.Errorf("-q: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runMain(t, args...)
	if code != exitOK || strings.Count(stderr, "fakesweep point [") != 2 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
