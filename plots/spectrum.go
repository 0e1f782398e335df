package plots

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// spectrumTicks is the HdrHistogram percentile iterator's density: reporting points per half
// distance to 100%, so the points are evenly spaced on the 1/(1-p) axis.
const spectrumTicks = 5

// histogram decodes a point's RTT histogram, naming the point when it is missing or corrupt.
func histogram(f ref) (*hdr.Histogram, error) {
	if f.p.Histogram == "" {
		return nil, fmt.Errorf("plots: %s: rtt_histogram missing (count %d)", f.name(), f.p.RTT.Count)
	}
	h, err := results.DecodeHistogram(f.p.Histogram)
	if err != nil {
		return nil, fmt.Errorf("plots: %s: %w", f.name(), err)
	}
	return h, nil
}

// Spectrum charts the percentile spectrum of every point keep accepts (every point when keep
// is nil): RTT against percentile on HdrHistogram's axis, x = 1/(1-p), labelled 0%, 90%, 99%,
// 99.9%, ... One line per point, from its decoded histogram's cumulative distribution (the
// histograms of its rounds merged, when repeated). A line
// stops at the last percentile its sample count supports (results.Supports), so no line
// extends into a tail made of a handful of samples. Points without samples are left out; a
// point whose histogram is missing or corrupt is an error.
func Spectrum(runs []*results.Run, keep func(results.Params) bool) (*Chart, error) {
	refs, err := collect(runs)
	if err != nil {
		return nil, err
	}
	var sel []ref
	empty := 0
	for _, f := range refs {
		if keep != nil && !keep(f.p.Params) {
			continue
		}
		if f.p.RTT.Count == 0 {
			empty++
			continue
		}
		sel = append(sel, f)
	}
	var notes []string
	if empty > 0 {
		notes = append(notes, fmt.Sprintf("%d point(s) not drawn: no samples", empty))
	}
	return spectrumChart(sel, runs, "spectrum", notes)
}

// spectrumChart draws the spectrum of sel, points that all have samples.
func spectrumChart(sel []ref, runs []*results.Run, name string, notes []string) (*Chart, error) {
	if len(sel) == 0 {
		return nil, fmt.Errorf("plots: %s: %w (no selected point has samples)", name, ErrNoData)
	}

	// A mix's point is a blend of classes whose latencies differ by design: one line per
	// class says more than their sum, which the table has.
	type specLine struct {
		f      ref
		rounds []ref  // f and the other repeats of its point, whose samples the line pools
		class  string // "" for the whole point
	}
	var ls []specLine
	pooled := 0
	for _, rs := range repeats(sel) {
		f := rs[0]
		if len(rs) > 1 {
			pooled = max(pooled, len(rs))
		}
		if classes := mixClasses(f.p); len(classes) > 1 {
			for _, c := range classes {
				ls = append(ls, specLine{f, rs, c})
			}
			continue
		}
		ls = append(ls, specLine{f: f, rounds: rs})
	}
	lo, hi, xmax := math.Inf(1), math.Inf(-1), 1.0 // x at least to 90%
	all := make([]plotter.XYs, len(ls))
	for i, l := range ls {
		var h *hdr.Histogram
		for _, f := range l.rounds {
			hr, err := classHistogram(f, l.class)
			if err != nil {
				return nil, err
			}
			if h == nil {
				h = hr
			} else {
				h.Merge(hr)
			}
		}
		all[i] = spectrum(h)
		for _, xy := range all[i] {
			lo, hi, xmax = math.Min(lo, xy.Y), math.Max(hi, xy.Y), math.Max(xmax, xy.X)
		}
	}
	title := "RTT percentile spectrum"
	if thr, ok := sameThreshold(sel); ok {
		title += " · inline " + bytesLabel(thr)
	}
	p := newPlot(title, "percentile", "round-trip time (µs)")
	p.X.Tick.Marker = logged(plot.TickerFunc(percentileTicks), 10)
	p.X.Min, p.X.Max = 0, xmax
	ty := setLatencyAxis(&p.Y, lo, hi)

	var lg Legend
	st := newStyler()
	type colourKey struct {
		seriesKey
		size  int
		class string
	}
	var lines []plot.Plotter
	for i, sl := range ls {
		f := sl.f
		k := keyOf(f, false)
		ls, gs := st.style(colourKey{k, size(f.p.Params), sl.class}, f.run)
		xys := all[i]
		for j := range xys {
			xys[j].Y = ty(xys[j].Y)
		}
		var th plot.Thumbnailer
		if len(xys) < 2 {
			// Too few samples for any percentile but the minimum: a line of one point
			// would be invisible, so mark it.
			s, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("plots: spectrum: %s: %w", f.name(), err)
			}
			s.GlyphStyle = gs
			lines, th = append(lines, s), s
		} else {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("plots: spectrum: %s: %w", f.name(), err)
			}
			l.LineStyle = ls
			lines, th = append(lines, l), l
		}
		label := pointLabel(f, sel, runs)
		if sl.class != "" {
			label += " · " + sl.class
		}
		if n := len(sl.rounds); n > 1 {
			label += " · " + strconv.Itoa(n) + " rounds"
		}
		lg.Add(label, th)
	}
	p.Add(lines...)
	if pooled > 0 {
		notes = append(notes, "A repeated point's line is the spectrum of the samples of all its rounds, pooled.")
	}
	notes = append(notes, fmt.Sprintf("Each line ends at the last percentile with at least %d samples beyond it.",
		results.MinTailSamples))
	return &Chart{Name: name, Plot: p, Legend: lg, Caption: caption(sel, notes...)}, nil
}

