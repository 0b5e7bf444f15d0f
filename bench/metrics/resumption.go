package metrics

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Resumption is the split of a run's handshakes between full ones and
// those that resumed a session, in a run that offered sessions (--resume
// above 0): the datasheets' "SSL TPS" with and without reuse. The counts
// are of the window's successful transactions that opened a connection (in
// CPS, every one: Full + Resumed = Transactions); a connection that offered
// a session and got a full handshake is an error of class not_resumed, not
// counted here. The handshake times of each kind are the record's
// handshake_full and handshake_resumed histograms.
type Resumption struct {
	// Mode is how sessions were resumed: "tickets" (TLS 1.2) or "psk"
	// (TLS 1.3); Ratio the share of connections meant to resume.
	Mode  string  `json:"mode"`
	Ratio float64 `json:"ratio"`
	Full  int64   `json:"full"`
	// Resumed counts the resumed handshakes (the record's top-level
	// "resumed" counts resumptions that were errors).
	Resumed int64 `json:"resumed"`
	// The rates over the window: in CPS, the CPS split.
	FullPerS    float64 `json:"full_per_s"`
	ResumedPerS float64 `json:"resumed_per_s"`
}

// SetResumption fills the record's Resumption from the window's snapshot
// s (Fill's) for a run that resumed sessions with mode at ratio: the
// counts, their rates, and the two handshake histograms (the full
// handshakes' is the handshake histogram less the resumed ones', bucket by
// bucket: the same geometry makes it exact).
func (r *Run) SetResumption(mode string, ratio float64, s Snapshot) error {
	all := s.Hist[vocab.PhaseHandshake]
	resumed := s.ResumedHS
	if resumed == nil {
		resumed = NewHistogram()
	}
	full, err := subtract(all, resumed)
	if err != nil {
		return err
	}
	opened := all.TotalCount() + s.Resumed - resumed.TotalCount() // resumptions timed at 0 are not in all
	x := &Resumption{Mode: mode, Ratio: ratio, Resumed: s.Resumed, Full: opened - s.Resumed}
	x.FullPerS = divide(float64(x.Full), r.DurationS)
	x.ResumedPerS = divide(float64(x.Resumed), r.DurationS)
	r.Resumption = x
	if err := r.SetHistogram(vocab.PhaseHandshakeFull, full); err != nil {
		return err
	}
	return r.SetHistogram(vocab.PhaseHandshakeResumed, resumed)
}

// subtract returns a − b, bucket by bucket, for histograms of the shared
// geometry where b's values are among a's.
func subtract(a, b *hdr.Histogram) (*hdr.Histogram, error) {
	sa, sb := a.Export(), b.Export()
	if len(sb.Counts) > len(sa.Counts) {
		return nil, fmt.Errorf("metrics: subtracting a histogram of %d buckets from one of %d", len(sb.Counts),
			len(sa.Counts))
	}
	for i, n := range sb.Counts {
		if sa.Counts[i] < n {
			return nil, fmt.Errorf("metrics: bucket %d has %d values, fewer than the %d taken from it", i,
				sa.Counts[i], n)
		}
		sa.Counts[i] -= n
	}
	return hdr.Import(sa), nil
}

// addResumption adds r's resumption counts and rates to m's (Merge).
func (m *Run) addResumption(r *Run) {
	x := r.Resumption
	if x == nil {
		return
	}
	if m.Resumption == nil {
		m.Resumption = &Resumption{Mode: x.Mode, Ratio: x.Ratio}
	}
	y := m.Resumption
	y.Full += x.Full
	y.Resumed += x.Resumed
	y.FullPerS += x.FullPerS
	y.ResumedPerS += x.ResumedPerS
}

// checkResumption checks the split against the record's counts and
// histograms.
func (r *Run) checkResumption(c *Checker) {
	x := r.Resumption
	if x == nil {
		return
	}
	c.OneOf("resumption.mode", x.Mode, []string{"tickets", "psk"})
	c.nums("resumption.", []num{{"full", x.Full}, {"resumed", x.Resumed}, {"full_per_s", x.FullPerS},
		{"resumed_per_s", x.ResumedPerS}, {"ratio", x.Ratio}})
	if x.Ratio > 1 {
		c.Failf("resumption.ratio", "%v, above 1", x.Ratio)
	}
	if n := x.Full + x.Resumed; n > r.Transactions {
		c.Failf("resumption", "full %d + resumed %d = %d handshakes, more than the %d transactions", x.Full,
			x.Resumed, n, r.Transactions)
	}
	if p, ok := r.Latency[vocab.PhaseHandshakeResumed.String()]; ok && p.Count > x.Resumed {
		c.Failf("latency_us.handshake_resumed.count", "%d, more than the %d resumed handshakes", p.Count, x.Resumed)
	}
	if p, ok := r.Latency[vocab.PhaseHandshakeFull.String()]; ok && p.Count > x.Full {
		c.Failf("latency_us.handshake_full.count", "%d, more than the %d full handshakes", p.Count, x.Full)
	}
}
