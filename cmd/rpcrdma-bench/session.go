package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// runConfig is what the "config" object of a results file holds: everything needed to repeat
// the invocation. Its fields are this program's flags after defaults.
type runConfig struct {
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
	Transport transportConfig `json:"transport"`
}

// session is one measuring invocation (run, client or sweep): it runs points one after the
// other, each on fresh connections, with a progress display and Ctrl-C handling, and keeps
// the results file up to date after every point, so that nothing finished is lost whatever
// happens next.
type session struct {
	e     *env
	name  string
	out   string
	quiet bool
	stop  *stopper
	run   results.Run
	// clock is the Drivers' clock; tests of the session keep the default.
	clock func() int64
	// interval is how often a point's throughput is sampled into its Intervals (0: never).
	interval time.Duration
	// saveErr is the first failure to write the results file after a point.
	saveErr error
}

func toolName() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "rpcrdma-bench " + v
}

func newSession(e *env, name string, w *workloadFlags, cfg *runConfig, dev *datapath.DeviceInfo) (*session, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	s := &session{e: e, name: name, out: w.out, quiet: w.quiet, clock: workloads.Now, interval: w.interval}
	s.run = results.Run{
		SchemaVersion: results.SchemaVersion,
		Tool:          toolName(),
		Start:         time.Now().UTC(),
		Config:        raw,
		Environment:   results.CaptureEnvironment(),
		Points:        []results.Point{},
		Status:        results.Status{State: results.StateInterrupted, Message: "running"},
	}
	s.run.End = s.run.Start
	s.run.Environment.Provider = cfg.Provider
	s.run.Environment.Device = dev
	if dev != nil && len(dev.Ports) > 0 {
		s.run.Environment.Port = dev.Ports[0].Num
	}
	s.stop = newStopper(e)
	return s, nil
}

// params names a point for results: the procedure (MIX:NAME for a mix of several entries,
// NAME being workloads.MixName: "nfs" for the preset; NULL@PROGvVERS for another program's
// NULL), the payload sizes when the workload has a single fixed size, threshold,
// depth, connections and rate.
func params(pt workloads.Point) results.Params {
	w := &pt.Workload
	p := results.Params{
		Procedure:       "MIX:" + workloads.MixName(w.Mix),
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
		}
	}
	return p
}

// recorder adapts a results.Recorder to workloads.Recorder.
type recorder struct{ r *results.Recorder }

var _ workloads.Recorder = recorder{}

func (a recorder) Record(s workloads.Sample) {
	a.r.Record(s.Call, s.Reply, int64(s.RTT), s.Payload)
}

func (a recorder) Fail(_ int, err error) { a.r.Fail(errorKind(err), err) }

// errorKind is the results error kind of an RPC's failure: what the error (or one it wraps)
// says its kind is (a Kind method, as the transport's failures have), else "rpc".
func errorKind(err error) string {
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return "rpc"
}

// pointOutcome is how one point ended.
type pointOutcome struct {
	res workloads.Result
	err error
}

