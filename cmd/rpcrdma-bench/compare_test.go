package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

func fakeResults(t *testing.T, cmd string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), cmd+".json")
	if code, _, stderr := runMain(t, cmd, "--mix", "echo/64", "--depth", "1", "--count", "300", "--warmup", "0", "--out", out, "-q"); code != exitOK {
		t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
	}
	return out
}

// The CI gate's three answers through the command: a point 50 times slower in 4 runs a side
// regresses (exit 1); the same run on both sides is ok (exit 0); one run a side cannot
// tell (exit 3), whatever the change.
func TestCompareGate(t *testing.T) {
	var fast, slow []string
	for range 4 {
		fast, slow = append(fast, fakeResults(t, "fakerun")), append(slow, fakeResults(t, "fakeslowrun"))
	}
	same := []string{fast[0], fast[0], fast[0], fast[0]} // identical values: no noise at all
	args := func(flags []string, base, cur []string) []string {
		a := append(append([]string{"compare"}, flags...), base...)
		return append(append(a, "--"), cur...)
	}
	for _, tc := range []struct {
		name      string
		flags     []string
		base, cur []string
		code      int
		out, err  string
	}{
		{"slower", []string{"--threshold", "p50=+10%,throughput=-10%"}, fast, slow, results.ExitRegression,
			"verdict: regressed (exit 1): p50, rps, gbps at 1 point(s): 3 regressed", "rpcrdma-bench compare: regressed (exit 1)"},
		{"same", []string{"--format", "markdown", "--metrics", "p50,rps"}, same, same, exitOK, "**verdict: ok (exit 0): p50, rps at 1 point(s): 2 ok**", ""},
		{"one run", nil, fast[:1], slow[:1], exitInconclusive, "3 inconclusive", "rpcrdma-bench compare: inconclusive (exit 3)"},
		{"json", []string{"--format", "json", "--metrics", "p50"}, fast, slow, results.ExitRegression, `"verdict": "regressed"`, ""},
		{"junit", []string{"--format", "junit"}, fast[:2], fast[:2], exitInconclusive, `<testsuites name="rpcrdma-bench compare" tests="3" failures="0" errors="3">`, ""},
	} {
		code, out, errOut := runMain(t, args(tc.flags, tc.base, tc.cur)...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
			t.Errorf("%s: exit %d (want %d)\n%s%s", tc.name, code, tc.code, out, errOut)
		}
	}
	// BASE CURRENT without "--".
	if code, _, errOut := runMain(t, "compare", fast[0], slow[0]); code != exitInconclusive {
		t.Errorf("BASE CURRENT: exit %d %s", code, errOut)
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
		{[]string{"compare", "--threshold", "p99=+10%", "--alpha", "0", f, f}, "--alpha"},
		{[]string{"compare", f, filepath.Join(t.TempDir(), "none.json")}, "none.json"},
	} {
		if code, _, errOut := runMain(t, tc.args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

// Under a steady neighbour both sides are disturbed alike: compare judges them by default
// (a point 50 times slower regresses), and --under-load=false leaves the verdict
// inconclusive, saying where it leans.
func TestCompareJudgesUnderComparableLoadByDefault(t *testing.T) {
	disturbed := func(path string, other float64) string {
		r, err := results.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Points {
			r.Points[i].HostOtherCPU = &other
			r.Points[i].Disturbed = results.Disturbances(nil, 0, 2, &other)
		}
		if err := results.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var fast, slow []string
	for range 4 {
		fast = append(fast, disturbed(fakeResults(t, "fakerun"), 45))
		slow = append(slow, disturbed(fakeResults(t, "fakeslowrun"), 48))
	}
	args := func(flags ...string) []string {
		a := append(append([]string{"compare", "--metrics", "p50"}, flags...), fast...)
		return append(append(a, "--"), slow...)
	}
	if code, out, errOut := runMain(t, args()...); code != results.ExitRegression || !strings.Contains(out, "both sides ran under comparable load") {
		t.Errorf("default: exit %d, want %d\n%s%s", code, results.ExitRegression, out, errOut)
	}
	if code, out, errOut := runMain(t, args("--under-load=false")...); code != exitInconclusive || !strings.Contains(out, "leaning regressed") {
		t.Errorf("--under-load=false: exit %d, want %d\n%s%s", code, exitInconclusive, out, errOut)
	}
}

// A regression measured on a host that itself ran 20% slower is withheld (exit 3, the host
// named, the next step a fresh baseline); --host-tolerance=-1 judges it anyway.
func TestCompareWithholdsOnASlowerHost(t *testing.T) {
	slower := func(path string) string {
		r, err := results.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Points {
			h := *r.Points[i].Host
			h.ComputeNs *= 1.2
			r.Points[i].Host = &h
		}
		if err := results.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var fast, slow []string
	for range 4 {
		fast, slow = append(fast, fakeResults(t, "fakerun")), append(slow, slower(fakeResults(t, "fakeslowrun")))
	}
	args := func(flags ...string) []string {
		a := append(append([]string{"compare", "--metrics", "p50"}, flags...), fast...)
		return append(append(a, "--"), slow...)
	}
	if code, out, errOut := runMain(t, args()...); code != exitInconclusive || !strings.Contains(out, "the host ran 20% slower than for the baseline (compute probe)") ||
		!strings.Contains(out, "measure a fresh baseline on this runner now") {
		t.Errorf("default: exit %d, want %d\n%s%s", code, exitInconclusive, out, errOut)
	}
	if code, out, errOut := runMain(t, args("--host-tolerance=-1")...); code != results.ExitRegression {
		t.Errorf("--host-tolerance=-1: exit %d, want %d\n%s%s", code, results.ExitRegression, out, errOut)
	}
	if code, out, errOut := runMain(t, args("--host-tolerance", "25")...); code != results.ExitRegression {
		t.Errorf("--host-tolerance 25: exit %d, want %d\n%s%s", code, results.ExitRegression, out, errOut)
	}
}

// compare's help states the default tolerances compare applies.
func TestCompareHelpSaysTheDefaultTolerances(t *testing.T) {
	_, out, _ := runMain(t, "compare", "--help")
	if !strings.Contains(out, results.DefaultTolerances()) || strings.Contains(out, "p99 +20%") {
		t.Errorf("compare --help does not state the default tolerances %q:\n%s", results.DefaultTolerances(), out)
	}
}
