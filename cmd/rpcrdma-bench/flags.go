package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs3"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// The pflag.Value types below parse with the workloads parsers, so a bad value fails flag
// parsing with pflag's `invalid argument "4q" for "--sizes" flag: bad size "4q": ...`:
// the flag and the token are both named.

// programValue parses --program: nfs3 (or nfs) is NFS version 3 with its procedures, any
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
	switch strings.ToLower(x) {
	case "nfs", "nfs3":
		p.c.Prog, p.c.Program, p.c.Version = nfs3.Prog, 0, 0
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
// the judgement asked for is conclusive, at most BUDGET, default session.DefaultAutoBudget).
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
	auto := x == "auto" || strings.HasPrefix(x, "auto:")
	n := session.DefaultAutoBudget
	if b, ok := strings.CutPrefix(x, "auto:"); ok || !auto {
		var err error
		if n, err = strconv.Atoi(b); err != nil || n < 1 {
			return fmt.Errorf("want a number of rounds, at least 1, or auto[:BUDGET] with BUDGET rounds at least 1")
		}
	}
	*r.v, *r.auto = n, auto
	return nil
}
func (repeatValue) Type() string { return "N" }

// workloadFlags declares the flags that shape a workload on fs and builds the Config from
// them after parsing. sweep selects the sweep's meaning of --sizes and --depth (axes, lists)
// over a single run's (a size distribution, one depth).
type workloadFlags struct {
	fs    *pflag.FlagSet
	sweep bool

	cfg        workloads.Config
	tr         session.Transport
	depths     []int
	sizes      []int
	thresholds []int
	duration   time.Duration
	warmup     time.Duration
	drain      time.Duration
	proc       string
	mix        string   // run --mix, parsed once the program is known
	mixes      []string // sweep --mix, one mix each
	nfs        nfsFlags

	provider, device, out string
	addr                  string // client: the server's address
	interval              time.Duration
	quiet                 bool
	turnarounds           bool
	repeat                int  // --repeat: rounds of every point (auto: the most)
	auto                  bool // --repeat auto: rounds until the judgement is conclusive
	judge                 judgeFlags
	shuffle               bool // --shuffle: each round's order drawn from --seed
	slowdown              softSlowdown
}

// nfsFlags name the files of --program nfs3, as a results file's config records them.
type nfsFlags struct {
	Export  string `json:"export"`
	File    string `json:"file"`
	Scratch string `json:"scratch"`
	// MountdPort is mountd's TCP port, 0 when the portmapper was asked.
	MountdPort int `json:"mountd_port,omitempty"`
}

