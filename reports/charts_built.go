//go:build !nocharts

package reports

// HasCharts reports whether this build draws charts (gonum/plot); a build
// with the tag nocharts, the lean agent's, does not (charts_none.go).
const HasCharts = true
