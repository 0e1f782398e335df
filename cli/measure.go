package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/engine"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// RunRecord is what the "config" object of a results file holds: everything needed to
// repeat the invocation, the command's settings after defaults.
type RunRecord struct {
	// Command is the subcommand that wrote the file: run, client or sweep.
	Command  string `json:"command"`
	Provider string `json:"provider"`
	Device   string `json:"device,omitempty"`
	// Addr is the server's address (client) or the in-process listener's (run).
	Addr string `json:"addr,omitempty"`
	// Threshold is the inline threshold a single run offers.
	Threshold int `json:"threshold,omitempty"`
	// Workload is the normalized workload of a single run.
	Workload *workloads.Config `json:"workload,omitempty"`
	// Sweep is the sweep, Points its expansion, of a sweep.
	Sweep *workloads.Sweep `json:"sweep,omitempty"`
	// Transport is the engine's knobs the run set, the same for every point.
	Transport engine.Transport `json:"transport"`
	// NFS names the files of --program nfs3.
	NFS *NFSFiles `json:"nfs,omitempty"`
	// Turnarounds says the pollers' turnaround probe was on (--turnarounds).
	Turnarounds bool `json:"turnarounds,omitempty"`
	// Repeat is the rounds of every point (--repeat; absent: one); Shuffle says each
	// round's order was drawn from the workload's seed (--shuffle).
	Repeat  int  `json:"repeat,omitempty"`
	Shuffle bool `json:"shuffle,omitempty"`
	// RoundsPerProcess is how many rounds ran in each process (--rounds-per-process),
	// absent when every round ran in one.
	RoundsPerProcess int `json:"rounds_per_process,omitempty"`
	// SoftSlowdown is the soft provider's calibrated slowdown (--soft-delay,
	// --soft-bandwidth), absent when off.
	SoftSlowdown *SoftSlowdown `json:"soft_slowdown,omitempty"`
	// Auto is the judgement the run made of itself (--baseline, --repeat auto), absent
	// without one.
	Auto *AutoRecord `json:"auto,omitempty"`
}

// Measurement is a measuring command planned: its points, its record and its judgement,
// checked before anything is measured.
type Measurement struct {
	// Points are the points to measure, in order.
	Points []workloads.Point
	// Warnings are what the plan should tell the user before it measures.
	Warnings []string
	c        *RunConfig
	record   *RunRecord
	judge    *Judgement
}

// Prepare checks c, plans its points and its judgement (reading a baseline named "-" from
// stdin) and makes sure the results can be written, before anything is measured; c takes
// the defaults that apply (its server address, its inline rule).
func (c *RunConfig) Prepare(stdin io.Reader) (*Measurement, error) {
	if c.Addr != "" {
		a, err := CheckAddr("addr", c.Addr, true)
		if err != nil {
			return nil, err
		}
		c.Addr = a
	}
	rec := &RunRecord{Command: c.Command, Provider: c.Provider, Device: c.Device, Addr: c.Addr, Turnarounds: c.Turnarounds}
	if c.Workload.Prog != nil && c.Workload.Prog.External {
		rec.NFS = &c.NFS
	}
	if rec.Provider == "" {
		rec.Provider = "soft"
	}
	m := &Measurement{c: c, record: rec}
	if c.Sweep {
		s, p, err := c.Plan()
		if err != nil {
			return nil, err
		}
		rec.Sweep, m.Points = &s, p
	} else {
		w, err := c.Base()
		if err != nil {
			return nil, err
		}
		rec.Workload, rec.Threshold = &w, c.Threshold()
		size := 0
		if len(w.Mix) == 1 && len(w.Mix[0].Size.Values) == 1 {
			size = w.Mix[0].Size.Values[0]
		}
		m.Points = []workloads.Point{{Threshold: rec.Threshold, Size: size, Depth: w.Depth, Workload: w}}
	}
	rec.Transport = c.Transport
	if c.Shuffle && len(m.Points) == 1 {
		// A recipe's flags serve every measurement it makes, a one-point one too.
		m.Warnings = append(m.Warnings, "--shuffle orders the points of a round, and this measurement has one point: it changes nothing")
	}
	if c.Repeat > 1 && !c.Auto {
		rec.Repeat = c.Repeat
	}
	if c.RoundsPerProcess < 0 {
		return nil, Usagef("--rounds-per-process %d: want 0 (every round in this process) or more", c.RoundsPerProcess)
	}
	if m.Fresh() {
		rec.RoundsPerProcess = c.RoundsPerProcess
	}
	rec.Shuffle = c.Shuffle
	if c.Slowdown.On() {
		rec.SoftSlowdown = &c.Slowdown
	}
	var err error
	if c.Block == nil {
		// A block's process only measures: the process that started it judges.
		if m.judge, err = c.planJudgement(stdin, m.Points); err != nil {
			return nil, err
		}
	}
	if m.judge != nil {
		rec.Auto = &m.judge.Record
	}
	if c.Block == nil {
		if err := CheckReports(c.Judge.Reports); err != nil {
			return nil, err
		}
		if len(c.Judge.Reports) > 0 && (m.judge == nil || !m.judge.AgainstBaseline()) {
			return nil, Usagef("--report writes the judgement against a baseline: give --baseline too")
		}
	}
	if err := CheckCPUs(c.Workload.CPUs); err != nil {
		return nil, err
	}
	if err := CheckOut(c.Out); err != nil {
		// Before anything is measured: a run is expensive to repeat.
		return nil, UsageError{err.Error()}
	}
	return m, nil
}

