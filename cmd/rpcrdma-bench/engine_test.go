package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// Killing the server mid-run (two processes, soft over TCP) leaves the client with exit 1, a
// message naming the broken connection, and a results file holding the RPCs completed before
// the break.
func TestEngineServerKilledMidRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "client.json")
	// A second lets it complete some RPCs; the file says how many.
	log := clientWhenServerStops(t, out, time.Second, (*os.Process).Kill)
	if !strings.Contains(log, "broken") {
		t.Fatalf("no clear message:\n%s", log)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.State != results.StateFailed || len(r.Points) != 1 || r.Points[0].Complete || r.Points[0].Throughput.RPCs == 0 {
		t.Fatalf("status %+v, points %+v", r.Status, r.Points)
	}
}

// The open-loop example in run's help works on the soft provider of a small machine: its
// rate is one that a 2-core machine sustains (it measures for a short time here).
func TestHelpRateExampleRuns(t *testing.T) {
	_, help, _ := runMain(t, "run", "--help")
	m := regexp.MustCompile(`rpcrdma-bench run (--rate \d+[^#]*?) --out run.json`).FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("run --help has no --rate example:\n%s", help)
	}
	args := append([]string{"run", "--duration", "1s", "--warmup", "200ms", "-q", "--out="}, strings.Fields(m[1])...)
	if code, _, stderr := runMain(t, args...); code != exitOK {
		t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
}

