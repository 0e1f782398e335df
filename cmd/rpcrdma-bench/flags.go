package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// The pflag.Value types below parse with the workloads parsers, so a bad value fails flag
// parsing with pflag's `invalid argument "4q" for "--sizes" flag: bad size "4q": ...`:
// the flag and the token are both named.

// programValue parses --program: a program of cli.Programs by name with its procedures, any
// other PROG[:VERS] that program's NULL procedure.
type programValue struct{ c *workloads.Config }

func (p programValue) String() string {
	switch {
	case p.c == nil:
		return ""
	case p.c.Prog != nil:
		return p.c.Prog.Name
	case p.c.Program != 0:
		return strconv.FormatUint(uint64(p.c.Program), 10) + ":" + strconv.FormatUint(uint64(p.c.Version), 10)
	}
	return ""
}
func (p programValue) Set(x string) (err error) {
	if d, ok := cli.LookupProgram(x); ok {
		p.c.Prog, p.c.Program, p.c.Version = d.Program, 0, 0
		return nil
	}
	p.c.Prog = nil
	p.c.Program, p.c.Version, err = workloads.ParseProgram(x)
	return err
}
func (programValue) Type() string { return "prog[:vers]" }

// flagValue is a pflag.Value that parses with parse and shows with show; a zero value that
// is not the default (the server's --poll) shows as "", so help states no default.
type flagValue[T any] struct {
	v     *T
	typ   string
	parse func(string) (T, error)
	show  func(T) string
}

func (f flagValue[T]) String() string {
	if f.v == nil {
		return ""
	}
	return f.show(*f.v)
}

func (f flagValue[T]) Set(x string) error {
	v, err := f.parse(x)
	if err == nil {
		*f.v = v
	}
	return err
}

func (f flagValue[T]) Type() string { return f.typ }

func sizeFlag(v *int) flagValue[int] {
	return flagValue[int]{v, "size", workloads.ParseSize, workloads.FormatSize}
}

func sizesFlag(v *[]int) flagValue[[]int] {
	return flagValue[[]int]{v, "sizes", workloads.ParseSizes, joinSizes}
}

func thresholdsFlag(v *[]int) flagValue[[]int] {
	return flagValue[[]int]{v, "thresholds", workloads.ParseThresholds, joinSizes}
}

func depthsFlag(v *[]int) flagValue[[]int] {
	return flagValue[[]int]{v, "depths", workloads.ParseDepths, joinInts}
}

// countFlag is --count: 0 (no count) or more RPCs, so that a bad value fails naming the flag.
func countFlag(v *int64) flagValue[int64] {
	return flagValue[int64]{v, "N", func(x string) (int64, error) {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("want a number of RPCs, 0 (none: end on --duration) or more")
		}
		return n, nil
	}, func(n int64) string { return strconv.FormatInt(n, 10) }}
}

// depthFlag is run's and client's --depth: one depth in [1, workloads.MaxDepth].
func depthFlag(v *int) flagValue[int] {
	return flagValue[int]{v, "N", func(x string) (int, error) {
		d, err := workloads.ParseDepths(x)
		if err != nil || len(d) != 1 {
			return 0, fmt.Errorf("want one depth, an integer in [1, %d] ('sweep' takes a list)", workloads.MaxDepth)
		}
		return d[0], nil
	}, strconv.Itoa}
}

func cpusFlag(v *[]int) flagValue[[]int] {
	return flagValue[[]int]{v, "cpus", workloads.ParseCPUs, joinInts}
}

func classFlag(v *rpcproto.Kind) flagValue[rpcproto.Kind] {
	return flagValue[rpcproto.Kind]{v, "class", workloads.ParseClass, rpcproto.Kind.String}
}

// sizeSpecFlag is run's --sizes: a size distribution.
func sizeSpecFlag(v *workloads.Sizes) flagValue[workloads.Sizes] {
	return flagValue[workloads.Sizes]{v, "sizes", workloads.ParseSizeSpec, func(s workloads.Sizes) string {
		switch {
		case s.IsZero():
			return ""
		case s.Dist == "" || s.Dist == "list":
			return joinSizes(s.Values)
		}
		return s.Dist
	}}
}

// pollFlag is a --poll flag: busy, event, hybrid or hybrid:SPIN. providerDefault says the
// zero value is not the default (the server's depends on the provider).
func pollFlag(v *datapath.Poll, providerDefault bool) flagValue[datapath.Poll] {
	return flagValue[datapath.Poll]{v, "mode", datapath.ParsePoll, func(p datapath.Poll) string {
		if providerDefault && p == (datapath.Poll{}) {
			return ""
		}
		return p.String()
	}}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func joinSizes(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = workloads.FormatSize(n)
	}
	return strings.Join(s, ",")
}

// repeatValue is --repeat: a number of rounds, at least 1, or auto[:BUDGET] (rounds until
// the judgement asked for is conclusive, at most BUDGET: cli.ParseRepeat).
type repeatValue struct {
	v    *int
	auto *bool
}

