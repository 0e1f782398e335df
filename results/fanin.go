package results

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// FanIn is a point measured by many client ranks at once (rpcrdma-bench fanin under mpirun):
// the Point that holds it is their merge (its rtt_histogram the ranks' histograms merged
// exactly, its throughput their sum), and FanIn holds every rank's own point and how evenly
// and how much in step they ran.
type FanIn struct {
	// Ranks are the client ranks' own points, by rank: every rank that reported one.
	Ranks []RankPoint `json:"ranks"`
	// ServerRanks are the ranks that served (none: an outside server).
	ServerRanks []ServerRank `json:"server_ranks"`
	// Failed are the ranks that failed (could not connect, died, ended in an error), by
	// rank; a point with a failed rank is not complete.
	Failed []RankFailure `json:"failed,omitempty"`
	// SkewNs is the spread (latest minus earliest) of the ranks' wall clocks read just after
	// the point's start signal, each corrected by its ClockOffsetNs: how far apart the
	// ranks started.
	SkewNs int64 `json:"skew_ns"`
	// BarrierNs is what one barrier of all the ranks took at rank 0 (the median of several
	// at wire-up): the launcher's own synchronisation cost.
	BarrierNs int64 `json:"barrier_ns"`
	// Overlap is the share of the longest rank's measured interval during which every rank
	// was measuring (0 to 1; 1 for one rank), the ranks' clocks corrected by their offsets.
	Overlap float64 `json:"overlap"`
	// Jain is Jain's fairness index over the ranks' RPC rates, (Σx)²/(n·Σx²): 1 when all are
	// equal, 1/n when one rank did everything.
	Jain float64 `json:"jain_index"`
	// SlowestRank is the rank with the lowest RPC rate.
	SlowestRank int `json:"slowest_rank"`
	// P50Spread and P99Spread are the smallest and largest of the ranks' p50 and p99 (null:
	// a rank's count does not support the percentile).
	P50Spread *[2]int64 `json:"p50_spread_ns"`
	P99Spread *[2]int64 `json:"p99_spread_ns"`
}

// ServerRank is a rank that served and what serving cost it.
type ServerRank struct {
	Rank int    `json:"rank"`
	Host string `json:"host"`
	// Addr is the address the rank listened on, as its clients dialed it (RankPoint.Server);
	// absent when it did not listen, and in files before schema version 8.
	Addr string `json:"addr,omitempty"`
	// CPU is the rank's process CPU time from listening to stopping, WallNs that time
	// (the whole run, warm-ups included); absent when it did not report.
	CPU    *CPU  `json:"cpu,omitempty"`
	WallNs int64 `json:"wall_ns,omitempty"`
}

// RankFailure is a rank that failed and why.
type RankFailure struct {
	Rank  int    `json:"rank"`
	Host  string `json:"host"`
	Cause string `json:"cause"`
}

// RankPoint is one client rank's own point of a fan-in.
type RankPoint struct {
	Rank int    `json:"rank"`
	Host string `json:"host"`
	// Device is the device the rank opened ("" for none); CPUs the CPUs it could run on.
	Device string `json:"device"`
	CPUs   []int  `json:"cpus"`
	// Server is the address the rank drove.
	Server string `json:"server"`
	// StartClock is the rank's wall clock just after the point's start signal.
	StartClock time.Time `json:"start_clock"`
	// ClockOffsetNs is rank 0's wall clock minus this rank's, estimated over the rank's
	// connection to rank 0 at wire-up (the quickest of several exchanges, as NTP does);
	// ClockErrorNs bounds its error (half that exchange's round trip).
	ClockOffsetNs int64 `json:"clock_offset_ns"`
	ClockErrorNs  int64 `json:"clock_error_ns"`
	// Point is the rank's point as its own results file would hold it (connections, interval,
	// summary, histogram, throughput, errors).
	Point Point `json:"point"`
}

// Fairness sets Jain, SlowestRank, P50Spread and P99Spread from the ranks' points.
func (f *FanIn) Fairness() {
	var sum, sq float64
	slowest := 0
	f.P50Spread, f.P99Spread = &[2]int64{}, &[2]int64{}
	for i := range f.Ranks {
		q := &f.Ranks[i].Point
		x := q.Throughput.RPCPerSec
		sum += x
		sq += x * x
		if x < f.Ranks[slowest].Point.Throughput.RPCPerSec {
			slowest = i
		}
		f.P50Spread = widen(f.P50Spread, q.RTT.P50, i == 0)
		f.P99Spread = widen(f.P99Spread, q.RTT.P99, i == 0)
	}
	f.Jain = 1
	if sq > 0 {
		f.Jain = math.Min(1, sum*sum/(float64(len(f.Ranks))*sq))
	}
	if len(f.Ranks) > 0 {
		f.SlowestRank = f.Ranks[slowest].Rank
	} else {
		f.P50Spread, f.P99Spread = nil, nil
	}
}

