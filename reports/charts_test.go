//go:build !nocharts

package reports

import (
	"bytes"
	"image"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// labCharts are the charts of the two-DUT campaign's report.
func labCharts(t *testing.T) []*chart {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lab")
	sc := reporttest.Lab()
	s, ledger, err := reporttest.Campaign(dir, sc)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build([]Input{{Name: dir, Campaign: &Campaign{Dir: dir, Plan: sc.Plan, Summary: s, Ledger: ledger}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []*chart
	for _, b := range ReportDoc(r).blocks {
		if c, ok := b.(*chart); ok {
			out = append(out, c)
		}
	}
	if len(out) < 2+6*3 {
		t.Fatalf("%d charts, want the two bar charts and three per cell", len(out))
	}
	return out
}

// TestChartLegendsOutsideData: every chart with a legend draws it beside
// its data area, not over it, and inside the figure.
func TestChartLegendsOutsideData(t *testing.T) {
	for _, c := range labCharts(t) {
		canvas := vgimg.New(c.w, c.h)
		dc := draw.New(canvas)
		data, legend, err := c.draw(dc)
		if err != nil {
			t.Fatal(err)
		}
		if legend.Size().X <= 0 || legend.Size().Y <= 0 {
			t.Errorf("%s: no legend", c.name)
			continue
		}
		if overlap(data, legend) {
			t.Errorf("%s: the legend %v overlaps the data area %v", c.name, legend, data)
		}
		if !inside(legend, dc.Rectangle) || !inside(data, dc.Rectangle) {
			t.Errorf("%s: legend %v or data %v outside the figure %v", c.name, legend, data, dc.Rectangle)
		}
	}
}

func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func inside(a, b vg.Rectangle) bool {
	return a.Min.X >= b.Min.X && a.Min.Y >= b.Min.Y && a.Max.X <= b.Max.X && a.Max.Y <= b.Max.Y
}

// TestChartPNGsNotClipped: no chart's PNG has ink on its outermost pixels
// (a tick label, a title or a value label cut by the image's edge), and
// each has ink (it was drawn); a one-category bar chart is no higher than
// its bars need.
func TestChartPNGsNotClipped(t *testing.T) {
	for _, c := range labCharts(t) {
		data, err := c.png()
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b := img.Bounds()
		inked := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if !blank(img, x, y) {
					inked++
					if x == b.Min.X || y == b.Min.Y || x == b.Max.X-1 || y == b.Max.Y-1 {
						t.Errorf("%s: ink at the image's edge (%d, %d) of %v: something is clipped", c.name, x, y, b)
						goto next
					}
				}
			}
		}
		if inked < b.Dx()*b.Dy()/100 {
			t.Errorf("%s: %d pixels inked of %d", c.name, inked, b.Dx()*b.Dy())
		}
	next:
	}
	one := barChart("one", "one category", "Gbps", []string{"p"}, []string{"a", "b"}, [][]float64{{1}, {2}}, FormatGbps)
	three := barChart("three", "three categories", "Gbps", []string{"p", "q", "r"}, []string{"a", "b"}, [][]float64{{1, 1, 1}, {2, 2, 2}}, FormatGbps)
	if one.h >= three.h || one.h > 1.6*vg.Inch {
		t.Errorf("a one-category bar chart is %.0f pt high (three categories: %.0f pt)", one.h.Points(), three.h.Points())
	}
}

// blank reports whether a pixel is the background: white or transparent.
func blank(img image.Image, x, y int) bool {
	r, g, b, a := img.At(x, y).RGBA()
	return a == 0 || r > 0xf800 && g > 0xf800 && b > 0xf800
}

// TestSeriesChartShadesRamps: a run with a timeline has its ramp-up and
// ramp-down seconds shaded and named in the legend; one without has neither.
func TestSeriesChartShadesRamps(t *testing.T) {
	ch := &chosen{SteadyStartS: 3, DurationS: 4, WarmupS: 1}
	for s := range 10 {
		ch.Series = append(ch.Series, analysis.Point{T: float64(s + 1), V: 100})
	}
	for _, tl := range []*metrics.Timeline{nil, {Target: "rate", TargetValue: 100, RampUpS: 2, WarmupS: 1,
		SustainS: 4, RampDownS: 2}} {
		ch.Timeline = tl
		svg, err := seriesChart("s", "series", "CPS", ch).svg()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"ramp up", "ramp down"} {
			if got := strings.Contains(svg, name); got != (tl != nil) {
				t.Errorf("timeline %v: the chart names %q: %v", tl, name, got)
			}
		}
	}
}
