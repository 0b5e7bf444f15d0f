//go:build !nocharts

package reports

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tlsbench/tlsbench/bench/analysis"
)

// HasCharts reports whether this build draws charts (gonum/plot); a build
// with the tag nocharts, the lean agent's, does not (charts_none.go).
const HasCharts = true

// chart is a figure of a document: a gonum plot, made when it is rendered,
// as inline SVG (HTML) or as a PNG file (Markdown). name is unique in its
// document and safe in a file name.
type chart struct {
	name, title string
	w, h        vg.Length
	plot        func() (*plot.Plot, error)
}

// Sizes of the charts.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 3.2 * vg.Inch
)

// sans is the charts' typeface. Liberation Sans is metric-compatible with
// Arial and Helvetica, the fallbacks the SVG names, so text laid out with
// its metrics fits in a browser that has none of them embedded.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// svgFamily matches the font families vgsvg writes.
var svgFamily = regexp.MustCompile(`font-family:([^;"]+)`)

// svgSize matches the root element's fixed size, dropped so that the
// chart scales with the page (its viewBox stays).
var svgSize = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)

// svg renders the chart as an SVG element to inline in HTML: no XML
// prologue, no fixed size (it scales down with the page, never above its
// own size), no font file (the text names local fonts).
func (c *chart) svg() (string, error) {
	b, err := c.render(vgsvg.New(c.w, c.h))
	if err != nil {
		return "", err
	}
	s := string(b)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	s = svgSize.ReplaceAllLiteralString(s, fmt.Sprintf(`<svg role="img" aria-label="%s" style="max-width:%.0fpx"`,
		html.EscapeString(c.title), c.w.Points()*96/72))
	s = svgFamily.ReplaceAllString(s, `font-family:'$1',Arial,Helvetica,sans-serif`)
	return s, nil
}

// png renders the chart as a PNG image at 144 dpi.
func (c *chart) png() ([]byte, error) {
	return c.render(vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(c.w, c.h), vgimg.UseDPI(144))})
}

// render draws the chart on canvas and returns what the canvas writes.
func (c *chart) render(canvas vg.CanvasWriterTo) ([]byte, error) {
	if _, _, err := c.draw(draw.New(canvas)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	_, err := canvas.WriteTo(&buf)
	return buf.Bytes(), err
}

// legendGap is the space between a chart's plot and its legend;
// chartMargin the space around the whole chart.
const (
	legendGap   = 10 // points
	chartMargin = 4  // points
)

// draw makes the chart's plot and draws it on dc, its legend (if it has
// one) in a column of its own on the right, below the title: outside the
// data, whatever the data. It returns the rectangles of the data area and
// of the legend (empty when there is none), in dc's coordinates.
func (c *chart) draw(dc draw.Canvas) (data, legend vg.Rectangle, err error) {
	p, err := c.plot()
	if err != nil {
		return data, legend, fmt.Errorf("chart %s: %w", c.name, err)
	}
	leg := p.Legend
	p.Legend = plot.NewLegend()
	// A margin all round: nothing drawn touches the image's edge.
	m := vg.Points(chartMargin)
	dc = draw.Crop(dc, m, -m, m, -m)
	pc := dc
	if w := leg.Rectangle(dc).Size().X; w > 0 {
		gap := vg.Points(legendGap)
		pc = draw.Crop(dc, 0, -(w + gap), 0, 0)
		top := vg.Length(0)
		if p.Title.Text != "" {
			top = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
		}
		lc := draw.Crop(dc, dc.Size().X-w, 0, 0, -top)
		leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
		leg.Padding = vg.Points(2)
		leg.Draw(lc)
		legend = leg.Rectangle(lc)
	}
	p.Draw(pc)
	return p.DataCanvas(pc).Rectangle, legend, nil
}

// newPlot returns a plot with the charts' typeface, axis labels and grid.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 11)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	p.Legend.TextStyle.Font = font.From(sans, 9)

	p.Add(plotter.NewGrid())
	return p
}

