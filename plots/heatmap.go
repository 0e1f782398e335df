package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// grid is the heatmap's data: columns are sizes, rows thresholds, at integer coordinates so
// that every cell has the same width whatever the sizes.
type grid struct {
	z    [][]float64 // [col][row], log2 of the median's ratio to its column's best, NaN where nothing was measured
	cols int
	rows int
}

func (g *grid) Dims() (c, r int)        { return g.cols, g.rows }
func (g *grid) Z(c, r int) float64      { return g.z[c][r] }
func (g *grid) X(c int) float64         { return float64(c) }
func (g *grid) Y(r int) float64         { return float64(r) }
func (g *grid) Min() (v float64)        { return g.extreme(math.Min, math.Inf(1)) }
func (g *grid) Max() (v float64)        { return g.extreme(math.Max, math.Inf(-1)) }
func (g *grid) valid(c, r int) bool     { return !math.IsNaN(g.z[c][r]) }
func (g *grid) set(c, r int, v float64) { g.z[c][r] = v }

func (g *grid) extreme(f func(a, b float64) float64, v float64) float64 {
	for _, col := range g.z {
		for _, z := range col {
			if !math.IsNaN(z) {
				v = f(v, z)
			}
		}
	}
	return v
}

var _ plotter.GridXYZ = (*grid)(nil)

// classLetter abbreviates a message class for the heatmap cells.
var classLetter = map[string]string{"short": "S", "chunked": "C", "long": "L"}

// classes writes the call and reply classes of a point as "S/L": each side's class by its
// counts, several joined by "+" when the point mixed them.
func classes(p *results.Point) string {
	var call, reply []string
	for _, name := range []string{"short", "chunked", "long"} {
		for _, c := range p.Classes {
			if c.Class != name {
				continue
			}
			if c.Calls > 0 {
				call = append(call, classLetter[name])
			}
			if c.Replies > 0 {
				reply = append(reply, classLetter[name])
			}
		}
	}
	if len(call) == 0 && len(reply) == 0 {
		return ""
	}
	return orDash(strings.Join(call, "+")) + "/" + orDash(strings.Join(reply, "+"))
}

// Heatmap charts the median RTT of every point keep accepts (every point when keep is nil) on a
// grid of inline threshold (rows) by message size (columns), coloured on a log scale with
// Moreland's smooth blue-red map and a colour bar. Each cell is labelled with the median in µs
// and the message classes the point's calls and replies used (S short, C chunked, L long, as
// call/reply), so the cells where the threshold pushes a size into chunks stand out. Two
// selected points in the same cell (different procedures, depths or runs) are an error: select
// them apart with keep.
func Heatmap(runs []*results.Run, keep func(results.Params) bool) (*Chart, error) {
	refs, err := collect(runs)
	if err != nil {
		return nil, err
	}
	var sel []ref
	for _, f := range refs {
		if keep == nil || keep(f.p.Params) {
			sel = append(sel, f)
		}
	}
	return heatmapChart(sel, "heatmap", "")
}

// sameUnlessOffer says whether a and b are one point but for the threshold offered.
func sameUnlessOffer(a, b results.Params) bool {
	a.OfferedInlineThreshold, b.OfferedInlineThreshold = 0, 0
	return a == b
}