func (r repeatValue) String() string {
	switch {
	case r.auto != nil && *r.auto:
		return "auto:" + strconv.Itoa(*r.v)
	case r.v == nil || *r.v == 0:
		return "1"
	}
	return strconv.Itoa(*r.v)
}
func (r repeatValue) Set(x string) error {
	n, auto, err := cli.ParseRepeat(x)
	if err == nil {
		*r.v, *r.auto = n, auto
	}
	return err
}
func (repeatValue) Type() string { return "N" }

// addWorkloadFlags registers a measuring command's flags on fs, parsed into the settings it
// returns.
func addWorkloadFlags(fs *pflag.FlagSet, sweep bool) *cli.RunConfig {
	w := &cli.RunConfig{Sweep: sweep}
	c := &w.Workload
	fs.StringVar(&w.Provider, "provider", "", "RDMA provider: soft (default, pure Go) or verbs (libibverbs; build with -tags verbs)")
	fs.StringVar(&w.Device, "device", "", "device to open (default: the provider's first; see 'rpcrdma-bench devices')")
	fs.StringVar(&w.Out, "out", "", "write the results (JSON) to `FILE`, atomically, also on failure or interruption; - for standard output (the table then goes to standard error) (default rpcrdma-bench-COMMAND-TIME.json here; --out= for none)")
	if sweep {
		fs.Var(thresholdsFlag(&w.Thresholds), "thresholds", "inline thresholds to sweep, advertised both ways (default 1k,4k,16k,64k)")
		fs.Var(sizesFlag(&w.Sizes), "sizes", "payload sizes to sweep (default 64,256,1k,4k,16k,64k,256k,1m)")
		fs.Var(depthsFlag(&w.Depths), "depth", "queue depths to sweep, RPCs outstanding per connection (default 16)")
		fs.StringVar(&w.Proc, "proc", "echo", "procedure every point runs: echo (short→long), sink or source (short→chunked)")
		fs.StringArrayVar(&w.Mixes, "mix", nil, "sweep mixes instead of sizes: thresholds × depths × mixes; repeat the flag, one mix PROC[/SIZE][:WEIGHT],... or nfs-like each (see 'Mixes' below)")
		fs.DurationVar(&w.Duration, "duration", workloads.DefaultPointDuration, "measured time per point")
		fs.Var(countFlag(&c.Count), "count", "end each point after this many measured RPCs instead (with --duration: whichever comes first)")
		fs.DurationVar(&w.Warmup, "warmup", workloads.DefaultPointWarmup, "discarded warm-up per point (0: none)")
	} else {
		fs.Var(thresholdsFlag(&w.Thresholds), "thresholds", "inline threshold to advertise, both ways (one value; default 4k)")
		fs.StringVar(&w.Mix, "mix", "", "procedure mix PROC[/SIZE][:WEIGHT],... or nfs-like (default nfs-like: see 'Mixes' below)")
		fs.Var(sizeSpecFlag(&c.Size), "sizes", "payload size of mix entries without one: a list 64,4k (drawn uniformly), uniform:MIN-MAX or lognormal:MEDIAN[:SIGMA[:MIN-MAX]] (default 1k)")
		c.Depth = workloads.DefaultDepth
		fs.Var(depthFlag(&c.Depth), "depth", "RPCs outstanding per connection (in open loop: the most)")
		fs.DurationVar(&w.Duration, "duration", workloads.DefaultDuration, "measured time after the warm-up")
		fs.Var(countFlag(&c.Count), "count", "end after this many measured RPCs instead (with --duration: whichever comes first)")
		fs.DurationVar(&w.Warmup, "warmup", workloads.DefaultWarmup, "discarded warm-up (0: none)")
		fs.Float64Var(&c.Rate, "rate", 0, "open loop at this many RPC/s in total, latency from the intended send time (0: closed loop); it must stay below what the machine sustains closed loop (see a plain 'run''s RPC/s; the soft provider on 2 cores: some 10k-40k), or sends are missed and the run fails")
		fs.StringVar(&c.Arrival, "arrival", "constant", "open-loop arrivals: constant or poisson")
	}
	fs.Var(programValue{c}, "program", "the RPC program: nfs3 (or nfs) is NFS version 3, its procedures null, getattr, lookup, read, write, write-sync, commit, readdirplus and presets nfs-read, nfs-write, nfs-meta, nfs-mix (against an NFS/RDMA server such as Linux's; see --nfs-export); nfs4 (or nfs4.1) is NFS version 4.1 in a session per connection, its callbacks answered on the same connection, with readdir for readdirplus, open-close, and recall (delegation recalls, measured alone); PROG[:VERS] calls that program's NULL procedure (default: the benchmark program)")
	fs.StringVar(&w.NFS.Export, "nfs-export", "", "the export whose files the procedures name: with --program nfs3, HOST:/PATH (default: --addr's host, /), its root handle from mountd and the files' from LOOKUP over NFS on TCP; with nfs4, /PATH (or HOST:/PATH) in the server's NFSv4 namespace, looked up over the connection (default: its root)")
	fs.StringVar(&w.NFS.File, "nfs-file", "rpcrdma-bench.dat", "with --program nfs3 or nfs4: the file in the export that read and getattr name; with --verify it must hold the benchmark pattern (test/vm/nfsfile writes one)")
	fs.IntVar(&w.NFS.MountdPort, "nfs-mountd", 0, "with --program nfs3: mountd's TCP port (default: ask the server's portmapper)")
	fs.StringVar(&w.NFS.Scratch, "nfs-scratch", "rpcrdma-bench.scratch", "with --program nfs3 or nfs4: the file in the export that write and commit name (its content is overwritten)")
	fs.Var(classFlag(&c.Class), "class", "force the message class: auto, short, chunked or long")
	fs.BoolVar(&c.Verify, "verify", false, "check every payload end to end (a run never reports speed for corrupted data)")
	fs.IntVar(&c.Connections, "connections", 1, "connections, dealt round-robin over the pollers")
	fs.IntVar(&c.Pollers, "pollers", 1, "poller threads; each polls one completion queue shared by its connections")
	fs.Var(pollFlag(&c.Poll, true), "poll", "how a poller waits for completions: busy (spin: no wakeup on the measured path, a CPU each), event (block on the completion channel) or hybrid[:SPIN] (spin after the last completion, then block; the spin is SPIN, or without it twice the usual time between completions, 50us to 1ms); default event on soft, busy on verbs")
	fs.Var(cpusFlag(&c.CPUs), "cpus", "pin poller i to the i-th CPU of this list, e.g. 2,3 or 2-3, and a responder in this process to the CPU after them (default: unpinned)")
	addTransportFlags(fs, &w.Transport, true)
	fs.DurationVar(&w.Drain, "drain", 0, fmt.Sprintf("after the measured time, wait this long for outstanding RPCs before counting them lost (default: %d × the longest RTT seen, at least %v, which rides out link retransmissions)", workloads.DrainRTTs, workloads.MinDrain))
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of every random draw (sizes, mix order, Poisson gaps)")
	fs.Var(repeatValue{&w.Repeat, &w.Auto}, "repeat", "measure every point N times in N interleaved rounds (each round runs every point once, so drift hits them alike), into one results file whose points record their round; auto[:BUDGET]: add rounds until the judgement asked for (--baseline, else sweep's best threshold) is conclusive, at most BUDGET (default 10)")
	addJudgeFlags(fs, &w.Judge)
	fs.BoolVar(&w.Shuffle, "shuffle", false, "run each round's points in an order drawn from --seed (the order is in the results file)")
	addSlowdownFlags(fs, &w.Slowdown)
	fs.DurationVar(&w.Interval, "interval", time.Second, "sample throughput into the results' time series this often (0: not at all)")
	fs.BoolVarP(&w.Quiet, "quiet", "q", false, "no progress display")
	fs.BoolVar(&w.Turnarounds, "turnarounds", false, turnaroundsHelp)
	return w
}

