package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// grid is the heatmap's data: columns are sizes, rows thresholds, at integer coordinates so
// that every cell has the same width whatever the sizes.
type grid struct {
	z    [][]float64 // [col][row], log10 of the median in µs, NaN where nothing was measured
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
		// The rounds of one repeated point (the same params in one run) share a cell.
		if o := at[c][r]; o != nil && (o.run != f.run || o.p.Round == 0 || f.p.Round == 0 || o.p.Params != f.p.Params) {
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
	for c := range medians {
		for r, v := range medians[c] {
			if len(v) > 0 {
				g.set(c, r, math.Log10(median(v)))
			}
		}
	}
	if few == len(sel) {
		return nil, fmt.Errorf("plots: %s: %w (no point has a median RTT)", name, ErrNoData)
	}

	zmin, zmax := g.Min(), g.Max()
	if zmax-zmin < 0.02 {
		// One value (or all alike): give the palette a range so the colour is defined.
		zmin, zmax = zmin-0.05, zmax+0.05
	}
	cm := moreland.SmoothBlueRed()
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
	for c := range sizes {
		for r := range thrs {
			f := at[c][r]
			var s string
			switch {
			case f == nil:
				s = "not run"
			case g.valid(c, r):
				s = trimFloat(math.Pow(10, g.Z(c, r))) + " µs"
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
	bar.Y.Label.Text = "median RTT (µs)"
	bar.Y.Label.TextStyle.Font.Size = 10
	bar.Y.Tick.Marker = expTicks(trimFloat)

	notes := []string{"Cells: median RTT, then the call/reply message class (S short, C chunked, L long); colour on a log scale."}
	if few > 0 {
		notes = append(notes, fmt.Sprintf("%d point(s) with too few samples for a median (need %d).", few, 2*results.MinTailSamples))
	}
	return &Chart{Name: name, Plot: p, Bar: bar, Caption: caption(sel, notes...)}, nil
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
