package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// RankMetric selects what a ranks chart plots.
type RankMetric int

const (
	// RankRPCRate is each client rank's RPCs per second.
	RankRPCRate RankMetric = iota
	// RankRTT is each client rank's p50 and p99 round-trip time.
	RankRTT
)

// Ranks charts the client ranks of a fan-in run's points (rpcrdma-bench fanin), the rank on
// the x axis: RankRPCRate each rank's RPC/s, RankRTT its p50 (solid) and p99 (dashed) RTT;
// one line per fan-in point, labelled with the point's aggregate (the merged rate or
// percentiles) and Jain's index. A rank whose count does not support a percentile has no
// mark there. The error wraps ErrNoData when no point of run is a fan-in.
func Ranks(run *results.Run, m RankMetric) (*Chart, error) {
	refs, err := collect([]*results.Run{run})
	switch {
	case err != nil:
		return nil, err
	case m != RankRPCRate && m != RankRTT:
		return nil, fmt.Errorf("plots: unknown rank metric %d", m)
	}
	sel := slices.DeleteFunc(refs, func(f ref) bool { return f.p.FanIn == nil || len(f.p.FanIn.Ranks) == 0 })
	if len(sel) == 0 {
		return nil, fmt.Errorf("plots: ranks: %w (no point is a fan-in)", ErrNoData)
	}
	type val struct {
		name string
		v    func(*results.Point) (float64, bool)
	}
	pct := func(name string, get func(*results.Summary) *int64) val {
		return val{name, func(p *results.Point) (float64, bool) {
			if v := get(&p.RTT); v != nil {
				return float64(*v) / 1e3, true
			}
			return 0, false
		}}
	}
	name, title, ylabel := "ranks-rpcs", "Throughput per client rank", "throughput (RPC/s)"
	vals := []val{{"RPC/s", func(p *results.Point) (float64, bool) { return p.Throughput.RPCPerSec, true }}}
	format := siLabel
	if m == RankRTT {
		name, title, ylabel, format = "ranks-rtt", "RTT p50 and p99 per client rank", "round-trip time (µs)", trimFloat
		vals = []val{pct("p50", func(s *results.Summary) *int64 { return s.P50 }), pct("p99", func(s *results.Summary) *int64 { return s.P99 })}
	}
	type line struct {
		xys   plotter.XYs
		label string
		key   int
		dash  int
	}
	var lines []line
	lo, hi := math.Inf(1), 0.0
	ranks := map[int]bool{}
	for i, f := range sel {
		fi := f.p.FanIn
		for d, v := range vals {
			var xys plotter.XYs
			for _, rp := range fi.Ranks {
				ranks[rp.Rank] = true
				if y, ok := v.v(&rp.Point); ok {
					xys = append(xys, plotter.XY{X: float64(rp.Rank), Y: y})
					lo, hi = math.Min(lo, y), math.Max(hi, y)
				}
			}
			if len(xys) == 0 {
				continue
			}
			agg := "-"
			if y, ok := v.v(f.p); ok {
				agg = format(y)
			}
			label := pointLabel(f, sel, []*results.Run{run})
			if f.p.Round > 0 {
				label += " · round " + strconv.Itoa(f.p.Round)
			}
			if m == RankRTT {
				label += " · " + v.name + " all ranks " + agg + " µs"
			} else {
				label += " · all ranks " + agg + " RPC/s, Jain " + strconv.FormatFloat(fi.Jain, 'f', 3, 64)
			}
			lines = append(lines, line{xys, label, i, d})
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("plots: %s: %w (no rank has enough samples for a percentile)", name, ErrNoData)
	}
	p := newPlot(title, "client rank", ylabel)
	ty := setValueAxis(&p.Y, 0, hi, format)
	if m == RankRTT {
		ty = setLatencyAxis(&p.Y, lo, hi)
	}
	var ticks []plot.Tick
	first, last := math.MaxInt, 0
	for r := range ranks {
		first, last = min(first, r), max(last, r)
	}
	for r := first; r <= last; r++ {
		if ranks[r] {
			ticks = append(ticks, plot.Tick{Value: float64(r), Label: strconv.Itoa(r)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = float64(first)-0.5, float64(last)+0.5
	st := newStyler()
	var lg Legend
	for _, l := range lines {
		for i := range l.xys {
			l.xys[i].Y = ty(l.xys[i].Y)
		}
		lp, sc, err := plotter.NewLinePoints(l.xys)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", name, err)
		}
		lp.LineStyle, sc.GlyphStyle = st.style(l.key, l.dash)
		p.Add(lp, sc)
		lg.Add(l.label, lp, sc)
	}
	note := "Each line is one fan-in point, through its client ranks' own values; the legend gives the point's value over all ranks (its merged histogram, its summed rate)."
	return &Chart{Name: name, Plot: p, Legend: lg, Caption: caption(sel, note)}, nil
}
