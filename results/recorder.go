package results

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// MaxErrorMessages is how many error texts per kind a Recorder keeps.
const MaxErrorMessages = 3

// Recorder records one worker's measurements of one point. It is not safe for concurrent
// use: give each worker goroutine its own and Summarize them together at the end. Record,
// Fail and Totals do not allocate (Fail allocates only for its first MaxErrorMessages texts
// of a kind and for a new kind), nor do RecordProc, RecordCallback, RecordRecall and their
// failures after SetProcedures and SetCallbacks, so they can run on the polling path.
//
// A Recorder is large (one HDR histogram per class, about 230 KB each): make it before the
// loop and Reset it between points.
type Recorder struct {
	hist    [rpcproto.NumKinds]*hdr.Histogram
	mom     [rpcproto.NumKinds]moments
	calls   [rpcproto.NumKinds]uint64
	replies [rpcproto.NumKinds]uint64
	rpcs    uint64
	payload uint64
	// clamped counts samples outside the histogram's range, recorded at its nearest end.
	clamped uint64
	nerrs   uint64
	errs    []ErrorStats
	// procs, when the point is a mix of several procedures, break it down by procedure
	// (SetProcedures).
	procs []procRec
	// cbs are the peer's calls over the backchannel, by callback procedure (SetCallbacks).
	cbs []procRec
	// recalls, notGranted and retries count the delegation-recall measurement, whose
	// latencies recallLat holds (nil until SetCallbacks or the first RecordRecall).
	recalls, notGranted, retries uint64
	recallLat                    *recallRec
}

// The latencies of a delegation recall, as Recalls orders them.
const (
	latRecall = iota
	latDelegReturn
	latConflict
	numRecallLats
)

// recallRec holds a Recorder's recall latencies.
type recallRec struct {
	hist [numRecallLats]*hdr.Histogram
	mom  [numRecallLats]moments
}

func newRecallRec() *recallRec {
	rr := &recallRec{}
	for i := range rr.hist {
		rr.hist[i] = NewHistogram()
	}
	return rr
}

// procRec is one procedure's share of a Recorder.
type procRec struct {
	name string
	// class is the message class of a callbacks share's calls ("" for a procedure's share).
	class string
	hist  *hdr.Histogram
	mom   moments
	errs  uint64
}

// SetProcedures makes r break its RPCs down by procedure too: names[i] is procedure i as
// RecordProc and FailProc number it. Call it before recording, with the same names on
// every Recorder of a point; it allocates a histogram per procedure.
func (r *Recorder) SetProcedures(names []string) {
	r.procs = make([]procRec, len(names))
	for i, n := range names {
		r.procs[i] = procRec{name: n, hist: NewHistogram()}
	}
}

// RecordProc adds a successful RPC's round trip to procedure i's share (after Record, which
// counts it overall). It does nothing without SetProcedures, and allocates nothing.
func (r *Recorder) RecordProc(i int, rttNs int64) { recordIn(r.procs, i, rttNs) }

// FailProc counts a failed RPC of procedure i (after Fail, which counts it by kind).
func (r *Recorder) FailProc(i int) { failIn(r.procs, i) }

// recordIn adds ns to share i of ps, if there is one, at the nearest end of the histogram's
// range when outside it.
func recordIn(ps []procRec, i int, ns int64) {
	if i < 0 || i >= len(ps) {
		return
	}
	v := min(max(ns, 0), HistogramHighest)
	p := &ps[i]
	p.mom.add(v)
	_ = p.hist.RecordValue(v)
}

// failIn counts a failure in share i of ps, if there is one.
func failIn(ps []procRec, i int) {
	if i >= 0 && i < len(ps) {
		ps[i].errs++
	}
}

// SetCallbacks makes r count the calls the peer makes over the backchannel, by procedure and
// by the message class they came in: names[i] is the callback procedure numbered i, as
// RecordCallback and FailCallback number it. Call it before recording, with the same names
// on every Recorder of a point; it allocates a histogram per procedure and class and those of
// the recall measurement, so that recording allocates nothing.
func (r *Recorder) SetCallbacks(names []string) {
	r.cbs = make([]procRec, 0, len(names)*len(rpcproto.Kinds))
	for _, n := range names {
		for _, k := range rpcproto.Kinds {
			r.cbs = append(r.cbs, procRec{name: n, class: k.String(), hist: NewHistogram()})
		}
	}
	if r.recallLat == nil {
		r.recallLat = newRecallRec()
	}
}

// RecordCallback adds a callback of procedure i, come in class, answered successfully: ns
// from the call's arrival to the completion of the reply's Send. It does nothing without SetCallbacks and
// allocates nothing; a time outside 0..100 s is recorded at the nearest end.
func (r *Recorder) RecordCallback(i int, class rpcproto.Kind, ns int64) {
	recordIn(r.cbs, callbackShare(i, class), ns)
}