func addWorkloadFlags(fs *pflag.FlagSet, sweep bool) *workloadFlags {
	w := &workloadFlags{fs: fs, sweep: sweep}
	c := &w.cfg
	fs.StringVar(&w.provider, "provider", "", "RDMA provider: soft (default, pure Go) or verbs (libibverbs; build with -tags verbs)")
	fs.StringVar(&w.device, "device", "", "device to open (default: the provider's first; see 'rpcrdma-bench devices')")
	fs.StringVar(&w.out, "out", "", "write the results (JSON) to `FILE`, atomically, also on failure or interruption; - for standard output (the table then goes to standard error) (default rpcrdma-bench-COMMAND-TIME.json here; --out= for none)")
	if sweep {
		fs.Var(thresholdsFlag(&w.thresholds), "thresholds", "inline thresholds to sweep, advertised both ways (default 1k,4k,16k,64k)")
		fs.Var(sizesFlag(&w.sizes), "sizes", "payload sizes to sweep (default 64,256,1k,4k,16k,64k,256k,1m)")
		fs.Var(depthsFlag(&w.depths), "depth", "queue depths to sweep, RPCs outstanding per connection (default 16)")
		fs.StringVar(&w.proc, "proc", "echo", "procedure every point runs: echo (short→long), sink or source (short→chunked)")
		fs.StringArrayVar(&w.mixes, "mix", nil, "sweep mixes instead of sizes: thresholds × depths × mixes; repeat the flag, one mix PROC[/SIZE][:WEIGHT],... or nfs-like each (see 'Mixes' below)")
		fs.DurationVar(&w.duration, "duration", workloads.DefaultPointDuration, "measured time per point")
		fs.Int64Var(&c.Count, "count", 0, "end each point after this many measured RPCs instead (with --duration: whichever comes first)")
		fs.DurationVar(&w.warmup, "warmup", workloads.DefaultPointWarmup, "discarded warm-up per point (0: none)")
	} else {
		fs.Var(thresholdsFlag(&w.thresholds), "thresholds", "inline threshold to advertise, both ways (one value; default 4k)")
		fs.StringVar(&w.mix, "mix", "", "procedure mix PROC[/SIZE][:WEIGHT],... or nfs-like (default nfs-like: see 'Mixes' below)")
		fs.Var(sizeSpecFlag(&c.Size), "sizes", "payload size of mix entries without one: a list 64,4k (drawn uniformly), uniform:MIN-MAX or lognormal:MEDIAN[:SIGMA[:MIN-MAX]] (default 1k)")
		fs.IntVar(&c.Depth, "depth", workloads.DefaultDepth, "RPCs outstanding per connection (in open loop: the most)")
		fs.DurationVar(&w.duration, "duration", workloads.DefaultDuration, "measured time after the warm-up")
		fs.Int64Var(&c.Count, "count", 0, "end after this many measured RPCs instead (with --duration: whichever comes first)")
		fs.DurationVar(&w.warmup, "warmup", workloads.DefaultWarmup, "discarded warm-up (0: none)")
		fs.Float64Var(&c.Rate, "rate", 0, "open loop at this many RPC/s in total, latency from the intended send time (0: closed loop); it must stay below what the machine sustains closed loop (see a plain 'run''s RPC/s; the soft provider on 2 cores: some 10k-40k), or sends are missed and the run fails")
		fs.StringVar(&c.Arrival, "arrival", "constant", "open-loop arrivals: constant or poisson")
	}
	fs.Var(programValue{c}, "program", "the RPC program: nfs3 (or nfs) is NFS version 3, its procedures null, getattr, lookup, read, write, write-sync, commit, readdirplus and presets nfs-read, nfs-write, nfs-meta, nfs-mix (against an NFS/RDMA server such as Linux's; see --nfs-export); PROG[:VERS] calls that program's NULL procedure (default: the benchmark program)")
	fs.StringVar(&w.nfs.Export, "nfs-export", "", "with --program nfs3: the export HOST:/PATH whose files the procedures name (default: --addr's host, /); its root handle comes from mountd, the files' from LOOKUP over NFS on TCP")
	fs.StringVar(&w.nfs.File, "nfs-file", "rpcrdma-bench.dat", "with --program nfs3: the file in the export that read and getattr name; with --verify it must hold the benchmark pattern (test/vm/nfsfile writes one)")
	fs.IntVar(&w.nfs.MountdPort, "nfs-mountd", 0, "with --program nfs3: mountd's TCP port (default: ask the server's portmapper)")
	fs.StringVar(&w.nfs.Scratch, "nfs-scratch", "rpcrdma-bench.scratch", "with --program nfs3: the file in the export that write and commit name (its content is overwritten)")
	fs.Var(classFlag(&c.Class), "class", "force the message class: auto, short, chunked or long")
	fs.BoolVar(&c.Verify, "verify", false, "check every payload end to end (a run never reports speed for corrupted data)")
	fs.IntVar(&c.Connections, "connections", 1, "connections, dealt round-robin over the pollers")
	fs.IntVar(&c.Pollers, "pollers", 1, "poller threads; each polls one completion queue shared by its connections")
	fs.Var(pollFlag(&c.Poll, true), "poll", "how a poller waits for completions: busy (spin: no wakeup on the measured path, a CPU each), event (block on the completion channel) or hybrid[:SPIN] (spin after the last completion, then block; the spin is SPIN, or without it twice the usual time between completions, 50us to 1ms); default event on soft, busy on verbs")
	fs.Var(cpusFlag(&c.CPUs), "cpus", "pin poller i to the i-th CPU of this list, e.g. 2,3 or 2-3 (default: unpinned)")
	addTransportFlags(fs, &w.tr, true)
	fs.DurationVar(&w.drain, "drain", 0, fmt.Sprintf("after the measured time, wait this long for outstanding RPCs before counting them lost (default: %d × the longest RTT seen, at least %v, which rides out link retransmissions)", workloads.DrainRTTs, workloads.MinDrain))
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of every random draw (sizes, mix order, Poisson gaps)")
	fs.Var(repeatValue{&w.repeat, &w.auto}, "repeat", "measure every point N times in N interleaved rounds (each round runs every point once, so drift hits them alike), into one results file whose points record their round; auto[:BUDGET]: add rounds until the judgement asked for (--baseline, else sweep's best threshold) is conclusive, at most BUDGET (default 10)")
	addJudgeFlags(fs, &w.judge)
	fs.BoolVar(&w.shuffle, "shuffle", false, "run each round's points in an order drawn from --seed (the order is in the results file)")
	addSlowdownFlags(fs, &w.slowdown)
	fs.DurationVar(&w.interval, "interval", time.Second, "sample throughput into the results' time series this often (0: not at all)")
	fs.BoolVarP(&w.quiet, "quiet", "q", false, "no progress display")
	fs.BoolVar(&w.turnarounds, "turnarounds", false, turnaroundsHelp)
	return w
}

