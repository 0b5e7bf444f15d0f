package reports

import (
	"fmt"
	"strings"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// summaryObjects is the summary's RFC 9411 block: the window's TTFB and
// TTLB from the transaction's first packet, when the record has them, and
// a row per object of a run's mix (docs/OBJECTS.md).
func summaryObjects(w *strings.Builder, r *metrics.Run) {
	for _, ph := range []vocab.Phase{vocab.PhaseRFCTTFB, vocab.PhaseRFCTTLB} {
		if l := r.Percentiles(ph); l.Count > 0 {
			fmt.Fprintf(w, "  %-12s %9s %9s %9s %9s %9s\n", ph, Micros(float64(l.P50)), Micros(float64(l.P90)),
				Micros(float64(l.P99)), Micros(float64(l.P999)), Micros(float64(l.Max)))
		}
	}
	if len(r.Objects) == 0 {
		return
	}
	var all int64
	for _, o := range r.Objects {
		all += o.Transactions + o.Errors
	}
	fmt.Fprintf(w, "  %-12s %9s %7s %9s %7s %11s %9s %9s %9s\n", "object", "bytes", "weight", "txns", "share",
		"errors", "ttfb p50", "ttlb p50", "ttlb p99")
	for _, o := range r.Objects {
		share := 0.0
		if all > 0 {
			share = float64(o.Transactions+o.Errors) / float64(all) * 100
		}
		fmt.Fprintf(w, "  %-12s %9d %7.3g %9d %6.1f%% %11d %9s %9s %9s\n", clipPath(o.Path, 12), o.Size, o.Weight,
			o.Transactions, share, o.Errors, micros(o.TTFB.Count, o.TTFB.P50), micros(o.TTLB.Count, o.TTLB.P50),
			micros(o.TTLB.Count, o.TTLB.P99))
	}
}

// micros is Micros, or "-" without values.
func micros(n, v int64) string {
	if n == 0 {
		return "-"
	}
	return Micros(float64(v))
}

// clipPath keeps the end of a path that does not fit n columns.
func clipPath(p string, n int) string {
	if r := []rune(p); len(r) > n {
		return "…" + string(r[len(r)-n+1:])
	}
	return p
}