// widen extends spread s by v (first: s starts at v); nil once a rank lacks the value.
func widen(s *[2]int64, v *int64, first bool) *[2]int64 {
	switch {
	case s == nil || v == nil:
		return nil
	case first:
		return &[2]int64{*v, *v}
	}
	return &[2]int64{min(s[0], *v), max(s[1], *v)}
}

// Slowest is the slowest rank's RPC rate (SlowestRank's), 0 with no ranks.
func (f *FanIn) Slowest() float64 {
	for i := range f.Ranks {
		if f.Ranks[i].Rank == f.SlowestRank {
			return f.Ranks[i].Point.Throughput.RPCPerSec
		}
	}
	return 0
}

func (f *FanIn) validate(fp string) error {
	for i := range f.Ranks {
		r := &f.Ranks[i]
		rf := fmt.Sprintf("%sranks[%d].", fp, i)
		if i > 0 && r.Rank <= f.Ranks[i-1].Rank {
			return fieldErr(rf+"rank", "%d out of order or repeated", r.Rank)
		}
		if r.ClockErrorNs < 0 {
			return fieldErr(rf+"clock_error_ns", "negative (%d)", r.ClockErrorNs)
		}
		if r.Point.FanIn != nil {
			return fieldErr(rf+"point.fanin", "a rank's point cannot be a fan-in itself")
		}
		if err := r.Point.validate(rf + "point."); err != nil {
			return err
		}
	}
	if f.SkewNs < 0 || f.BarrierNs < 0 {
		return fieldErr(fp+"skew_ns", "negative skew (%d) or barrier (%d)", f.SkewNs, f.BarrierNs)
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"overlap", f.Overlap}, {"jain_index", f.Jain}} {
		if x.v < 0 || x.v > 1 || math.IsNaN(x.v) {
			return fieldErr(fp+x.name, "%v is not between 0 and 1", x.v)
		}
	}
	for _, s := range []struct {
		name string
		v    *[2]int64
	}{{"p50_spread_ns", f.P50Spread}, {"p99_spread_ns", f.P99Spread}} {
		if s.v != nil && s.v[0] > s.v[1] {
			return fieldErr(fp+s.name, "smallest %d above largest %d", s.v[0], s.v[1])
		}
	}
	return nil
}

// MergeSummaries merges the summaries of disjoint sets of round trips with their histograms
// (rtt_histogram strings, one per summary): the histograms are added exactly (never an
// average of percentiles), the percentiles read from the sum, the extremes exact, the mean
// and standard deviation pooled from the parts' (each rounded to 1 ns). It returns the merged
// Summary and histogram.
func MergeSummaries(sums []Summary, hists []string) (Summary, string, error) {
	if len(sums) != len(hists) {
		return Summary{}, "", fmt.Errorf("merge: %d summaries, %d histograms", len(sums), len(hists))
	}
	h := NewHistogram()
	var m Summary
	var sum, sq float64
	for i, s := range sums {
		part, err := DecodeHistogram(hists[i])
		if err != nil {
			return Summary{}, "", fmt.Errorf("merge part %d: %w", i, err)
		}
		if uint64(part.TotalCount()) != s.Count {
			return Summary{}, "", fmt.Errorf("merge part %d: histogram holds %d samples, count is %d", i, part.TotalCount(), s.Count)
		}
		if dropped := h.Merge(part); dropped != 0 {
			return Summary{}, "", fmt.Errorf("merge part %d: %d samples out of range", i, dropped)
		}
		if s.Count == 0 {
			continue
		}
		if m.Count == 0 || *s.Min < *m.Min {
			m.Min = ptr(*s.Min)
		}
		if m.Count == 0 || *s.Max > *m.Max {
			m.Max = ptr(*s.Max)
		}
		n, mean := float64(s.Count), float64(*s.Mean)
		sum += n * mean
		sq += n * mean * mean
		if s.Stdev != nil {
			sq += (n - 1) * float64(*s.Stdev) * float64(*s.Stdev)
		}
		m.Count += s.Count
	}
	if m.Count > 0 {
		n := float64(m.Count)
		mean := sum / n
		m.Mean = ptr(int64(math.Round(mean)))
		if m.Count >= 2 {
			m.Stdev = ptr(int64(math.Round(math.Sqrt(max(0, (sq-n*mean*mean)/(n-1))))))
		}
		for i, p := range percentiles {
			if v, ok := Percentile(h, p); ok {
				*m.percentile(i) = ptr(v)
			}
		}
	}
	enc, err := EncodeHistogram(h)
	return m, enc, err
}

