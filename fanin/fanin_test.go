package fanin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads/workloadstest"
)

// fakeServer is a server rank that listens nowhere: the fake clients need no server, but
// fail once it stopped when they share stopped with it.
type fakeServer struct {
	addr    string
	stopped *atomic.Bool
}

func (s fakeServer) Addr() string { return s.addr }
func (s fakeServer) Serve(ctx context.Context) error {
	<-ctx.Done()
	if s.stopped != nil {
		s.stopped.Store(true)
	}
	return nil
}
func (s fakeServer) Close() error { return nil }

// fakeConnector connects every point to in-memory fake Clients; openErr fails every open.
type fakeConnector struct {
	openErr error
	served  *atomic.Bool // the server stopped: the clients' connections break
}

func (*fakeConnector) HostCPU() (datapath.HostCPU, error) { return datapath.HostCPU{}, nil }
func (*fakeConnector) HostSpeed() datapath.HostSpeed {
	return datapath.HostSpeed{ComputeNs: 2.5, CopyNsPerKiB: 25, PingPongNs: 60, CPUs: 2}
}
func (*fakeConnector) Device() *datapath.DeviceInfo {
	return &datapath.DeviceInfo{Name: "fake0", Provider: "fake", Ports: []datapath.PortInfo{{Num: 1}}}
}
func (*fakeConnector) Close() error { return nil }
func (f *fakeConnector) Point(pt workloads.Point) (workloads.Opener, func() session.PointReport, error) {
	open := func(_ context.Context, poller, conns int) (workloads.Client, error) {
		if f.openErr != nil {
			return nil, f.openErr
		}
		c := workloadstest.New(pt.Workload.Depth * conns)
		c.Latency, c.Threshold = 20*time.Microsecond, pt.Threshold
		if f.served != nil {
			c.Observe = func(c *workloadstest.Fake) {
				if f.served.Load() {
					c.FailAfter, c.Err = 1, errors.New("the server closed the connection")
				}
			}
		}
		return sleepy{c}, nil
	}
	rep := func() session.PointReport {
		return session.PointReport{Negotiated: &results.Negotiated{Role: "requester", InlineSendBytes: pt.Threshold}}
	}
	return open, rep, nil
}

// sleepy is a fake Client whose event poller sleeps while it waits: ranks in one process
// must not spin each other off the CPUs.
type sleepy struct{ *workloadstest.Fake }

func (sleepy) Wait(d time.Duration) error {
	time.Sleep(min(d, 20*time.Microsecond))
	return nil
}

// job runs every rank of a local job with the Config cfg gives each, and returns rank 0's
// results and every rank's error; a rank whose goroutine exits without returning (Goexit,
// a "killed" rank) has errDied.
var errDied = errors.New("rank died")

func job(t *testing.T, n int, cfg func(rank int) fanin.Config) (*results.Run, []error) {
	t.Helper()
	return jobCtx(t, context.Background(), n, cfg)
}

// jobCtx is job with every rank's context ctx.
func jobCtx(t *testing.T, ctx context.Context, n int, cfg func(rank int) fanin.Config) (*results.Run, []error) {
	t.Helper()
	comms := fanin.NewLocal(n, "localhost")
	errs := make([]error, n)
	var r0 *results.Run
	var wg sync.WaitGroup
	for i, comm := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = errDied
			c := cfg(i)
			c.Comm = comm
			r, err := fanin.Run(ctx, c)
			errs[i] = err
			if i == 0 {
				r0 = r
			}
		}()
	}
	wg.Wait()
	return r0, errs
}

