package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// Latency charts RTT percentile p (0 < p < 100, for example 50 or 99.9) against message size,
// one line per inline threshold (and per whatever else differs between the points: procedure,
// depth, run). A point whose sample count cannot support p (results.Supports) is left out and
// counted in the caption. The error wraps ErrNoData if no point has the percentile.
func Latency(runs []*results.Run, p float64) (*Chart, error) {
	if !(p > 0 && p < 100) {
		return nil, fmt.Errorf("plots: latency percentile %v: want 0 < p < 100", p)
	}
	refs, err := collect(runs)
	if err != nil {
		return nil, err
	}
	ps := percentileName(p)
	var decodeErr error
	val := func(f ref) (float64, string) {
		v, ok, err := percentileNs(f, p)
		switch {
		case err != nil:
			decodeErr = err
			return 0, "bad histogram"
		case f.p.RTT.Count == 0:
			return 0, "no samples"
		case !ok:
			return 0, "too few samples for " + ps
		}
		return float64(v) / 1e3, ""
	}
	c, err := sizeChart(refs, runs, "latency-"+strings.ReplaceAll(ps, ".", ""),
		"RTT "+ps+" vs message size", ps+" round-trip time (µs)", val, trimFloat, true)
	if decodeErr != nil {
		return nil, decodeErr
	}
	return c, err
}

// Rate selects what a throughput chart plots.
type Rate int

const (
	// RPCRate is completed RPCs per second.
	RPCRate Rate = iota
	// Gbps is payload (call plus reply data, no headers) in 10^9 bits per second.
	Gbps
)

// Throughput charts a point's throughput against message size, one line per inline threshold.
// Points that completed no RPC are left out and counted in the caption.
func Throughput(runs []*results.Run, rate Rate) (*Chart, error) {
	refs, err := collect(runs)
	if err != nil {
		return nil, err
	}
	name, title, ylabel, label := "throughput-rpcs", "Throughput (RPC/s) vs message size",
		"throughput (RPC/s)", siLabel
	if rate == Gbps {
		name, title, ylabel, label = "throughput-gbps", "Payload throughput (Gb/s) vs message size",
			"payload throughput (Gb/s)", trimFloat
	} else if rate != RPCRate {
		return nil, fmt.Errorf("plots: unknown throughput rate %d", rate)
	}
	val := func(f ref) (float64, string) {
		t := f.p.Throughput
		if t.RPCs == 0 {
			return 0, "no RPC completed"
		}
		if rate == Gbps {
			return t.PayloadGbps, ""
		}
		return t.RPCPerSec, ""
	}
	return sizeChart(refs, runs, name, title, ylabel, val, label, false)
}

// percentileName writes p as the schema does: p50, p99.9.
func percentileName(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// percentileNs is the RTT at percentile p of a point: from its summary when the schema
// carries p, else from its histogram. ok is false when the count does not support p.
func percentileNs(f ref, p float64) (v int64, ok bool, err error) {
	s := &f.p.RTT
	var field **int64
	switch p {
	case 50:
		field = &s.P50
	case 90:
		field = &s.P90
	case 99:
		field = &s.P99
	case 99.9:
		field = &s.P999
	case 99.99:
		field = &s.P9999
	}
	if field != nil {
		if *field == nil || !results.Supports(s.Count, p) {
			return 0, false, nil
		}
		return **field, true, nil
	}
	if !results.Supports(s.Count, p) {
		return 0, false, nil
	}
	h, err := histogram(f)
	if err != nil {
		return 0, false, err
	}
	v, ok = results.Percentile(h, p)
	return v, ok, nil
}

// sizeChart draws val of every point against its size (the larger payload) on a log2 axis,
// one line per series. val returns the value or why the point has none. latency selects the
// latency charts' y axis (setLatencyAxis) over the value axis rule. Each point's marker shows
// the message class most of its RPCs used, so that a line shows where its class changed.
func sizeChart(refs []ref, runs []*results.Run, name, title, ylabel string,
	val func(ref) (float64, string), label func(float64) string, latency bool) (*Chart, error) {
	ss := group(refs, runs)
	omitted := map[string]int{}
	var reasons []string
	omit := func(why string) {
		if omitted[why] == 0 {
			reasons = append(reasons, why)
		}
		omitted[why]++
	}
	type line struct {
		key     seriesKey
		label   string
		xys     plotter.XYs
		classes []string // each point's dominant class
	}
	var lines []line
	lo, hi := math.Inf(1), math.Inf(-1)
	xlo, xhi := math.Inf(1), math.Inf(-1)
	shapes := map[int]bool{}
	var used []ref
	for _, s := range ss {
		l := line{key: s.key, label: s.label}
		for _, f := range s.refs {
			v, why := val(f)
			if why == "" && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
				why = "invalid value"
			}
			x := float64(size(f.p.Params))
			if x > 0 {
				// The axis spans every size, drawn or not, so the charts of one sweep align.
				xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
			}
			if why == "" && x <= 0 {
				why = "0-byte payload (log axis)"
				if strings.HasPrefix(f.p.Params.Procedure, "MIX") {
					why = "a mix, which has no single size (see the spectra and 'report --format thresholds')"
				}
			}
			if why != "" {
				omit(why)
				continue
			}
			l.xys = append(l.xys, plotter.XY{X: math.Log2(x), Y: v})
			c := dominantClass(f.p)
			if !slices.Contains(classOrder, c) {
				c = "" // a file's unknown class draws as "no class"
			}
			l.classes = append(l.classes, c)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			k, _ := shape(f.p.Params)
			shapes[k] = true
			used = append(used, f)
		}
		if len(l.xys) > 0 {
			lines = append(lines, l)
		}
	}
	var notes []string
	for _, why := range reasons {
		notes = append(notes, fmt.Sprintf("%d point(s) not drawn: %s", omitted[why], why))
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("plots: %s: %w (%s)", name, ErrNoData, strings.Join(notes, "; "))
	}

	p := newPlot(title, sizeAxisLabel(shapes), ylabel)
	p.X.Tick.Marker = logged(plot.TickerFunc(sizeTicks), 2)
	p.X.Min, p.X.Max = log2Range(xlo, xhi)
	var ty func(float64) float64
	if latency {
		ty = setLatencyAxis(&p.Y, lo, hi)
	} else {
		ty = setValueAxis(&p.Y, lo, hi, label)
	}
	var lg Legend
	st := newStyler()
	seen := map[string]bool{}
	for _, l := range lines {
		for j := range l.xys {
			l.xys[j].Y = ty(l.xys[j].Y)
		}
		ln, err := plotter.NewLine(l.xys)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", name, err)
		}
		run := l.key.run
		l.key.run = -1
		var gs draw.GlyphStyle
		ln.LineStyle, gs = st.style(l.key, run)
		p.Add(ln)
		var thumb plot.Thumbnailer
		for _, c := range classOrder {
			var xys plotter.XYs
			for j, pc := range l.classes {
				if pc == c {
					xys = append(xys, l.xys[j])
				}
			}
			if len(xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", name, err)
			}
			sc.GlyphStyle = gs
			sc.GlyphStyle.Shape = classGlyph(c)
			p.Add(sc)
			if thumb == nil {
				thumb = sc
			}
			seen[c] = true
		}
		lg.Add(l.label, ln, thumb)
	}
	var marks []string
	for _, c := range classOrder {
		if seen[c] {
			marks = append(marks, classGlyphName(c)+" "+c)
		}
	}
	if len(marks) > 1 {
		notes = append(notes, "Markers: the message class most of a point's RPCs used ("+strings.Join(marks, ", ")+"): where it changes along a line, the class switched.")
	}
	return &Chart{Name: name, Plot: p, Legend: lg, Caption: caption(used, notes...)}, nil
}

