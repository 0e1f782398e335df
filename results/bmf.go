package results

import (
	"encoding/json"
	"io"
	"math"
	"slices"
)

// bmfMeasure is one measure of a benchmark in Bencher Metric Format: the value and the
// bounds continuous-benchmarking services draw around it.
type bmfMeasure struct {
	Value float64  `json:"value"`
	Lower *float64 `json:"lower_value,omitempty"`
	Upper *float64 `json:"upper_value,omitempty"`
}

// bmfMetrics are the measures WriteBMF writes per point, in Metric's units (RTTs in ns,
// RPC/s, Gb/s).
var bmfMetrics = []Metric{MetricP50, MetricP99, MetricRPS, MetricGbps}

// WriteBMF writes runs in Bencher Metric Format (BMF JSON), which Bencher and the common CI
// benchmark actions ingest: one benchmark per point key, with a measure per metric (p50 and
// p99 in ns, rps, gbps). The value is the median over the processes that measured the
// point (each process the median of its rounds); lower_value and upper_value are the least
// and greatest of those processes, absent for one process.
func WriteBMF(w io.Writer, runs []*Run) error {
	units := processesOf(runs)
	by, order := map[string][]*Point{}, []string(nil)
	for _, r := range runs {
		for i := range r.Points {
			p := &r.Points[i]
			if !p.Complete {
				continue
			}
			k := p.Params.Key()
			if _, ok := by[k]; !ok {
				order = append(order, k)
			}
			by[k] = append(by[k], p)
		}
	}
	out := map[string]map[string]bmfMeasure{}
	for _, k := range order {
		ms := map[string]bmfMeasure{}
		for _, m := range bmfMetrics {
			var v []float64
			for _, s := range samples(m, by[k], units) {
				v = append(v, s.v)
			}
			if len(v) == 0 {
				continue
			}
			bm := bmfMeasure{Value: median(v)}
			if len(v) > 1 {
				bm.Lower, bm.Upper = jsonNum(slices.Min(v)), jsonNum(slices.Max(v))
			}
			ms[m.String()] = bm
		}
		if len(ms) > 0 {
			out[k] = ms
		}
	}
	return encodeBMF(w, out)
}

// WriteCompareBMF writes the current side of c in Bencher Metric Format: per point key and
// judged metric, the current median over processes as the value and, where the comparison
// has an interval, the bounds it puts on the current value (the base median times the
// interval of the change), so that a service's bounds say what the gate judged.
func WriteCompareBMF(w io.Writer, c *Comparison) error {
	out := map[string]map[string]bmfMeasure{}
	for _, p := range c.Points {
		ms := map[string]bmfMeasure{}
		for _, r := range p.Metrics {
			if math.IsNaN(r.CurrentMedian) {
				continue
			}
			bm := bmfMeasure{Value: r.CurrentMedian}
			if r.Change.Bounded() {
				bm.Lower, bm.Upper = jsonNum(r.BaseMedian*r.Change.Lo), jsonNum(r.BaseMedian*r.Change.Hi)
			}
			ms[r.Metric.String()] = bm
		}
		if len(ms) > 0 {
			out[p.Params.Key()] = ms
		}
	}
	return encodeBMF(w, out)
}

func encodeBMF(w io.Writer, out map[string]map[string]bmfMeasure) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