const turnaroundsHelp = "record each poller's turnaround, its own time from a completion to the posts it caused, in the results (verbs only; two clock reads per turnaround, so compare such runs only with each other)"

// config returns the single-run workload the flags describe, normalized.
func (w *workloadFlags) config() (workloads.Config, error) {
	if !w.fs.Changed("poll") {
		w.cfg.Poll = session.MeasuringPoll(w.provider) // the responder in this process follows it
	}
	c := w.cfg
	c.Duration = workloads.Duration(w.duration)
	if c.Count > 0 && !w.fs.Changed("duration") {
		c.Duration = 0
	}
	c.Warmup = workloads.Duration(w.warmup)
	if w.warmup == 0 {
		c.Warmup = -1 // the flag's 0 means none; the Config's 0 means the default
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"warmup", w.warmup}, {"duration", w.duration}, {"interval", w.interval}, {"drain", w.drain}} {
		if d.v < 0 {
			return c, usageErrorf("--%s must not be negative (got %v)", d.name, d.v)
		}
	}
	if w.duration == 0 && c.Count == 0 {
		// The Config's 0 would mean the default: say so rather than run it.
		return c, usageErrorf("--duration 0s: want a measured time above 0 (or --count N to end on a count)")
	}
	c.Drain = workloads.Duration(w.drain)
	// A flag's zero must not quietly mean its default: say what is accepted.
	if !w.sweep && c.Depth < 1 {
		return c, usageErrorf("--depth %d: want at least 1 RPC outstanding per connection", c.Depth)
	}
	if c.Pollers < 1 {
		return c, usageErrorf("--pollers %d: want at least 1 poller thread", c.Pollers)
	}
	if c.Connections < 1 {
		return c, usageErrorf("--connections %d: want at least 1", c.Connections)
	}
	if w.mix != "" {
		mix, err := workloads.ParseMix(w.mix, c.Table())
		if err != nil {
			return c, usageError{"--mix: " + err.Error()}
		}
		c.Mix = mix
	}
	if !w.sweep && w.fs.Changed("sizes") && c.Program == 0 && !mixTakesSize(c.Mix, c.Table()) {
		return c, usageErrorf("--sizes has no effect: every entry of the %s mix has its own size (--sizes sets the entries without one, as in --mix echo --sizes 64k; 'sweep' sweeps sizes)", mixLabel(c.Mix))
	}
	if c.Rate == 0 && w.fs.Changed("arrival") {
		return c, usageErrorf("--arrival needs --rate (open loop)")
	}
	if c.Rate == 0 {
		c.Arrival = ""
	}
	if (c.Program != 0 || c.Prog != nil) && !w.fs.Changed("mix") {
		c.Mix = workloads.Only("null", workloads.Sizes{})
	}
	if len(w.thresholds) > 1 && !w.sweep {
		return c, usageErrorf("--thresholds takes one value here (%d given); 'sweep' takes a list", len(w.thresholds))
	}
	if err := checkTransport(&w.tr, true); err != nil {
		return c, err
	}
	if c.Prog == nfs3.Prog && !w.fs.Changed("inline-rule") {
		// NFS results should predict what a Linux client sees.
		w.tr.InlineRule = rpcrdma.InlineLinux
	}
	if err := checkTurnarounds(w.turnarounds, w.provider); err != nil {
		return c, err
	}
	if w.sweep && w.tr.SendSize != 0 && w.tr.RecvSize != 0 && w.fs.Changed("thresholds") {
		return c, usageErrorf("--send-size and --recv-size leave --thresholds nothing to vary")
	}
	n, err := c.Normalized()
	if err != nil {
		return c, usageError{err.Error()}
	}
	return n, nil
}

