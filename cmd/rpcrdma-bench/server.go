package main

import (
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"

	"github.com/spf13/pflag"
)

// newServer starts listening as f says.
type newServer func(f *cli.ServeConfig) (cli.Server, error)

// openServer is the server command's responder, listening as f says.
func openServer(f *cli.ServeConfig) (cli.Server, error) {
	p, err := openProvider(f.Provider, f.Slowdown, f.Turnarounds)
	if err != nil {
		return nil, err
	}
	r, err := f.Open(p)
	if err != nil {
		return nil, err // not a nil *Responder in a non-nil server
	}
	return r, nil
}

func serverCommand(open newServer) *command {
	return &command{
		name:    "server",
		summary: "Serve the benchmark RPC program for clients in other processes",
		usage:   "[--listen HOST:PORT] [flags]",
		examples: `  rpcrdma-bench server --listen 0.0.0.0:20049               # soft provider over TCP
  rpcrdma-bench server --provider verbs --device rxe0 --listen 10.0.2.15:20049
  rpcrdma-bench server --thresholds 16k --cpus 3 --verify   # offer 16 KiB inline, pin the poller
  rpcrdma-bench server --remote-invalidate --responder-read # Send With Invalidate, responder Read chunks`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			f := &cli.ServeConfig{}
			var thresholds []int
			fs.StringVar(&f.Provider, "provider", "", "RDMA provider: soft (default, pure Go over TCP between processes) or verbs")
			fs.StringVar(&f.Device, "device", "", "device to open (default: the provider's first)")
			fs.StringVar(&f.Listen, "listen", "127.0.0.1:20049", "address to listen on (port 0 picks one)")
			fs.Var(thresholdsFlag(&thresholds), "thresholds", "inline threshold to offer, both ways (one value; default the engine's, 4k)")
			fs.IntVar(&f.Credits, "credits", 0, "credits granted to each client (default the engine's)")
			f.MaxPayload = 1 << 20
			fs.Var(sizeFlag(&f.MaxPayload), "max-payload", "largest payload of one RPC: the size of the buffers Read chunks are pulled into and long replies built in")
			fs.IntVar(&f.SinkBuffers, "sink-buffers", 0, "per poller, the most of those buffers the calls in flight share, beyond one reserved for each connection (registered as needed; a call that may take none waits); default one connection's worth at the full grant")
			fs.IntVar(&f.Pollers, "pollers", 1, "poller threads; connections are dealt to the least loaded and share its completion queue")
			fs.Var(cpusFlag(&f.CPUs), "cpus", "pin poller i to the i-th CPU of this list (default: unpinned)")
			fs.Var(pollFlag(&f.Poll, true), "poll", "how idle pollers wait: busy (a CPU each, always), event (block on the completion channel) or hybrid[:SPIN] (spin after the last completion, then block; the spin is SPIN, or without it twice the usual time between completions, 50us to 1ms); default event on soft, hybrid on verbs")
			fs.IntVar(&f.MaxConnections, "max-connections", rpcrdma.DefaultMaxConnections, "connections served at once; more are rejected with a reason the client prints")
			fs.DurationVar(&f.IdleTimeout, "idle-timeout", 10*time.Minute, "close a connection that did nothing for this long (0: never)")
			fs.BoolVar(&f.Verify, "verify", false, "check every payload received")
			fs.BoolVar(&f.Once, "once", false, "exit after the first connection closes")
			fs.BoolVar(&f.Turnarounds, "turnarounds", false, "print each poller's turnaround when the server stops: its own time from a completion to the posts it caused (verbs only; two clock reads per turnaround)")
			addTransportFlags(fs, &f.Transport, false)
			addSlowdownFlags(fs, &f.Slowdown)
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, "server", cli.Usagef("unexpected arguments %q", args))
				}
				if len(thresholds) > 1 {
					return fail(e, "server", cli.Usagef("--thresholds takes one value (%d given)", len(thresholds)))
				}
				if len(thresholds) == 1 {
					f.Threshold = thresholds[0]
				}
				if f.Provider == "" {
					f.Provider = builtin[0].Name()
				}
				if err := f.Validate(); err != nil {
					return fail(e, "server", err)
				}
				if !fs.Changed("poll") {
					f.Poll = providerDefaults(f.Provider).ServerPoll
				}
				return serve(e, f, open)
			}
		},
	}
}

func serve(e *env, f *cli.ServeConfig, open newServer) int {
	stop := newStopper(e, false) // before it says it listens
	defer stop.release()
	srv, err := cli.StartServing(f, open, e.stderr)
	if err != nil {
		return fail(e, "server", err)
	}
	if err := srv.Serve(stop.ctx); err != nil {
		return fail(e, "server", err)
	}
	return exitOK
}

// engineCommands are the commands that need the transport engine, given how to connect a
// point's pollers (to --addr, or to a responder in this process) and how to serve.
func engineCommands(open newConnector, srv newServer) []*command {
	run := measureCommand("run", "Run server and client in this process and print per-class RTT percentiles and throughput",
		"[flags]",
		`  rpcrdma-bench run                                  # the default: NFS-like mix on soft, ~6 s
  rpcrdma-bench run --mix echo --sizes 64 --depth 1  # latency of small inline ECHOs
  rpcrdma-bench run --mix source/1m --class long     # force a Reply chunk for 1 MiB READs
  rpcrdma-bench run --rate 1000 --mix echo --sizes 64 --out run.json  # open loop, RTT from the intended send (a rate the machine cannot sustain fails)
  rpcrdma-bench run --mix sink/64k --memory windows --remote-invalidate  # bind and invalidate per RPC, as FRWR
  rpcrdma-bench run --provider verbs --device rxe0 --cpus 2,3`, false, addrNone, open)
	client := measureCommand("client", "Drive a server in another process ('rpcrdma-bench server') and record the results",
		"--addr HOST:PORT [flags]",
		`  rpcrdma-bench client --addr 10.0.2.15:20049 --duration 30s --out client.json
  rpcrdma-bench client --addr 10.0.2.15:20049 --mix null --depth 1     # NULL ping-pong
  rpcrdma-bench client --provider verbs --device rxe0 --addr 10.0.2.15:20049 --mix sink/64k`, false, addrRequired, open)
	sweep := measureCommand("sweep", "Sweep inline thresholds × sizes (or mixes) × depths, each point on fresh connections",
		"[flags]",
		`  rpcrdma-bench sweep --out sweep.json                               # 1k..64k × 64 B..1 MiB, ECHO
  rpcrdma-bench sweep --proc source --thresholds 1k,4k --sizes 1k,4k,16k
  rpcrdma-bench sweep --depth 1,16 --duration 500ms --addr 10.0.2.15:20049
  rpcrdma-bench report --format switches sweep.json                  # where classes changed
  rpcrdma-bench sweep --mix nfs-like --mix 'echo/128:3,sink/32k' --thresholds 1k,4k,16k,64k --out mix.json
  rpcrdma-bench report --format thresholds mix.json                  # the best threshold per mix
  rpcrdma-bench sweep --thresholds 1k,4k --sizes 64,16k --repeat auto # rounds until each size's best threshold is settled
  rpcrdma-bench sweep --thresholds 4k --sizes 64,4k,64k --duration 250ms --warmup 100ms --repeat auto:20 --shuffle --baseline baseline/
                                                                      # the CI gate: exit 0 ok, 1 regressed, 3 inconclusive`, true, addrOptional, open)
	return []*command{run, client, sweep, serverCommand(srv)}
}
