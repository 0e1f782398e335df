package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// A flag's zero or negative value is refused with a message that names that flag alone and
// says what is accepted, never run as the default or blamed on another flag.
func TestZeroAndNegativeFlagsNameTheirFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string
		notWant string
	}{
		{[]string{"fakerun", "--pollers", "0"}, "--pollers 0: want at least 1", ""},
		{[]string{"fakerun", "--pollers", "-1"}, "--pollers -1: want at least 1", "connections"},
		{[]string{"fakerun", "--duration", "0s"}, "--duration 0s: want a measured time above 0", ""},
		{[]string{"fakesweep", "--duration", "0s"}, "--duration 0s: want a measured time above 0", ""},
		{[]string{"fakerun", "--warmup", "-1s"}, "--warmup must not be negative (got -1s)", "--interval"},
		{[]string{"fakerun", "--drain", "-1s"}, "--drain must not be negative (got -1s)", "--warmup"},
		{[]string{"fakeserver", "--pollers", "0"}, "--pollers 0: want at least 1", "--credits"},
		{[]string{"fakeserver", "--credits", "9000"}, "--credits 9000 out of range", "--pollers"},
		{[]string{"fakeserver", "--max-connections", "0"}, "--max-connections 0: want at least 1", "--idle-timeout"},
		{[]string{"fakeserver", "--idle-timeout", "-1s"}, "--idle-timeout must not be negative (got -1s", "--max-connections"},
	} {
		args := tc.args
		if args[0] != "fakeserver" {
			args = append(args, "--out=", "-q")
		}
		code, _, errOut := runMain(t, args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || (tc.notWant != "" && strings.Contains(errOut, tc.notWant)) {
			t.Errorf("%q: exit %d, stderr %q; want 2 saying %q and not %q", tc.args, code, errOut, tc.want, tc.notWant)
		}
	}
	// With --count, --duration 0 is no time limit: the count ends the run.
	if code, _, errOut := runMain(t, "fakerun", "--count", "50", "--duration", "0s", "--warmup", "0", "--out=", "-q"); code != exitOK {
		t.Errorf("--count 50 --duration 0s: exit %d: %s", code, errOut)
	}
}

// An output that cannot be written, an address without a valid port and a listen port out of
// range are bad input: exit 2, said once, before anything runs.
func TestBadOutputsAndAddressesAreUsageErrors(t *testing.T) {
	f := sweepFile(t)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--out", filepath.Join(blocker, "x.csv"), f}, "--out " + filepath.Join(blocker, "x.csv")},
		{[]string{"plot", "--out", filepath.Join(blocker, "charts"), f}, "--out " + filepath.Join(blocker, "charts")},
		{[]string{"fakeclient", "--addr", "127.0.0.1:x", "--out="}, `--addr "127.0.0.1:x"`},
		{[]string{"fakeserver", "--listen", ":99999"}, `--listen ":99999": port 99999`},
		{[]string{"fakeserver", "--listen", "127.0.0.1"}, `--listen "127.0.0.1"`},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "rpcrdma-bench ") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 with one error mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

// client --addr HOST is HOST on the NFS/RDMA port, 20049, as the server listens by default.
func TestClientAddrDefaultsToNFSRDMAPort(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.json")
	if code, _, errOut := runMain(t, "fakeclient", "--addr", "127.0.0.1", "--count", "20", "--warmup", "0", "--out", out, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rc struct {
		Addr string `json:"addr"`
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.Config, &rc); err != nil || rc.Addr != "127.0.0.1:20049" {
		t.Fatalf("config addr %q (%v), want 127.0.0.1:20049", rc.Addr, err)
	}
}

// A server refuses a CPU it may not run on before it listens.
func TestServerChecksCPUsBeforeListening(t *testing.T) {
	opened := false
	c := newCLI(engineCommands(func(context.Context, *cli.RunConfig, []workloads.Point) (session.Connector, error) {
		return fakeConnector{}, nil
	},
		func(*cli.ServeConfig) (cli.Server, error) { opened = true; return nil, errors.New("opened") })...)
	var o, e strings.Builder
	code := c.Main([]string{"server", "--cpus", "1023"}, &o, &e)
	if code != exitUsage || opened || !strings.Contains(e.String(), "CPU 1023 is not available") {
		t.Fatalf("exit %d, opened %v, stderr %q", code, opened, e.String())
	}
}

// The server's --poll help says its own default, not the zero value's.
func TestServerPollHelpDefault(t *testing.T) {
	_, out, _ := runMain(t, "fakeserver", "--help")
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "--poll ") && strings.Contains(sc.Text(), "(default busy)") {
			t.Fatalf("help line %q", sc.Text())
		}
	}
}

// --version is the version command; a mistyped command or flag gets a suggestion.
func TestVersionFlagAndSuggestions(t *testing.T) {
	_, want, _ := runMain(t, "version")
	if code, got, _ := runMain(t, "--version"); code != exitOK || got != want {
		t.Errorf("--version: exit %d, %q; want %q", code, got, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweeep"}, `did you mean "sweep"?`},
		{[]string{"fakerun", "--poller", "2"}, `did you mean --pollers?`},
	} {
		if code, _, errOut := runMain(t, tc.args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 with %q", tc.args, code, errOut, tc.want)
		}
	}
}

// Results files a command writes by default are ignored by git in a clone.
func TestDefaultResultsAreGitIgnored(t *testing.T) {
	b, err := os.ReadFile("../../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	name := defaultOut("run", time.Now())
	for _, l := range strings.Split(string(b), "\n") {
		if ok, _ := filepath.Match(strings.TrimPrefix(strings.TrimSpace(l), "/"), name); ok && l != "" {
			return
		}
	}
	t.Fatalf(".gitignore has no pattern for %s", name)
}

// A provider's error is not prefixed twice with its name.
func TestProviderErrorSaysItsNameOnce(t *testing.T) {
	withProviders(t, fakeProvider{name: "soft"}, fakeProvider{name: "verbs", err: fmt.Errorf("verbs: %w: built without it", datapath.ErrNotSupported)})
	if _, _, errOut := runMain(t, "devices", "--provider", "verbs"); strings.Count(errOut, "verbs:") != 1 {
		t.Errorf("devices --provider verbs: %q", errOut)
	}
	if _, out, _ := runMain(t, "version"); !strings.Contains(out, "verbs (unavailable: not supported: built without it)") {
		t.Errorf("version: %q", out)
	}
}
