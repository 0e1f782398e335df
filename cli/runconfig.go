package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/engine"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// UsageError is a command line that cannot mean what it says (a value out of range, flags
// that contradict each other, an input file that is not one): the command exits 2.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// Usagef is a UsageError formatted as fmt.Sprintf does.
func Usagef(format string, a ...any) error { return UsageError{fmt.Sprintf(format, a...)} }

// RunConfig is a measuring command's settings (run, client, sweep) as its flags give them;
// the session validates them, plans the points and measures (Prepare).
type RunConfig struct {
	// Command is the subcommand: run, client or sweep. Sweep selects a sweep's meaning of
	// Sizes and Depths (axes) over a single run's (Workload.Size, Workload.Depth).
	Command string
	Sweep   bool
	// Workload holds the settings that are a workload's own fields (depth, rate, mix
	// sizes, program, class, pollers, connections, poll, CPUs, seed, count); without a
	// program it measures the benchmark program (Table).
	Workload workloads.Config
	// Duration, Warmup (0: none), Drain (0: the default) and Interval (0: no time series)
	// are the measured time per point and its edges.
	Duration, Warmup, Drain, Interval time.Duration
	// Thresholds, Sizes and Depths are a sweep's axes; a single run takes one threshold.
	Thresholds, Sizes, Depths []int
	// Proc is a sweep's procedure, Mix a run's mix, Mixes a sweep's mixes (unparsed).
	Proc, Mix string
	Mixes     []string
	Transport engine.Transport
	NFS       NFSFiles
	// Provider and Device name the datapath; Out the results file; Addr the server ("":
	// one in this process).
	Provider, Device, Out, Addr string
	Quiet, Turnarounds          bool
	// Repeat is the rounds of every point (Auto: the most); Auto adds rounds until the
	// judgement is conclusive; Shuffle draws each round's order from the seed.
	Repeat        int
	Auto, Shuffle bool
	// RoundsPerProcess is how many rounds of a repeated measurement run in one process:
	// each block of that many rounds runs in a new process of the tool (0: every round in
	// this one). Block is the block this process runs for another (nil: it is no such
	// process).
	RoundsPerProcess int
	Block            *session.Block
	Judge            JudgeFlags
	Slowdown         SoftSlowdown
	// Given are the flags the user gave, by name: a default that depends on another
	// setting yields to a flag given.
	Given map[string]bool
}

// JudgeFlags are a measuring command's judgement of its own results against a baseline,
// as compare judges (--baseline, --threshold, --metrics, --alpha).
type JudgeFlags struct {
	Baseline           []string
	Threshold, Metrics string
	Alpha              float64
	// UnderLoad judges verdicts that rest on disturbed processes when both sides ran under
	// comparable load (results.CompareConfig.UnderLoad).
	UnderLoad bool
	// HostTolerance is CompareFiles.HostTolerance.
	HostTolerance float64
	// Reports are files the judgement is written to, each in the format its name says
	// (ReportFormat): exactly the judgement the command exits on.
	Reports []string
}

// SoftSlowdown is the soft provider's calibrated slowdown (soft.Config.CompletionDelay,
// Bandwidth and PostCost), a test instrument that makes a known effect so that a regression gate's power
// can be measured against it. A results file's config keeps it as "soft_slowdown".
type SoftSlowdown struct {
	CompletionDelay workloads.Duration `json:"completion_delay,omitempty"`
	// BandwidthBps is the link's rate in bits per second (0: no cap).
	BandwidthBps float64            `json:"bandwidth_bps,omitempty"`
	PostCost     workloads.Duration `json:"post_cost,omitempty"`
}

// On says the slowdown is on.
func (s *SoftSlowdown) On() bool {
	return s.CompletionDelay > 0 || s.BandwidthBps > 0 || s.PostCost > 0
}

// DefaultThreshold is the inline threshold a single run offers without --thresholds: the
// Linux client's, 4 KiB (RFC 8166's own default, 1 KiB, applies only without private data).
const DefaultThreshold = 4096

// Threshold is the single inline threshold to advertise.
func (c *RunConfig) Threshold() int {
	if len(c.Thresholds) == 0 {
		return DefaultThreshold
	}
	return c.Thresholds[0]
}

