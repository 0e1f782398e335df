package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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
			"payload throughput (Gb/s, call + reply)", trimFloat
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
	return lineChart(group(refs, runs), sizeAxis, name, title, ylabel, val, label, latency)
}

// dodge is how far apart, in log2 units of the x axis, lines with whiskers are drawn.
const dodge = 0.07

// xAxis is what a line chart's x is: a point's size or its inline threshold, in bytes.
type xAxis struct {
	x     func(results.Params) int
	label func(shapes map[int]bool) string
	// zero says why a point at x 0 is not drawn (a log axis has no 0).
	zero func(results.Params) string
}

var sizeAxis = xAxis{
	x: size, label: sizeAxisLabel,
	zero: func(p results.Params) string {
		if noSize(p) {
			return "a mix or sizes drawn per RPC, which have no single size (see the spectra and the threshold charts)"
		}
		return "0-byte payload (log axis)"
	},
}

// stat is the value of one x of a line over the repeats of its point (the rounds of a run,
// the runs of one setup): their median, min and max, and how many there were.
type stat struct {
	x, med, lo, hi float64
	n              int
	class          string // the dominant class most of the repeats had
}

// line is one line of a line chart: its stats in x order.
type line struct {
	key   seriesKey
	label string
	stats []stat
}

// lineSet is what a line chart draws: its lines, the ranges of its axes, the points drawn and
// notes on those left out.
type lineSet struct {
	lines    []line
	lo, hi   float64 // of the values, min and max included
	xlo, xhi float64 // of every x > 0, drawn or not
	nlo, nhi int     // repeats per x
	shapes   map[int]bool
	used     []ref
	notes    []string
}

// aggregate takes the median, min and max of val over the repeats of each x of each series.
func aggregate(ss []series, ax xAxis, val func(ref) (float64, string)) lineSet {
	ls := lineSet{lo: math.Inf(1), hi: math.Inf(-1), xlo: math.Inf(1), xhi: math.Inf(-1), nlo: math.MaxInt, shapes: map[int]bool{}}
	omitted := map[string]int{}
	var reasons []string
	omit := func(why string) {
		if omitted[why] == 0 {
			reasons = append(reasons, why)
		}
		omitted[why]++
	}
	for _, s := range ss {
		l := line{key: s.key, label: s.label}
		var vals []float64
		var classes []string
		flush := func(x float64) {
			if len(vals) == 0 {
				return
			}
			st := stat{x: math.Log2(x), med: median(vals), lo: slices.Min(vals), hi: slices.Max(vals), n: len(vals), class: mostCommon(classes)}
			l.stats = append(l.stats, st)
			ls.lo, ls.hi = math.Min(ls.lo, st.lo), math.Max(ls.hi, st.hi)
			ls.nlo, ls.nhi = min(ls.nlo, st.n), max(ls.nhi, st.n)
			vals, classes = vals[:0], classes[:0]
		}
		for i, f := range s.refs {
			x := float64(ax.x(f.p.Params))
			if i > 0 && x != float64(ax.x(s.refs[i-1].p.Params)) {
				flush(float64(ax.x(s.refs[i-1].p.Params)))
			}
			v, why := val(f)
			if why == "" && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
				why = "invalid value"
			}
			if x > 0 {
				// The axis spans every x, drawn or not, so the charts of one sweep align.
				ls.xlo, ls.xhi = math.Min(ls.xlo, x), math.Max(ls.xhi, x)
			}
			if why == "" && x <= 0 {
				why = ax.zero(f.p.Params)
			}
			if why != "" {
				omit(why)
				continue
			}
			vals = append(vals, v)
			c := dominantClass(f.p)
			if !slices.Contains(classOrder, c) {
				c = "" // a file's unknown class draws as "no class"
			}
			classes = append(classes, c)
			k, _ := shape(f.p.Params)
			ls.shapes[k] = true
			ls.used = append(ls.used, f)
		}
		if n := len(s.refs); n > 0 {
			flush(float64(ax.x(s.refs[n-1].p.Params)))
		}
		if len(l.stats) > 0 {
			ls.lines = append(ls.lines, l)
		}
	}
	for _, why := range reasons {
		ls.notes = append(ls.notes, fmt.Sprintf("%d point(s) not drawn: %s", omitted[why], why))
	}
	return ls
}

