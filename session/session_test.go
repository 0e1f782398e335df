package session

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads/workloadstest"
)

// fakeConnector connects every point to in-memory fake Clients: the session runs end to end
// without the transport engine. pointErr fails the setup of point number failPoint (1-based).
type fakeConnector struct {
	failEvery int
	failPoint int
	pointErr  error
	points    int
	gcPoint   int           // the point whose connection setup runs a collection
	latency   time.Duration // every RPC's (0: 10µs)
	slowAt    int           // a threshold whose RPCs take 2 ms (0: none)
}

// HostCPU is a quiet host: the verdicts of tests must not depend on the machine's load.
func (*fakeConnector) HostCPU() (datapath.HostCPU, error) { return datapath.HostCPU{}, nil }

// HostSpeed is a host whose speed never changes: the fakes' verdicts are the fakes' own.
func (*fakeConnector) HostSpeed() datapath.HostSpeed {
	return datapath.HostSpeed{ComputeNs: 2.5, CopyNsPerKiB: 25, PingPongNs: 60, CPUs: 2}
}

var errFakeRPC = errors.New("fake: reply checksum mismatch")

func (*fakeConnector) Device() *datapath.DeviceInfo {
	return &datapath.DeviceInfo{Name: "fake0", Provider: "fake", Ports: []datapath.PortInfo{{Num: 1}}}
}

func (f *fakeConnector) Point(pt workloads.Point) (workloads.Opener, func() PointReport, error) {
	f.points++
	if f.points == f.failPoint {
		return nil, nil, f.pointErr
	}
	gc := f.points == f.gcPoint
	open := func(_ context.Context, poller, conns int) (workloads.Client, error) {
		if gc {
			runtime.GC()
		}
		c := workloadstest.New(pt.Workload.Depth * conns)
		c.Latency, c.Threshold = cmp.Or(f.latency, 10*time.Microsecond), pt.Threshold
		if pt.Threshold == f.slowAt {
			c.Latency = 2 * time.Millisecond
		}
		c.FailEvery, c.RPCErr = f.failEvery, errFakeRPC
		return c, nil
	}
	rep := func() PointReport {
		return PointReport{Negotiated: &results.Negotiated{Role: "requester", InlineSendBytes: pt.Threshold}}
	}
	return open, rep, nil
}

func (*fakeConnector) Close() error { return nil }

// points is a two-point sweep of ECHO at 64 B and 8 KiB, 200 RPCs each.
func points(t *testing.T) []workloads.Point {
	t.Helper()
	s := workloads.Sweep{Thresholds: []int{4096}, Sizes: []int{64, 8192}, Depths: []int{4}, Proc: "echo",
		Base: workloads.Config{Prog: benchprog.Prog, Count: 200, Warmup: workloads.NoWarmup}}
	pts, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	return pts
}

func config(t *testing.T, conn Connector, out string) Config {
	return Config{Command: "test", Points: points(t), RunConfig: map[string]string{"k": "v"}, Provider: "fake",
		Connector: conn, Out: out, Interval: 10 * time.Millisecond}
}

