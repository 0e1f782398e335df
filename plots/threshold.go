package plots

import (
	"fmt"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// ThresholdMetric selects what a threshold chart plots.
type ThresholdMetric int

const (
	// ThresholdP50 is the median RTT.
	ThresholdP50 ThresholdMetric = iota
	// ThresholdP99 is the 99th percentile RTT.
	ThresholdP99
	// ThresholdRPCRate is completed RPCs per second.
	ThresholdRPCRate
)

// thresholdAxis puts a point's inline threshold (the one in effect) on the x axis.
var thresholdAxis = xAxis{
	x:     func(p results.Params) int { return p.InlineThreshold },
	label: func(map[int]bool) string { return "inline threshold in effect (bytes)" },
	zero:  func(results.Params) string { return "no inline threshold" },
}

// Threshold charts a metric of every mix (a point without one size) against the inline
// threshold, one line per mix (and per whatever else differs: depth, run), through the median
// of each threshold's rounds with their min-max range as a band. Sized points are left to the
// heatmap. The error wraps ErrNoData when no mix was measured at two thresholds or more.
func Threshold(runs []*results.Run, m ThresholdMetric) (*Chart, error) {
	refs, err := collect(runs)
	if err != nil {
		return nil, err
	}
	var mixes []ref
	thrs := map[int]bool{}
	for _, f := range refs {
		if noSize(f.p.Params) {
			mixes = append(mixes, f)
			thrs[f.p.Params.InlineThreshold] = true
		}
	}
	var (
		name, title, ylabel string
		label               = trimFloat
		latency             bool
		val                 func(ref) (float64, string)
	)
	pct := func(p float64) func(ref) (float64, string) {
		return func(f ref) (float64, string) {
			v, ok, err := percentileNs(f, p)
			switch {
			case err != nil:
				return 0, "bad histogram"
			case !ok:
				return 0, "too few samples for " + percentileName(p)
			}
			return float64(v) / 1e3, ""
		}
	}
	switch m {
	case ThresholdP50, ThresholdP99:
		p := 50.0
		if m == ThresholdP99 {
			p = 99
		}
		ps := percentileName(p)
		name, title, ylabel, latency, val = "threshold-"+ps, "Mix RTT "+ps+" vs inline threshold", ps+" round-trip time (µs)", true, pct(p)
	case ThresholdRPCRate:
		name, title, ylabel, label = "threshold-rpcs", "Mix throughput (RPC/s) vs inline threshold", "throughput (RPC/s)", siLabel
		val = func(f ref) (float64, string) {
			if f.p.Throughput.RPCs == 0 {
				return 0, "no RPC completed"
			}
			return f.p.Throughput.RPCPerSec, ""
		}
	default:
		return nil, fmt.Errorf("plots: unknown threshold metric %d", m)
	}
	if len(thrs) < 2 {
		return nil, fmt.Errorf("plots: %s: %w (no mix measured at two inline thresholds)", name, ErrNoData)
	}
	return lineChart(groupMixes(mixes, runs), thresholdAxis, name, title, ylabel, val, label, latency)
}

// groupMixes splits mix points into the lines of a threshold chart: the threshold left out of
// the key, each line labelled with what differs, its mix (or sizes drawn per RPC) always.
func groupMixes(refs []ref, runs []*results.Run) []series {
	ss, v := split(refs, true, func(f ref) int { return f.p.Params.InlineThreshold })
	v.procedure, v.sizes = true, true // a line's mix, or its sizes drawn per RPC, always
	for i := range ss {
		ss[i].label = strings.Join(v.parts(ss[i].key, runs), " · ")
	}
	return ss
}