// plainTicks are gonum's default ticks, labelled without trailing zeros
// ("500", not "500.00").
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			v, _ := strconv.ParseFloat(strconv.FormatFloat(ts[i].Value, 'g', 10, 64), 64)
			ts[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ts
}

// barChart is a horizontal bar chart: one group of bars per category (top
// to bottom), one bar per series in each group, side by side, each
// labelled with its value formatted by format (none when it is 0).
func barChart(name, title, unit string, cats, series []string, vals [][]float64, format func(float64) string) *chart {
	const bar = 12 // points
	// As high as its bars: a chart of one category is a strip.
	h := vg.Points(float64(max(64+len(cats)*(len(series)*bar+14), 96)))
	return &chart{name: name, title: title, w: chartWidth, h: h, plot: func() (*plot.Plot, error) {
		p := newPlot(title, unit, "")
		n := len(series)
		top := 0.0
		// Categories run bottom to top; the first is drawn on top.
		rows := len(cats)
		for j, s := range series {
			vs := make(plotter.Values, rows)
			var labels plotter.XYLabels
			for i := range cats {
				y := len(cats) - 1 - i
				v := vals[j][i]
				vs[y] = v
				top = math.Max(top, v)
				if v > 0 {
					labels.XYs = append(labels.XYs, plotter.XY{X: v, Y: float64(y)})
					labels.Labels = append(labels.Labels, format(v))
				}
			}
			b, err := plotter.NewBarChart(vs, vg.Points(bar))
			if err != nil {
				return nil, err
			}
			b.Horizontal = true
			b.Offset = vg.Points(bar * (float64(n-1)/2 - float64(j)))
			b.Color = plotutil.Color(j)
			b.LineStyle.Width = 0
			p.Add(b)
			if n > 1 {
				p.Legend.Add(s, b)
			}
			if len(labels.XYs) > 0 {
				l, err := plotter.NewLabels(labels)
				if err != nil {
					return nil, err
				}
				for k := range l.TextStyle {
					l.TextStyle[k].Font = font.From(sans, 8)
					l.TextStyle[k].XAlign, l.TextStyle[k].YAlign = draw.XLeft, draw.YCenter
				}
				l.Offset = vg.Point{X: vg.Points(3), Y: b.Offset}
				p.Add(l)
			}
		}
		names := slices.Clone(cats)
		slices.Reverse(names)
		p.NominalY(names...)
		p.X.Min, p.X.Max = 0, top*1.15
		p.X.Padding = 0
		return p, nil
	}}
}

