package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// Connector makes the Clients of each point: the transport engine's requester over a
// provider (Engine), or a fake in tests.
type Connector interface {
	// Device is the opened device's attributes for the results' environment (nil: none).
	Device() *datapath.DeviceInfo
	// Point prepares pt: it returns the Opener each poller calls to connect its share of
	// pt's connections (fresh connections with fresh private data offering pt.Threshold)
	// and a function called once after the point ran, when every Client is closed,
	// reporting what the connections negotiated and the RDMA operations they posted (nil:
	// unknown).
	Point(pt workloads.Point) (workloads.Opener, func() PointReport, error)
	// Close releases the device (and stops a responder in this process).
	Close() error
}

// HostReader is a Connector that says how to read the host it measures on: at each point's
// edges for its disturbance, and its speed before it (fake clients in tests: a quiet, steady
// host); others use datapath.ReadHostCPU and datapath.ProbeHost.
type HostReader interface {
	HostCPU() (datapath.HostCPU, error)
	HostSpeed() datapath.HostSpeed
}

// PointReport is what a Connector learned from a point's connections.
type PointReport struct {
	// Negotiated are the first connection's parameters (all of a point's connections offer
	// the same), nil if none was established.
	Negotiated *results.Negotiated
	// Ops are the RDMA operations of all the point's connections, nil if not counted;
	// PeerOps those of the responder's side of them, nil if not counted.
	Ops, PeerOps *results.Ops
	// PeerOpsInferred: PeerOps were inferred from this side's counters (a responder in
	// another process), not counted by the responder.
	PeerOpsInferred bool
	// SpinningPeers counts pollers of a responder in this process that spin under load
	// (they compete with the measuring pollers for the CPUs).
	SpinningPeers int
	// Threshold is the inline threshold the connections negotiated in the directions the
	// point's threshold set (0: unknown); below the point's, the peer capped the offer and
	// the point is filed under it.
	Threshold int
	// Callbacks are the server's calls the connections answered over their lifetime, set up
	// included (NFSv4.1's CB_NULL probes the back channel then); Recalls a delegation-recall
	// measurement's parts. Nil when none.
	Callbacks []results.ProcStats
	Recalls   *results.Recalls
	// Recoveries counts the sessions the connections set up again; nil when none.
	Recoveries *results.Recoveries
}

// Stdout as Config.Out writes the results to Config.ResultsTo once, at the end: a stream
// cannot be rewritten after every point.
const Stdout = "-"

// Config is one measuring session.
type Config struct {
	// Command names the invocation (run, client, sweep) in the point lines and in the name
	// of a rescue file.
	Command string
	// Points are measured in order, each on fresh connections; the first failure or an
	// interruption ends the session.
	Points []workloads.Point
	// RunConfig is the results file's "config" object (results/SCHEMA.md), encoded as JSON.
	RunConfig any
	// Provider names the datapath provider in the results' environment.
	Provider string
	// Connector makes the points' clients. The session does not close it.
	Connector Connector
	// Out is the results file, rewritten after every point; Stdout writes it to ResultsTo
	// at the end; empty writes none.
	Out       string
	ResultsTo io.Writer
	// Log takes one line per point (unless Progress shows it, or Quiet) and the warnings and
	// failures to write the results file (nil: discarded).
	Log io.Writer
	// Quiet: no line per point when Progress is unset.
	Quiet bool
	// Interval is how often a point's throughput is sampled into its Intervals (0: never).
	Interval time.Duration
	// Progress, when set, shows a point while it runs: it is called as the point starts,
	// with the point's label, the point's line (what Log would otherwise take) and its
	// pollers' live counters, and returns the point's Display.
	Progress func(label, line string, lives []*workloads.Live) Display
	// Clock is the Drivers' clock (nil: workloads.Now).
	Clock func() int64
	// Hurry, once done (nil: never), ends the drain of a stopped point at once: the RPCs
	// still outstanding are abandoned and the point is kept with what it measured.
	Hurry context.Context
	// Rounds is how many times every point is measured (0: once). The rounds are
	// interleaved: round i measures every point once, in the order workloads.RoundOrder
	// gives (Shuffle with Seed), so that drift over time hits every point alike; each point
	// records its round.
	Rounds  int
	Shuffle bool
	Seed    uint64
	// AfterRound, when set, is called after every round but the last with the run so far;
	// false ends the session there, complete (a judgement that is already conclusive).
	AfterRound func(run *results.Run, round int) bool
	// Blocks, when set, measures the rounds in blocks of BlockRounds rounds, each block in a
	// process of its own (FreshProcesses), and merges what each measured into this run with
	// its process recorded; AfterRound is then called after every block but the last.
	Blocks      RunBlock
	BlockRounds int
	// Block is the block of rounds this process measures for another (nil: every round).
	Block *Block
}