// Fresh says m runs its rounds in fresh processes (RunConfig.RoundsPerProcess): Run then
// needs blocks, not a connector.
func (m *Measurement) Fresh() bool {
	return m.c.Block == nil && m.c.RoundsPerProcess > 0 && m.c.Repeat > 1
}

// Run measures m's points over conn, or (Fresh) in blocks of rounds that blocks runs in new
// processes; the table and the results to stdout, progress and point lines to stderr;
// hurry is Config.Hurry.
func (m *Measurement) Run(ctx, hurry context.Context, conn session.Connector, blocks session.RunBlock, stdout, stderr io.Writer) (*session.Outcome, error) {
	c := m.c
	sc := session.Config{Command: c.Command, Points: m.Points, RunConfig: m.record, Provider: m.record.Provider, Connector: conn,
		Out: c.Out, ResultsTo: stdout, Log: stderr, Interval: c.Interval, Hurry: hurry,
		Rounds: c.Repeat, Shuffle: c.Shuffle, Seed: c.Workload.Seed, Block: c.Block, Quiet: c.Quiet}
	if m.Fresh() {
		sc.Connector, sc.Blocks, sc.BlockRounds = nil, blocks, c.RoundsPerProcess
	}
	if m.judge != nil {
		sc.AfterRound = m.judge.AfterRound()
	}
	if !c.Quiet && sc.Blocks == nil {
		per, total, started := session.PlannedTime(m.Points), len(m.Points)*max(c.Repeat, 1), 0
		if c.Auto {
			per = 0 // the rounds are not known in advance: no ETA
		}
		sc.Progress = func(label, line string, lives []*workloads.Live) session.Display {
			started++
			p := session.NewProgress(stderr, label, lives, workloads.Now)
			p.Header = line
			p.Point, p.After = per, per*time.Duration(max(total-started, 0))
			p.Start()
			return p
		}
	}
	return session.Run(ctx, sc)
}

// Conclude prints to out what a sweep's run r answers (its class switches, or the best
// threshold of each mix) and the judgement of a complete run, failures to stderr, and
// returns the judgement's exit status (0 without one); its error is bad input.
func (m *Measurement) Conclude(out, stderr io.Writer, r *results.Run) (int, error) {
	c, j := m.c, m.judge
	if c.Block != nil {
		return 0, nil // the process that started this one concludes
	}
	if c.Sweep && len(r.Points) > 0 {
		switch {
		case len(m.record.Sweep.Mixes) > 0 && (j == nil || j.AgainstBaseline()):
			// A mix has no size axis to switch class along: the question is which
			// threshold suits it.
			fmt.Fprintln(out)
			if err := results.WriteThresholds(out, results.BestThresholds([]*results.Run{r}, 0)); err != nil {
				fmt.Fprintf(stderr, "rpcrdma-bench %s: %v\n", c.Command, err)
			}
		case len(m.record.Sweep.Mixes) == 0:
			WriteSwitches(out, r)
		}
	}
	if j == nil && c.Repeat > 1 && r.Status.State == results.StateComplete {
		fmt.Fprintln(out)
		lines, _ := results.BaselineFitness([]*results.Run{r}, results.CompareConfig{Alpha: c.Judge.Alpha})
		for _, l := range lines {
			fmt.Fprintln(out, l)
		}
	}
	if j == nil || r.Status.State != results.StateComplete {
		// A failed or interrupted run keeps its exit status: its judgement would rest on
		// what it did not measure.
		return 0, nil
	}
	v, err := j.Judge(r)
	if rec := j.Record; c.Auto {
		fmt.Fprintf(out, "\nrepeat auto: %d of at most %d rounds; looks after rounds %s, alpha %g spent over them (O'Brien-Fleming); this look at %.3g\n",
			v.Rounds, rec.Budget, lookRounds(rec.Looks), rec.Alpha, v.Alpha)
	}
	if err != nil {
		return 0, UsageError{err.Error()}
	}
	fmt.Fprintln(out)
	if v.Comparison == nil {
		if err := results.WriteThresholds(out, v.Thresholds); err != nil {
			fmt.Fprintf(stderr, "rpcrdma-bench %s: %v\n", c.Command, err)
		}
		if v.Exit != 0 {
			fmt.Fprintf(stderr, "rpcrdma-bench %s: best threshold not settled for every row (exit %d)\n", c.Command, v.Exit)
		}
		return v.Exit, nil
	}
	if err := results.WriteCompareText(out, v.Comparison); err != nil {
		fmt.Fprintf(stderr, "rpcrdma-bench %s: %v\n", c.Command, err)
	}
	if err := WriteReports(c.Judge.Reports, v.Comparison); err != nil {
		fmt.Fprintf(stderr, "rpcrdma-bench %s: %v\n", c.Command, err)
		return results.ExitFailed, nil
	}
	if v.Exit != 0 {
		fmt.Fprintf(stderr, "rpcrdma-bench %s: %s (exit %d)\n", c.Command, v.Comparison.Verdict, v.Exit)
	}
	return v.Exit, nil
}

