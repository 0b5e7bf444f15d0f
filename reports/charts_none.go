//go:build nocharts

package reports

import "errors"

// This file replaces charts.go in a build with the tag nocharts (the lean
// agent: gonum/plot and its fonts left out). The documents are the same
// without their charts: every chart constructor returns no block, which the
// renderers skip; HasCharts tells the CLI to say so.

// HasCharts reports whether this build draws charts.
const HasCharts = false

// ErrNoCharts is returned by a chart's renderers in a build without charts.
var ErrNoCharts = errors.New("charts are not in this build (built with the nocharts tag)")

// chart is a figure of a document; none is made in this build.
type chart struct {
	name, title string
}

func (c *chart) svg() (string, error) { return "", ErrNoCharts }
func (c *chart) png() ([]byte, error) { return nil, ErrNoCharts }

func barChart(name, title, unit string, cats, series []string, vals [][]float64, format func(float64) string) block {
	return nil
}

func exploreChart(name string, s *section) block { return nil }

func seriesChart(name, title, unit string, ch *chosen) block { return nil }

func latencyChart(name, title string, curves []curve) block { return nil }