// Outcome is how a session ended.
type Outcome struct {
	// Run holds every point measured, with the final status (results.Status).
	Run *results.Run
	// Err is the failure that ended the session early (a point's setup or run), nil if none.
	Err error
	// Interrupted: the context was cancelled before every point ran.
	Interrupted bool
	// Written is the file the results were last written to ("" if none); Rescued says it is
	// a rescue file in the working or temporary directory, because Out could not be
	// written (WriteErr says why).
	Written  string
	Rescued  bool
	WriteErr error
	// WriteErrLogged: WriteErr is the failure a point already reported to Config.Log.
	WriteErrLogged bool
	// RescueErr is why the rescue file could not be written either: the results are lost.
	RescueErr error
}

// Run runs the session. Its error is for a session that could not start (a config that
// does not encode); everything after that, failures included, is in the Outcome.
func Run(ctx context.Context, c Config) (*Outcome, error) {
	raw, err := json.Marshal(c.RunConfig)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Clock == nil {
		c.Clock = workloads.Now
	}
	s := &session{c: c, ctx: ctx}
	s.run = results.Run{
		SchemaVersion: results.SchemaVersion,
		Tool:          ToolName(),
		Start:         time.Now().UTC(),
		Config:        raw,
		Environment:   results.CaptureEnvironment(),
		Points:        []results.Point{},
		Status:        results.Status{State: results.StateInterrupted, Message: "running"},
	}
	s.run.End = s.run.Start
	s.run.Environment.Provider = c.Provider
	if c.Connector != nil {
		dev := c.Connector.Device()
		s.run.Environment.Device = dev
		if dev != nil && len(dev.Ports) > 0 {
			s.run.Environment.Port = dev.Ports[0].Num
		}
	}
	var first error
	if c.Blocks != nil {
		first = s.blocks()
	} else {
		first = s.rounds()
	}
	return s.finish(first), nil
}

// rounds measures the points round after round, and returns the failure that ended them
// early (nil if none).
func (s *session) rounds() error {
	c, rounds := &s.c, max(1, s.c.Rounds)
	from, to := 1, rounds
	if c.Block != nil {
		from, to = c.Block.First, min(c.Block.First+c.Block.Rounds-1, rounds)
	}
	for round := from; round <= to; round++ {
		for k, i := range workloads.RoundOrder(len(c.Points), round, c.Shuffle, c.Seed) {
			if s.ctx.Err() != nil {
				return nil
			}
			pt := c.Points[i]
			open, rep, err := c.Connector.Point(pt)
			if err != nil {
				return err
			}
			res, err := s.point(pt, place{k + 1, len(c.Points), round, rounds}, open, rep)
			if err != nil {
				return err
			}
			if res.Total.Interrupted {
				return nil
			}
		}
		if round < rounds && c.AfterRound != nil && !c.AfterRound(&s.run, round) {
			return nil
		}
	}
	return nil
}