// A session runs every point, files each with its classes and what the connector reported,
// keeps the file current and ends complete.
func TestRunWritesEveryPoint(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	var log bytes.Buffer
	c := config(t, &fakeConnector{}, out)
	c.Log = &log
	ended := 0
	var lines []string
	c.Progress = func(label, line string, lives []*workloads.Live) Display {
		if !strings.HasPrefix(label, "[") || len(lives) != 1 {
			t.Errorf("progress of %q with %d lives", label, len(lives))
		}
		lines = append(lines, line)
		return endFunc(func() { ended++ })
	}
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if o.Err != nil || o.Interrupted || o.Written != out || o.WriteErr != nil || ended != 2 {
		t.Fatalf("outcome %+v, %d progress ended", o, ended)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.State != results.StateComplete || len(r.Points) != 2 || !strings.Contains(string(r.Config), `"k": "v"`) || r.Environment.Provider != "fake" {
		t.Fatalf("file: status %+v, %d points, config %s", r.Status, len(r.Points), r.Config)
	}
	small, large := r.Points[0], r.Points[1]
	if small.Params.Procedure != "ECHO" || small.Params.CallBytes != 64 || small.Throughput.RPCs != 200 || small.Classes[0].Class != "short" {
		t.Fatalf("point 1: %+v %+v", small.Params, small.Classes)
	}
	if large.Classes[0].Class != "long" || large.Negotiated == nil || large.Negotiated.InlineSendBytes != 4096 {
		t.Fatalf("point 2: %+v negotiated %+v", large.Classes, large.Negotiated)
	}
	var sum uint64
	for _, iv := range small.Intervals {
		sum += iv.RPCs
	}
	if sum != small.Throughput.RPCs {
		t.Errorf("intervals add up to %d of %d RPCs", sum, small.Throughput.RPCs)
	}
	// The progress display shows the points' lines, not the log.
	if n := strings.Count(strings.Join(lines, "\n"), "test point ["); n != 2 || strings.Contains(log.String(), "test point [") {
		t.Errorf("progress lines %q; log:\n%s", lines, log.String())
	}
	if sw := Switches(r); len(sw) != 1 || sw[0].Below != 64 || sw[0].At != 8192 {
		t.Errorf("switches %+v", sw)
	}
}

// Failed RPCs fail the run and are counted by kind; the points stay in the file.
func TestFailedRPCsFailTheRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	o, err := Run(context.Background(), config(t, &fakeConnector{failEvery: 10}, out))
	if err != nil {
		t.Fatal(err)
	}
	if o.Run.Status.State != results.StateFailed || !strings.Contains(o.Run.Status.Message, "RPCs failed (rpc)") || o.Written != out {
		t.Fatalf("status %+v, written %q", o.Run.Status, o.Written)
	}
}

// A point that cannot be set up ends the session with its error; what ran before is kept.
func TestSetupFailureKeepsEarlierPoints(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	refused := errors.New("connect: connection refused")
	o, err := Run(context.Background(), config(t, &fakeConnector{failPoint: 2, pointErr: refused}, out))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(o.Err, refused) || len(o.Run.Points) != 1 || o.Run.Status.State != results.StateFailed {
		t.Fatalf("outcome %+v", o)
	}
	if r, err := results.ReadFile(out); err != nil || len(r.Points) != 1 || r.Status.State != results.StateFailed {
		t.Fatalf("file: %v %+v", err, r)
	}
}

