package metrics

import (
	"fmt"
	"math"
	"strings"
)

// Device is the device's own counters over a run (bench/devcount), read
// from the source the DUT names just before the preflight, at the steady
// window's start and end, and after the run's drain: Window is the
// difference across the window, Run across the whole run. A record of a
// distributed run (Merge) has none: the counters are per run of one
// process.
type Device struct {
	// Source is where they were read, on one line (kind=… url=…).
	Source string `json:"source"`
	// CountsReads: the device counts the reads of its counters (a
	// session and a request each), e.g. nginx's stub_status.
	CountsReads bool `json:"counts_reads,omitempty"`
	// InFlight is how many transactions the engine may have had under
	// way at one read (concurrency × pipeline): the window's counts may
	// differ from the engine's by up to that at each of its ends.
	InFlight int64 `json:"in_flight"`
	// Pipeline, when above 1, is the requests a throughput connection
	// keeps in flight: a connection closed at the run's end (or the
	// preflight's) leaves up to Pipeline − 1 requests the device received
	// and tlsbench never counted (no response was read).
	Pipeline int64         `json:"pipeline,omitempty"`
	Window   *DeviceCounts `json:"window,omitempty"`
	Run      *DeviceCounts `json:"run,omitempty"`
	// Error is the first read that failed, if any; the counts it would
	// have given are absent.
	Error string `json:"error,omitempty"`
	// Version is the device's software as its stats page names it
	// (devcount.Source.Version: "HAProxy 2.6.12-1"), read before the first.
	Version string `json:"version,omitempty"`
}

// DeviceCounts is the difference of the device's counters between two
// reads; a counter the source does not give is absent.
type DeviceCounts struct {
	Sessions   *int64 `json:"sessions,omitempty"`
	Handshakes *int64 `json:"handshakes,omitempty"`
	Requests   *int64 `json:"requests,omitempty"`
	BytesIn    *int64 `json:"bytes_in,omitempty"`
	BytesOut   *int64 `json:"bytes_out,omitempty"`
	Errors     *int64 `json:"errors,omitempty"`
	// Reads is how many reads of the counters fall inside the difference
	// (after the first read, up to the last): those the device counts
	// when it CountsReads.
	Reads int64 `json:"reads"`
	// Seconds is the time between the two reads.
	Seconds float64 `json:"seconds"`
	// EdgeS (window only) is how long after the window's edges the two
	// reads ended, added: the device took its counts somewhere in that
	// time, while the load went on.
	EdgeS float64 `json:"edge_s,omitempty"`

	// TLSBytesIn and TLSBytesOut are TLS records' bytes (the wire's).
	TLSBytesIn  *int64 `json:"tls_bytes_in,omitempty"`
	TLSBytesOut *int64 `json:"tls_bytes_out,omitempty"`
}

// deviceRow is one count as the device and tlsbench have it.
type deviceRow struct {
	Scope   string `json:"scope"`   // "window" or "run"
	Counter string `json:"counter"` // sessions, handshakes, requests, bytes_in, bytes_out
	Device  int64  `json:"device"`
	// Engine is tlsbench's count of the same thing; Expected adds what the
	// device also counts and the engine does not (Offsets says what, in
	// words): the preflight, the counters' own reads.
	Engine   int64  `json:"tlsbench"`
	Expected int64  `json:"expected"`
	Offsets  string `json:"offsets,omitempty"`
	// Slack is how far the device may be from Expected and agree: the
	// transactions in flight at the window's reads and those made while
	// the reads took their counts, the failed ones the device may or may
	// not have seen; 0 for an exact count.
	Slack int64 `json:"slack"`
	Diff  int64 `json:"diff"` // Device − Expected
	// Agrees: |Diff| ≤ Slack.
	Agrees bool `json:"agrees"`
	// Informative rows (bytes) are shown, not judged: a device counts
	// bytes its own way (HAProxy: the HTTP messages as it holds them, not
	// as they were on the wire), so they differ by a few bytes a
	// transaction.
	Informative bool `json:"informative,omitempty"`
	// Transactions is the engine's count the bytes are of (Informative).
	Transactions int64 `json:"transactions,omitempty"`
}