// blocks measures the rounds in blocks, each in a process of its own (Config.Blocks), and
// returns the failure that ended them early (nil if none). Every process starts with its
// own thread placement, memory layout and connections, so the rounds sample the noise
// between processes that rounds inside one process cannot.
func (s *session) blocks() error {
	c, rounds := &s.c, max(1, s.c.Rounds)
	step := max(c.BlockRounds, 1)
	for first, proc := 1, 1; first <= rounds; first, proc = first+step, proc+1 {
		if s.ctx.Err() != nil {
			return nil
		}
		b := Block{First: first, Rounds: min(step, rounds-first+1), Process: proc}
		// One line a process, as a session in one process prints one a point.
		fmt.Fprintf(c.Log, "%s [process %d, rounds %d-%d of %d]\n", c.Command, proc, b.First, b.First+b.Rounds-1, rounds)
		r, err := c.Blocks(s.ctx, b)
		if r != nil {
			if proc == 1 {
				s.run.Environment.Device, s.run.Environment.Port = r.Environment.Device, r.Environment.Port
			}
			for _, p := range r.Points {
				p.Process = proc
				s.run.Points = append(s.run.Points, p)
			}
			if werr := s.save(); werr != nil && s.saveErr == nil {
				s.saveErr = werr
				fmt.Fprintf(c.Log, "rpcrdma-bench %s: %v (measuring goes on; the results will be written elsewhere if need be)\n", c.Command, werr)
			}
		}
		if err != nil {
			return err
		}
		if r.Status.State == results.StateFailed {
			return fmt.Errorf("process %d (rounds %d-%d): %s", proc, b.First, b.First+b.Rounds-1, r.Status.Message)
		}
		if r.Status.State != results.StateComplete {
			if s.ctx.Err() == nil {
				return fmt.Errorf("process %d (rounds %d-%d) was interrupted: %s", proc, b.First, b.First+b.Rounds-1, r.Status.Message)
			}
			return nil
		}
		if last := b.First + b.Rounds - 1; last < rounds && c.AfterRound != nil && !c.AfterRound(&s.run, last) {
			return nil
		}
	}
	return nil
}

// place is where a point stands in the session: the n-th of total in its round, of rounds.
type place struct{ n, total, round, rounds int }

