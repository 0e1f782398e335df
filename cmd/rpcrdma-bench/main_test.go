package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// With RPCRDMA_BENCH_MAIN set, the test binary is the CLI: the args are in it, separated by
// newlines. Tests that send signals run it that way, as a separate process.
func TestMain(m *testing.M) {
	// Rounds in fresh processes run this test binary as the tool.
	selfCommand = func(args []string) *exec.Cmd {
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), "RPCRDMA_BENCH_MAIN="+strings.Join(args, "\n"))
		return c
	}
	if args, ok := os.LookupEnv("RPCRDMA_BENCH_MAIN"); ok {
		os.Exit(testCLI.Main(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = testCLI.Main(args, &o, &e)
	return code, o.String(), e.String()
}

func TestHelpForEveryCommand(t *testing.T) {
	for name := range testCLI {
		code, out, errOut := runMain(t, name, "--help")
		if code != exitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "rpcrdma-bench "+name) || errOut != "" {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
	code, out, _ := runMain(t, "help")
	if code != exitOK || !strings.Contains(out, "devices") || !strings.Contains(out, "version") {
		t.Fatalf("help: %d %q", code, out)
	}
	if code, _, _ := runMain(t); code != exitUsage {
		t.Fatalf("no command: exit %d", code)
	}
}

func TestBadInputExitsTwoNamingTheProblem(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `unknown command "nosuch"`},
		{[]string{"fakerun", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"fakerun", "--sizes", "64,4q"}, `"4q"`},
		{[]string{"fakerun", "--cpus", "0,x"}, `"x"`},
		{[]string{"fakerun", "--cpus", "3-1"}, `"3-1"`},
		{[]string{"fakerun", "--mix", "null:1,ehco:4"}, `"ehco:4"`},
		{[]string{"fakerun", "--class", "medium"}, `"medium"`},
		{[]string{"fakerun", "--depth", "-1"}, `"-1" for "--depth" flag`},
		{[]string{"fakerun", "--depth", "x"}, `"x"`},
		{[]string{"fakerun", "--thresholds", "1k,4k"}, "one value"},
		{[]string{"fakerun", "--arrival", "poisson"}, "--arrival needs --rate"},
		{[]string{"fakerun", "--rate", "100", "--arrival", "bursty"}, `"bursty"`},
		{[]string{"fakerun", "--duration", "5"}, "--duration"},
		{[]string{"fakerun", "extra"}, "unexpected arguments"},
		{[]string{"fakeclient"}, "--addr is required"},
		{[]string{"fakerun", "--program", "nfs:x"}, `"nfs:x"`},
		{[]string{"fakerun", "--program", "nfs", "--mix", "echo"}, `unknown procedure "echo" of program nfs3`},
		{[]string{"fakerun", "--addr", "h:1"}, "unknown flag: --addr"},
		{[]string{"fakerun", "--rate", "-5"}, "rate -5"},
		{[]string{"fakerun", "--pollers", "2"}, "2 pollers for 1 connections"},
		{[]string{"fakerun", "--cpus", "5000"}, `"5000"`},
		{[]string{"fakerun", "--duration", "2000000h"}, "duration"},
		{[]string{"fakerun", "--count", "-3"}, `"-3" for "--count" flag`},
		{[]string{"fakesweep", "--thresholds", "4k,512"}, `"512"`},
		{[]string{"fakesweep", "--depth", "1,0"}, `"0"`},
		{[]string{"fakesweep", "--proc", "null"}, "null"},
		{[]string{"devices", "--provider", "nope"}, `unknown provider "nope"`},
		{[]string{"version", "extra"}, "no arguments"},
		// Zeros and no-ops that used to run the defaults silently.
		{[]string{"fakerun", "--depth", "0"}, `"0" for "--depth" flag: want one depth`},
		{[]string{"fakerun", "--connections", "0"}, "--connections 0: want at least 1"},
		{[]string{"fakesweep", "--connections", "0"}, "--connections 0: want at least 1"},
		{[]string{"fakerun", "--sizes", "64k"}, "--sizes has no effect: every entry of the nfs-like mix has its own size"},
		{[]string{"fakerun", "--mix", "echo/4k,sink/8k", "--sizes", "64k"}, `every entry of the "echo_4k+sink_8k" mix has its own size`},
		// A CPU this process cannot run on, found before measuring.
		{[]string{"fakerun", "--cpus", "1023"}, "--cpus: CPU 1023 is not available to this process"},
		{[]string{"fakerun", "--drain", "-1s"}, "--drain must not be negative"},
		{[]string{"fakerun", "--repeat", "0"}, `invalid argument "0" for "--repeat" flag: want a number of rounds, at least 1`},
		{[]string{"fakesweep", "--repeat", "x"}, `"x"`},
		{[]string{"fakerun", "--soft-bandwidth", "1Gbot"}, `bad rate "1Gbot"`},
		{[]string{"fakerun", "--soft-delay", "-1ms"}, `"-1ms"`},
		{[]string{"run", "--provider", "verbs", "--soft-delay", "20us"}, "--soft-delay, --soft-post-cost and --soft-bandwidth slow the soft provider only (provider verbs)"},
		{[]string{"run", "--provider", "verbs", "--soft-post-cost", "50ns"}, "--soft-delay, --soft-post-cost and --soft-bandwidth slow the soft provider only (provider verbs)"},
		{[]string{"run", "--soft-post-cost", "-5ns"}, "want a duration such as 20us, not negative"},
		{[]string{"fakerun", "--rounds-per-process", "-1"}, "--rounds-per-process -1"},
		{[]string{"fakerun", "--report", "x.html"}, "--report x.html: name a .json"},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runMain(t, "version")
	if code != exitOK || !strings.Contains(out, runtime.Version()) || !strings.Contains(out, "providers:") || !strings.Contains(out, "commit ") {
		t.Fatalf("version: %d %q", code, out)
	}
}

func TestRunWritesCompleteResults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	// 100,000 RPCs take a few hundred ms: enough sampling ticks for a series of several
	// intervals even when the two spinning pollers leave the sampler little CPU.
	code, stdout, stderr := runMain(t, "fakerun", "--count", "100000", "--warmup", "50ms", "--pollers", "2", "--connections", "2",
		"--interval", "5ms", "--out", out, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.State != results.StateComplete || len(r.Points) != 1 || !r.Points[0].Complete {
		t.Fatalf("status %+v, %d points", r.Status, len(r.Points))
	}
	p := r.Points[0]
	if p.Params.Procedure != "MIX:nfs-like" || p.Params.Depth != workloads.DefaultDepth || p.Params.Connections != 2 || p.Negotiated == nil {
		t.Fatalf("params %+v", p.Params)
	}
	used := map[string]uint64{}
	for _, c := range p.Classes {
		used[c.Class] = c.RTT.Count
	}
	// The default (NFS-like) mix exercises all three classes.
	if used["short"] == 0 || used["chunked"] == 0 || used["long"] == 0 {
		t.Fatalf("class counts %v", used)
	}
	if p.Throughput.RPCs != 100000 || p.Throughput.RPCPerSec <= 0 || p.RTT.P99 == nil || p.DurationNs <= 0 {
		t.Fatalf("throughput %+v, duration %d", p.Throughput, p.DurationNs)
	}
	// The time series starts with the measured phase, tiles it and adds up to the point's
	// RPCs exactly (the warm-up's are not in it, the drain's are in the last interval).
	var sum, bytes uint64
	next := int64(0)
	for _, iv := range p.Intervals {
		sum += iv.RPCs
		bytes += iv.PayloadBytes
		if iv.OffsetNs != next || iv.OffsetNs+iv.DurationNs > p.DurationNs {
			t.Fatalf("interval %+v: want it to start at %d and end by the point's %d ns", iv, next, p.DurationNs)
		}
		next = iv.OffsetNs + iv.DurationNs
	}
	if len(p.Intervals) < 2 || sum != p.Throughput.RPCs || bytes != p.Throughput.PayloadBytes || next != p.DurationNs {
		t.Fatalf("%d intervals holding %d RPCs and %d bytes to %d ns, want %d, %d and %d", len(p.Intervals), sum, bytes, next,
			p.Throughput.RPCs, p.Throughput.PayloadBytes, p.DurationNs)
	}
	if !strings.Contains(stdout, "MIX") || !strings.Contains(stdout, "chunked") {
		t.Fatalf("table:\n%s", stdout)
	}
	var cfg cli.RunRecord
	if err := json.Unmarshal(r.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	nfsLike, err := workloads.ParseMix("nfs-like", benchprog.Prog)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Command != "fakerun" || cfg.Workload == nil || cfg.Workload.Pollers != 2 || len(cfg.Workload.Mix) != len(nfsLike) ||
		time.Duration(cfg.Workload.Warmup) != 50*time.Millisecond {
		t.Fatalf("config %s", r.Config)
	}
}

// readRecord reads the results file out and its "config" object.
func readRecord(t *testing.T, out string) (*results.Run, cli.RunRecord) {
	t.Helper()
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var cfg cli.RunRecord
	if err := json.Unmarshal(r.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	return r, cfg
}

// The measuring side's pollers block on soft unless --poll says otherwise: there the
// process's own threads make the completions, and spinning pollers would compete with them.
func TestMeasuringPollDefault(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want datapath.PollMode
	}{
		{nil, datapath.PollEvent},
		{[]string{"--poll", "busy"}, datapath.PollBusy},
		{[]string{"--provider", "soft", "--poll", "hybrid"}, datapath.PollHybrid},
	} {
		out := filepath.Join(t.TempDir(), "run.json")
		args := append([]string{"fakerun", "--count", "1000", "--warmup", "0s", "--out", out, "-q"}, tc.args...)
		if code, _, stderr := runMain(t, args...); code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		r, cfg := readRecord(t, out)
		if cfg.Workload == nil || cfg.Workload.Poll.Mode != tc.want {
			t.Errorf("%q: config %s, want poll %v", tc.args, r.Config, tc.want)
		}
	}
}

// A provider added to the list alone brings its own defaults: nothing else names it.
func TestProviderDefaultsFromTheList(t *testing.T) {
	hybrid := datapath.Poll{Mode: datapath.PollHybrid, Spin: 7 * time.Microsecond}
	withProviders(t, soft.New(soft.Config{}), fakeProvider{name: "nic", defaults: datapath.Defaults{MeasuringPoll: hybrid}})
	out := filepath.Join(t.TempDir(), "run.json")
	if code, _, stderr := runMain(t, "fakerun", "--provider", "nic", "--count", "100", "--warmup", "0s", "--out", out, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r, cfg := readRecord(t, out); cfg.Workload == nil || cfg.Workload.Poll != hybrid {
		t.Errorf("config %s, want poll %v from the provider's defaults", r.Config, hybrid)
	}
}

// The sweep's class switches, read back from its results file, sit where the (fake's)
// thresholds put them.
func TestSweepRecordsClassSwitches(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, stdout, stderr := runMain(t, "fakesweep", "--thresholds", "1k,4k", "--sizes", "64,512,2k,8k", "--depth", "2",
		"--count", "200", "--warmup", "5ms", "--out", out, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 8 {
		t.Fatalf("%d points, want 8", len(r.Points))
	}
	// The fake adds 100 header bytes: at 1k, 512 B goes inline and 2k does not; at 4k,
	// 2k does and 8k does not. ECHO is never DDP-eligible, so it goes long.
	got := session.Switches(r)
	want := []workloads.Switch{
		{Threshold: 1024, Depth: 2, From: rpcproto.Short, To: rpcproto.Long, Below: 512, At: 2048},
		{Threshold: 4096, Depth: 2, From: rpcproto.Short, To: rpcproto.Long, Below: 2048, At: 8192},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("switches %+v, want %+v", got, want)
	}
	if !strings.Contains(stdout, "short   -> long    between 512 and 2k") {
		t.Fatalf("stdout lacks the switch:\n%s", stdout)
	}
}

// --repeat N measures every point N times, round after round, into one file: each point
// records its round (and, each round in a fresh process by default, its process), the config
// the repetition and the shuffle, and the class switches read all the rounds.
func TestRepeatedSweepInterleavesRounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perProc   string
		processes []int // the process of each round
	}{{"fresh processes", "1", []int{1, 2, 3}}, {"blocks of two", "2", []int{1, 1, 2}}, {"one process", "0", []int{0, 0, 0}}} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sweep.json")
			code, stdout, stderr := runMain(t, "fakesweep", "--thresholds", "1k,4k", "--sizes", "64,2k,8k", "--depth", "2",
				"--count", "50", "--warmup", "0", "--repeat", "3", "--shuffle", "--seed", "9", "--out", out, "--rounds-per-process", tc.perProc)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r, err := results.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Points) != 18 {
				t.Fatalf("%d points, want 6 × 3 rounds", len(r.Points))
			}
			seen := map[string]int{}
			for i, p := range r.Points {
				if p.Round != i/6+1 || p.Process != tc.processes[p.Round-1] {
					t.Fatalf("point %d in round %d, process %d", i, p.Round, p.Process)
				}
				seen[p.Params.Key()]++
			}
			for k, n := range seen {
				if n != 3 || len(seen) != 6 {
					t.Fatalf("%s measured %d times (%d points)", k, n, len(seen))
				}
			}
			var cfg struct {
				Repeat           int  `json:"repeat"`
				Shuffle          bool `json:"shuffle"`
				RoundsPerProcess int  `json:"rounds_per_process"`
			}
			if err := json.Unmarshal(r.Config, &cfg); err != nil || cfg.Repeat != 3 || !cfg.Shuffle || strconv.Itoa(cfg.RoundsPerProcess) != tc.perProc {
				t.Fatalf("config %s: %v", r.Config, err)
			}
			if sw := session.Switches(r); len(sw) != 2 {
				t.Fatalf("switches %+v", sw)
			}
			// In one process the point lines show; a fresh process's go to the log only when
			// it fails.
			if tc.perProc == "0" && !strings.Contains(stderr, "fakesweep point [round 3/3, 6/6 thr") || !strings.Contains(stdout, "round: the round") ||
				!strings.Contains(stdout, "as a baseline: 3 round(s) in "+strconv.Itoa(max(tc.processes[2], 1))+" process(es)") {
				t.Fatalf("stderr:\n%s\nstdout:\n%s", stderr, stdout)
			}
		})
	}
}