// FailCallback counts a callback of procedure i, come in class, answered with a failure.
func (r *Recorder) FailCallback(i int, class rpcproto.Kind) { failIn(r.cbs, callbackShare(i, class)) }

// callbackShare is the index in Recorder.cbs of procedure i's calls of class, -1 for none.
func callbackShare(i int, class rpcproto.Kind) int {
	if i < 0 || class == rpcproto.Auto || class >= rpcproto.NumKinds {
		return -1
	}
	return i*len(rpcproto.Kinds) + int(class) - int(rpcproto.Short)
}

// RecordRecall records one delegation recalled and returned: recallNs from sending the
// conflicting OPEN to CB_RECALL's arrival, delegReturnNs the DELEGRETURN's round trip,
// conflictNs from first sending the conflicting OPEN to its success, and the retries it took
// (NFS4ERR_DELAY answers). Times outside 0..100 s are recorded at the nearest end. It
// allocates only on a Recorder without SetCallbacks, at its first recall.
func (r *Recorder) RecordRecall(recallNs, delegReturnNs, conflictNs int64, retries uint64) {
	if r.recallLat == nil {
		r.recallLat = newRecallRec()
	}
	rr := r.recallLat
	for i, ns := range [numRecallLats]int64{recallNs, delegReturnNs, conflictNs} {
		v := min(max(ns, 0), HistogramHighest)
		rr.mom[i].add(v)
		_ = rr.hist[i].RecordValue(v)
	}
	r.recalls++
	r.retries += retries
}

// RecallNotGranted counts an OPEN that asked for a read delegation and got none.
func (r *Recorder) RecallNotGranted() { r.notGranted++ }

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	r := &Recorder{}
	for _, k := range rpcproto.Kinds {
		r.hist[k] = NewHistogram()
	}
	return r
}

// Reset empties r for the next point, keeping its memory.
func (r *Recorder) Reset() {
	for _, k := range rpcproto.Kinds {
		r.hist[k].Reset()
	}
	r.mom = [rpcproto.NumKinds]moments{}
	r.calls, r.replies = [rpcproto.NumKinds]uint64{}, [rpcproto.NumKinds]uint64{}
	r.rpcs, r.payload, r.clamped, r.nerrs = 0, 0, 0, 0
	r.errs = r.errs[:0]
	for i := range r.procs {
		p := &r.procs[i]
		p.hist.Reset()
		p.mom, p.errs = moments{}, 0
	}
	for i := range r.cbs {
		c := &r.cbs[i]
		c.hist.Reset()
		c.mom, c.errs = moments{}, 0
	}
	r.recalls, r.notGranted, r.retries = 0, 0, 0
	if rr := r.recallLat; rr != nil {
		for i := range rr.hist {
			rr.hist[i].Reset()
		}
		rr.mom = [numRecallLats]moments{}
	}
}

// clamp keeps v inside the histogram's range so that recording never fails (and never
// formats an error): a negative RTT (a clock step) counts as 0, one beyond 100 s as 100 s.
func (r *Recorder) clamp(v int64) int64 {
	if v < 0 {
		r.clamped++
		return 0
	}
	if v > HistogramHighest {
		r.clamped++
		return HistogramHighest
	}
	return v
}

// Record records one successful RPC: its call's and reply's message classes, its round-trip
// time in nanoseconds (call posted to reply received; with an open-loop workload, measured
// from the intended start so that queueing is not omitted), and its payload bytes (call plus
// reply data, no headers). The RTT is attributed to the heavier of the two classes.
func (r *Recorder) Record(call, reply rpcproto.Kind, rttNs int64, payload int) {
	c := max(call, reply)
	if c == rpcproto.Auto || c >= rpcproto.NumKinds {
		c = rpcproto.Long
	}
	if call != rpcproto.Auto && call < rpcproto.NumKinds {
		r.calls[call]++
	}
	if reply != rpcproto.Auto && reply < rpcproto.NumKinds {
		r.replies[reply]++
	}
	r.rpcs++
	r.payload += uint64(payload)
	v := r.clamp(rttNs)
	r.mom[c].add(v)
	// Cannot fail: v is in range and counts stay far below MaxInt64.
	_ = r.hist[c].RecordValue(v)
}