// lookRounds lists the rounds of looks: "7, 8, 9, 10".
func lookRounds(looks []session.Look) string {
	var s []string
	for _, l := range looks {
		s = append(s, strconv.Itoa(l.Round))
	}
	return strings.Join(s, ", ")
}

// planJudgement is the judgement c asks for, nil for none.
func (c *RunConfig) planJudgement(stdin io.Reader, pts []workloads.Point) (*Judgement, error) {
	f := &c.Judge
	if len(f.Baseline) == 0 {
		for _, n := range []string{"threshold", "metrics", "under-load"} {
			if c.Given[n] {
				return nil, Usagef("--%s judges against a baseline: give --baseline too", n)
			}
		}
		if !c.Auto {
			return nil, nil
		}
	}
	jc := JudgeConfig{Compare: results.CompareConfig{Alpha: f.Alpha}, Auto: c.Auto, Budget: c.Repeat, Points: pts, Sweep: c.Sweep}
	if c.RoundsPerProcess > 0 && c.Repeat > 1 {
		jc.Step = c.RoundsPerProcess // a look needs a whole process
	}
	if len(f.Baseline) > 0 && f.Alpha > 0 && f.Alpha < 1 { // a bad --alpha is named first
		cfg, err := CompareConfig(f.Alpha, f.Threshold, f.Metrics)
		if err != nil {
			return nil, err
		}
		cfg.UnderLoad, cfg.HostTolerance = f.UnderLoad, hostTolerance(f.HostTolerance)
		files, err := baselineFiles(f.Baseline)
		if err != nil {
			return nil, err
		}
		if jc.Base, err = results.ReadInputs(stdin, files); err != nil {
			return nil, Usagef("--baseline: %v", err)
		}
		jc.Compare = cfg
	}
	j, err := PlanJudgement(jc)
	if err != nil {
		return nil, UsageError{err.Error()}
	}
	return j, nil
}

// CompareConfig is the judgement compare's --alpha, --threshold and --metrics ask for.
func CompareConfig(alpha float64, thresholds, metrics string) (results.CompareConfig, error) {
	th, err := results.ParseThresholds(thresholds)
	if err != nil {
		return results.CompareConfig{}, UsageError{"--threshold: " + err.Error()}
	}
	cfg := results.CompareConfig{Alpha: alpha, Thresholds: th}
	if metrics != "" {
		if cfg.Metrics, err = results.ParseMetrics(metrics); err != nil {
			return cfg, UsageError{"--metrics: " + err.Error()}
		}
	}
	return cfg, nil
}

// baselineFiles expands --baseline's globs and directories into files.
func baselineFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, Usagef("--baseline %q: %v", a, err)
		}
		if len(m) == 0 {
			return nil, Usagef("--baseline %q: no such file", a)
		}
		files = append(files, m...)
	}
	files, _, err := results.ExpandDirs(files)
	if err != nil {
		return nil, UsageError{err.Error()}
	}
	return files, nil
}