// Ctrl-C in the middle of a run: exit 1, and the results file holds the point, marked
// incomplete, with what it measured, under status "interrupted".
func TestInterruptKeepsFinishedWork(t *testing.T) {
	out := filepath.Join(t.TempDir(), "int.json")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RPCRDMA_BENCH_MAIN="+strings.Join([]string{"fakerun", "--duration", "1h", "--warmup", "0", "--out", out}, "\n"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "fakerun point") {
			break
		}
	}
	// The point has started; let it measure something, then interrupt. The handler was
	// installed before the point began, so the signal cannot kill the process instead.
	waitForRPCs(t)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	wantInterrupted(t, cmd, sc, &log, out)
	if !strings.Contains(log.String(), "interrupted: 1 point(s) kept") || !strings.Contains(stdout.String(), "MIX:nfs-like*") {
		t.Fatalf("stderr:\n%s\nstdout:\n%s", log.String(), stdout.String())
	}
}

// Ctrl-C while a round runs in a fresh process: the interruption reaches that process, which
// keeps what it measured, and the one results file holds its point, marked with its process,
// under status "interrupted" (exit 4).
func TestInterruptReachesTheRoundsProcess(t *testing.T) {
	out := filepath.Join(t.TempDir(), "int.json")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RPCRDMA_BENCH_MAIN="+strings.Join([]string{"fakerun", "--duration", "1h", "--warmup", "0", "--repeat", "3", "--out", out}, "\n"))
	// A group of its own, so that the bound below ends the round's process too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	defer kill()
	defer time.AfterFunc(2*time.Minute, kill).Stop()
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "fakerun [process 1, rounds 1-1 of 3]") {
			break
		}
	}
	// The round's process starts and measures: give it time to install its handler and to
	// complete RPCs (the file's count is checked, not the time).
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	wantInterrupted(t, cmd, sc, &log, out)
	if r, err := results.ReadFile(out); err != nil || r.Points[0].Process != 1 || r.Points[0].Round != 1 {
		t.Fatalf("%v %+v\n%s", err, r.Points[0], log.String())
	}
}