// defaultThreshold is the inline threshold a single run offers without --thresholds: the
// Linux client's, 4 KiB (RFC 8166's own default, 1 KiB, applies only without private data).
const defaultThreshold = 4096

// threshold is the single inline threshold to advertise.
func (w *workloadFlags) threshold() int {
	if len(w.thresholds) == 0 {
		return defaultThreshold
	}
	return w.thresholds[0]
}

// plan returns the sweep the flags describe.
func (w *workloadFlags) plan() (workloads.Sweep, []workloads.Point, error) {
	base, err := w.config()
	if err != nil {
		return workloads.Sweep{}, nil, err
	}
	if len(w.mixes) > 0 {
		// A mix sets each entry's procedure and size: a --proc or --sizes would be ignored.
		for _, f := range []string{"proc", "sizes"} {
			if w.fs.Changed(f) {
				return workloads.Sweep{}, nil, usageErrorf("--%s has no effect with --mix (a mix names each entry's procedure and size)", f)
			}
		}
		s := workloads.Sweep{Thresholds: w.thresholds, Depths: w.depths, Base: base}
		for _, m := range w.mixes {
			mix, err := workloads.ParseMix(m, base.Table())
			if err != nil {
				return s, nil, usageError{"--mix: " + err.Error()}
			}
			s.Mixes = append(s.Mixes, mix)
		}
		pts, err := s.Plan()
		if err != nil {
			return s, nil, usageError{err.Error()}
		}
		return s, pts, nil
	}
	prog := base.Table()
	if _, err := prog.Lookup(w.proc); err != nil && !w.fs.Changed("proc") {
		// The default, echo, is the benchmark program's: another program sweeps its first
		// procedure with a payload (NFS: read).
		for _, p := range prog.Procs {
			if p.Sized() {
				w.proc = p.Name
				break
			}
		}
	}
	i, err := prog.Lookup(w.proc)
	if err != nil {
		return workloads.Sweep{}, nil, usageError{"--proc: " + err.Error()}
	}
	p := &prog.Procs[i]
	if !p.Sized() {
		return workloads.Sweep{}, nil, usageErrorf("--proc %s has no payload to sweep sizes of", p.Name)
	}
	s := workloads.Sweep{Thresholds: w.thresholds, Sizes: w.sizes, Depths: w.depths, Proc: p.Name, Base: base}
	pts, err := s.Plan()
	if err != nil {
		return s, nil, usageError{err.Error()}
	}
	return s, pts, nil
}

// mixHelp documents the mix syntax and the NFS-like preset for --help.
const mixHelp = `Mixes:
  --mix takes PROC[/SIZE][:WEIGHT] entries: null (no payload), echo (payload both ways,
  never DDP: large ones go long), sink (payload in the call, DDP: Read chunk, like WRITE),
  source (payload in the reply, DDP: Write chunk, like READ). "nfs-like" is the default preset:
  null 5, echo/128 40, echo/8k 5 (READDIR-like, long), source/4k 15, source/32k 10,
  source/256k 5, sink/4k 10, sink/32k 7, sink/256k 3.
`

// mixTakesSize reports whether some entry of mix (nil: the nfs-like preset) is of a
// procedure of prog that carries a payload and has no size of its own, so that --sizes
// applies to it.
func mixTakesSize(mix []workloads.MixEntry, prog *rpcproto.Program) bool {
	for _, e := range mix {
		if i, err := prog.Lookup(e.Proc); err == nil && prog.Procs[i].Sized() && e.Size.IsZero() {
			return true
		}
	}
	return false
}

// mixLabel names mix for a message: "nfs-like" for the preset (nil is the default, the preset).
func mixLabel(mix []workloads.MixEntry) string {
	if mix == nil {
		return "nfs-like"
	}
	return strconv.Quote(workloads.MixName(mix))
}