// Engine is the Connector of c's points pts over provider p (its slowdown and probe
// already applied): the transport engine to c.Addr or to a responder in this process,
// which logs to log. It sizes the Go runtime for the pollers.
func (c *RunConfig) Engine(ctx context.Context, p datapath.Provider, pts []workloads.Point, log io.Writer) (session.Connector, error) {
	codec, cred, err := c.programCodec(ctx, pts)
	if err != nil {
		return nil, err
	}
	cfg := engine.EngineConfig{Provider: p, Device: c.Device, Addr: c.Addr, Verify: c.Workload.Verify,
		Poll: c.Workload.Poll, Transport: c.Transport, Codec: codec, Cred: cred, Log: log}
	if c.Turnarounds {
		// The client's turnarounds go into the results, point by point; the responder's
		// poller serves every point, so its reading covers the whole run and is printed
		// when it stops, as server --turnarounds prints its own.
		cfg.ResponderDone = PrintTurnarounds(log, new(sync.Mutex), "rpcrdma-bench: the responder in this process, all points and warm-ups: ")
	}
	p.Defaults().SizeRuntime(cfg.Polls(pts))
	return engine.Engine(cfg, pts)
}

// programCodec is the codec of a program served outside this tool, made by its
// Descriptor's Setup for c's server and files, and the credential its calls carry (nil and
// AUTH_NONE: the benchmark program, or another program's NULL).
func (c *RunConfig) programCodec(ctx context.Context, pts []workloads.Point) (rpcproto.Codec, oncrpc.OpaqueAuth, error) {
	var none oncrpc.OpaqueAuth
	d, ok := ProgramOf(c.Workload.Prog)
	if !ok || d.Setup == nil {
		return nil, none, nil
	}
	if c.Addr == "" {
		return nil, none, Usagef("--program %s needs --addr: a server of that program (the server in this process serves only the benchmark program)", d.Program.Name)
	}
	codec, cred, err := d.Setup(ctx, rpcproto.Target{Addr: c.Addr, Export: c.NFS.Export, File: c.NFS.File,
		Scratch: c.NFS.Scratch, MountdPort: c.NFS.MountdPort, LargestRead: workloads.LargestRead(pts), Verify: c.Workload.Verify})
	if te := (*rpcproto.TargetError)(nil); errors.As(err, &te) {
		return nil, none, Usagef("--nfs-%s %q: want %s", te.Field, te.Value, te.Want)
	}
	return codec, cred, err
}

// NFSRDMAPort is NFS/RDMA's IANA port (RFC 5666), the server's default: a client's --addr
// HOST goes there.
const NFSRDMAPort = "20049"

// CheckAddr checks the HOST:PORT of flag; withDefault supplies NFSRDMAPort when addr names
// no port. It returns the address to use.
func CheckAddr(flag, addr string, withDefault bool) (string, error) {
	_, port, err := net.SplitHostPort(addr)
	var ae *net.AddrError
	if withDefault && errors.As(err, &ae) && ae.Err == "missing port in address" {
		addr = net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), NFSRDMAPort)
		_, port, err = net.SplitHostPort(addr)
	}
	if err != nil {
		reason := err.Error()
		if errors.As(err, &ae) {
			reason = ae.Err // the address is named already
		}
		return "", Usagef("--%s %q: want HOST:PORT: %v", flag, addr, reason)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", Usagef("--%s %q: port %s is not a number from 0 to 65535", flag, addr, port)
	}
	return addr, nil
}

// CheckCPUs fails, as bad usage, when a CPU of --cpus is not one this process may run on,
// before anything is measured.
func CheckCPUs(cpus []int) error {
	if err := datapath.CheckCPUs(cpus); err != nil {
		return Usagef("--cpus: %v", err)
	}
	return nil
}

// CheckOut makes sure the results can be written to path before anything is measured: its
// directory exists and takes a new file, and path is not a directory. "" (no file) and "-"
// (standard output) always can. The probe file is removed again.
func CheckOut(path string) error {
	if path == "" || path == session.Stdout {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--out %s: is a directory (name a file in it)", path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".probe-*")
	if err != nil {
		return fmt.Errorf("--out %s: cannot create the results file: %w", path, UnwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// UnwrapPath drops a *PathError's path, which would only confuse where the message names
// the file the user gave (not, say, a temporary probe's name).
func UnwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// PrintTurnarounds is a PollerDone (rpcrdma.ServeConfig's, EngineConfig's ResponderDone)
// that prints to w, after prefix, the turnarounds of each poller that measured any, a line
// at a time under mu.
func PrintTurnarounds(w io.Writer, mu *sync.Mutex, prefix string) func(int, datapath.PollerStats) {
	return func(i int, st datapath.PollerStats) {
		if !st.HasTurnaround {
			return
		}
		mu.Lock()
		fmt.Fprintln(w, prefix+turnaroundLine(i, &st.Turnaround))
		mu.Unlock()
	}
}

// turnaroundLine is what a server's poller prints of its turnaround probe when it stops.
func turnaroundLine(poller int, t *datapath.Turnaround) string {
	return fmt.Sprintf("poller %d turnaround (its own time from a completion to the posts it caused, the connections' setup included), µs: %s",
		poller, results.TurnaroundOf(t))
}
