package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// maxSegmentLabels is how many points a timeline labels with their size across; up to
// maxUprightLabels it labels them upright (rotated), smaller; beyond that the labels would
// overlap.
const (
	maxSegmentLabels = 30
	maxUprightLabels = 120
	// maxLabelChars is how many characters of labels in all fit across the chart.
	maxLabelChars = 120
)

// Timeline charts a run's throughput over time from its points' Intervals: each interval is a
// step at its rate, each point a separate line (coloured by inline threshold like the other
// charts, and labelled with its size above it), and intervals that saw errors are marked.
// Time is measured from the start of the run's first point. The error wraps ErrNoData when
// no point has intervals.
func Timeline(run *results.Run, rate Rate) (*Chart, error) {
	if rate != RPCRate && rate != Gbps {
		return nil, fmt.Errorf("plots: unknown throughput rate %d", rate)
	}
	refs, err := collect([]*results.Run{run})
	if err != nil {
		return nil, err
	}
	var sel []ref
	for _, f := range refs {
		for _, iv := range f.p.Intervals {
			if iv.DurationNs > 0 {
				sel = append(sel, f)
				break
			}
		}
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("plots: timeline: %w (no point has intervals)", ErrNoData)
	}
	t0 := sel[0].p.Start
	for _, f := range sel[1:] {
		if f.p.Start.Before(t0) {
			t0 = f.p.Start
		}
	}
	// Seconds, or milliseconds for a run shorter than two seconds.
	var end int64
	for _, f := range sel {
		last := f.p.Intervals[len(f.p.Intervals)-1]
		end = max(end, f.p.Start.Sub(t0).Nanoseconds()+last.OffsetNs+last.DurationNs)
	}
	unit, unitName := 1e9, "s"
	if end < 2e9 {
		unit, unitName = 1e6, "ms"
	}

	ss := group(sel, []*results.Run{run})
	var lg Legend
	st := newStyler()
	name, ylabel, label := "timeline-rpcs", "throughput (RPC/s)", siLabel
	if rate == Gbps {
		name, ylabel, label = "timeline-gbps", "payload throughput (Gb/s, call + reply)", trimFloat
	}
	p := newPlot("Throughput over time", "time since the first point started ("+unitName+")", ylabel)
	var errs plotter.XYs
	var tags plotter.XYLabels
	hi := 0.0
	seen := map[seriesKey]bool{}
	classSeen := map[string]bool{}
	for _, s := range ss {
		for _, f := range s.refs {
			base := f.p.Start.Sub(t0).Nanoseconds()
			var xys plotter.XYs
			top := 0.0
			for _, iv := range f.p.Intervals {
				if iv.DurationNs <= 0 {
					continue
				}
				v := float64(iv.RPCs) / (float64(iv.DurationNs) / 1e9)
				if rate == Gbps {
					v = float64(iv.PayloadBytes) * 8 / float64(iv.DurationNs)
				}
				a := float64(base+iv.OffsetNs) / unit
				b := float64(base+iv.OffsetNs+iv.DurationNs) / unit
				xys = append(xys, plotter.XY{X: a, Y: v}, plotter.XY{X: b, Y: v})
				if iv.Errors > 0 {
					errs = append(errs, plotter.XY{X: (a + b) / 2, Y: v})
				}
				top = math.Max(top, v)
			}
			if len(xys) == 0 {
				continue
			}
			hi = math.Max(hi, top)
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("plots: timeline: %s: %w", f.name(), err)
			}
			l.LineStyle, _ = st.style(s.key, 0)
			p.Add(l)
			if !seen[s.key] {
				seen[s.key] = true
				lg.Add(s.label, l)
			}
			if rate == RPCRate {
				if err := classLines(p, &lg, classSeen, f.p, base, unit); err != nil {
					return nil, fmt.Errorf("plots: timeline: %s: %w", f.name(), err)
				}
			}
			tags.XYs = append(tags.XYs, plotter.XY{X: (xys[0].X + xys[len(xys)-1].X) / 2, Y: top})
			tag := bytesLabel(size(f.p.Params))
			if noSize(f.p.Params) {
				tag = sizeName(f.p.Params) // a mix, or sizes drawn per RPC: no one size
			}
			tags.Labels = append(tags.Labels, tag)
		}
	}
	if len(errs) > 0 {
		sc, err := plotter.NewScatter(errs)
		if err != nil {
			return nil, fmt.Errorf("plots: timeline: %w", err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: color2(0xd0, 0x10, 0x10), Radius: vg.Points(4), Shape: draw.CrossGlyph{}}
		p.Add(sc)
		lg.Add("interval with errors", sc)
	}
	// Upright when many, or long (a mix's name): across, they would run into each other.
	chars := 0
	for _, l := range tags.Labels {
		chars += len(l)
	}
	upright := len(tags.Labels) > maxSegmentLabels || chars > maxLabelChars
	if len(tags.Labels) <= maxUprightLabels {
		tl, err := plotter.NewLabels(tags)
		if err != nil {
			return nil, fmt.Errorf("plots: timeline: %w", err)
		}
		for i := range tl.TextStyle {
			tl.TextStyle[i] = text.Style{Color: color2(0x40, 0x40, 0x40), Font: font.From(plot.DefaultFont, 7.5),
				XAlign: draw.XCenter, YAlign: draw.YBottom, Handler: plot.DefaultTextHandler}
			if upright {
				tl.TextStyle[i].Font.Size = 6.5
				tl.TextStyle[i].Rotation = math.Pi / 2
				tl.TextStyle[i].XAlign, tl.TextStyle[i].YAlign = draw.XLeft, draw.YCenter
			}
		}
		tl.Offset = vg.Point{Y: 2}
		p.Add(tl)
	}
	p.X.Min = 0
	p.X.Tick.Marker = linearTicks(trimFloat)
	setValueAxis(&p.Y, 0, hi, label)
	room := 1.12 // for the size labels
	if upright {
		room = 1.25 + 0.012*float64(longest(tags.Labels))
	}
	p.Y.Max = math.Max(p.Y.Max, hi*room)
	note := "Each line is one point of the run, drawn as steps at its interval rates"
	if len(tags.Labels) <= maxUprightLabels {
		note += ", labelled with its message size (a mix: its name)."
	} else {
		note += fmt.Sprintf("; %d points, too many to label.", len(tags.Labels))
	}
	if len(classSeen) > 0 {
		note += " Dashed lines: the RPC/s of each message class of a point that used several."
	}
	notes := []string{note}
	return &Chart{Name: name, Plot: p, Legend: lg, Caption: caption(sel, notes...)}, nil
}

