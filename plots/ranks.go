package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

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
// the x axis: RankRPCRate each rank's RPC/s, RankRTT its p50 (filled circles) and p99 (filled triangles)
// RTT. The rank axis is categorical: each fan-in point is a series of markers, side by side
// with the others at each rank, never joined by lines, labelled with the point's aggregate
// (the merged rate or percentiles) and Jain's index; a point's repeated rounds are one
// series, the median per rank with whiskers over the rounds. A rank whose count does not support a percentile has no
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
	// A point's rounds (--repeat) are one series: per rank, the median over the rounds with
	// their min-max range as whiskers.
	var groups [][]ref
	for _, f := range sel {
		k := f.p.Params.Key()
		i := slices.IndexFunc(groups, func(g []ref) bool { return g[0].p.Params.Key() == k })
		if i < 0 {
			groups = append(groups, []ref{f})
			continue
		}
		groups[i] = append(groups[i], f)
	}
	type mark struct {
		rank        int
		med, lo, hi float64
		n           int
	}
	type series struct {
		marks []mark
		label string
		key   int
		dash  int
	}
	var all []series
	lo, hi := math.Inf(1), 0.0
	ranks := map[int]bool{}
	rounds := 0
	for i, g := range groups {
		rounds = max(rounds, len(g))
		for d, v := range vals {
			byRank := map[int][]float64{}
			var order []int
			var aggs []float64
			var jains []float64
			for _, f := range g {
				for _, rp := range f.p.FanIn.Ranks {
					ranks[rp.Rank] = true
					if y, ok := v.v(&rp.Point); ok {
						if _, seen := byRank[rp.Rank]; !seen {
							order = append(order, rp.Rank)
						}
						byRank[rp.Rank] = append(byRank[rp.Rank], y)
					}
				}
				if y, ok := v.v(f.p); ok {
					aggs = append(aggs, y)
				}
				jains = append(jains, f.p.FanIn.Jain)
			}
			if len(order) == 0 {
				continue
			}
			slices.Sort(order)
			var ms []mark
			for _, r := range order {
				ys := byRank[r]
				m := mark{rank: r, med: median(ys), lo: slices.Min(ys), hi: slices.Max(ys), n: len(ys)}
				lo, hi = math.Min(lo, m.lo), math.Max(hi, m.hi)
				ms = append(ms, m)
			}
			agg := "-"
			if len(aggs) > 0 {
				agg = format(median(aggs))
			}
			label := pointLabel(g[0], sel, []*results.Run{run})
			if m == RankRTT {
				label += " · " + v.name + " all ranks " + agg + " µs"
			} else {
				label += " · all ranks " + agg + " RPC/s, Jain " + strconv.FormatFloat(median(jains), 'f', 3, 64)
			}
			all = append(all, series{ms, label, i, d})
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("plots: %s: %w (no rank has enough samples for a percentile)", name, ErrNoData)
	}
	p := newPlot(title, "client rank", ylabel)
	ty := setValueAxis(&p.Y, 0, hi, format)
	if m == RankRTT {
		ty = setLatencyAxis(&p.Y, lo, hi)
	}
	// The rank axis is categorical: a tick per rank, no line joining ranks; the series of a
	// rank sit side by side around its tick.
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
	p.X.Tick.LineStyle.Width = 0
	st := newStyler()
	var lg Legend
	const span = 0.6 // of the space between two ranks, shared by the series
	for j, sr := range all {
		off := 0.0
		if len(all) > 1 {
			off = span * (float64(j)/float64(len(all)-1) - 0.5)
		}
		var xys plotter.XYs
		var errs struct {
			plotter.XYs
			plotter.YErrors
		}
		for _, mk := range sr.marks {
			x, y := float64(mk.rank)+off, ty(mk.med)
			xys = append(xys, plotter.XY{X: x, Y: y})
			if mk.n > 1 {
				errs.XYs = append(errs.XYs, plotter.XY{X: x, Y: y})
				errs.YErrors = append(errs.YErrors, struct{ Low, High float64 }{y - ty(mk.lo), ty(mk.hi) - y})
			}
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", name, err)
		}
		ls, gs := st.style(sr.key, sr.dash)
		// The colour names the point, the marker the value: a filled circle (RPC/s, p50)
		// or a filled triangle (p99), the same for every point.
		gs.Shape = draw.CircleGlyph{}
		if sr.dash > 0 {
			gs.Shape = draw.PyramidGlyph{}
		}
		sc.GlyphStyle = gs
		if len(errs.XYs) > 0 {
			bars, err := plotter.NewYErrorBars(errs)
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", name, err)
			}
			bars.LineStyle = draw.LineStyle{Color: ls.Color, Width: vg.Points(1.2)}
			bars.CapWidth = vg.Points(5)
			p.Add(bars)
		}
		p.Add(sc)
		lg.Add(sr.label, sc)
	}
	note := "Each marker is one client rank's own value at one fan-in point; the legend gives the point's value over all ranks (its merged histogram, its summed rate)."
	if rounds > 1 {
		note += fmt.Sprintf(" With repeated rounds (up to %d): the median over the rounds, whiskers their min-max range.", rounds)
	}
	return &Chart{Name: name, Plot: p, Legend: lg, Caption: caption(sel, note)}, nil
}