// DeviceCheck is a run's device counts beside tlsbench's, as the reports
// carry it: the source, the rows, or why there are none.
type DeviceCheck struct {
	Source string      `json:"source"`
	Rows   []deviceRow `json:"rows,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// DeviceCheck returns the run's device comparison; nil when the record has
// no device counters.
func (r *Run) DeviceCheck() *DeviceCheck {
	if r == nil || r.Device == nil {
		return nil
	}
	return &DeviceCheck{Source: r.Device.Source, Rows: r.DeviceRows(), Error: r.Device.Error}
}

// Disagreements counts the rows that do not agree.
func (c *DeviceCheck) Disagreements() int {
	n := 0
	for _, row := range c.Rows {
		if !row.Agrees {
			n++
		}
	}
	return n
}

// Lines is the check in words, a line a row (Explain), the error first.
func (c *DeviceCheck) Lines() []string {
	if c == nil {
		return nil
	}
	var out []string
	if c.Error != "" {
		out = append(out, "device counters unreadable: "+c.Error)
	}
	for _, row := range c.Rows {
		out = append(out, row.Explain())
	}
	return out
}

// Explain is the row in words: "device counted N, tlsbench counted M (+ …)".
func (d deviceRow) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: device counted %d, tlsbench counted %d", d.Scope, d.Counter, d.Device, d.Engine)
	if d.Offsets != "" {
		fmt.Fprintf(&b, " (%s: %d expected)", d.Offsets, d.Expected)
	}
	switch {
	case d.Informative && d.Transactions > 0:
		fmt.Fprintf(&b, "; %.1f and %.1f a transaction (the device's own accounting)",
			float64(d.Device)/float64(d.Transactions), float64(d.Engine)/float64(d.Transactions))
	case d.Informative:
		b.WriteString("; the device's own accounting")
	case d.Diff == 0:
		b.WriteString("; exact")
	case d.Agrees:
		fmt.Fprintf(&b, "; %+d, within the %d explained", d.Diff, d.Slack)
	default:
		share := 1.0 // |Diff| ÷ Expected, all of it when nothing was expected
		if d.Expected != 0 {
			share = float64(max(d.Diff, -d.Diff)) / float64(d.Expected)
		}
		fmt.Fprintf(&b, "; %+d (%.2f%%), beyond the %d explained", d.Diff, share*100, d.Slack)
	}
	return b.String()
}

// DeviceRows compares the device's counts with the engine's, the run's
// first (exact: nothing is in flight before the preflight or after the
// drain), then the window's. None without a Device block or with counts
// missing.
//
// The correspondence, per counter:
//   - run sessions: every connection the engine opened (whole_run
//     connections_opened) and the preflight's (preflight transactions, one
//     connection each); failed transactions may or may not have reached
//     the device (slack: whole-run errors and preflight failed attempts).
//   - run handshakes: the engine's completed handshakes (whole run) and the
//     preflight's.
//   - run requests: the engine's successful transactions (whole run; a
//     throughput transaction is one request) and the preflight's answered
//     requests (Preflight.Requests: 2 when it resumed a session);
//     with a pipeline of K, a connection closed with requests outstanding
//     leaves up to K − 1 the device received and the engine did not count
//     (slack: (K − 1) × the connections).
//   - window sessions, requests: connections opened and transactions
//     started in the window (successful or failed) against the device's
//     difference between the window's reads; the transactions under way at
//     either read may fall on either side (slack: 2 × in_flight).
//   - window bytes, like with like: the device's application bytes in
//     against the engine's out (requests), out against in (headers and
//     bodies); its TLS bytes against the engine's wire bytes.
//
// Where the device counts its reads, Expected adds them (a session and a
// request per read after the first).
func (r *Run) DeviceRows() []deviceRow {
	d := r.Device
	if d == nil {
		return nil
	}
	var rows []deviceRow
	reads := func(c *DeviceCounts) (int64, string) {
		if !d.CountsReads || c.Reads == 0 {
			return 0, ""
		}
		return c.Reads, fmt.Sprintf("+ %d counter reads", c.Reads)
	}
	// add appends the row of a counter the device gives; nil when it does not.
	add := func(scope, counter string, dev *int64, engine, extra int64, offsets string, slack int64) *deviceRow {
		if dev == nil {
			return nil
		}
		row := deviceRow{Scope: scope, Counter: counter, Device: *dev, Engine: engine, Expected: engine + extra,
			Offsets: offsets, Slack: slack}
		row.Diff = row.Device - row.Expected
		row.Agrees = max(row.Diff, -row.Diff) <= row.Slack
		rows = append(rows, row)
		return &rows[len(rows)-1]
	}
	if c := d.Run; c != nil {
		var pfT, pfH, pfReq int64
		var pf string
		if p := r.Preflight; p != nil {
			pfT, pfH, pfReq = p.Transactions, p.Handshakes, p.Requests
			if p.OK && pfReq == 0 {
				pfReq = 1 // a record made before Preflight.Requests
			}
			pf = "+ preflight"
		}
		n, rd := reads(c)
		slack := r.Whole.Errors
		if p := r.Preflight; p != nil {
			slack += int64(len(p.FailedAttempts)) // the preflight's failures, as the run's
		}
		offsets := strings.TrimSpace(pf + " " + rd)
		add("run", "sessions", c.Sessions, r.Whole.ConnectionsOpened, pfT+n, offsets, slack)
		add("run", "handshakes", c.Handshakes, r.Handshakes, pfH, pf, slack)
		reqSlack := slack
		if d.Pipeline > 1 {
			// Requests sent and never answered at a connection's close.
			reqSlack += (d.Pipeline - 1) * (r.Whole.ConnectionsOpened + pfT)
		}
		add("run", "requests", c.Requests, r.Whole.Transactions, pfReq+n, offsets, reqSlack)
	}
	if c := d.Window; c != nil {
		n, rd := reads(c)
		txns := r.Transactions + r.Errors.Total
		// What the edges explain: the transactions under way at each read,
		// and those made while the reads took their counts.
		slack := func(count int64) int64 {
			s := 2 * d.InFlight
			if r.DurationS > 0 {
				s += int64(math.Ceil(float64(count) / r.DurationS * c.EdgeS))
			}
			return s
		}
		add("window", "sessions", c.Sessions, r.ConnectionsOpened, n, rd, slack(r.ConnectionsOpened))
		add("window", "requests", c.Requests, txns, n, rd, slack(txns))
		for _, b := range []struct {
			name   string
			dev    *int64
			engine int64
		}{{"bytes_in", c.BytesIn, r.Bytes.Out}, {"bytes_out", c.BytesOut, r.Bytes.In},
			{"tls_bytes_in", c.TLSBytesIn, r.Bytes.WireOut}, {"tls_bytes_out", c.TLSBytesOut, r.Bytes.WireIn}} {
			if row := add("window", b.name, b.dev, b.engine, 0, "", 0); row != nil {
				row.Agrees = true // shown, not judged
				row.Informative = true
				row.Transactions = txns
			}
		}
	}
	return rows
}

// DeviceDisagreement returns the run's exact rows (scope run) whose
// difference is beyond their slack by more than share of Expected, and an
// explanation when the device's counts are missing (a read failed, or the
// record has none).
func (r *Run) DeviceDisagreement(share float64) (bad []deviceRow, missing string) {
	d := r.Device
	switch {
	case d == nil:
		return nil, "the record has no device counters"
	case d.Error != "":
		return nil, "the device's counters could not be read: " + d.Error
	case d.Run == nil:
		return nil, "the device's counters over the run are missing"
	}
	for _, row := range r.DeviceRows() {
		if row.Scope != "run" {
			continue
		}
		diff := max(row.Diff, -row.Diff) - row.Slack
		if diff > 0 && float64(diff) > share*float64(row.Expected) {
			bad = append(bad, row)
		}
	}
	return bad, ""
}