// heatmapChart draws the heatmap of sel, its title followed by suffix.
func heatmapChart(sel []ref, name, suffix string) (*Chart, error) {
	var sizes, thrs []int
	for _, f := range sel {
		if s := size(f.p.Params); !slices.Contains(sizes, s) {
			sizes = append(sizes, s)
		}
		if t := f.p.Params.InlineThreshold; !slices.Contains(thrs, t) {
			thrs = append(thrs, t)
		}
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("plots: %s: %w (no point selected)", name, ErrNoData)
	}
	slices.Sort(sizes)
	slices.Sort(thrs)
	g := &grid{cols: len(sizes), rows: len(thrs), z: make([][]float64, len(sizes))}
	for c := range g.z {
		g.z[c] = make([]float64, len(thrs))
		for r := range g.z[c] {
			g.z[c][r] = math.NaN()
		}
	}
	at := make([][]*ref, len(sizes))
	medians := make([][][]float64, len(sizes)) // the cell's median RTTs, µs: one per round
	for c := range at {
		at[c] = make([]*ref, len(thrs))
		medians[c] = make([][]float64, len(thrs))
	}
	few := 0
	for i := range sel {
		f := &sel[i]
		c, _ := slices.BinarySearch(sizes, size(f.p.Params))
		r, _ := slices.BinarySearch(thrs, f.p.Params.InlineThreshold)
		// The rounds of one repeated point (the same params in one run, or in repeated runs of
		// one setup) share a cell, and so do points whose offers a peer capped to the same
		// threshold: their connections were the same.
		if o := at[c][r]; o != nil && (o.group != f.group || !sameUnlessOffer(o.p.Params, f.p.Params) ||
			o.run == f.run && o.p.Params == f.p.Params && (o.p.Round == 0 || f.p.Round == 0)) {
			return nil, fmt.Errorf("plots: %s: %s and %s fall in the same cell (inline %s, size %s): select one of them",
				name, o.name(), f.name(), bytesLabel(thrs[r]), bytesLabel(sizes[c]))
		}
		at[c][r] = f
		if m := f.p.RTT.P50; m != nil && *m > 0 {
			medians[c][r] = append(medians[c][r], float64(*m)/1e3)
		} else {
			few++
		}
	}
	cells := heatCells(medians, at)
	for c := range cells {
		for r, cs := range cells[c] {
			if cs.n > 0 {
				g.set(c, r, math.Min(math.Log2(cs.ratio), math.Log2(maxRatio)))
			}
		}
	}
	if few == len(sel) {
		return nil, fmt.Errorf("plots: %s: %w (no point has a median RTT)", name, ErrNoData)
	}

	zmin, zmax := 0.0, math.Log2(maxRatio)
	cm := ratioColours()
	cm.SetMin(zmin)
	cm.SetMax(zmax)
	hm := plotter.NewHeatMap(g, cm.Palette(255))
	hm.Min, hm.Max = zmin, zmax
	hm.NaN = color.Gray{Y: 0xe8}

	p := newPlot("Median RTT by inline threshold and message size"+suffix, sizeAxisLabel(shapesOf(sel)), "inline threshold in effect (bytes)")
	p.Add(hm)
	var xt, yt plot.ConstantTicks
	for c, s := range sizes {
		xt = append(xt, plot.Tick{Value: float64(c), Label: bytesLabel(s)})
	}
	for r, t := range thrs {
		yt = append(yt, plot.Tick{Value: float64(r), Label: bytesLabel(t)})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	p.X.Min, p.X.Max = -0.5, float64(len(sizes))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(thrs))-0.5

	// Cell labels: text size shrinks with the number of columns so that "123 µs" fits.
	fs := font.Length(10)
	if len(sizes) > 8 {
		fs = font.Length(max(6, 10-0.5*float64(len(sizes)-8)))
	}
	var lab plotter.XYLabels
	var styles []text.Style
	judged, unjudged, rounds := 0, 0, map[int]bool{}
	for c := range sizes {
		for r := range thrs {
			f := at[c][r]
			cs := cells[c][r]
			var s string
			switch {
			case f == nil:
				s = "not run"
			case g.valid(c, r):
				s = trimFloat(cs.med) + " µs\n"
				rounds[cs.n] = true
				switch {
				case cs.best:
					s += "best"
				case cs.sig == sigNone:
					s += "≈ ×" + ratioText(cs.ratio)
				default:
					s += "×" + ratioText(cs.ratio)
				}
				switch {
				case cs.best:
				case cs.sig == sigUnknown:
					unjudged++
				default:
					judged++
				}
			default:
				s = "too few"
			}
			if f != nil {
				if cl := classes(f.p); cl != "" {
					s += "\n" + cl
				}
			}
			lab.XYs = append(lab.XYs, plotter.XY{X: float64(c), Y: float64(r)})
			lab.Labels = append(lab.Labels, s)
			ink := color.Color(color.Black)
			if g.valid(c, r) {
				if bg, err := cm.At(g.Z(c, r)); err == nil && dark(bg) {
					ink = color.White
				}
			}
			styles = append(styles, text.Style{
				Color: ink, Font: font.From(plot.DefaultFont, fs),
				XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler,
			})
		}
	}
	labels, err := plotter.NewLabels(lab)
	if err != nil {
		return nil, fmt.Errorf("plots: heatmap: %w", err)
	}
	labels.TextStyle = styles
	p.Add(labels)

	bar := plot.New()
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	bar.HideX()
	bar.X.Padding, bar.Y.Padding = 0, 0
	bar.Y.Label.Text = "median RTT / best of the size"
	bar.Y.Label.TextStyle.Font.Size = 10
	bar.Y.Tick.Marker = ratioTicks()

	var ns []int
	for n := range rounds {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	notes := []string{"Cells: median RTT over the point's " + roundsOf(ns) + ", its ratio to the best threshold at that size (colour, on a fixed log scale from 1× to " +
		trimFloat(maxRatio) + "× and beyond), then the call/reply message class (S short, C chunked, L long)."}
	if judged > 0 {
		notes = append(notes, "≈: not significantly slower than the best, by the rule of report --format thresholds on the same files "+
			"(Hodges-Lehmann ratio over processes, Mann-Whitney interval, family-wise error 0.05 over its comparisons).")
	}
	if unjudged > 0 {
		notes = append(notes, fmt.Sprintf("%d cell(s) not judged against the best: too few processes to tell (rounds in fresh processes: --repeat).", unjudged))
	}
	if few > 0 {
		notes = append(notes, fmt.Sprintf("%d point(s) with too few samples for a median (need %d).", few, 2*results.MinTailSamples))
	}
	return &Chart{Name: name, Plot: p, Bar: bar, Caption: caption(sel, notes...)}, nil
}

// maxRatio is the top of the heatmap's fixed colour scale: a cell this much slower than the
// best of its size, or more, has the darkest colour.
const maxRatio = 4

// cellStat is a heatmap cell's median RTTs over its rounds (µs).
type cellStat struct {
	med, lo, hi float64
	ratio       float64 // med over the best med of the column
	n           int
	best        bool
	sig         significance
}

type significance int

const (
	sigUnknown significance = iota // too few processes to tell
	sigNone                        // not significantly worse than the best
	sigWorse                       // significantly worse
)

// heatCells takes each cell's median, min and max over its rounds' median RTTs ([col][row]),
// its ratio to the best (lowest) median of its column, the thresholds at one size, and
// whether it is significantly slower than that best by the rule of report --format
// thresholds (results.BestThresholds on the same runs, its p50 choices): one significance
// rule for the chart and the table. at[c][r] is the cell's point (nil: none).
func heatCells(medians [][][]float64, at [][]*ref) [][]cellStat {
	var runs []*results.Run
	for c := range at {
		for _, f := range at[c] {
			if f != nil && !slices.Contains(runs, f.r) {
				runs = append(runs, f.r)
			}
		}
	}
	choices := map[string]*results.ThresholdChoice{}
	all := results.BestThresholds(runs, 0)
	for i := range all {
		if all[i].Metric == results.MetricP50 {
			choices[all[i].Params.Key()] = &all[i]
		}
	}
	cells := make([][]cellStat, len(medians))
	for c := range medians {
		cells[c] = make([]cellStat, len(medians[c]))
		best := -1
		for r, v := range medians[c] {
			if len(v) == 0 {
				continue
			}
			cells[c][r] = cellStat{med: median(v), lo: slices.Min(v), hi: slices.Max(v), n: len(v)}
			if best < 0 || cells[c][r].med < cells[c][best].med {
				best = r
			}
		}
		for r := range cells[c] {
			if cs := &cells[c][r]; cs.n > 0 {
				cs.best = r == best
				cs.ratio = cs.med / cells[c][best].med
				cs.sig = cellSignificance(choices, at[c][r].p.Params, cs.best)
			}
		}
	}
	return cells
}

// cellSignificance is what the p50 choice of report --format thresholds says of the
// threshold of params against the best of its point: worse when its interval lies above no
// change, not significant when it reaches it, cannot tell without an interval.
func cellSignificance(choices map[string]*results.ThresholdChoice, params results.Params, best bool) significance {
	gp := params
	gp.InlineThreshold = 0
	ch := choices[gp.Key()]
	if ch == nil {
		return sigUnknown
	}
	for i, cand := range ch.Candidates {
		if cand.Threshold != params.InlineThreshold {
			continue
		}
		if i == 0 {
			if best || ch.Bounded {
				return sigNone
			}
			return sigUnknown
		}
		switch e := ch.Versus[i-1]; {
		case !e.Bounded():
			return sigUnknown
		case e.Lo > 1:
			return sigWorse
		}
		return sigNone
	}
	return sigUnknown
}

// ratioText writes a ratio to the best: 1.08, 2.5, 12.
func ratioText(r float64) string {
	if r < 10 {
		return strconv.FormatFloat(r, 'f', 2, 64)
	}
	return trimFloat(r)
}

func roundsOf(ns []int) string {
	switch {
	case len(ns) == 0:
		return "rounds"
	case ns[len(ns)-1] == 1:
		return "one round"
	case len(ns) == 1:
		return strconv.Itoa(ns[0]) + " rounds"
	}
	return strconv.Itoa(ns[0]) + " to " + strconv.Itoa(ns[len(ns)-1]) + " rounds"
}

// ratioColours is the heatmap's sequential scale, light at the best and dark red at maxRatio.
func ratioColours() palette.ColorMap {
	cm, err := moreland.NewLuminance([]color.Color{
		color.NRGBA{R: 0x80, G: 0x00, B: 0x26, A: 0xff},
		color.NRGBA{R: 0xe3, G: 0x1a, B: 0x1c, A: 0xff},
		color.NRGBA{R: 0xfd, G: 0x8d, B: 0x3c, A: 0xff},
		color.NRGBA{R: 0xfe, G: 0xd9, B: 0x76, A: 0xff},
		color.NRGBA{R: 0xff, G: 0xff, B: 0xe0, A: 0xff},
	})
	if err != nil {
		panic(err) // constant controls of rising luminance
	}
	return palette.Reverse(cm)
}

// ratioTicks label the colour bar (log2 of the ratio) as ratios.
func ratioTicks() plot.ConstantTicks {
	var ts plot.ConstantTicks
	for _, r := range []float64{1, 1.1, 1.25, 1.5, 2, 3, 4} {
		l := trimFloat(r) + "×"
		if r == maxRatio {
			l = "≥" + l
		}
		ts = append(ts, plot.Tick{Value: math.Log2(r), Label: l})
	}
	return ts
}

func shapesOf(refs []ref) map[int]bool {
	m := map[int]bool{}
	for _, f := range refs {
		k, _ := shape(f.p.Params)
		m[k] = true
	}
	return m
}

// dark reports whether white text reads better than black on c.
func dark(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	y := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 0xffff
	return y < 0.5
}

// median is the median of v (not empty), which it sorts.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