const turnaroundsHelp = "record each poller's turnaround, its own time from a completion to the posts it caused, in the results (verbs only; two clock reads per turnaround, so compare such runs only with each other)"

// mixHelp documents the mix syntax and the NFS-like preset for --help.
const mixHelp = `Mixes:
  --mix takes PROC[/SIZE][:WEIGHT] entries: null (no payload), echo (payload both ways,
  never DDP: large ones go long), sink (payload in the call, DDP: Read chunk, like WRITE),
  source (payload in the reply, DDP: Write chunk, like READ). "nfs-like" is the default preset:
  null 5, echo/128 40, echo/8k 5 (READDIR-like, long), source/4k 15, source/32k 10,
  source/256k 5, sink/4k 10, sink/32k 7, sink/256k 3.
`

// addJudgeFlags declares the measuring commands' judgement of their own results: against a
// baseline, as compare judges.
func addJudgeFlags(fs *pflag.FlagSet, j *cli.JudgeFlags) {
	fs.StringArrayVar(&j.Baseline, "baseline", nil, "judge the results against these base results as compare does and exit as it does (0 ok, 1 regressed, 3 inconclusive, 4 failed): files, directories (their *.json) or a quoted glob; repeat the flag for several")
	fs.StringVar(&j.Threshold, "threshold", "", "with --baseline: tolerated changes NAME=CHANGE%,... as compare --threshold (not --thresholds, the inline thresholds)")
	fs.StringVar(&j.Metrics, "metrics", "", "with --baseline: judge these metrics, as compare --metrics")
	fs.BoolVar(&j.UnderLoad, "under-load", true, "with --baseline: judge verdicts that rest on disturbed processes when both sides ran under comparable load, as compare does (--under-load=false: leave them inconclusive)")
	fs.Float64Var(&j.HostTolerance, "host-tolerance", results.DefaultHostTolerance, "with --baseline: withhold a verdict when the host-speed probe moved more than this many percent between the sides, as compare does (negative: no check)")
	fs.Float64Var(&j.Alpha, "alpha", 0.05, "family-wise error rate of the judgement (--baseline, or --repeat auto's best threshold), spent over --repeat auto's looks (O'Brien-Fleming)")
}

// given are the flags of fs set on the command line, by name.
func given(fs *pflag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { m[f.Name] = true })
	return m
}