// waitForRPCs gives the subprocess time to complete some RPCs. The fake answers in 20 µs, so
// a few hundred milliseconds are thousands of RPCs even on a loaded machine; the test checks
// the count in the file, not the time.
func waitForRPCs(t *testing.T) {
	t.Helper()
	time.Sleep(500 * time.Millisecond)
}

// fakeProvider is a datapath.Provider with fixed devices, for the devices command.
type fakeProvider struct {
	name     string
	devs     []datapath.DeviceInfo
	err      error
	defaults datapath.Defaults
}

func (p fakeProvider) Name() string                            { return p.name }
func (p fakeProvider) Devices() ([]datapath.DeviceInfo, error) { return p.devs, p.err }
func (p fakeProvider) Open(string) (datapath.Device, error)    { return nil, datapath.ErrNotSupported }
func (p fakeProvider) Defaults() datapath.Defaults             { return p.defaults }

func withProviders(t *testing.T, ps ...datapath.Provider) {
	saved := builtin
	builtin = ps
	t.Cleanup(func() { builtin = saved })
}

func TestDevices(t *testing.T) {
	dev := datapath.DeviceInfo{Name: "rxe0", Provider: "verbs", NodeType: "RNIC", FirmwareVersion: "1.2.3", MaxInlineData: 256,
		MaxSGE: 32, MaxQPWR: 16384, MaxQPRdAtom: 128, MaxCQE: 65536, MaxMRSize: 1 << 40,
		Ports: []datapath.PortInfo{{Num: 1, State: "ACTIVE", ActiveMTU: 1024, LinkLayer: "Ethernet",
			GIDs: []datapath.GIDInfo{{Index: 1, GID: "::ffff:10.0.2.15", Type: "RoCE v2", NetDev: "eth0"}}}}}
	withProviders(t,
		fakeProvider{name: "soft", devs: []datapath.DeviceInfo{{Name: "soft0", Provider: "soft", NodeType: "soft", MaxInlineData: 64, MaxSGE: 16}}},
		fakeProvider{name: "verbs", devs: []datapath.DeviceInfo{dev}},
		fakeProvider{name: "stub", err: &datapath.OpError{Op: "stub", Err: datapath.ErrNotSupported}},
	)
	code, out, errOut := runMain(t, "devices")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"soft0  provider soft  node soft", "rxe0  provider verbs  node RNIC  fw 1.2.3",
		"max_inline_data 256  max_sge 32  max_qp_wr 16384  max_qp_rd_atom 128", "max_mr_size 1T",
		"port 1  ACTIVE  mtu 1024  link Ethernet", "gid[1] ::ffff:10.0.2.15  RoCE v2  eth0",
		"stub: not available: not supported",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("devices output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runMain(t, "devices", "--device", "rxe0", "--json")
	if code != exitOK || !strings.Contains(out, `"max_qp_rd_atom": 128`) || strings.Contains(out, "soft0") {
		t.Fatalf("--json: %d\n%s", code, out)
	}
	if code, _, errOut := runMain(t, "devices", "--device", "mlx5_0"); code != exitFailed || !strings.Contains(errOut, `no device "mlx5_0"`) {
		t.Fatalf("missing device: %d %q", code, errOut)
	}
}

func TestDevicesReportsProviderFailure(t *testing.T) {
	withProviders(t, fakeProvider{name: "soft", err: errors.New("probe failed")})
	if code, _, errOut := runMain(t, "devices"); code != exitFailed || !strings.Contains(errOut, "soft: probe failed") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// A provider asked for by name that this build lacks fails devices; listing all does not.
func TestDevicesUnsupportedProvider(t *testing.T) {
	withProviders(t, fakeProvider{name: "soft"}, fakeProvider{name: "verbs", err: datapath.ErrNotSupported})
	if code, _, errOut := runMain(t, "devices", "--provider", "verbs"); code != exitFailed || !strings.Contains(errOut, "verbs: not available") {
		t.Fatalf("--provider verbs: exit %d, stderr %q", code, errOut)
	}
	if code, out, errOut := runMain(t, "devices"); code != exitOK || !strings.Contains(out, "verbs: not available") {
		t.Fatalf("all: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// The real soft provider, as compiled in.
func TestDevicesSoft(t *testing.T) {
	code, out, errOut := runMain(t, "devices", "--provider", "soft")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"soft0  provider soft  node soft", "max_inline_data 256  max_sge 32  max_qp_wr 16384  max_qp_rd_atom 16",
		"port 1  ACTIVE  mtu 4096  link soft"} {
		if !strings.Contains(out, want) {
			t.Errorf("devices output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runMain(t, "devices", "--json")
	var devs []datapath.DeviceInfo
	if err := json.Unmarshal([]byte(out), &devs); code != exitOK || err != nil || len(devs) == 0 || devs[0].Name != "soft0" {
		t.Fatalf("--json: exit %d, %v: %s", code, err, out)
	}
	if p, err := lookupProvider(""); err != nil || p.Name() != "soft" {
		t.Fatalf("default provider %v, %v", p, err)
	}
	_, vout, _ := runMain(t, "version")
	if !strings.Contains(vout, "providers: soft verbs") {
		t.Fatalf("version: %s", vout)
	}
	// verbs is always listed; without -tags verbs it says how to get it.
	if p, err := lookupProvider("verbs"); err != nil || p.Name() != "verbs" {
		t.Fatalf("verbs provider: %v", err)
	}
}

// Failed RPCs and open-loop sends that never went out fail the run (exit 1) with a message
// saying so; the file keeps the measurements and the error counts.
func TestRunFailsOnErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		kind string
		msg  string
	}{
		{[]string{"fakefailrun", "--count", "1000"}, "rpc", "RPCs failed (rpc)"},
		{[]string{"fakerun", "--rate", "1e6", "--depth", "1", "--duration", "50ms"}, "missed_sends", "did not keep up"},
	} {
		out := filepath.Join(t.TempDir(), "f.json")
		code, _, stderr := runMain(t, append(tc.args, "--warmup", "0", "--out", out, "-q")...)
		if code != exitFailed || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q", tc.args, code, stderr)
			continue
		}
		r, err := results.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		p := r.Points[0]
		if r.Status.State != results.StateFailed || len(p.Errors) == 0 || p.Errors[0].Kind != tc.kind || p.Errors[0].Count == 0 || p.Throughput.RPCs == 0 {
			t.Errorf("%q: status %+v, errors %+v, %d RPCs", tc.args, r.Status, p.Errors, p.Throughput.RPCs)
		}
	}
}

func TestProgramFlagMeansNull(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nfs.json")
	if code, _, stderr := runMain(t, "fakerun", "--program", "nfs", "--count", "100", "--warmup", "0", "--out", out, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, cfg := readRecord(t, out)
	if w := cfg.Workload; w.Program != 100003 || w.Version != 3 || len(w.Mix) != 1 || w.Mix[0].Proc != "null" || r.Points[0].Params.Procedure != "NULL@100003v3" {
		t.Fatalf("config %+v, params %+v", cfg.Workload, r.Points[0].Params)
	}
}

// A connection that breaks mid-run (the server was killed): exit 1, the cause on stderr, and
// a results file holding the RPCs completed before the break.
func TestBrokenConnectionKeepsWhatWasMeasured(t *testing.T) {
	out := filepath.Join(t.TempDir(), "broken.json")
	code, _, stderr := runMain(t, "fakebreakrun", "--duration", "1h", "--warmup", "0", "--out", out, "-q")
	if code != exitFailed || !strings.Contains(stderr, "poller 0: run: fake: connection broken: peer vanished") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Points[0]
	if r.Status.State != results.StateFailed || !strings.Contains(r.Status.Message, "peer vanished") || p.Complete || p.Throughput.RPCs != 5000 {
		t.Fatalf("status %+v, complete %v, %d RPCs (want the 5000 before the break)", r.Status, p.Complete, p.Throughput.RPCs)
	}
}

// Without --out a measuring command keeps its results in a file named for it; --out= keeps
// none.
func TestDefaultResultsFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if code, _, stderr := runMain(t, "fakerun", "--count", "50", "--warmup", "0", "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "rpcrdma-bench-fakerun-*Z.json"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if _, err := results.ReadFile(files[0]); err != nil {
		t.Fatal(err)
	}
	os.Remove(files[0])
	if code, _, stderr := runMain(t, "fakerun", "--count", "50", "--warmup", "0", "-q", "--out="); code != exitOK || strings.Contains(stderr, "results written") {
		t.Fatalf("--out=: exit %d: %s", code, stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Fatalf("--out= wrote %v", files)
	}
	if got := defaultOut("sweep", time.Date(2026, 11, 22, 4, 5, 6, 0, time.UTC)); got != "rpcrdma-bench-sweep-20261122T040506Z.json" {
		t.Fatalf("defaultOut %q", got)
	}
}

func TestPointWithoutRPCsFails(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.json")
	code, _, stderr := runMain(t, "fakestallrun", "--duration", "20ms", "--warmup", "0", "--depth", "1", "--out", out, "-q")
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if code != exitFailed || r.Status.State != results.StateFailed || !strings.Contains(stderr, "measured no RPC") {
		t.Fatalf("a point that measured nothing: exit %d, status %+v, stderr %q", code, r.Status, stderr)
	}
}

// A second Ctrl-C 1 to 5 ms after the first (a double press, or `timeout -s INT`) skips the
// drain but loses nothing: the results file holds the point in progress with its RPCs,
// marked incomplete, under status "interrupted".
func TestSecondInterruptKeepsThePoint(t *testing.T) {
	for _, gap := range []time.Duration{time.Millisecond, 5 * time.Millisecond} {
		t.Run(gap.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "int.json")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "RPCRDMA_BENCH_MAIN="+strings.Join([]string{"run", "--duration", "1h", "--warmup", "0", "--depth", "8", "--out", out}, "\n"))
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			sc := bufio.NewScanner(stderr)
			var log strings.Builder
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "run point") {
					break
				}
			}
			waitForRPCs(t)
			for i := range 2 {
				if i > 0 {
					time.Sleep(gap)
				}
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			wantInterrupted(t, cmd, sc, &log, out)
		})
	}
}

// wantInterrupted reads the rest of an interrupted run's output into log, and fails the test
// unless the run exited with exitFailed and its file out holds one incomplete point with RPCs,
// marked interrupted.
func wantInterrupted(t *testing.T, cmd *exec.Cmd, sc *bufio.Scanner, log *strings.Builder, out string) {
	t.Helper()
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailed {
		t.Fatalf("exit: %v, want status %d\n%s", err, exitFailed, log.String())
	}
	r, rerr := results.ReadFile(out)
	if rerr != nil {
		t.Fatalf("%v\n%s", rerr, log.String())
	}
	if r.Status.State != results.StateInterrupted || len(r.Points) != 1 || r.Points[0].Complete || r.Points[0].Throughput.RPCs == 0 {
		t.Fatalf("status %+v, points %d, %+v", r.Status, len(r.Points), r.Points)
	}
}