// --program nfs3 needs an NFS server and names its files: mistakes are usage errors found
// before anything is measured, and an unreachable server's mountd is named with its cause.
func TestNFSProgramInputs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--program", "nfs3", "--mix", "read/4k"}, exitUsage, "--program nfs3 needs --addr"},
		{[]string{"client", "--addr", "127.0.0.1:1", "--program", "nfs3", "--mix", "read/4k", "--nfs-export", "nocolon"}, exitUsage, `--nfs-export "nocolon": want HOST:/PATH`},
		{[]string{"client", "--addr", "127.0.0.1:1", "--program", "nfs3", "--mix", "echo"}, exitUsage, `unknown procedure "echo" of program nfs3`},
		{[]string{"client", "--addr", "127.0.0.1:1", "--program", "nfs3", "--mix", "read/4k", "--nfs-mountd", "1"}, exitFailed, "mount 127.0.0.1:/: MNT: "},
	} {
		code, _, stderr := runMain(t, append(tc.args, "-q", "--out=")...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// A sweep against a server that offers 4 KiB inline, asked for 1k and 16k: the 16k points
// ran at 4 KiB, so the table, the switches, the threshold answer and the file say 4096 (the
// offer kept beside it), and one warning says the server capped the offer.
func TestEngineSweepLabelsTheNegotiatedThreshold(t *testing.T) {
	srv, err := openServer(&session.ServeConfig{Provider: "soft", Listen: "127.0.0.1:0", Threshold: 4096, MaxPayload: 1 << 20,
		Pollers: 1, MaxConnections: 64, Poll: session.ServerPoll("soft")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() { cancel(); <-served }()

	out := filepath.Join(t.TempDir(), "sweep.json")
	code, stdout, stderr := runMain(t, "sweep", "--addr", srv.Addr(), "--thresholds", "1k,16k", "--sizes", "64,2k,8k",
		"--depth", "1", "--count", "20", "--warmup", "0", "--out", out, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The offer is read as JSON: a file field, whatever the Go name.
	var raw struct {
		Points []struct {
			Params struct {
				Threshold int `json:"inline_threshold_bytes"`
				Offered   int `json:"offered_inline_threshold_bytes"`
			} `json:"params"`
			Negotiated struct {
				Local struct {
					SendBytes int `json:"send_bytes"`
				} `json:"local_private_data"`
			} `json:"negotiated"`
		} `json:"points"`
	}
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &raw) != nil || len(raw.Points) != 6 {
		t.Fatalf("read %s: %v, %d points", out, err, len(raw.Points))
	}
	for _, p := range raw.Points {
		want, offered := 1024, 0
		if p.Negotiated.Local.SendBytes == 16<<10 {
			want, offered = 4096, 16<<10
		}
		if p.Params.Threshold != want || p.Params.Offered != offered {
			t.Errorf("point %+v: want threshold %d, offered %d", p, want, offered)
		}
	}
	got := session.Switches(r)
	wantSw := []workloads.Switch{
		{Threshold: 1024, Depth: 1, From: rpcproto.Short, To: rpcproto.Long, Below: 64, At: 2048},
		{Threshold: 4096, Depth: 1, From: rpcproto.Short, To: rpcproto.Long, Below: 2048, At: 8192},
	}
	if len(got) != 2 || got[0] != wantSw[0] || got[1] != wantSw[1] {
		t.Errorf("switches %+v, want %+v", got, wantSw)
	}
	for _, c := range results.BestThresholds([]*results.Run{r}, 0) {
		for _, cand := range c.Candidates {
			if cand.Threshold != 1024 && cand.Threshold != 4096 {
				t.Errorf("threshold answer %v names a threshold that never applied", c.Row())
			}
		}
	}
	for _, l := range strings.Split(stdout, "\n") {
		if (strings.HasPrefix(strings.TrimSpace(l), "ECHO") || strings.HasPrefix(strings.TrimSpace(l), "thr ")) &&
			(strings.Contains(l, "16k") || strings.Contains(l, "16384")) {
			t.Errorf("a row labels a point with the threshold the server refused: %q", l)
		}
	}
	if !strings.Contains(stdout, "thr 4k") || !strings.Contains(stdout, "16384 offered, 4096 in effect") {
		t.Errorf("stdout lacks the effective threshold or the note under the table:\n%s", stdout)
	}
	// Three points were capped alike: one warning says so, not one each.
	if n := strings.Count(stderr, "offered 16k, in effect 4k"); n != 1 {
		t.Errorf("stderr has %d warnings of the cap, want 1:\n%s", n, stderr)
	}
}

// --soft-delay holds every completion back: a depth-1 ECHO waits for two of them (the
// responder's receive, then the requester's), so no round trip is shorter than twice the
// delay; the results file's config records the slowdown.
func TestSoftDelaySlowsEveryRoundTrip(t *testing.T) {
	out := filepath.Join(t.TempDir(), "slow.json")
	code, _, stderr := runMain(t, "run", "--mix", "echo/64", "--depth", "1", "--count", "20", "--warmup", "0",
		"--soft-delay", "2ms", "--soft-bandwidth", "10Gbit", "--out", out, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Points[0].RTT.Min; m == nil || *m < int64(4*time.Millisecond) {
		t.Fatalf("shortest RTT %v ns, want at least 2 × 2 ms", m)
	}
	var cfg struct {
		Slow struct {
			Delay string  `json:"completion_delay"`
			Bps   float64 `json:"bandwidth_bps"`
		} `json:"soft_slowdown"`
	}
	if err := json.Unmarshal(r.Config, &cfg); err != nil || cfg.Slow.Delay != "2ms" || cfg.Slow.Bps != 1e10 {
		t.Fatalf("config %s: %v", r.Config, err)
	}
}

// The second interrupt does skip the drain: with every completion held back 300 ms (the
// soft provider's slowdown), RPCs are still outstanding when it comes; the file keeps what
// completed, counts the rest as abandoned and says the drain was skipped. Sent 5 ms after
// the first, the two may reach a loaded process as one (the kernel keeps one pending
// SIGINT), which then drains as after one: either way the file holds the point's RPCs.
// Sent once the first was noticed, the second always skips the drain.
func TestSecondInterruptSkipsTheDrain(t *testing.T) {
	for _, waitFirst := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "int.json")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "RPCRDMA_BENCH_MAIN="+strings.Join([]string{"run", "--mix", "echo/64", "--depth", "8",
			"--duration", "1h", "--warmup", "0", "--soft-delay", "300ms", "--out", out}, "\n"))
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
		until := func(prefix string) {
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), prefix) {
					return
				}
			}
		}
		until("run point")
		time.Sleep(1500 * time.Millisecond) // round trips of at least 600 ms: some complete
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if waitFirst {
			until("rpcrdma-bench: interrupt: stopping")
		} else {
			time.Sleep(5 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		until("\x00") // to the end
		cmd.Wait()
		r, err := results.ReadFile(out)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		p := r.Points[0]
		skipped := r.Status.Message == "interrupted by a signal; a second one skipped the drain" && !p.Complete &&
			len(p.Errors) == 1 && p.Errors[0].Kind == "abandoned" && p.Errors[0].Count > 0
		drained := !waitFirst && r.Status.Message == "interrupted by a signal"
		if p.Throughput.RPCs == 0 || !skipped && !drained {
			t.Fatalf("second signal sent once the first was noticed: %v; status %+v, %d RPCs, errors %+v\n%s", waitFirst,
				r.Status, p.Throughput.RPCs, p.Errors, log.String())
		}
	}
}