// label names the place and the point for the display ("" for the only point of one round).
func (at place) label(pt workloads.Point) string {
	var parts []string
	if at.rounds > 1 {
		parts = append(parts, fmt.Sprintf("round %d/%d", at.round, at.rounds))
	}
	if at.total > 1 {
		what := "size " + workloads.FormatSize(pt.Size)
		if pt.Mix != "" {
			what = "mix " + pt.Mix
		}
		parts = append(parts, fmt.Sprintf("%d/%d thr %s %s depth %d", at.n, at.total, workloads.FormatSize(pt.Threshold), what, pt.Depth))
	}
	if len(parts) == 0 {
		return ""
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ToolName is the tool and its module version, as results files record it.
func ToolName() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "rpcrdma-bench " + v
}

type session struct {
	c   Config
	ctx context.Context
	run results.Run
	// saveErr is the first failure to write the results file after a point.
	saveErr error
	// drainSkipped: Hurry cut a point's drain short.
	drainSkipped bool
	// capped are the offered and effective thresholds already warned of: once per run, not
	// once per point (the table's note lists them all).
	capped map[[2]int]bool
}

// Params names a point for results: the procedure (MIX:NAME for a mix of several entries,
// NAME being workloads.MixName: "nfs-like" for the preset; NAME@PROGvVERS for another program's
// procedure), the payload sizes when the workload has a single fixed size, threshold,
// depth, connections and rate.
func Params(pt workloads.Point) results.Params {
	w := &pt.Workload
	p := results.Params{
		Procedure:       "MIX:" + workloads.MixName(w.Mix, w.Table()),
		Class:           w.Class.String(),
		InlineThreshold: pt.Threshold,
		Depth:           w.Depth,
		Connections:     w.Connections,
		RateRPS:         w.Rate,
	}
	if len(w.Mix) == 1 {
		e := w.Mix[0]
		p.Procedure = strings.ToUpper(e.Proc)
		if w.Program != 0 {
			// Another program's procedure is a different point from the benchmark
			// program's of the same name.
			p.Procedure = fmt.Sprintf("%s@%dv%d", p.Procedure, w.Program, w.Version)
		}
		prog := w.Table()
		if i, err := prog.Lookup(e.Proc); err == nil && (e.Size.Dist == "" || e.Size.Dist == "list") && len(e.Size.Values) == 1 {
			p.CallBytes, p.ReplyBytes = prog.Procs[i].Sizes(e.Size.Values[0])
		} else if err == nil && !e.Size.IsZero() {
			// The size varies per RPC: name the sizes where the payload goes, not 0.
			label := workloads.SizesLabel(e.Size)
			if c, r := prog.Procs[i].Sizes(1); c > 0 || r > 0 {
				if c > 0 {
					p.CallSizes = label
				}
				if r > 0 {
					p.ReplySizes = label
				}
			}
		}
	}
	return p
}

// recorder adapts a results.Recorder to workloads.Recorder. slot maps a procedure's index
// in the program's table to its place among the point's procedures (results.ProcStats).
type recorder struct {
	r    *results.Recorder
	slot *[rpcproto.MaxProcs]int
}

var _ workloads.Recorder = recorder{}

func (a recorder) Record(s workloads.Sample) {
	a.r.Record(s.Call, s.Reply, int64(s.RTT), s.Payload)
	if s.Proc >= 0 && s.Proc < len(a.slot) {
		a.r.RecordProc(a.slot[s.Proc], int64(s.RTT))
	}
}

func (a recorder) Fail(proc int, err error) {
	a.r.Fail(ErrorKind(err), err)
	if proc >= 0 && proc < len(a.slot) {
		a.r.FailProc(a.slot[proc])
	}
}

// procedures are the distinct procedures of w's mix in the program's table order, and where
// each table index goes among them (-1: not in the mix).
func procedures(w *workloads.Config) (names []string, slot *[rpcproto.MaxProcs]int) {
	slot = new([rpcproto.MaxProcs]int)
	prog := w.Table()
	in := make([]bool, len(prog.Procs))
	for _, e := range w.Mix {
		if i, err := prog.Lookup(e.Proc); err == nil {
			in[i] = true
		}
	}
	for i := range slot {
		slot[i] = -1
	}
	for i, ok := range in {
		if ok && i < len(slot) {
			slot[i] = len(names)
			names = append(names, prog.Procs[i].Name)
		}
	}
	return names, slot
}

// ErrorKind is the results error kind of an RPC's failure: what the error (or one it wraps)
// says its kind is (a Kind method, as the transport's and the programs' failures have),
// else "rpc".
func ErrorKind(err error) string {
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return "rpc"
}

// point runs one point with open making each poller's Client, appends it to the results and
// rewrites the results file. at places the point for the display and the results.
func (s *session) point(pt workloads.Point, at place, open workloads.Opener, report func() PointReport) (workloads.Result, error) {
	label := at.label(pt)
	w := pt.Workload
	warm := "no warm-up"
	if w.Warmup > 0 {
		warm = time.Duration(w.Warmup).String() + " warm-up"
	}
	line := fmt.Sprintf("%s %s: %s, then %s", s.c.Command, strings.TrimSpace("point "+label), warm, runLength(w))

	recs := make([]*results.Recorder, w.Pollers)
	lives := make([]*workloads.Live, w.Pollers)
	names, slot := procedures(&w)
	for i := range recs {
		recs[i] = results.NewRecorder()
		if len(names) > 1 {
			recs[i].SetProcedures(names)
		}
		lives[i] = new(workloads.Live)
	}
	r := workloads.Runner{
		Config:   w,
		Open:     open,
		Recorder: func(i int) workloads.Recorder { return recorder{recs[i], slot} },
		Live:     lives,
		Hurry:    s.c.Hurry,
	}
	readHost, probeHost := datapath.ReadHostCPU, datapath.ProbeHost
	if hr, ok := s.c.Connector.(HostReader); ok {
		readHost, probeHost = hr.HostCPU, hr.HostSpeed
	}
	host := probeHost() // before the point's pollers start, so that they do not share its CPUs
	var samp *sampler
	if s.c.Interval > 0 {
		samp = newSampler(lives, s.c.Clock, s.c.Interval)
	}
	var display Display
	switch {
	case s.c.Progress != nil:
		display = s.c.Progress(label, line, lives)
	case !s.c.Quiet:
		fmt.Fprintln(s.c.Log, line)
	}
	stopWatch := watch(samp, display, s.c.Clock)
	gc := pauseGC()
	cpu0, cpuErr := results.ReadCPU()
	host0, hostErr := readHost()
	res, err := r.Run(s.ctx)
	host1, hostErr1 := readHost()
	cpu1, cpuErr1 := results.ReadCPU()
	gcStats := gc.end()
	stopWatch()
	if display != nil {
		display.End()
	}

	st := &res.Total
	start, end := workloads.Time(st.Start), workloads.Time(st.End)
	if st.End <= st.Start {
		end = start
	}
	rp, serr := results.Summarize(Params(pt), start.UTC(), end.UTC(), recs...)
	if serr != nil {
		return res, fmt.Errorf("summarize: %w", serr)
	}
	// UTC() drops the monotonic reading: keep the monotonic duration Summarize computed from
	// the original times.
	rp.DurationNs = int64(end.Sub(start))
	rp.Throughput.RPCPerSec, rp.Throughput.PayloadGbps = 0, 0
	if rp.DurationNs > 0 {
		rp.Throughput.RPCPerSec = float64(rp.Throughput.RPCs) / (float64(rp.DurationNs) / 1e9)
		rp.Throughput.PayloadGbps = float64(rp.Throughput.PayloadBytes) * 8 / float64(rp.DurationNs)
	}
	if cpuErr == nil && cpuErr1 == nil {
		rp.CPU = cpu1.Sub(cpu0)
	}
	if samp != nil {
		rp.Intervals = samp.end(st.Start, max(st.Start, st.End))
	}
	pr := s.applyReport(&rp, pt, label, report)
	if hostErr == nil && hostErr1 == nil {
		pressure, pok, other, ook := host1.Since(host0)
		if pok {
			rp.HostCPUPressure = &pressure
		}
		if ook {
			rp.HostOtherCPU = &other
		}
	}
	rp.Host = results.HostSpeedOf(host)
	markDisturbance(&rp, &res, w, pr.SpinningPeers)
	rp.GC = gcStats
	if gcStats.Cycles > 0 {
		rp.Disturbed = append(rp.Disturbed, fmt.Sprintf("%d garbage collection(s) ran during the point", gcStats.Cycles))
	}
	s.countLost(&rp, st)
	if at.rounds > 1 {
		rp.Round = at.round
	}
	if s.c.Block != nil {
		rp.Process = s.c.Block.Process
	}
	rp.Complete = err == nil && !st.Interrupted
	if rp.Complete && rp.RTT.Count == 0 {
		// A point that ran its whole time without one round trip measured nothing: saying
		// "complete" with a zero rate would pass a stalled poller off as a result.
		rp.Errors = append(rp.Errors, results.ErrorStats{Kind: "no_rpcs", Count: 1,
			Messages: []string{"no RPC completed in the measured time (a stalled poller, or a duration shorter than one round trip)"}})
	}
	s.run.Points = append(s.run.Points, rp)
	if werr := s.save(); werr != nil && s.saveErr == nil {
		// The measuring goes on: finish tries again and, failing that, writes a rescue
		// file, so a full disk or a removed directory costs no measurement.
		s.saveErr = werr
		fmt.Fprintf(s.c.Log, "rpcrdma-bench %s: %v (measuring goes on; the results will be written elsewhere if need be)\n", s.c.Command, werr)
	}
	return res, err
}

// applyReport records in rp what the connector learned from pt's connections (nil report:
// nothing), warning once per run of a threshold the peer capped, and returns it.
func (s *session) applyReport(rp *results.Point, pt workloads.Point, label string, report func() PointReport) PointReport {
	if report == nil {
		return PointReport{}
	}
	pr := report()
	rp.Negotiated = pr.Negotiated
	if pr.Ops != nil {
		rp.Ops = *pr.Ops
	}
	rp.PeerOps, rp.PeerOpsInferred = pr.PeerOps, pr.PeerOpsInferred
	rp.Callbacks, rp.Recalls, rp.Recoveries = pr.Callbacks, pr.Recalls, pr.Recoveries
	if pr.Threshold != 0 && pr.Threshold != pt.Threshold {
		// Label what was measured: a threshold study filed under the offer would
		// answer the question with a size that never applied.
		rp.Params.InlineThreshold, rp.Params.OfferedInlineThreshold = pr.Threshold, pt.Threshold
		if cap := [2]int{pt.Threshold, pr.Threshold}; !s.capped[cap] {
			if s.capped == nil {
				s.capped = map[[2]int]bool{}
			}
			s.capped[cap] = true
			fmt.Fprintf(s.c.Log, "rpcrdma-bench %s: warning: %s: the peer capped the inline threshold: offered %s, in effect %s (this point and every later one so capped are filed under %s)\n",
				s.c.Command, strings.TrimSpace("point "+label), workloads.FormatSize(pt.Threshold), workloads.FormatSize(pr.Threshold), workloads.FormatSize(pr.Threshold))
		}
	}
	return pr
}

// countLost records in rp the RPCs a point lost: still outstanding at its end, or open-loop
// sends that never went out.
func (s *session) countLost(rp *results.Point, st *workloads.Stats) {
	switch {
	case st.Abandoned > 0 && st.DrainSkipped:
		s.drainSkipped = true
		rp.Errors = append(rp.Errors, results.ErrorStats{Kind: "abandoned", Count: st.Abandoned,
			Messages: []string{fmt.Sprintf("%d RPCs still outstanding when a second interrupt skipped the drain", st.Abandoned)}})
	case st.Abandoned > 0:
		rp.Errors = append(rp.Errors, results.ErrorStats{Kind: "abandoned", Count: st.Abandoned,
			Messages: []string{fmt.Sprintf("%d RPCs still outstanding when draining timed out (a longer drain waits for late replies)", st.Abandoned)}})
	}
	if st.Missed > 0 {
		rp.Errors = append(rp.Errors, results.ErrorStats{Kind: "missed_sends", Count: st.Missed,
			Messages: []string{fmt.Sprintf("%d open-loop sends never went out: the server could not keep up with the rate", st.Missed)}})
	}
}

func runLength(w workloads.Config) string {
	var parts []string
	if w.Duration > 0 {
		parts = append(parts, time.Duration(w.Duration).String())
	}
	if w.Count > 0 {
		parts = append(parts, fmt.Sprintf("%d RPCs", w.Count))
	}
	return strings.Join(parts, " or ")
}

// PlannedTime is the mean planned time of a point of pts, warm-up included, 0 when one ends
// on a count (its time is not known in advance).
func PlannedTime(pts []workloads.Point) time.Duration {
	var sum time.Duration
	for _, pt := range pts {
		if pt.Workload.Duration <= 0 {
			return 0
		}
		sum += time.Duration(pt.Workload.Duration + max(pt.Workload.Warmup, 0))
	}
	return sum / time.Duration(max(len(pts), 1))
}

// save writes the results file as it stands, if one was asked for. Standard output is
// written once, by finish.
func (s *session) save() error {
	if s.c.Out == "" || s.c.Out == Stdout {
		return nil
	}
	s.run.End = time.Now().UTC()
	if s.run.End.Before(s.run.Start) {
		s.run.End = s.run.Start
	}
	return writeResults(s.c.Out, &s.run)
}

// writeResults writes a results file; tests replace it to make the write fail.
var writeResults = results.WriteFile

// finish sets the run's final status from err (the first failure, nil if none) and whether
// the context was cancelled, and writes the results one last time.
func (s *session) finish(err error) *Outcome {
	o := &Outcome{Run: &s.run, Err: err, Interrupted: s.ctx.Err() != nil}
	// Every error kind fails the run: failed RPCs (a benchmark never reports speed for
	// corrupted data), RPCs abandoned in the drain, and open-loop sends that never went out
	// (the latencies then omit the worst of the queueing).
	byKind := map[string]uint64{}
	var kinds []string
	for _, p := range s.run.Points {
		for _, e := range p.Errors {
			if byKind[e.Kind] == 0 {
				kinds = append(kinds, e.Kind)
			}
			byKind[e.Kind] += e.Count
		}
	}
	switch {
	case err != nil:
		s.run.Status = results.Status{State: results.StateFailed, Message: err.Error()}
	case o.Interrupted && s.drainSkipped:
		s.run.Status = results.Status{State: results.StateInterrupted, Message: "interrupted by a signal; a second one skipped the drain"}
	case o.Interrupted:
		s.run.Status = results.Status{State: results.StateInterrupted, Message: "interrupted by a signal"}
	case len(kinds) > 0:
		msgs := make([]string, len(kinds))
		for i, k := range kinds {
			msgs[i] = fmt.Sprintf("%d %s", byKind[k], errorKindText(k))
		}
		s.run.Status = results.Status{State: results.StateFailed, Message: strings.Join(msgs, "; ")}
	default:
		s.run.Status = results.Status{State: results.StateComplete}
	}
	switch werr := s.save(); {
	case s.c.Out == Stdout:
		if werr := WriteRunTo(s.c.ResultsTo, &s.run); werr != nil {
			o.WriteErr = fmt.Errorf("write results to standard output: %w", werr)
		}
	case werr != nil:
		// Never lose a measurement, never claim a write that did not happen.
		o.WriteErr = werr
		o.WriteErrLogged = s.saveErr != nil && s.saveErr.Error() == werr.Error()
		if len(s.run.Points) == 0 {
			break
		}
		o.Written, o.RescueErr = rescue(s.c.Command, &s.run)
		o.Rescued = o.RescueErr == nil
	case s.c.Out != "" && len(s.run.Points) > 0:
		o.Written = s.c.Out
	}
	return o
}

// errorKindText says what a results error kind counts, for the run's status message.
func errorKindText(kind string) string {
	switch kind {
	case "missed_sends":
		return "open-loop sends never went out: the server did not keep up with the rate"
	case "abandoned":
		return "RPCs still outstanding when draining timed out (lost, or later than the drain allows)"
	case "no_rpcs":
		return "point(s) measured no RPC at all"
	}
	return "RPCs failed (" + kind + ")"
}

// rescue writes r to a new file in the working directory, or failing that in the temporary
// directory, after the file the user named could not be written: a run is expensive to
// repeat, so its results must land somewhere. It returns the file's path.
func rescue(name string, r *results.Run) (string, error) {
	var errs []error
	for _, dir := range []string{".", os.TempDir()} {
		f, err := os.CreateTemp(dir, "rpcrdma-bench-"+name+"-rescued-*.json")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		path := f.Name()
		f.Close()
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if err := results.WriteFile(path, r); err != nil {
			os.Remove(path)
			errs = append(errs, err)
			continue
		}
		return path, nil
	}
	return "", errors.Join(errs...)
}

// WriteRunTo writes r as JSON to w.
func WriteRunTo(w io.Writer, r *results.Run) error {
	b, err := results.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Switches reads a sweep's class switches back from its results: each point's dominant
// class is the one its RPCs were attributed to most, over every point measured at the same
// (effective) threshold, depth and size: the rounds of a repeated sweep, and the thresholds
// a peer capped to the same one. Series come in the order first seen, sizes growing.
func Switches(r *results.Run) []workloads.Switch {
	type key struct{ t, d, z int }
	var order []key
	by := map[key]*workloads.Observed{}
	for _, p := range r.Points {
		k := key{p.Params.InlineThreshold, p.Params.Depth, max(p.Params.CallBytes, p.Params.ReplyBytes)}
		o := by[k]
		if o == nil {
			o = &workloads.Observed{Point: workloads.Point{Threshold: k.t, Depth: k.d, Size: k.z}}
			by[k] = o
			order = append(order, k)
		}
		for _, c := range p.Classes {
			if wc, err := workloads.ParseClass(c.Class); err == nil {
				o.Classes[wc] += c.RTT.Count
			}
		}
	}
	series := map[[2]int]int{} // (threshold, depth) -> place first seen
	for _, k := range order {
		if _, ok := series[[2]int{k.t, k.d}]; !ok {
			series[[2]int{k.t, k.d}] = len(series)
		}
	}
	slices.SortStableFunc(order, func(a, b key) int {
		if sa, sb := series[[2]int{a.t, a.d}], series[[2]int{b.t, b.d}]; sa != sb {
			return sa - sb
		}
		return a.z - b.z
	})
	obs := make([]workloads.Observed, len(order))
	for i, k := range order {
		obs[i] = *by[k]
	}
	return workloads.Switches(obs)
}

// markDisturbance records the measuring pollers' thread usage over the measured interval in
// the point, and marks it when they say the scheduler, not the
// transport, set its latencies (results.Disturbances). spinningPeers are pollers of a
// responder in this process that spin beside the measuring ones.
func markDisturbance(rp *results.Point, res *workloads.Result, w workloads.Config, spinningPeers int) {
	for _, p := range res.Pollers {
		st := &p.Stats
		if st.UsageErr != nil || st.UsageWall <= 0 {
			continue
		}
		u := results.PollerUsage{Poller: p.Poller, CPU: p.CPU, Poll: w.Poll.String(),
			WallNs: int64(st.UsageWall), CPUNs: int64(st.Usage.CPU), Involuntary: st.Usage.Involuntary, Voluntary: st.Usage.Voluntary}
		if st.HasTurnaround {
			u.Turnaround = results.TurnaroundOf(&st.Turnaround)
		}
		rp.Pollers = append(rp.Pollers, u)
	}
	cpus := 0
	if set, err := datapath.AllowedCPUs(); err == nil {
		cpus = len(set)
	}
	rp.Disturbed = results.Disturbances(rp.Pollers, spinningPeers, cpus, rp.HostOtherCPU)
}