// Table is the program c measures: the one --program names, else the benchmark program,
// which the server in this process serves (the workloads leave the default to the commands).
func (c *RunConfig) Table() *rpcproto.Program {
	if p := c.Workload.Table(); p != nil {
		return p
	}
	return benchprog.Prog
}

// Base returns the workload every point shares, normalized; c.Transport takes the program's
// inline rule.
func (c *RunConfig) Base() (workloads.Config, error) {
	w := c.Workload
	if w.Prog == nil && w.Program == 0 {
		w.Prog = benchprog.Prog
	}
	w.Duration = workloads.Duration(c.Duration)
	if w.Count > 0 && !c.Given["duration"] {
		w.Duration = 0
	}
	w.Warmup = workloads.Duration(c.Warmup)
	if c.Warmup == 0 {
		w.Warmup = -1 // the flag's 0 means none; the Config's 0 means the default
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"warmup", c.Warmup}, {"duration", c.Duration}, {"interval", c.Interval}, {"drain", c.Drain}} {
		if d.v < 0 {
			return w, Usagef("--%s must not be negative (got %v)", d.name, d.v)
		}
	}
	if c.Duration == 0 && w.Count == 0 {
		// The Config's 0 would mean the default: say so rather than run it.
		return w, Usagef("--duration 0s: want a measured time above 0 (or --count N to end on a count)")
	}
	w.Drain = workloads.Duration(c.Drain)
	// A flag's zero must not quietly mean its default: say what is accepted.
	if !c.Sweep && w.Depth < 1 {
		return w, Usagef("--depth %d: want at least 1 RPC outstanding per connection", w.Depth)
	}
	if w.Pollers < 1 {
		return w, Usagef("--pollers %d: want at least 1 poller thread", w.Pollers)
	}
	if w.Connections < 1 {
		return w, Usagef("--connections %d: want at least 1", w.Connections)
	}
	if c.Mix != "" {
		mix, err := parseMix(c.Mix, w.Table())
		if err != nil {
			return w, UsageError{"--mix: " + err.Error()}
		}
		w.Mix = mix
	}
	if w.Prog != benchprog.Prog && !c.Given["mix"] {
		w.Mix = workloads.Only("null", workloads.Sizes{})
	}
	if !c.Sweep && c.Given["sizes"] && w.Program == 0 && !mixTakesSize(w.Mix, w.Table()) {
		return w, Usagef("--sizes has no effect: every entry of the %s mix has its own size (--sizes sets the entries without one, as in --mix echo --sizes 64k; 'sweep' sweeps sizes)", mixLabel(w.Mix, w.Table()))
	}
	if w.Rate == 0 && c.Given["arrival"] {
		return w, Usagef("--arrival needs --rate (open loop)")
	}
	if w.Rate == 0 {
		w.Arrival = ""
	}
	if len(c.Thresholds) > 1 && !c.Sweep {
		return w, Usagef("--thresholds takes one value here (%d given); 'sweep' takes a list", len(c.Thresholds))
	}
	if err := ValidateTransport(&c.Transport, true); err != nil {
		return w, UsageError{err.Error()}
	}
	if err := checkAlone(&w, c.Given); err != nil {
		return w, err
	}
	if w.Prog != nil && w.Prog.External && !c.Given["inline-rule"] {
		// NFS results should predict what a Linux client sees.
		c.Transport.InlineRule = rpcrdma.InlineLinux
	}
	if err := CheckTurnarounds(c.Turnarounds, c.Provider); err != nil {
		return w, err
	}
	if c.Sweep && c.Transport.SendSize != 0 && c.Transport.RecvSize != 0 && c.Given["thresholds"] {
		return w, Usagef("--send-size and --recv-size leave --thresholds nothing to vary")
	}
	n, err := w.Normalized()
	if err != nil {
		return w, UsageError{err.Error()}
	}
	return n, nil
}