// config measures with fake clients for d (a warm-up of 20 ms first), ECHO of 64 B at depth 4
// on 2 connections of a poller each: every poller of a rank passes the gate.
func config(t *testing.T, out string, d time.Duration, conn func(rank int) session.Connector) func(rank int) fanin.Config {
	return func(rank int) fanin.Config {
		w := workloads.Config{Prog: benchprog.Prog, Mix: []workloads.MixEntry{{Proc: "echo", Weight: 1, Size: workloads.Sizes{Values: []int{64}}}},
			Depth: 4, Connections: 2, Pollers: 2, Poll: datapath.Poll{Mode: datapath.PollEvent}, Duration: workloads.Duration(d), Warmup: workloads.Duration(20 * time.Millisecond), Drain: workloads.Duration(200 * time.Millisecond)}
		w, err := w.Normalized()
		if err != nil {
			t.Error(err)
		}
		pts := []workloads.Point{{Threshold: 4096, Size: 64, Depth: 4, Workload: w}}
		return fanin.Config{
			Out:       out,
			RunConfig: map[string]string{"command": "fanin"},
			Serve:     func() (fanin.Server, error) { return fakeServer{addr: fmt.Sprintf("0.0.0.0:%d", 20000+rank)}, nil },
			Measure: func(ctx, hurry context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
				o, err := session.Run(ctx, session.Config{Command: "fanin", Points: pts, Provider: "fake", Connector: wrap(conn(rank))})
				if err != nil {
					return nil, err
				}
				return o.Run, o.Err
			},
		}
	}
}

// succeeded checks that no rank failed and returns rank 0's file.
func succeeded(t *testing.T, errs []error, out string) *results.Run {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", i, err)
		}
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func plain(int) session.Connector { return &fakeConnector{} }