// exploreChart draws an exploratory phase: level → metric, the rejected
// probes crossed out, the chosen level ringed.
func exploreChart(name string, s *section) *chart {
	title := fmt.Sprintf("%s %s %s: exploratory phase", s.DUT, s.name(), s.Profile)
	return &chart{name: name, title: title, w: chartWidth, h: chartHeight, plot: func() (*plot.Plot, error) {
		p := newPlot(title, "load level (concurrent connections, log scale)", s.Unit)
		var all, rejected, chosen plotter.XYs
		var ticks []plot.Tick
		for _, pr := range s.Exploration {
			xy := plotter.XY{X: float64(pr.Level), Y: pr.Value}
			all = append(all, xy)
			if !pr.Accepted {
				rejected = append(rejected, xy)
			}
			if pr.Level == s.Level {
				chosen = append(chosen, xy)
			}
			ticks = append(ticks, plot.Tick{Value: xy.X, Label: fmt.Sprint(pr.Level)})
		}
		line, points, err := plotter.NewLinePoints(all)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = plotutil.Color(0), plotutil.Color(0)
		p.Add(line, points)
		p.Legend.Add("probe", line, points)
		for _, m := range []struct {
			xys    plotter.XYs
			shape  draw.GlyphDrawer
			radius float64
			colour int
			name   string
		}{
			{rejected, draw.CrossGlyph{}, 5, 1, "rejected"},
			{chosen, draw.RingGlyph{}, 6, 2, fmt.Sprintf("chosen level %d", s.Level)},
		} {
			if len(m.xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(m.xys)
			if err != nil {
				return nil, err
			}
			sc.Shape, sc.Radius, sc.Color = m.shape, vg.Points(m.radius), plotutil.Color(m.colour)
			p.Add(sc)
			p.Legend.Add(m.name, sc)
		}
		if len(all) > 1 {
			p.X.Scale = plot.LogScale{}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Min = 0
		return p, nil
	}}
}

// seriesChart draws a run's per-second values, the steady window marked.
func seriesChart(name, title, unit string, ch *chosen) *chart {
	return &chart{name: name, title: title, w: chartWidth, h: chartHeight, plot: func() (*plot.Plot, error) {
		y := "transactions completed per second"
		if unit == "Gbps" {
			y = "Gbps (payload)"
		}
		p := newPlot(title, "seconds since the run started (by completion)", y)
		xys := make(plotter.XYs, len(ch.Series))
		top := 0.0
		for i, pt := range ch.Series {
			xys[i] = plotter.XY{X: pt.T, Y: pt.V}
			top = math.Max(top, pt.V)
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = plotutil.Color(0), plotutil.Color(0)
		p.Add(line, points)
		p.Legend.Add(unit, line)
		for i, x := range []float64{ch.SteadyStartS, ch.SteadyStartS + ch.DurationS} {
			edge, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top * 1.05}})
			if err != nil {
				return nil, err
			}
			edge.Color = plotutil.Color(2)
			edge.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(edge)
			if i == 0 {
				p.Legend.Add("steady window", edge)
			}
		}
		if err := shadeRamps(p, ch, top*1.05); err != nil {
			return nil, err
		}
		p.X.Min, p.Y.Min = 0, 0
		return p, nil
	}}
}

// shadeRamps shades the run's ramp-up and ramp-down seconds (RFC 9411
// §4.3.4) up to height top, each named in the legend; none without a
// timeline.
func shadeRamps(p *plot.Plot, ch *chosen, top float64) error {
	t := ch.Timeline
	if t == nil {
		return nil
	}
	down := ch.SteadyStartS + ch.DurationS
	for i, r := range []struct {
		name     string
		from, to float64
	}{{"ramp up", 0, t.RampUpS}, {"ramp down", down, down + t.RampDownS}} {
		if r.to <= r.from {
			continue
		}
		shade, err := plotter.NewPolygon(plotter.XYs{{X: r.from, Y: 0}, {X: r.to, Y: 0}, {X: r.to, Y: top},
			{X: r.from, Y: top}})
		if err != nil {
			return err
		}
		c := color.NRGBAModel.Convert(plotutil.Color(3 + i)).(color.NRGBA)
		c.A = 48
		shade.Color, shade.LineStyle.Width = c, 0
		p.Add(shade)
		p.Legend.Add(r.name, shade)
	}
	return nil
}

// percentileX places a percentile on the log-ish axis: -log10(1 − p/100),
// 0 at the minimum, 1 at p90, 2 at p99 …
func percentileX(p float64) float64 { return -math.Log10(1 - p/100) }

// latencyChart draws latency curves: milliseconds at each percentile.
func latencyChart(name, title string, curves []curve) *chart {
	return &chart{name: name, title: title, w: chartWidth, h: chartHeight, plot: func() (*plot.Plot, error) {
		p := newPlot(title, "percentile", "latency (ms)")
		for _, c := range curves {
			xys := make(plotter.XYs, len(c.q))
			for i, q := range c.q {
				xys[i] = plotter.XY{X: percentileX(q.Percentile), Y: float64(q.US) / 1e3}
			}
			line, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			line.Color = plotutil.Color(c.color)
			line.Width = vg.Points(1.5)
			if c.dashed {
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(line)
			p.Legend.Add(c.name, line)
		}
		var ticks []plot.Tick
		for i, label := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: label})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		// Room on the right for the last tick's label.
		p.X.Min, p.X.Max = 0, percentileX(analysis.CurvePercentiles[len(analysis.CurvePercentiles)-1])+0.3
		p.Y.Min = 0
		return p, nil
	}}
}
