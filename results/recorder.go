package results

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Class is an RPC-over-RDMA message class (RFC 8166 section 3.5; see ARCHITECTURE.md). Heavier classes
// have larger values.
type Class uint8

const (
	// Short: the whole message in one Send (RDMA_MSG, no chunks).
	Short Class = iota
	// Chunked: DDP-eligible data in Read or Write chunks, the rest inline (RDMA_MSG).
	Chunked
	// Long: the whole message moved by RDMA (Position Zero Read chunk, Reply chunk, or a
	// responder-provided Read chunk; RDMA_NOMSG or RDMA_DONE).
	Long
	// NumClasses is the number of classes.
	NumClasses
)

var classNames = [NumClasses]string{"short", "chunked", "long"}

func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return "class(" + fmt.Sprint(uint8(c)) + ")"
}

// ParseClass parses a Class name as String writes it.
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if n == s {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("unknown message class %q (want short, chunked or long)", s)
}

// MaxErrorMessages is how many error texts per kind a Recorder keeps.
const MaxErrorMessages = 3

// Recorder records one worker's measurements of one point. It is not safe for concurrent
// use: give each worker goroutine its own and Summarize them together at the end. Record,
// RecordCorrected, Op, At, Fail and Totals do not allocate (Fail allocates only for its first MaxErrorMessages texts of
// a kind and for a new kind), so they can run on the polling path.
//
// A Recorder is large (one HDR histogram per class, about 230 KB each): make it before the
// loop and Reset it between points.
type Recorder struct {
	hist    [NumClasses]*hdr.Histogram
	mom     [NumClasses]moments
	calls   [NumClasses]uint64
	replies [NumClasses]uint64
	rpcs    uint64
	payload uint64
	ops     [datapath.OpLocalInv + 1]OpCount
	// clamped counts samples outside the histogram's range, recorded at its nearest end.
	clamped uint64
	nerrs   uint64
	errs    []ErrorStats
	// The optional time series: marks[i] holds the running totals at the end of interval i,
	// for the intervals closed so far (cur of them).
	every time.Duration
	marks []mark
	cur   int
}

// mark is a Recorder's running totals at one instant.
type mark struct{ rpcs, payload, errs uint64 }

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	r := &Recorder{}
	for i := range r.hist {
		r.hist[i] = NewHistogram()
	}
	return r
}

// Reset empties r for the next point, keeping its memory.
func (r *Recorder) Reset() {
	for i := range r.hist {
		r.hist[i].Reset()
	}
	r.mom = [NumClasses]moments{}
	r.calls, r.replies = [NumClasses]uint64{}, [NumClasses]uint64{}
	r.rpcs, r.payload, r.clamped, r.nerrs = 0, 0, 0, 0
	r.ops = [len(r.ops)]OpCount{}
	r.errs = r.errs[:0]
	r.cur = 0
}

// StartSeries makes r keep a throughput time series with intervals of length every, at most
// n of them (what completes after the last one counts in the last), for Point.Intervals. It
// allocates the series: call it before the loop. The runner then calls At with the time since
// the point started, as often as it likes (once per poll loop is plenty), and once more with
// the point's end before Summarize: whatever was recorded since the last call is counted in
// that call's interval.
func (r *Recorder) StartSeries(every time.Duration, n int) {
	if every <= 0 || n <= 0 {
		r.every, r.marks = 0, nil
		return
	}
	r.every, r.marks, r.cur = every, make([]mark, n), 0
}

