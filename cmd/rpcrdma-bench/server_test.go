package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// The engine commands, made with fakes: every help text, flag set and input check
// works before the engine does.
func TestEngineCommandsWithFakes(t *testing.T) {
	var got *cli.ServeConfig
	errOpened := errors.New("opened") // ends the server command once its flags are seen
	open := func(context.Context, *cli.RunConfig, []workloads.Point) (session.Connector, error) {
		return fakeConnector{}, nil
	}
	c := newCLI(engineCommands(open, func(f *cli.ServeConfig) (cli.Server, error) {
		got = f
		return nil, errOpened
	})...)
	runMain := func(t *testing.T, args ...string) (int, string, string) {
		var o, e strings.Builder
		return c.Main(args, &o, &e), o.String(), e.String()
	}
	for _, name := range []string{"run", "client", "sweep", "server"} {
		code, out, _ := runMain(t, name, "--help")
		if code != exitOK || !strings.Contains(out, "rpcrdma-bench "+name) || !strings.Contains(out, "--provider") {
			t.Errorf("%s --help: %d\n%s", name, code, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"server", "--thresholds", "1k,2k"}, "one value"},
		{[]string{"server", "--cpus", "x"}, `"x"`},
		{[]string{"server", "--pollers", "0"}, "--pollers"},
		{[]string{"server", "extra"}, "unexpected"},
		{[]string{"server", "--max-payload", "1q"}, `"1q"`},
		{[]string{"server", "--sink-buffers", "-1"}, "--sink-buffers"},
		{[]string{"client", "--mix", "echo"}, "--addr is required"},
		{[]string{"sweep", "--sizes", "1k,zz"}, `"zz"`},
	} {
		if code, _, errOut := runMain(t, tc.args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
	if got != nil {
		t.Fatal("a bad server command line opened a server")
	}
	// How the server's pollers wait unless --poll says: event where the completions come from
	// goroutines of this process (soft), hybrid on devices.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"server"}, "event"},
		{[]string{"server", "--provider", "verbs"}, "hybrid"},
		{[]string{"server", "--provider", "verbs", "--poll", "hybrid:20us"}, "hybrid:20µs"},
		{[]string{"server", "--poll", "busy"}, "busy"},
		{[]string{"server", "--provider", "verbs", "--poll", "event"}, "event"},
	} {
		got = nil
		runMain(t, tc.args...)
		if got == nil || got.Poll.String() != tc.want {
			t.Errorf("%q: poll %v, want %s", tc.args, got, tc.want)
		}
	}
	got = nil
	runMain(t, "server", "--sink-buffers", "8", "--max-payload", "64k")
	if got == nil || got.SinkBuffers != 8 || got.MaxPayload != 64<<10 {
		t.Errorf("--sink-buffers 8 --max-payload 64k: %+v", got)
	}
}

// SIGTERM stops a server cleanly: exit 0.
func TestServerStopsOnSignal(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RPCRDMA_BENCH_MAIN=fakeserver\n--listen\n127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "listening on 127.0.0.1:0") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(log.String(), "stopped after") {
		t.Fatalf("exit %v\n%s", err, log.String())
	}
}