// classOrder lists the message classes lightest first; "" is a point without RPCs.
var classOrder = []string{"short", "chunked", "long", ""}

// dominantClass is the class with the most RTTs of the point ("" if none).
func dominantClass(p *results.Point) string {
	best, n := "", uint64(0)
	for _, c := range p.Classes {
		if c.RTT.Count > n {
			best, n = c.Class, c.RTT.Count
		}
	}
	return best
}

// classGlyph is the marker of a class on the size charts.
func classGlyph(class string) draw.GlyphDrawer {
	switch class {
	case "chunked":
		return draw.TriangleGlyph{}
	case "long":
		return draw.BoxGlyph{}
	case "short":
		return draw.CircleGlyph{}
	}
	return draw.CrossGlyph{}
}

func classGlyphName(class string) string {
	switch class {
	case "chunked":
		return "▲"
	case "long":
		return "■"
	case "short":
		return "●"
	}
	return "×"
}

// setLatencyAxis is the one rule of every latency axis (RTT against size, the percentile
// spectrum): logarithmic, so that the charts of p50, p99 and p99.9 read alike and a tail a
// hundred times the median fits next to it; linear from zero only when a value is not
// positive, which a log axis cannot show.
func setLatencyAxis(a *plot.Axis, lo, hi float64) func(float64) float64 {
	if lo > 0 {
		return setLog(a, lo, hi, trimFloat)
	}
	return setValueAxis(a, lo, hi, trimFloat)
}

// setValueAxis scales an axis for non-negative values lo..hi: logarithmic when they are all
// positive and span more than a factor of 20, linear from zero otherwise. It returns the
// transform to apply to the values before plotting them (log10 on a log axis).
func setValueAxis(a *plot.Axis, lo, hi float64, label func(float64) string) func(float64) float64 {
	if lo > 0 && hi/lo > 20 {
		return setLog(a, lo, hi, label)
	}
	a.Tick.Marker = linearTicks(label)
	a.Min = 0
	a.Max = 1
	if hi > 0 {
		a.Max = hi * 1.08
	}
	return func(v float64) float64 { return v }
}

// setLog makes a a log10 axis over lo..hi (both positive).
func setLog(a *plot.Axis, lo, hi float64, label func(float64) string) func(float64) float64 {
	a.Tick.Marker = expTicks(label)
	// Whole 1-2-5 steps around the data, so the ends carry labels.
	a.Min, a.Max = math.Log10(step125(lo, false)), math.Log10(step125(hi, true))
	if a.Max <= a.Min {
		a.Max = a.Min + math.Log10(2)
	}
	return math.Log10
}

// step125 rounds v down (or up) to 1, 2 or 5 times a power of ten.
func step125(v float64, up bool) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	steps := []float64{1, 2, 5, 10}
	if up {
		for _, s := range steps {
			if s*d >= v*(1-1e-9) {
				return s * d
			}
		}
		return 10 * d
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i]*d <= v*(1+1e-9) {
			return steps[i] * d
		}
	}
	return d
}

func sizeAxisLabel(shapes map[int]bool) string {
	if len(shapes) == 1 {
		switch {
		case shapes[shapeEqual]:
			return "message size (bytes, call and reply payload each)"
		case shapes[shapeReply]:
			return "reply payload (bytes)"
		case shapes[shapeCall]:
			return "call payload (bytes)"
		}
	}
	return "message size (bytes, the larger of call and reply payload)"
}
