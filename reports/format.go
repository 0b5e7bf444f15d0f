package reports

import (
	"fmt"
	"strings"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
)

// value formats a CPS or Gbps value of the appendix, more precisely than
// the published table does.
func value(unit string, v float64) string {
	if unit == "Gbps" {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// percent formats a fraction (0..1) as a percentage.
func percent(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

// formatRatio formats a ratio of two DUTs' values: "1.25×".
func formatRatio(v float64) string { return fmt.Sprintf("%.2f×", v) }

// optional formats v, or "-" when there is none.
func optional(v *float64, format func(float64) string) string {
	if v == nil {
		return "-"
	}
	return format(*v)
}

// stamp formats a time in UTC, to the second.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// verdict is "accepted", or "rejected: " and the reasons.
func verdict(accepted bool, reasons []string) string {
	if accepted {
		return "accepted"
	}
	return "rejected: " + strings.Join(reasons, "; ")
}

// negotiated describes what a handshake negotiated.
func negotiated(n metrics.Negotiated) string {
	if n.Version == "" {
		return "nothing (no handshake completed)"
	}
	suite := dash(n.OpenSSL)
	if !n.SuitePinned {
		suite += " (observed)"
	}
	return fmt.Sprintf("%s %s, group %s, certificate %s", n.Version, suite, n.Group, n.CertKey)
}

// resumption says what the preliminary probe found of session resumption.
func resumption(p *method.Prelim) string {
	switch {
	case p.Resumption == nil && p.ResumptionErr != "":
		return "session resumption not probed (" + p.ResumptionErr + ")"
	case p.Resumption == nil:
		return "session resumption not probed"
	case *p.Resumption && p.SR > 0:
		return fmt.Sprintf("the DUT resumes sessions (the test asks SR=%g)", p.SR)
	case *p.Resumption:
		return "the DUT would resume sessions (an SR=0 test never does)"
	}
	return "the DUT refused session resumption"
}