// point runs one point with open making each poller's Client, appends it to the results and
// rewrites the results file. n and total number the point for the display.
func (s *session) point(pt workloads.Point, n, total int, open workloads.Opener, report func() pointReport) pointOutcome {
	label := ""
	if total > 1 {
		what := "size " + workloads.FormatSize(pt.Size)
		if pt.Mix != "" {
			what = "mix " + pt.Mix
		}
		label = fmt.Sprintf("[%d/%d thr %s %s depth %d]", n, total, workloads.FormatSize(pt.Threshold), what, pt.Depth)
	}
	w := pt.Workload
	warm := "no warm-up"
	if w.Warmup > 0 {
		warm = time.Duration(w.Warmup).String() + " warm-up"
	}
	fmt.Fprintf(s.e.stderr, "%s %s: %s, then %s\n", s.name, strings.TrimSpace("point "+label), warm, runLength(w))

	recs := make([]*results.Recorder, w.Pollers)
	lives := make([]*workloads.Live, w.Pollers)
	for i := range recs {
		recs[i] = results.NewRecorder()
		lives[i] = new(workloads.Live)
	}
	r := workloads.Runner{
		Config:   w,
		Open:     open,
		Recorder: func(i int) workloads.Recorder { return recorder{recs[i]} },
		Live:     lives,
	}
	var samp *sampler
	if s.interval > 0 {
		samp = newSampler(lives, s.clock, s.interval)
		samp.start()
	}
	var prog *progress
	if !s.quiet {
		prog = newProgress(s.e.stderr, label, lives, s.clock)
		prog.start()
	}
	cpu0, cpuErr := results.ReadCPU()
	res, err := r.Run(s.stop.ctx)
	cpu1, cpuErr1 := results.ReadCPU()
	if prog != nil {
		prog.end()
	}

	st := &res.Total
	start, end := workloads.Time(st.Start), workloads.Time(st.End)
	if st.End <= st.Start {
		end = start
	}
	rp, serr := results.Summarize(params(pt), start.UTC(), end.UTC(), recs...)
	if serr != nil {
		return pointOutcome{res, fmt.Errorf("summarize: %w", serr)}
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
	var pr pointReport
	if report != nil {
		pr = report()
		rp.Negotiated = pr.Negotiated
		if pr.Ops != nil {
			rp.Ops = *pr.Ops
		}
		rp.PeerOps, rp.PeerOpsInferred = pr.PeerOps, pr.PeerOpsInferred
	}
	markDisturbance(&rp, &res, w, pr.SpinningPeers)
	if st.Abandoned > 0 {
		rp.Errors = append(rp.Errors, results.ErrorStats{Kind: "abandoned", Count: st.Abandoned,
			Messages: []string{fmt.Sprintf("%d RPCs still outstanding when draining timed out (a longer --drain waits for late replies)", st.Abandoned)}})
	}
	if st.Missed > 0 {
		rp.Errors = append(rp.Errors, results.ErrorStats{Kind: "missed_sends", Count: st.Missed,
			Messages: []string{fmt.Sprintf("%d open-loop sends never went out: the server could not keep up with the rate", st.Missed)}})
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
		// The measuring goes on: finish tries again and, failing that, writes a fallback
		// file, so a full disk or a removed directory costs no measurement.
		s.saveErr = werr
		fmt.Fprintf(s.e.stderr, "rpcrdma-bench %s: %v (measuring goes on; the results will be written elsewhere if need be)\n", s.name, werr)
	}
	return pointOutcome{res, err}
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

// save writes the results file as it stands, if one was asked for. Standard output (--out
// -) is written once, by finish: a stream cannot be rewritten.
func (s *session) save() error {
	if s.out == "" || s.out == stdio {
		return nil
	}
	s.run.End = time.Now().UTC()
	if s.run.End.Before(s.run.Start) {
		s.run.End = s.run.Start
	}
	return writeResults(s.out, &s.run)
}

// writeResults writes a results file; tests replace it to make the write fail.
var writeResults = results.WriteFile

// finish sets the run's final status from err (the first failure, nil if none) and whether
// the user interrupted, writes the file one last time, prints the report and returns the
// exit status.
func (s *session) finish(err error) int {
	s.stop.release()
	interrupted := s.stop.interrupted.Load()
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
	case interrupted:
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
	code := exitOK
	if s.run.Status.State != results.StateComplete {
		code = exitFailed
	}
	written := ""
	switch werr := s.save(); {
	case s.out == stdio:
		if werr := writeRunTo(s.e.stdout, &s.run); werr != nil {
			fmt.Fprintf(s.e.stderr, "rpcrdma-bench %s: write results to standard output: %v\n", s.name, werr)
			code = exitFailed
		}
	case werr != nil:
		// Never lose a measurement, never claim a write that did not happen.
		code = exitFailed
		if len(s.run.Points) == 0 {
			fmt.Fprintf(s.e.stderr, "rpcrdma-bench %s: %v\n", s.name, werr)
			break
		}
		if s.saveErr == nil || s.saveErr.Error() != werr.Error() {
			// Said once: the point's attempt already reported the same failure.
			fmt.Fprintf(s.e.stderr, "rpcrdma-bench %s: %v\n", s.name, werr)
		}
		if path, ferr := writeFallback(s.name, &s.run); ferr == nil {
			fmt.Fprintf(s.e.stderr, "results written to %s instead\n", path)
		} else {
			fmt.Fprintf(s.e.stderr, "results NOT written: the fallback failed too: %v\n", ferr)
		}
	case s.out != "" && len(s.run.Points) > 0:
		written = s.out
	}
	// With the results on standard output, the table goes to standard error.
	table := s.e.stdout
	if s.out == stdio {
		table = s.e.stderr
	}
	measured := false
	for _, p := range s.run.Points {
		measured = measured || p.RTT.Count > 0 || p.Throughput.RPCs > 0
	}
	if measured {
		// A table of nothing would only repeat the failure printed below.
		if werr := results.WriteText(table, &s.run); werr != nil {
			fmt.Fprintf(s.e.stderr, "rpcrdma-bench %s: %v\n", s.name, werr)
		}
	}
	switch s.run.Status.State {
	case results.StateFailed:
		fmt.Fprintf(s.e.stderr, "rpcrdma-bench %s: failed: %s%s\n", s.name, s.run.Status.Message, hint(err))
	case results.StateInterrupted:
		fmt.Fprintf(s.e.stderr, "rpcrdma-bench %s: interrupted: %d point(s) kept\n", s.name, len(s.run.Points))
	}
	if written != "" {
		fmt.Fprintf(s.e.stderr, "results written to %s\n", written)
	}
	return code
}

// errorKindText says what a results error kind counts, for the run's status message.
func errorKindText(kind string) string {
	switch kind {
	case "missed_sends":
		return "open-loop sends never went out: the server did not keep up with the rate"
	case "abandoned":
		return "RPCs still outstanding when draining timed out (lost, or later than --drain allows)"
	case "no_rpcs":
		return "point(s) measured no RPC at all"
	}
	return "RPCs failed (" + kind + ")"
}

// runPoints runs pts in order through s, stopping at the first failure or interruption.
// setup connects each point: it returns the Opener of the point's pollers and a function
// reporting what the connections negotiated and did (nil if unknown).
func (s *session) runPoints(pts []workloads.Point, setup func(workloads.Point) (workloads.Opener, func() pointReport, error)) int {
	var first error
	for i, pt := range pts {
		if s.stop.ctx.Err() != nil {
			break
		}
		open, neg, err := setup(pt)
		if err != nil {
			first = err
			break
		}
		o := s.point(pt, i+1, len(pts), open, neg)
		if o.err != nil {
			first = o.err
			break
		}
		if o.res.Total.Interrupted {
			break
		}
	}
	return s.finish(first)
}

// switchesOf reads a sweep's class switches back from its results: each point's dominant
// class is the one its RPCs were attributed to most.
func switchesOf(r *results.Run) []workloads.Switch {
	obs := make([]workloads.Observed, 0, len(r.Points))
	for _, p := range r.Points {
		o := workloads.Observed{Point: workloads.Point{Threshold: p.Params.InlineThreshold, Depth: p.Params.Depth,
			Size: max(p.Params.CallBytes, p.Params.ReplyBytes)}}
		for _, c := range p.Classes {
			if wc, err := workloads.ParseClass(c.Class); err == nil {
				o.Classes[wc] += c.RTT.Count
			}
		}
		obs = append(obs, o)
	}
	return workloads.Switches(obs)
}

// hint is advice for a failure whose cause is commonly a setup mistake, "" for others.
func hint(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused"):
		return "\n  (is 'rpcrdma-bench server' running at that address, on that port, with the same --provider?)"
	}
	return ""
}

// markDisturbance records the measuring pollers' thread usage over the measured interval and
// the host's CPU pressure in the point, and marks it when they say the scheduler, not the
// transport, set its latencies (results.Disturbances). spinningPeers are pollers of a
// responder in this process that spin beside the measuring ones.
func markDisturbance(rp *results.Point, res *workloads.Result, w workloads.Config, spinningPeers int) {
	for _, p := range res.Pollers {
		st := &p.Stats
		if st.UsageErr != nil || st.UsageWall <= 0 {
			continue
		}
		rp.Pollers = append(rp.Pollers, results.PollerUsage{Poller: p.Poller, CPU: p.CPU, Poll: w.Poll.String(),
			WallNs: int64(st.UsageWall), CPUNs: int64(st.Usage.CPU), Involuntary: st.Usage.Involuntary, Voluntary: st.Usage.Voluntary})
	}
	if v, err := datapath.HostCPUPressure(); err == nil {
		rp.HostCPUPressure = &v
	}
	cpus := 0
	if set, err := datapath.AllowedCPUs(); err == nil {
		cpus = len(set)
	}
	rp.Disturbed = results.Disturbances(rp.Pollers, spinningPeers, cpus, rp.HostCPUPressure)
}