// Fail counts a failed RPC or operation of the given kind (a short stable name such as
// "timeout" or "remote_access"). err's text is kept for the first MaxErrorMessages of each
// kind; err may be nil.
func (r *Recorder) Fail(kind string, err error) {
	r.nerrs++
	for i := range r.errs {
		if r.errs[i].Kind == kind {
			r.errs[i].Count++
			if err != nil && len(r.errs[i].Messages) < MaxErrorMessages {
				r.errs[i].Messages = append(r.errs[i].Messages, err.Error())
			}
			return
		}
	}
	e := ErrorStats{Kind: kind, Count: 1, Messages: []string{}}
	if err != nil {
		e.Messages = append(e.Messages, err.Error())
	}
	r.errs = append(r.errs, e)
}

// Totals returns the running totals of successful RPCs, their payload bytes and failures, for
// a runner that samples them at interval boundaries to build Point.Intervals.
func (r *Recorder) Totals() (rpcs, payload, errs uint64) {
	return r.rpcs, r.payload, r.nerrs
}

// Clamped is the number of RTTs outside 0..100 s that were recorded at the nearest end.
func (r *Recorder) Clamped() uint64 { return r.clamped }

// merge adds o into r.
func (r *Recorder) merge(o *Recorder) error {
	for _, c := range rpcproto.Kinds {
		if d := r.hist[c].Merge(o.hist[c]); d != 0 {
			return fmt.Errorf("merge recorders: %d samples dropped", d)
		}
		r.mom[c].merge(&o.mom[c])
		r.calls[c] += o.calls[c]
		r.replies[c] += o.replies[c]
	}
	r.rpcs += o.rpcs
	r.payload += o.payload
	r.clamped += o.clamped
	if err := mergeProcs(&r.procs, o.procs, "procedure", r.SetProcedures); err != nil {
		return err
	}
	if err := mergeProcs(&r.cbs, o.cbs, "callback", func([]string) {
		r.cbs = make([]procRec, len(o.cbs))
		for i, c := range o.cbs {
			r.cbs[i] = procRec{name: c.name, class: c.class, hist: NewHistogram()}
		}
	}); err != nil {
		return err
	}
	r.recalls += o.recalls
	r.notGranted += o.notGranted
	r.retries += o.retries
	if o.recallLat != nil {
		if r.recallLat == nil {
			r.recallLat = newRecallRec()
		}
		for i := range o.recallLat.hist {
			if d := r.recallLat.hist[i].Merge(o.recallLat.hist[i]); d != 0 {
				return fmt.Errorf("merge recorders: %d samples dropped", d)
			}
			r.recallLat.mom[i].merge(&o.recallLat.mom[i])
		}
	}
	for _, e := range o.errs {
		r.nerrs += e.Count
		i := 0
		for i < len(r.errs) && r.errs[i].Kind != e.Kind {
			i++
		}
		if i == len(r.errs) {
			r.errs = append(r.errs, ErrorStats{Kind: e.Kind, Messages: []string{}})
		}
		r.errs[i].Count += e.Count
		for _, m := range e.Messages {
			if len(r.errs[i].Messages) < MaxErrorMessages {
				r.errs[i].Messages = append(r.errs[i].Messages, m)
			}
		}
	}
	return nil
}

// mergeProcs adds the per-procedure shares o into *r, first making *r's with set when it has
// none; what names the table in errors ("procedure", "callback").
func mergeProcs(r *[]procRec, o []procRec, what string, set func([]string)) error {
	if len(*r) == 0 && len(o) > 0 {
		names := make([]string, len(o))
		for i := range o {
			names[i] = o[i].name
		}
		set(names)
	}
	for i := range o {
		if i >= len(*r) || (*r)[i].name != o[i].name {
			here := ""
			if i < len(*r) {
				here = (*r)[i].name
			}
			return fmt.Errorf("merge recorders: %s %d is %q here, %q there", what, i, o[i].name, here)
		}
		p := &(*r)[i]
		if d := p.hist.Merge(o[i].hist); d != 0 {
			return fmt.Errorf("merge recorders: %d samples dropped", d)
		}
		p.mom.merge(&o[i].mom)
		p.errs += o[i].errs
	}
	return nil
}

// ErrNoRecorders is returned by Summarize when given no recorders.
var ErrNoRecorders = errors.New("summarize: no recorders")

