package plots

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The size of every chart, and the resolution of its PNG: 300 dpi, print resolution at 9 × 6
// inches (2700 × 1800 pixels).
const (
	Width  = 9 * vg.Inch
	Height = 6 * vg.Inch
	DPI    = 300
)

// Formats are the file formats Chart.Encode writes, the default of Render.
var Formats = []string{"png", "svg"}

// Chart is one figure: a plot, its legend or colour bar in a column to the right of the data
// (never over it) and a caption under everything.
type Chart struct {
	// Name is the file name Render gives the chart, without extension ("latency-p99").
	Name string
	// Plot holds the axes, the data and the title.
	Plot *plot.Plot
	// Legend names the lines, drawn right of the plot, or under it in columns when the
	// labels are long; empty for a chart without lines. The plot's own Plot.Legend is left
	// empty so that nothing covers the data.
	Legend Legend
	// Bar is the heatmap's colour bar, drawn right of the plot; nil for other charts.
	Bar *plot.Plot
	// Caption are the lines under the chart: provider, device, negotiated parameters, workload
	// and notes on what was left out. Long lines are wrapped to the chart's width.
	Caption []string
}

const pad = vg.Length(8) // points between the parts of a chart

func captionStyle() text.Style {
	return text.Style{
		Color:   color.Gray{Y: 0x30},
		Font:    font.From(plot.DefaultFont, 8.5),
		XAlign:  draw.XLeft,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// Draw draws the chart onto dc.
func (c *Chart) Draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc = draw.Crop(dc, pad, -pad, pad, -pad)

	sty := captionStyle()
	lines := wrap(c.Caption, sty, dc.Max.X-dc.Min.X)
	lh := sty.FontExtents().Height
	if len(lines) > 0 {
		y := dc.Min.Y + lh*vg.Length(len(lines))
		for _, l := range lines {
			dc.FillText(sty, vg.Point{X: dc.Min.X, Y: y}, l)
			y -= lh
		}
		dc = draw.Crop(dc, 0, 0, lh*vg.Length(len(lines))+pad, 0)
	}
	if c.Plot == nil {
		return
	}

	var right vg.Length
	w, h := dc.Max.X-dc.Min.X, dc.Max.Y-dc.Min.Y
	// A legend taller than most of the chart would run into the caption: shrink its text.
	size := legendFont
	lg := c.Legend.build(size)
	for lg.Rectangle(dc).Size().Y > 0.6*h && size > 6 {
		size -= 0.5
		lg = c.Legend.build(size)
	}
	lr := lg.Rectangle(dc).Size()
	switch {
	case c.Bar != nil:
		right = 1.1 * vg.Inch
	case lr.X > 0 && lr.X+2*pad <= w/4:
		right = lr.X + 2*pad
	case lr.X > 0:
		// A wide legend would squeeze the data: put it under the plot, in as many columns
		// (filled top to bottom, so a run's lines stay together) as fit, up to three.
		cols := min(3, max(1, int(w/(lr.X+3*pad))), (len(c.Legend)+2)/3)
		cols = max(cols, 1)
		rows := (len(c.Legend) + cols - 1) / cols
		parts := make([]plot.Legend, 0, cols)
		var height vg.Length
		for i := 0; i < len(c.Legend); i += rows {
			part := c.Legend[i:min(i+rows, len(c.Legend))].build(size)
			height = max(height, part.Rectangle(dc).Size().Y)
			parts = append(parts, part)
		}
		pc := draw.Crop(dc, 0, 0, height+pad, 0)
		c.Plot.Draw(pc)
		below := draw.Crop(dc, 0, 0, 0, -(h - height))
		below.Min.X = c.Plot.DataCanvas(pc).Min.X
		for _, part := range parts {
			part.Draw(below)
			below.Min.X += part.Rectangle(below).Size().X + 3*pad
		}
		return
	}
	pc := draw.Crop(dc, 0, -right, 0, 0)
	c.Plot.Draw(pc)
	if right == 0 {
		return
	}
	data := c.Plot.DataCanvas(pc)
	col := draw.Crop(dc, w-right+pad, 0, 0, 0)
	col.Min.Y, col.Max.Y = data.Min.Y, data.Max.Y
	if c.Bar != nil {
		c.Bar.Draw(col)
		return
	}
	lg.Draw(col)
}

// Legend names the lines of a chart.
type Legend []Entry

// Entry is one line of a legend: its label and the thumbnails drawn before it (the line's and
// glyph's styles).
type Entry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Add appends an entry.
func (l *Legend) Add(label string, thumbs ...plot.Thumbnailer) {
	*l = append(*l, Entry{Label: label, Thumbs: thumbs})
}

const legendFont = font.Length(9.5)

// build is l as a gonum legend with text of the given size, anchored top left.
func (l Legend) build(size font.Length) plot.Legend {
	lg := plot.NewLegend()
	lg.TextStyle.Font.Size = size
	lg.ThumbnailWidth = 0.45 * vg.Inch
	lg.Padding = 2
	if size < legendFont {
		lg.Padding = 0
	}
	lg.Top, lg.Left = true, true
	for _, e := range l {
		lg.Add(e.Label, e.Thumbs...)
	}
	return lg
}

// wrap breaks lines at spaces so that none is wider than w.
func wrap(lines []string, sty text.Style, w vg.Length) []string {
	var out []string
	for _, l := range lines {
		words := strings.Split(l, " ")
		cur := ""
		for _, word := range words {
			next := word
			if cur != "" {
				next = cur + " " + word
			}
			if cur != "" && sty.Width(next) > w {
				out = append(out, cur)
				cur = "    " + word
				continue
			}
			cur = next
		}
		out = append(out, cur)
	}
	return out
}

// Encode writes the chart in format "png" or "svg" to w. Both are deterministic for a given
// chart and gonum version; the SVG references its fonts by name (Liberation) rather than
// embedding them.
func (c *Chart) Encode(w io.Writer, format string) error {
	var cv interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch strings.ToLower(format) {
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))
		cv = struct {
			vg.CanvasSizer
			io.WriterTo
		}{img, vgimg.PngCanvas{Canvas: img}}
	case "svg":
		cv = vgsvg.New(Width, Height)
	default:
		return fmt.Errorf("plots: unknown format %q (want png or svg)", format)
	}
	c.Draw(draw.New(cv))
	if _, err := cv.WriteTo(w); err != nil {
		return fmt.Errorf("plots: write %s %s: %w", c.Name, format, err)
	}
	return nil
}