// repeats splits refs into the repeats of each point (its rounds, and its runs of one setup),
// in the order first seen.
func repeats(refs []ref) [][]ref {
	type key struct {
		group  int
		params results.Params
	}
	idx := map[key]int{}
	var out [][]ref
	for _, f := range refs {
		k := key{f.group, f.p.Params}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], f)
	}
	return out
}

// mixClasses are the classes with round trips of a mix's point (MIX:NAME), nil for any other
// point.
func mixClasses(p *results.Point) []string {
	if !strings.HasPrefix(p.Params.Procedure, "MIX") {
		return nil
	}
	var cs []string
	for _, c := range p.Classes {
		if c.RTT.Count > 0 && c.Histogram != "" {
			cs = append(cs, c.Class)
		}
	}
	return cs
}

// classHistogram decodes the histogram of class of f's point ("" for the whole point).
func classHistogram(f ref, class string) (*hdr.Histogram, error) {
	if class == "" {
		return histogram(f)
	}
	for _, c := range f.p.Classes {
		if c.Class == class {
			h, err := results.DecodeHistogram(c.Histogram)
			if err != nil {
				return nil, fmt.Errorf("plots: %s class %s: %w", f.name(), class, err)
			}
			return h, nil
		}
	}
	return nil, fmt.Errorf("plots: %s: no class %s", f.name(), class)
}

// spectrum is the (log10 1/(1-p), RTT µs) points of h's cumulative distribution that its count
// supports, starting at p = 0 (the minimum).
func spectrum(h *hdr.Histogram) plotter.XYs {
	n := uint64(h.TotalCount())
	var xys plotter.XYs
	for _, b := range h.CumulativeDistributionWithTicks(spectrumTicks) {
		q := b.Quantile
		if q >= 100 || (q > 0 && !results.Supports(n, q)) {
			break
		}
		x := math.Log10(100 / (100 - q))
		if len(xys) > 0 && x <= xys[len(xys)-1].X {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: float64(b.ValueAt) / 1e3})
	}
	return xys
}

func sameThreshold(refs []ref) (int, bool) {
	if len(refs) == 0 {
		return 0, false
	}
	t := refs[0].p.Params.InlineThreshold
	for _, f := range refs[1:] {
		if f.p.Params.InlineThreshold != t {
			return 0, false
		}
	}
	return t, true
}