// Summarize merges the recorders of one point's workers (they are not modified) and returns
// the point: its params, start and end, duration (end minus start, by the monotonic clock
// when both come from time.Now in this process), RTT summaries and histograms overall and
// per class, error counts and throughput, and the callbacks and recalls recorded (each
// only when any was). The caller fills in Complete, Negotiated, Ops,
// Intervals and CPU. Samples clamped into the histogram's range are reported as an error of
// kind "rtt_out_of_range".
func Summarize(params Params, start, end time.Time, recs ...*Recorder) (Point, error) {
	if len(recs) == 0 {
		return Point{}, ErrNoRecorders
	}
	all := NewRecorder()
	for _, r := range recs {
		if err := all.merge(r); err != nil {
			return Point{}, err
		}
	}
	if all.clamped > 0 {
		all.errs = append(all.errs, ErrorStats{Kind: "rtt_out_of_range", Count: all.clamped,
			Messages: []string{fmt.Sprintf("%d round-trip times outside 0..100 s recorded at the nearest end", all.clamped)}})
	}

	p := Point{
		Params:     params,
		Start:      start,
		End:        end,
		DurationNs: int64(end.Sub(start)),
		Classes:    []ClassStats{},
		Errors:     all.errs,
		Intervals:  []Interval{},
	}
	if p.Errors == nil {
		p.Errors = []ErrorStats{}
	}
	total := NewHistogram()
	var m moments
	for _, c := range rpcproto.Kinds {
		total.Merge(all.hist[c])
		m.merge(&all.mom[c])
		if all.calls[c] == 0 && all.replies[c] == 0 && all.mom[c].n == 0 {
			continue
		}
		enc, err := EncodeHistogram(all.hist[c])
		if err != nil {
			return Point{}, err
		}
		p.Classes = append(p.Classes, ClassStats{
			Class:     c.String(),
			Calls:     all.calls[c],
			Replies:   all.replies[c],
			RTT:       summarize(&all.mom[c], all.hist[c]),
			Histogram: enc,
		})
	}
	p.RTT = summarize(&m, total)
	var err error
	if p.Histogram, err = EncodeHistogram(total); err != nil {
		return Point{}, err
	}
	p.Throughput = throughput(all.rpcs, all.payload, p.DurationNs)
	if len(all.procs) > 1 {
		for i := range all.procs {
			pr := &all.procs[i]
			if pr.mom.n == 0 && pr.errs == 0 {
				continue
			}
			enc, err := EncodeHistogram(pr.hist)
			if err != nil {
				return Point{}, err
			}
			p.Procedures = append(p.Procedures, ProcStats{Procedure: pr.name, RTT: summarize(&pr.mom, pr.hist), Histogram: enc, Errors: pr.errs})
		}
	}
	for i := range all.cbs {
		c := &all.cbs[i]
		if c.mom.n == 0 && c.errs == 0 {
			continue
		}
		enc, err := EncodeHistogram(c.hist)
		if err != nil {
			return Point{}, err
		}
		p.Callbacks = append(p.Callbacks, ProcStats{Procedure: c.name, Class: c.class, RTT: summarize(&c.mom, c.hist), Histogram: enc, Errors: c.errs})
	}
	if all.recalls > 0 || all.notGranted > 0 {
		rc := &Recalls{Count: all.recalls, NotGranted: all.notGranted, Retries: all.retries}
		rr := all.recallLat
		if rr == nil {
			rr = newRecallRec()
		}
		for i, l := range [numRecallLats]*Latency{&rc.Recall, &rc.DelegReturn, &rc.Conflict} {
			l.RTT = summarize(&rr.mom[i], rr.hist[i])
			if l.Histogram, err = EncodeHistogram(rr.hist[i]); err != nil {
				return Point{}, err
			}
		}
		p.Recalls = rc
	}
	p.Intervals = []Interval{}
	return p, nil
}

func throughput(rpcs, payload uint64, durNs int64) Throughput {
	t := Throughput{RPCs: rpcs, PayloadBytes: payload}
	if durNs > 0 {
		t.RPCPerSec = float64(rpcs) / (float64(durNs) / 1e9)
		t.PayloadGbps = float64(payload) * 8 / float64(durNs) // bits per ns = Gb/s
	}
	return t
}

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

func (m *moments) addSq(hi, lo uint64) {
	var c uint64
	m.sqLo, c = bits.Add64(m.sqLo, lo, 0)
	m.sqHi += hi + c
}

// stdev is the exact sample standard deviation sqrt((n·Σx² − (Σx)²) / (n(n−1))), computed
// in big integers so that no sub-nanosecond variation is lost (perftest's integer-µs
// deviations lose it all).
func (m *moments) stdev() float64 {
	n := new(big.Int).SetUint64(m.n)
	sq := new(big.Int).SetUint64(m.sqHi)
	sq.Lsh(sq, 64).Or(sq, new(big.Int).SetUint64(m.sqLo))
	sum := new(big.Int).SetUint64(m.sum)
	num := new(big.Int).Mul(n, sq)
	num.Sub(num, new(big.Int).Mul(sum, sum))
	den := new(big.Int).Mul(n, new(big.Int).SetUint64(m.n-1))
	v, _ := new(big.Float).Quo(new(big.Float).SetInt(num), new(big.Float).SetInt(den)).Float64()
	if v < 0 {
		return 0
	}
	return math.Sqrt(v)
}