// A cancelled context ends the session as interrupted, before or between points.
func TestCancelledIsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, err := Run(ctx, config(t, &fakeConnector{}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !o.Interrupted || o.Run.Status.State != results.StateInterrupted || len(o.Run.Points) != 0 || o.Written != "" {
		t.Fatalf("outcome %+v", o)
	}
}

// Stdout writes the file once, at the end, to ResultsTo.
func TestStdout(t *testing.T) {
	var b bytes.Buffer
	c := config(t, &fakeConnector{}, Stdout)
	c.ResultsTo = &b
	o, err := Run(context.Background(), c)
	if err != nil || o.WriteErr != nil {
		t.Fatal(err, o.WriteErr)
	}
	r, err := results.Read(&b)
	if err != nil || len(r.Points) != 2 || r.Status.State != results.StateComplete {
		t.Fatalf("%v %+v", err, r)
	}
}

// A write that fails after the measurement puts the results into a rescue file and says
// so; the failure is reported once.
func TestRescueWhenWriteFails(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	errDisk := errors.New("no space left on device")
	writeResults = func(string, *results.Run) error { return errDisk }
	t.Cleanup(func() { writeResults = results.WriteFile })
	var log bytes.Buffer
	c := config(t, &fakeConnector{}, filepath.Join(dir, "x.json"))
	c.Log = &log
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(o.WriteErr, errDisk) || !o.WriteErrLogged || !o.Rescued || o.RescueErr != nil {
		t.Fatalf("outcome %+v", o)
	}
	if strings.Count(log.String(), "no space left on device") != 1 {
		t.Errorf("log:\n%s", log.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "rpcrdma-bench-test-rescued-*.json"))
	if len(files) != 1 || files[0] != o.Written {
		t.Fatalf("rescue files %v, written %q", files, o.Written)
	}
	r, err := results.ReadFile(files[0])
	if err != nil || len(r.Points) != 2 {
		t.Fatalf("rescue file: %v %+v", err, r)
	}
	os.Remove(files[0])
}

// A mix of several procedures is broken down by procedure in the file, the counts adding up
// to the point's; a point of one procedure is not.
func TestMixByProcedure(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	mix, err := workloads.ParseMix("echo/64:3,sink/4k,null", benchprog.Prog)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workloads.Config{Prog: benchprog.Prog, Mix: mix, Depth: 4, Count: 400, Warmup: workloads.NoWarmup}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	c := config(t, &fakeConnector{failEvery: 50}, out)
	c.Points = []workloads.Point{{Threshold: 4096, Depth: 4, Workload: w}}
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Points[0]
	var names []string
	var n, errs uint64
	for _, ps := range p.Procedures {
		names = append(names, ps.Procedure)
		n += ps.RTT.Count
		errs += ps.Errors
	}
	if strings.Join(names, ",") != "null,echo,sink" || n != p.RTT.Count || errs == 0 {
		t.Fatalf("procedures %v: %d of %d RPCs, %d errors", names, n, p.RTT.Count, errs)
	}
}

// The collector is off while a point runs, its settings come back afterwards, and a cycle
// that runs anyway is counted in the point; GOGC in the environment keeps the user's policy.
func TestGCOffWhileMeasuring(t *testing.T) {
	t.Setenv("GOGC", "")
	was := debug.SetGCPercent(77)
	defer debug.SetGCPercent(was)
	out := filepath.Join(t.TempDir(), "r.json")
	c := config(t, &fakeConnector{gcPoint: 2}, out)
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if p := debug.SetGCPercent(77); p != 77 {
		t.Errorf("GOGC after the run: %d, want 77 back", p)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	quiet, collected := r.Points[0].GC, r.Points[1].GC
	if quiet == nil || !quiet.Off || quiet.LimitBytes <= 0 || quiet.Cycles != 0 {
		t.Errorf("point 1: gc %+v, want off with a limit and no cycle", quiet)
	}
	if collected == nil || !collected.Off || collected.Cycles < 1 || !slices.ContainsFunc(r.Points[1].Disturbed, func(s string) bool { return strings.Contains(s, "garbage collection") }) {
		t.Errorf("point 2 (a collection at setup): gc %+v, want off and at least 1 cycle", collected)
	}

	t.Setenv("GOGC", "100")
	c = config(t, &fakeConnector{}, out)
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if r, err = results.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	if g := r.Points[0].GC; g == nil || g.Off {
		t.Errorf("with GOGC=100 set: gc %+v, want the collector left on", g)
	}
}

// Rounds interleave: every round measures every point once, each point records its round,
// the display says which round, and the class switches read every round together.
func TestRoundsInterleaveThePoints(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	var log bytes.Buffer
	c := config(t, &fakeConnector{}, out)
	c.Log, c.Rounds = &log, 3
	var labels, lines []string
	c.Progress = func(label, line string, lives []*workloads.Live) Display {
		labels, lines = append(labels, label), append(lines, line)
		return endFunc(func() {})
	}
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, p := range r.Points {
		got = append(got, p.Round, p.Params.CallBytes)
	}
	if want := []int{1, 64, 1, 8192, 2, 64, 2, 8192, 3, 64, 3, 8192}; !slices.Equal(got, want) || r.Status.State != results.StateComplete {
		t.Fatalf("rounds and sizes %v, want %v; status %+v", got, want, r.Status)
	}
	if len(labels) != 6 || labels[2] != "[round 2/3, 1/2 thr 4k size 64 depth 4]" || !strings.HasPrefix(lines[5], "test point [round 3/3, 2/2 ") {
		t.Errorf("labels %q, lines %q", labels, lines)
	}
	if sw := Switches(r); len(sw) != 1 || sw[0].Below != 64 || sw[0].At != 8192 {
		t.Errorf("switches %+v", sw)
	}
}

// Shuffled rounds each measure every point once, in an order drawn from the seed: the same
// seed gives the same orders.
func TestShuffledRoundsFollowTheSeed(t *testing.T) {
	s := workloads.Sweep{Thresholds: []int{1024, 4096}, Sizes: []int{64, 256, 1024, 4096}, Depths: []int{1},
		Base: workloads.Config{Prog: benchprog.Prog, Count: 20, Warmup: workloads.NoWarmup}}
	pts, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	order := func(seed uint64) []string {
		c := Config{Command: "test", Points: pts, Provider: "fake", Connector: &fakeConnector{}, Rounds: 3, Shuffle: true, Seed: seed}
		o, err := Run(context.Background(), c)
		if err != nil || o.Run.Status.State != results.StateComplete {
			t.Fatalf("%v %+v", err, o.Run.Status)
		}
		var keys []string
		for i, p := range o.Run.Points {
			keys = append(keys, p.Params.Key())
			if p.Round != i/len(pts)+1 {
				t.Fatalf("point %d in round %d", i, p.Round)
			}
		}
		for round := range 3 {
			seen := slices.Clone(keys[round*len(pts) : (round+1)*len(pts)])
			slices.Sort(seen)
			if len(slices.Compact(seen)) != len(pts) {
				t.Fatalf("round %d repeats a point: %q", round+1, keys)
			}
		}
		return keys
	}
	a, b, other := order(7), order(7), order(8)
	if !slices.Equal(a, b) || slices.Equal(a, other) || slices.Equal(a[:len(pts)], a[len(pts):2*len(pts)]) {
		t.Fatalf("seed 7: %q\nagain: %q\nseed 8: %q", a, b, other)
	}
}

// AfterRound sees the run after every round but the last; false ends the session there,
// complete (the hook a judgement that adds rounds until it is conclusive uses).
func TestAfterRoundEndsTheSession(t *testing.T) {
	c := config(t, &fakeConnector{}, "")
	c.Rounds = 10
	var seen []int
	c.AfterRound = func(r *results.Run, round int) bool {
		seen = append(seen, round, len(r.Points))
		return round < 2
	}
	o, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{1, 2, 2, 4}) || len(o.Run.Points) != 4 || o.Run.Status.State != results.StateComplete {
		t.Fatalf("hook saw %v; %d points, status %+v", seen, len(o.Run.Points), o.Run.Status)
	}
}

// noisyConnector runs on a host where, over each point, other processes take a quarter of
// the CPU time: 150 of 200 ticks busy, 100 of them this process's.
type noisyConnector struct {
	fakeConnector
	reads int
}

func (c *noisyConnector) HostCPU() (datapath.HostCPU, error) {
	c.reads++
	if c.reads%2 == 1 {
		return datapath.HostCPU{}, nil
	}
	return datapath.HostCPU{BusyTicks: 150, TotalTicks: 200, SelfNs: 1e9}, nil
}

// A point during which other processes took more than MaxOtherCPU of the host's CPU time
// records their share and is disturbed: compare leaves it out or decides nothing on it.
func TestNeighbourDisturbsPoint(t *testing.T) {
	o, err := Run(context.Background(), config(t, &noisyConnector{}, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range o.Run.Points {
		if p.HostOtherCPU == nil || *p.HostOtherCPU != 25 || !results.Disturbed(&p) ||
			!strings.Contains(strings.Join(p.Disturbed, "; "), "other processes used 25% of the host CPU time") {
			t.Errorf("point %s: other %v, disturbed %q", p.Params.Key(), p.HostOtherCPU, p.Disturbed)
		}
	}
}

// endFunc is a Display that shows nothing and calls itself at the end.
type endFunc func()

func (endFunc) Every() time.Duration { return 0 }
func (endFunc) Update(int64)         {}
func (f endFunc) End()               { f() }

// Every point records the host's speed, read before its pollers start: the host's own probe
// for a connector that does not say how to read it, the connector's reading otherwise.
func TestPointsRecordTheHostSpeed(t *testing.T) {
	type plain struct{ Connector } // hides HostReader
	for _, tc := range []struct {
		name string
		conn Connector
		want func(*results.HostSpeed) bool
	}{
		{"probed", plain{&fakeConnector{}}, func(h *results.HostSpeed) bool { return h.CPUs >= 1 && h.ComputeNs > 0 && h.CopyNsPerKiB > 0 }},
		{"connector's", &fakeConnector{}, func(h *results.HostSpeed) bool {
			return *h == results.HostSpeed{ComputeNs: 2.5, CopyNsPerKiB: 25, PingPongNs: 60, CPUs: 2}
		}},
	} {
		o, err := Run(context.Background(), config(t, tc.conn, ""))
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range o.Run.Points {
			if p.Host == nil || !tc.want(p.Host) {
				t.Errorf("%s: point %d host %+v", tc.name, i, p.Host)
			}
		}
	}
}
