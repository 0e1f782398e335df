package main

import (
	"context"
	"errors"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads/workloadstest"
)

// fakeConnector connects every point to in-memory fake Clients on the real clock: the
// commands run end to end (flags, pollers, progress, signals, results files) without the
// transport engine. Each point's fake uses the point's threshold in its class model.
type fakeConnector struct {
	latency   time.Duration
	failEvery int // every failEvery-th RPC fails with errFakeRPC
	breakAt   int // the connection breaks after this many RPCs (0: never)
}

// HostCPU is a quiet host: fake clients' verdicts must not depend on the machine's load.
func (fakeConnector) HostCPU() (datapath.HostCPU, error) { return datapath.HostCPU{}, nil }
func (fakeConnector) HostSpeed() datapath.HostSpeed      { return steadyHost }

// quietConnector is a real connector on a quiet host.
type quietConnector struct{ session.Connector }

func (quietConnector) HostCPU() (datapath.HostCPU, error) { return datapath.HostCPU{}, nil }
func (quietConnector) HostSpeed() datapath.HostSpeed      { return steadyHost }

// steadyHost is a host whose speed never changes: the suite's other packages run beside
// these tests, and their verdicts must be the connectors' own.
var steadyHost = datapath.HostSpeed{ComputeNs: 2.5, CopyNsPerKiB: 25, PingPongNs: 60, CPUs: 2}

var errFakeBroken = errors.New("fake: connection broken: peer vanished")

var errFakeRPC = errors.New("fake: reply checksum mismatch")

func (fakeConnector) Device() *datapath.DeviceInfo {
	return &datapath.DeviceInfo{Name: "fake0", Provider: "fake", NodeType: "soft", MaxInlineData: 64, MaxSGE: 2, MaxQPWR: 1024,
		Ports: []datapath.PortInfo{{Num: 1, State: "ACTIVE", ActiveMTU: 4096, LinkLayer: "soft"}}}
}

func (f fakeConnector) Point(pt workloads.Point) (workloads.Opener, func() session.PointReport, error) {
	th := pt.Threshold
	if th == 0 {
		th = 4096
	}
	open := func(_ context.Context, poller, conns int) (workloads.Client, error) {
		c := workloadstest.New(pt.Workload.Depth * conns)
		c.Latency, c.Threshold = f.latency, th
		c.FailEvery, c.RPCErr = f.failEvery, errFakeRPC
		c.FailAfter, c.Err = f.breakAt, errFakeBroken
		return c, nil
	}
	neg := func() session.PointReport {
		return session.PointReport{Negotiated: &results.Negotiated{Role: "requester", InlineSendBytes: th, InlineRecvBytes: th, CreditsGranted: pt.Workload.Depth}}
	}
	return open, neg, nil
}

func (fakeConnector) Close() error { return nil }

// testCLI is the binary's commands and the fake ones, which drive the CLI end to end
// without the transport engine.
var testCLI = newCLI(append(builtinCommands(), fakeCommands()...)...)

func fakeCommands() []*command {
	open := func(context.Context, *cli.RunConfig, []workloads.Point) (session.Connector, error) {
		return fakeConnector{latency: 20 * time.Microsecond}, nil
	}
	cs := []*command{measureCommand("fakerun", "a run on fake clients (tests only)", "[flags]", "  rpcrdma-bench fakerun", false, addrNone, open),
		measureCommand("fakesweep", "a sweep on fake clients (tests only)", "[flags]", "  rpcrdma-bench fakesweep", true, addrOptional, open),
		measureCommand("fakefailrun", "a run on fake clients failing RPCs (tests only)", "[flags]", "  rpcrdma-bench fakefailrun", false, addrNone,
			func(context.Context, *cli.RunConfig, []workloads.Point) (session.Connector, error) {
				return fakeConnector{latency: 20 * time.Microsecond, failEvery: 10}, nil
			}),
		measureCommand("fakebreakrun", "a run whose connection breaks (tests only)", "[flags]", "  rpcrdma-bench fakebreakrun", false, addrNone,
			func(context.Context, *cli.RunConfig, []workloads.Point) (session.Connector, error) {
				return fakeConnector{latency: 20 * time.Microsecond, breakAt: 5000}, nil
			}),
		measureCommand("fakeslowrun", "a run on slow fake clients (tests only)", "[flags]", "  rpcrdma-bench fakeslowrun", false, addrNone,
			func(context.Context, *cli.RunConfig, []workloads.Point) (session.Connector, error) {
				return fakeConnector{latency: time.Millisecond}, nil
			}),
		measureCommand("fakestallrun", "a run whose client never takes an RPC (tests only)", "[flags]", "  rpcrdma-bench fakestallrun", false, addrNone,
			func(context.Context, *cli.RunConfig, []workloads.Point) (session.Connector, error) {
				return stalledConnector{}, nil
			})}
	// quietsweep is sweep as if the host had nothing else to do: the verdicts of tests must
	// not depend on the machine's load.
	for _, c := range engineCommands(func(ctx context.Context, w *cli.RunConfig, pts []workloads.Point) (session.Connector, error) {
		conn, err := openEngine(ctx, w, pts)
		if err != nil {
			return nil, err
		}
		return quietConnector{conn}, nil
	}, openServer) {
		if c.name == "sweep" {
			c.name = "quietsweep"
			cs = append(cs, c)
		}
	}
	srv := serverCommand(func(f *cli.ServeConfig) (cli.Server, error) { return &fakeServer{addr: f.Listen}, nil })
	srv.name = "fakeserver"
	return append(cs, srv, measureCommand("fakeclient", "a client of a fake server (tests only)", "--addr HOST:PORT [flags]", "  rpcrdma-bench fakeclient --addr h:1", false, addrRequired, open))
}

// fakeServer serves nothing: it waits for stop, as a responder does.
type fakeServer struct{ addr string }

func (s *fakeServer) Addr() string { return s.addr }
func (s *fakeServer) Serve(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
func (s *fakeServer) Close() error { return nil }

// stalledConnector's clients never take an RPC (no credit, ever): a point that measures
// nothing at all.
type stalledConnector struct{ fakeConnector }

type stalledClient struct{}

func (stalledClient) Submit(*workloads.Request) error             { return workloads.ErrBusy }
func (stalledClient) Progress([]workloads.Completed) (int, error) { return 0, nil }

func (stalledConnector) Point(pt workloads.Point) (workloads.Opener, func() session.PointReport, error) {
	open := func(context.Context, int, int) (workloads.Client, error) { return stalledClient{}, nil }
	return open, nil, nil
}