// Save writes the chart to path in the format its extension names.
func (c *Chart) Save(path string) (err error) {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("plots: %w", cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	return c.Encode(f, format)
}

// newPlot is a plot with our common style: titled, labelled axes, a light grid.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 13
	p.Title.Padding = 6
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = 11
	p.Y.Label.TextStyle.Font.Size = 11
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xe0}
	g.Horizontal.Color = color.Gray{Y: 0xe0}
	p.Add(g)
	return p
}

// styler gives the lines of a chart their styles: the same colour and glyph to the same key
// (a threshold, a size) whatever the run, and a dash pattern per run, so that two runs' lines
// of one threshold read as a pair. Colours cycle through plotutil's seven; past seven keys the
// dash pattern changes too, so that lines stay distinct in print.
type styler struct {
	colour map[any]int
	run    map[int]int
	// used are the colour and dash pattern pairs given out, by line, so that no two lines
	// look alike however keys and runs combine.
	used map[[2]int]bool
	line map[styleKey][2]int
}

type styleKey struct {
	key any
	run int
}

func newStyler() *styler {
	return &styler{colour: map[any]int{}, run: map[int]int{}, used: map[[2]int]bool{}, line: map[styleKey][2]int{}}
}

// style returns the styles of the line of key in run (key must be comparable).
func (s *styler) style(key any, run int) (draw.LineStyle, draw.GlyphStyle) {
	c, ok := s.colour[key]
	if !ok {
		c = len(s.colour)
		s.colour[key] = c
	}
	r, ok := s.run[run]
	if !ok {
		r = len(s.run)
		s.run[run] = r
	}
	cd, ok := s.line[styleKey{key, run}]
	if !ok {
		cd = [2]int{c % 7, r + c/7}
		for s.used[cd] {
			cd[1]++
		}
		s.used[cd] = true
		s.line[styleKey{key, run}] = cd
	}
	ls := draw.LineStyle{Color: plotutil.Color(cd[0]), Width: vg.Points(1.6), Dashes: plotutil.Dashes(cd[1])}
	gs := draw.GlyphStyle{Color: plotutil.Color(cd[0]), Radius: vg.Points(4), Shape: plotutil.Shape(c)}
	return ls, gs
}