// Plan returns the sweep c describes.
func (c *RunConfig) Plan() (workloads.Sweep, []workloads.Point, error) {
	base, err := c.Base()
	if err != nil {
		return workloads.Sweep{}, nil, err
	}
	s := workloads.Sweep{Thresholds: c.Thresholds, Depths: c.Depths, Base: base}
	if len(c.Mixes) > 0 {
		// A mix sets each entry's procedure and size: a --proc or --sizes would be ignored.
		for _, f := range []string{"proc", "sizes"} {
			if c.Given[f] {
				return workloads.Sweep{}, nil, Usagef("--%s has no effect with --mix (a mix names each entry's procedure and size)", f)
			}
		}
		for _, m := range c.Mixes {
			mix, err := parseMix(m, base.Table())
			if err != nil {
				return s, nil, UsageError{"--mix: " + err.Error()}
			}
			s.Mixes = append(s.Mixes, mix)
		}
	} else {
		prog := base.Table()
		if _, err := prog.Lookup(c.Proc); err != nil && !c.Given["proc"] {
			// The default, echo, is the benchmark program's: another program sweeps its
			// first procedure with a payload (NFS: read).
			for _, p := range prog.Procs {
				if p.Sized() {
					c.Proc = p.Name
					break
				}
			}
		}
		i, err := prog.Lookup(c.Proc)
		if err != nil {
			return workloads.Sweep{}, nil, UsageError{"--proc: " + err.Error()}
		}
		p := &prog.Procs[i]
		if !p.Sized() {
			return workloads.Sweep{}, nil, Usagef("--proc %s has no payload to sweep sizes of", p.Name)
		}
		s.Sizes, s.Proc = c.Sizes, p.Name
	}
	pts, err := s.Plan()
	if err != nil {
		return s, nil, UsageError{err.Error()}
	}
	return s, pts, nil
}

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

// mixLabel names a mix of prog for a message: its default preset's name for that preset
// (nil is the default).
func mixLabel(mix []workloads.MixEntry, prog *rpcproto.Program) string {
	if mix == nil {
		return prog.DefaultMix
	}
	return strconv.Quote(workloads.MixName(mix, prog))
}

// parseMix parses --mix as a mix of prog, telling apart what a user may mean by another
// program's preset (nfs-like with --program nfs3) or by NFS itself.
func parseMix(s string, prog *rpcproto.Program) ([]workloads.MixEntry, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if _, ok := prog.Presets[t]; !ok {
		switch t {
		case benchprog.NFSLike:
			return nil, &workloads.ParseError{Kind: "mix", Input: s, Token: s, Err: fmt.Errorf("nfs-like is a mix of the benchmark program, not of %s", prog.Name)}
		case "nfs", "nfs3":
			return nil, &workloads.ParseError{Kind: "mix", Input: s, Token: s, Err: errors.New(`ambiguous: the benchmark program's NFS-shaped mix is "nfs-like"; NFSv3 itself is the program nfs3`)}
		}
	}
	return workloads.ParseMix(s, prog)
}

// CheckTurnarounds refuses --turnarounds on a provider without the probe ("": soft).
func CheckTurnarounds(on bool, provider string) error {
	if on && provider != "verbs" {
		if provider == "" {
			provider = "soft"
		}
		return Usagef("--turnarounds needs --provider verbs: the probe is in its completion queues' C code (provider %s has none)", provider)
	}
	return nil
}

// checkAlone refuses a mix that names a procedure measured alone (rpcproto.Procedure.Alone,
// nfs4's recall) beside other procedures or asks for more than one at a time. Its depth is
// 1 unless given.
func checkAlone(w *workloads.Config, given map[string]bool) error {
	prog := w.Table()
	for _, e := range w.Mix {
		i, err := prog.Lookup(e.Proc)
		if err != nil || !prog.Procs[i].Alone {
			continue
		}
		if len(w.Mix) > 1 {
			return Usagef("--mix: %s is measured alone (--mix %s)", e.Proc, e.Proc)
		}
		if !given["depth"] {
			w.Depth = 1
		}
		if w.Depth > 1 || w.Connections > 1 || w.Pollers > 1 {
			return Usagef("--mix %s: one at a time (depth, connections and pollers 1)", e.Proc)
		}
	}
	return nil
}

// NFSFiles name the files of --program nfs3 and nfs4, as a results file's config records them.
type NFSFiles struct {
	Export  string `json:"export"`
	File    string `json:"file"`
	Scratch string `json:"scratch"`
	// MountdPort is mountd's TCP port, 0 when the portmapper was asked.
	MountdPort int `json:"mountd_port,omitempty"`
}