// writeFanIn prints a fan-in point's ranks under the table: how in step and how fair they
// were, then a row per client rank and its failures.
func writeFanIn(w io.Writer, p *Point) error {
	f := p.FanIn
	if f == nil {
		return nil
	}
	servers := make([]string, len(f.ServerRanks))
	for i, s := range f.ServerRanks {
		servers[i] = strconv.Itoa(s.Rank)
		if s.Addr != "" {
			servers[i] += " (" + s.Addr + ")"
		}
	}
	spread := func(s *[2]int64) string {
		if s == nil {
			return "-"
		}
		return micros(&s[0]) + ".." + micros(&s[1])
	}
	serving := "server rank(s) " + strings.Join(servers, ",")
	if len(servers) == 0 {
		serving = "a server outside the job"
	}
	fmt.Fprintf(w, "fan-in %s: %d client rank(s), %s; skew %s µs, overlap %.1f%%, barrier %s µs; Jain %.4f, slowest rank %d; p50 %s µs, p99 %s µs\n",
		pointLabel(p), len(f.Ranks), serving, micros(&f.SkewNs), 100*f.Overlap, micros(&f.BarrierNs), f.Jain, f.SlowestRank, spread(f.P50Spread), spread(f.P99Spread))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  rank\thost\tserver\tconns\tcount\tRTT p50 µs\tp99 µs\tmax µs\tRPC/s\terrors\tclock µs\t")
	for _, r := range f.Ranks {
		q := &r.Point
		var nerr uint64
		for _, e := range q.Errors {
			nerr += e.Count
		}
		rank := strconv.Itoa(r.Rank)
		if !q.Complete {
			rank += "*"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%.0f\t%d\t%s±%s\t\n", rank, r.Host, r.Server, q.Params.Connections, q.RTT.Count,
			micros(q.RTT.P50), micros(q.RTT.P99), micros(q.RTT.Max), q.Throughput.RPCPerSec, nerr, micros(&r.ClockOffsetNs), micros(&r.ClockErrorNs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  clock: rank 0's clock minus the rank's, ± the estimate's bound; skew and overlap are reckoned with it.")
	for _, sr := range f.ServerRanks {
		if sr.CPU != nil && sr.WallNs > 0 {
			busy := sr.CPU.UserNs + sr.CPU.SysNs
			fmt.Fprintf(w, "  server rank %d (host %s%s): CPU %.2f s (user %.2f, sys %.2f) over %.2f s serving, %.0f%% of one CPU\n", sr.Rank, sr.Host, addrSuffix(sr.Addr),
				float64(busy)/1e9, float64(sr.CPU.UserNs)/1e9, float64(sr.CPU.SysNs)/1e9, float64(sr.WallNs)/1e9, 100*float64(busy)/float64(sr.WallNs))
		}
	}
	for _, x := range f.Failed {
		fmt.Fprintf(w, "  failed: rank %d (host %s): %s\n", x.Rank, x.Host, x.Cause)
	}
	return nil
}

// addrSuffix is ", ADDR" for a server rank's address, "" when unknown.
func addrSuffix(addr string) string {
	if addr == "" {
		return ""
	}
	return ", " + addr
}

// MergeCallbacks merges the callbacks rows of several points (the ranks' of a fan-in): a row
// per procedure any of them had, in their order, histograms added exactly and errors summed.
// A row without a histogram cannot be merged exactly and is an error.
func MergeCallbacks(parts [][]ProcStats) ([]ProcStats, error) {
	var out []ProcStats
	var sums [][]Summary
	var hists [][]string
	var errs []uint64
	for k, part := range parts {
		prev := -1
		for _, c := range part {
			if c.Histogram == "" {
				return nil, fmt.Errorf("merge callbacks: part %d: %s has no histogram", k, c.Procedure)
			}
			i := slices.IndexFunc(out, func(o ProcStats) bool { return o.Procedure == c.Procedure })
			if i < 0 {
				// After the part's previous row, so that parts in one table order keep it.
				i = prev + 1
				out = slices.Insert(out, i, ProcStats{Procedure: c.Procedure})
				sums, hists, errs = slices.Insert(sums, i, nil), slices.Insert(hists, i, nil), slices.Insert(errs, i, 0)
			}
			sums[i], hists[i] = append(sums[i], c.RTT), append(hists[i], c.Histogram)
			errs[i] += c.Errors
			prev = i
		}
	}
	for i := range out {
		var err error
		if out[i].RTT, out[i].Histogram, err = MergeSummaries(sums[i], hists[i]); err != nil {
			return nil, fmt.Errorf("merge callbacks: %s: %w", out[i].Procedure, err)
		}
		out[i].Errors = errs[i]
	}
	return out, nil
}

// MergeRecalls merges the recall measurements of several points (nil: none), counts summed
// and latencies' histograms added exactly; nil when none has one.
func MergeRecalls(parts []*Recalls) (*Recalls, error) {
	var m *Recalls
	var sums [numRecallLats][]Summary
	var hists [numRecallLats][]string
	for _, rc := range parts {
		if rc == nil {
			continue
		}
		if m == nil {
			m = &Recalls{}
		}
		m.Count += rc.Count
		m.NotGranted += rc.NotGranted
		m.Retries += rc.Retries
		for i, l := range rc.Latencies() {
			sums[i], hists[i] = append(sums[i], l.Latency.RTT), append(hists[i], l.Latency.Histogram)
		}
	}
	if m == nil {
		return nil, nil
	}
	for i, l := range m.Latencies() {
		var err error
		if l.Latency.RTT, l.Latency.Histogram, err = MergeSummaries(sums[i], hists[i]); err != nil {
			return nil, fmt.Errorf("merge recalls: %s: %w", l.Name, err)
		}
	}
	return m, nil
}