// longest is the length of the longest of labels.
func longest(labels []string) int {
	n := 0
	for _, l := range labels {
		n = max(n, len(l))
	}
	return n
}

func color2(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// timelineClasses are the message classes a point's intervals may break down into, in the
// order their lines are drawn.
var timelineClasses = []string{"short", "chunked", "long"}

// classColours tell the classes apart in a timeline; a class's line is thinner and dashed,
// under the point's own.
var classColours = map[string]color.Color{
	"short":   color2(0x2a, 0x9d, 0x3f),
	"chunked": color2(0xe0, 0x8a, 0x10),
	"long":    color2(0x8a, 0x2b, 0xc0),
}

// classLines adds to p one step line per message class of pt's intervals when they hold more
// than one class (a mix, or a size at a class boundary): each class's RPC/s over time.
func classLines(p *plot.Plot, lg *Legend, seen map[string]bool, pt *results.Point, base int64, unit float64) error {
	used := 0
	for _, c := range timelineClasses {
		for _, iv := range pt.Intervals {
			if iv.Classes[c] > 0 {
				used++
				break
			}
		}
	}
	if used < 2 {
		return nil
	}
	for _, c := range timelineClasses {
		var xys plotter.XYs
		some := false
		for _, iv := range pt.Intervals {
			if iv.DurationNs <= 0 {
				continue
			}
			n := iv.Classes[c]
			some = some || n > 0
			v := float64(n) / (float64(iv.DurationNs) / 1e9)
			a := float64(base+iv.OffsetNs) / unit
			b := float64(base+iv.OffsetNs+iv.DurationNs) / unit
			xys = append(xys, plotter.XY{X: a, Y: v}, plotter.XY{X: b, Y: v})
		}
		if !some {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: classColours[c], Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
		p.Add(l)
		if !seen[c] {
			seen[c] = true
			lg.Add(c+" RPCs", l)
		}
	}
	return nil
}