// One server rank and three client ranks: rank 0 writes one file whose point merges the
// three ranks' points exactly, and whose ranks measured together.
func TestFanInMergesRanks(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fanin.json")
	r, errs := job(t, 4, config(t, out, time.Second, plain))
	f := succeeded(t, errs, out)
	if f.Status.State != results.StateComplete || len(f.Points) != 1 || r == nil || len(r.Points) != 1 {
		t.Fatalf("status %+v, %d points", f.Status, len(f.Points))
	}
	p := f.Points[0]
	fi := p.FanIn
	if fi == nil || len(fi.Ranks) != 3 || len(fi.ServerRanks) != 1 || fi.ServerRanks[0].Rank != 0 || fi.ServerRanks[0].CPU == nil || fi.ServerRanks[0].WallNs < int64(time.Second) {
		t.Fatalf("fanin %+v", fi)
	}
	var sum uint64
	var rate float64
	for i, rp := range fi.Ranks {
		if rp.Rank != i+1 || rp.Host != "localhost" || rp.Server != "localhost:20000" || rp.Device != "fake0" || rp.Point.RTT.Count == 0 {
			t.Errorf("rank entry %d: rank %d host %q server %q device %q count %d", i, rp.Rank, rp.Host, rp.Server, rp.Device, rp.Point.RTT.Count)
		}
		if rp.ClockErrorNs <= 0 || rp.ClockOffsetNs < -rp.ClockErrorNs || rp.ClockOffsetNs > rp.ClockErrorNs {
			// One host, one clock: the true offset is 0, within the estimate's bound.
			t.Errorf("rank %d: clock offset %d ns, error bound %d ns: 0 is not within", rp.Rank, rp.ClockOffsetNs, rp.ClockErrorNs)
		}
		sum += rp.Point.RTT.Count
		rate += rp.Point.Throughput.RPCPerSec
	}
	h, err := results.DecodeHistogram(p.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	if p.RTT.Count != sum || uint64(h.TotalCount()) != sum || p.Throughput.RPCPerSec != rate || p.Params.Connections != 6 {
		t.Errorf("merged count %d, histogram %d, rate %v, connections %d; ranks' sum %d, rate %v", p.RTT.Count, h.TotalCount(), p.Throughput.RPCPerSec, p.Params.Connections, sum, rate)
	}
	for _, rp := range fi.Ranks {
		t.Logf("rank %d: %v .. %v (start clock %v)", rp.Rank, rp.Point.Start.Format("05.000000"), rp.Point.End.Format("05.000000"), rp.StartClock.Format("05.000000"))
	}
	if fi.Overlap < 0.95 {
		t.Errorf("the ranks' intervals overlap %.3f, want >= 0.95", fi.Overlap)
	}
	var text bytes.Buffer
	if err := results.WriteText(&text, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`fan-in ECHO.*: 3 client rank\(s\), server rank\(s\) 0 \(localhost:20000\); skew `, `\n +rank +host +server +conns`, `\n +3 +localhost +localhost:20000 +2 `, `\n  server rank 0 \(host localhost, localhost:20000\): CPU [0-9.]+ s \(user`} {
		if !regexp.MustCompile(want).MatchString(text.String()) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	if fi.Jain <= 0 || fi.Jain > 1 || fi.SlowestRank < 1 || fi.P50Spread == nil || fi.P50Spread[0] > fi.P50Spread[1] {
		t.Errorf("fairness: jain %v slowest %d p50 %v", fi.Jain, fi.SlowestRank, fi.P50Spread)
	}
}

// Pairs: rank 2k serves rank 2k+1 only.
func TestFanInPairs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pairs.json")
	c := config(t, out, 100*time.Millisecond, plain)
	_, errs := job(t, 4, func(rank int) fanin.Config {
		cf := c(rank)
		cf.Pairs = true
		return cf
	})
	fi := succeeded(t, errs, out).Points[0].FanIn
	if len(fi.Ranks) != 2 || fi.Ranks[0].Server != "localhost:20000" || fi.Ranks[1].Server != "localhost:20002" || len(fi.ServerRanks) != 2 {
		t.Fatalf("pairs: %+v", fi)
	}
}

// A client rank that cannot connect fails the run with its rank, host and cause; the others
// stop without measuring and rank 0 still writes the file.
func TestFanInConnectFailure(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fail.json")
	refused := errors.New("connect: connection refused")
	_, errs := job(t, 4, config(t, out, 100*time.Millisecond, func(rank int) session.Connector {
		if rank == 2 {
			return &fakeConnector{openErr: refused}
		}
		return &fakeConnector{}
	}))
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "rank 2 (host localhost)") || !strings.Contains(errs[0].Error(), "connection refused") {
		t.Fatalf("rank 0: %v, want rank 2's failure", errs[0])
	}
	if errs[2] == nil || errs[1] != nil || errs[3] != nil {
		t.Errorf("ranks' errors %v: want rank 2's own only", errs)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status.State != results.StateFailed || !strings.Contains(f.Status.Message, "rank 2 (host localhost)") {
		t.Errorf("status %+v", f.Status)
	}
}

// A client rank that dies mid-run fails the run naming it; the others stop cleanly and
// rank 0 keeps what they measured, the point marked incomplete.
func TestFanInRankDies(t *testing.T) {
	out := filepath.Join(t.TempDir(), "died.json")
	c := config(t, out, 5*time.Second, plain)
	start := time.Now()
	_, errs := job(t, 4, func(rank int) fanin.Config {
		cf := c(rank)
		if rank == 3 {
			measure := cf.Measure
			cf.Measure = func(ctx, hurry context.Context, addr string, wrap func(session.Connector) session.Connector) (*results.Run, error) {
				go func() { measure(ctx, hurry, addr, wrap) }()
				time.Sleep(300 * time.Millisecond)
				runtime.Goexit() // the rank's process is gone: its connections close
				return nil, nil
			}
		}
		return cf
	})
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("the others ran on for %v after a rank died", took)
	}
	if errs[3] != errDied || errs[0] == nil || !strings.Contains(errs[0].Error(), "rank 3 (host localhost)") {
		t.Fatalf("errors %v, want rank 0 to name rank 3", errs)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status.State != results.StateFailed || len(f.Points) != 1 {
		t.Fatalf("status %+v, %d points", f.Status, len(f.Points))
	}
	var text bytes.Buffer
	if err := results.WriteText(&text, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "  failed: rank 3 (host localhost): ") || !regexp.MustCompile(`\n +1\* +localhost `).MatchString(text.String()) {
		t.Errorf("text report lacks rank 3's failure or rank 1's incomplete row:\n%s", text.String())
	}
	p := f.Points[0]
	if p.Complete || len(p.FanIn.Ranks) != 2 || len(p.FanIn.Failed) != 1 || p.FanIn.Failed[0].Rank != 3 || p.RTT.Count == 0 {
		t.Errorf("point complete %v, ranks %d, failed %+v, count %d", p.Complete, len(p.FanIn.Ranks), p.FanIn.Failed, p.RTT.Count)
	}
}

func TestLayout(t *testing.T) {
	l, err := fanin.NewLayout(5, []int{0, 3}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(l.Servers(), l.Clients(), l.ServerOf(1), l.ServerOf(2), l.ServerOf(4)); got != "[0 3] [1 2 4] 0 3 0" {
		t.Errorf("layout %s", got)
	}
	for _, c := range []struct {
		size    int
		servers []int
		pairs   bool
		want    string
	}{
		{1, nil, false, "at least 2 ranks"},
		{3, nil, true, "odd number"},
		{4, []int{4}, false, "rank 4 is not in the job"},
		{2, []int{0, 1}, false, "none is left"},
		{4, []int{1}, true, "takes no --server-ranks"},
	} {
		if _, err := fanin.NewLayout(c.size, c.servers, c.pairs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewLayout(%d, %v, %v): %v, want %q", c.size, c.servers, c.pairs, err, c.want)
		}
	}
}

// Launched as several ranks by a binary without MPI: a clear error saying how to build it.
func TestNoMPI(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if err := fanin.NoMPI(env(map[string]string{"OMPI_COMM_WORLD_SIZE": "4"})); !errors.Is(err, fanin.ErrNoMPI) || !strings.Contains(err.Error(), "-tags mpi") || !strings.Contains(err.Error(), "4 ranks") {
		t.Errorf("4 ranks: %v", err)
	}
	if err := fanin.NoMPI(env(map[string]string{"SLURM_STEP_NUM_TASKS": "1", "SLURM_NTASKS": "4"})); err != nil {
		t.Errorf("1 rank of an allocation of 4: %v", err)
	}
	if err := fanin.NoMPI(env(map[string]string{"SLURM_STEP_NUM_TASKS": "2"})); !errors.Is(err, fanin.ErrNoMPI) {
		t.Errorf("2 ranks by srun: %v", err)
	}
	if err := fanin.NoMPI(env(map[string]string{"PMI_SIZE": "x"})); err == nil || !strings.Contains(err.Error(), `PMI_SIZE="x"`) {
		t.Errorf("bad size: %v", err)
	}
	if err := fanin.NoMPI(env(nil)); err != nil {
		t.Errorf("no launcher: %v", err)
	}
}

// A server rank that cannot listen fails the run with its rank, host and cause.
func TestFanInServerCannotListen(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nolisten.json")
	c := config(t, out, time.Second, plain)
	_, errs := job(t, 3, func(rank int) fanin.Config {
		cf := c(rank)
		cf.Serve = func() (fanin.Server, error) {
			return nil, errors.New("listen tcp 0.0.0.0:20049: address already in use")
		}
		return cf
	})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "rank 0 (host localhost): listen: listen tcp 0.0.0.0:20049: address already in use") {
		t.Fatalf("rank 0: %v, want its listen failure", errs[0])
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status.State != results.StateFailed || len(f.Points) != 0 {
		t.Errorf("status %+v, %d points", f.Status, len(f.Points))
	}
}

// Every rank stopped (mpirun passing on a Ctrl-C): the clients drain through the server
// rank, which serves on until they reported, and the run is interrupted with every rank's
// point kept.
func TestFanInInterrupted(t *testing.T) {
	out := filepath.Join(t.TempDir(), "interrupted.json")
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var served atomic.Bool // the server rank stopped serving
	c := config(t, out, 10*time.Second, func(int) session.Connector { return &fakeConnector{served: &served} })
	_, errs := jobCtx(t, ctx, 3, func(rank int) fanin.Config {
		cf := c(rank)
		cf.Serve = func() (fanin.Server, error) { return fakeServer{addr: "127.0.0.1:20049", stopped: &served}, nil }
		return cf
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", i, err)
		}
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status.State != results.StateInterrupted || !strings.Contains(f.Status.Message, "rank 1 (host localhost): interrupted") || len(f.Points) != 1 || f.Points[0].Complete || len(f.Points[0].FanIn.Ranks) != 2 || f.Points[0].RTT.Count == 0 {
		t.Errorf("status %+v, %d points", f.Status, len(f.Points))
	}
}