// lineChart draws val against ax on a log2 axis, one line per series through the median of
// each x's repeats, with their min-max range as a band and whiskers when there are several.
func lineChart(ss []series, ax xAxis, name, title, ylabel string,
	val func(ref) (float64, string), label func(float64) string, latency bool) (*Chart, error) {
	set := aggregate(ss, ax, val)
	notes := set.notes
	if len(set.lines) == 0 {
		return nil, fmt.Errorf("plots: %s: %w (%s)", name, ErrNoData, strings.Join(notes, "; "))
	}

	p := newPlot(title, ax.label(set.shapes), ylabel)
	p.X.Tick.Marker = logged(plot.TickerFunc(sizeTicks), 2)
	p.X.Min, p.X.Max = log2Range(set.xlo, set.xhi)
	var ty func(float64) float64
	if latency {
		ty = setLatencyAxis(&p.Y, set.lo, set.hi)
	} else {
		ty = setValueAxis(&p.Y, set.lo, set.hi, label)
	}
	var lg Legend
	st := newStyler()
	seen := map[string]bool{}
	// Bands of several lines overlap into mud: they get whiskers alone.
	ranged := 0
	for _, l := range set.lines {
		if slices.ContainsFunc(l.stats, func(s stat) bool { return s.n > 1 }) {
			ranged++
		}
	}
	if ranged > 1 {
		// Room for the outermost lines' offsets.
		w := dodge * float64(len(set.lines)) / 2
		p.X.Min, p.X.Max = p.X.Min-w, p.X.Max+w
	}
	for li, l := range set.lines {
		// Whiskers of several lines at one x would cover each other: such lines sit side by
		// side, a small step apart on the (log2) x axis.
		off := 0.0
		if ranged > 1 {
			off = dodge * (float64(li) - float64(len(set.lines)-1)/2)
		}
		xys := make(plotter.XYs, len(l.stats))
		for j, s := range l.stats {
			xys[j] = plotter.XY{X: s.x + off, Y: ty(s.med)}
		}
		ln, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", name, err)
		}
		run := l.key.run
		l.key.run = -1
		var gs draw.GlyphStyle
		ln.LineStyle, gs = st.style(l.key, run)
		if err := addRange(p, l.stats, off, ty, ln.LineStyle, ranged == 1); err != nil {
			return nil, fmt.Errorf("plots: %s: %w", name, err)
		}
		p.Add(ln)
		var thumb plot.Thumbnailer
		for _, c := range classOrder {
			var cx plotter.XYs
			for j, s := range l.stats {
				if s.class == c {
					cx = append(cx, xys[j])
				}
			}
			if len(cx) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(cx)
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
	if set.nhi > 1 {
		rng := "whiskers: their min-max range (lines drawn side by side so that whiskers do not cover each other)."
		if ranged == 1 {
			rng = "band and whiskers: their min-max range."
		}
		notes = append(notes, "Lines: the median over each point's repeats ("+roundsText(set.nlo, set.nhi)+": the rounds of a run, or runs of one setup); "+rng)
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
	return &Chart{Name: name, Plot: p, Legend: lg, Caption: caption(set.used, notes...)}, nil
}

// roundsText says how many repeats the points have: "3 each", "3 to 5 per point".
func roundsText(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo) + " each"
	}
	return strconv.Itoa(lo) + " to " + strconv.Itoa(hi) + " per point"
}

// addRange draws the min-max range of the stats that have several repeats: a whisker at each
// and, with band, a translucent band in the line's colour between consecutive ones.
func addRange(p *plot.Plot, stats []stat, off float64, ty func(float64) float64, ls draw.LineStyle, band bool) error {
	type errs struct {
		plotter.XYs
		plotter.YErrors
	}
	var e errs
	for i, s := range stats {
		if s.n < 2 {
			continue
		}
		m := ty(s.med)
		e.XYs = append(e.XYs, plotter.XY{X: s.x + off, Y: m})
		e.YErrors = append(e.YErrors, struct{ Low, High float64 }{m - ty(s.lo), ty(s.hi) - m})
		if band && i+1 < len(stats) && stats[i+1].n > 1 {
			t := stats[i+1]
			band, err := plotter.NewPolygon(plotter.XYs{{X: s.x, Y: ty(s.lo)}, {X: t.x, Y: ty(t.lo)}, {X: t.x, Y: ty(t.hi)}, {X: s.x, Y: ty(s.hi)}})
			if err != nil {
				return err
			}
			r, g, b, _ := ls.Color.RGBA()
			band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x38}
			band.LineStyle.Width = 0
			p.Add(band)
		}
	}
	if len(e.XYs) == 0 {
		return nil
	}
	bars, err := plotter.NewYErrorBars(e)
	if err != nil {
		return err
	}
	bars.LineStyle = draw.LineStyle{Color: ls.Color, Width: vg.Points(1.2)}
	bars.CapWidth = vg.Points(5)
	p.Add(bars)
	return nil
}

// mostCommon is the class most of v are, the lightest of classOrder on a tie.
func mostCommon(v []string) string {
	best, n := "", 0
	for _, c := range classOrder {
		k := 0
		for _, x := range v {
			if x == c {
				k++
			}
		}
		if k > n {
			best, n = c, k
		}
	}
	return best
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