// At tells r how long ago the point started: RPCs and failures recorded after it belong to
// that interval of the series. It does not allocate; without StartSeries it does nothing.
func (r *Recorder) At(since time.Duration) {
	if r.every <= 0 || since < 0 {
		return
	}
	i := int(since / r.every)
	if i >= len(r.marks) {
		i = len(r.marks) - 1
	}
	// Every interval passed since the last call ends with the totals as they are now.
	for ; r.cur < i; r.cur++ {
		r.marks[r.cur] = mark{r.rpcs, r.payload, r.nerrs}
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
func (r *Recorder) Record(call, reply Class, rttNs int64, payload int) {
	c := max(call, reply)
	if c >= NumClasses {
		c = Long
	}
	if call < NumClasses {
		r.calls[call]++
	}
	if reply < NumClasses {
		r.replies[reply]++
	}
	r.rpcs++
	r.payload += uint64(payload)
	v := r.clamp(rttNs)
	r.mom[c].add(v)
	// Cannot fail: v is in range and counts stay far below MaxInt64.
	_ = r.hist[c].RecordValue(v)
}

// RecordCorrected is Record for a closed-loop worker that meant to issue an RPC every
// intervalNs: an RTT longer than that hid the RPCs that would have started meanwhile, so it
// also records the RTTs they would have seen (rtt-interval, rtt-2*interval, ... down to
// interval), as HdrHistogram's recordValueWithExpectedInterval does. The synthesised samples
// count in RTT summaries but not as RPCs or payload. Open-loop runners should instead pass
// RTTs measured from each RPC's intended start to Record.
func (r *Recorder) RecordCorrected(call, reply Class, rttNs, intervalNs int64, payload int) {
	r.Record(call, reply, rttNs, payload)
	if intervalNs <= 0 {
		return
	}
	c := min(max(call, reply), Long)
	for v := r.clamp(rttNs) - intervalNs; v >= intervalNs; v -= intervalNs {
		r.mom[c].add(v)
		_ = r.hist[c].RecordValue(v)
	}
}

// Op counts one RDMA operation of this side moving n payload bytes. Other opcodes than SEND,
// SEND_WITH_INV, RDMA_WRITE, RDMA_READ, RECV, BIND_MW and LOCAL_INV are ignored.
func (r *Recorder) Op(op datapath.Opcode, n int) {
	if op == 0 || int(op) >= len(r.ops) {
		return
	}
	r.ops[op].Count++
	r.ops[op].Bytes += uint64(n)
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
	for c := range r.hist {
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
	for i := range r.ops {
		r.ops[i].Count += o.ops[i].Count
		r.ops[i].Bytes += o.ops[i].Bytes
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

// ErrNoRecorders is returned by Summarize when given no recorders.
var ErrNoRecorders = errors.New("summarize: no recorders")

// Summarize merges the recorders of one point's workers (they are not modified) and returns
// the point: its params, start and end, duration (end minus start, by the monotonic clock
// when both come from time.Now in this process), RTT summaries and histograms overall and
// per class, operation and error counts, throughput, and the time series if the recorders
// kept one (StartSeries). The caller fills in Complete, Negotiated and CPU. Samples clamped into the histogram's range are reported as
// an error of kind "rtt_out_of_range".
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
	for c := range NumClasses {
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
	o := &all.ops
	p.Ops = Ops{
		Send: o[datapath.OpSend], SendInv: o[datapath.OpSendInv], Write: o[datapath.OpWrite],
		Read: o[datapath.OpRead], Recv: o[datapath.OpRecv], LocalInv: o[datapath.OpLocalInv],
		BindMW: o[datapath.OpBindMW],
	}
	p.Throughput = throughput(all.rpcs, all.payload, p.DurationNs)
	p.Intervals = series(recs, p.DurationNs)
	return p, nil
}

// series merges the recorders' time series into intervals. Recorders with a different
// interval length than the first are left out (the runner configures them alike).
func series(recs []*Recorder, durNs int64) []Interval {
	every := recs[0].every
	if every <= 0 {
		return []Interval{}
	}
	var out []Interval
	for _, r := range recs {
		if r.every != every {
			continue
		}
		var prev mark
		// Closed intervals, then the open one up to the end.
		for i := 0; i <= r.cur && i < len(r.marks); i++ {
			m := mark{r.rpcs, r.payload, r.nerrs}
			if i < r.cur {
				m = r.marks[i]
			}
			for len(out) <= i {
				out = append(out, Interval{OffsetNs: int64(len(out)) * int64(every), DurationNs: int64(every)})
			}
			out[i].RPCs += m.rpcs - prev.rpcs
			out[i].PayloadBytes += m.payload - prev.payload
			out[i].Errors += m.errs - prev.errs
			prev = m
		}
	}
	// The last interval ends with the point (it is shorter, or takes in the overflow).
	if n := len(out); n > 0 {
		out[n-1].DurationNs = max(0, durNs-out[n-1].OffsetNs)
	}
	return out
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
