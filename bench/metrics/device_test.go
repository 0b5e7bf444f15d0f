package metrics

import (
	"strings"
	"testing"
)

func ptr(v int64) *int64 { return &v }

// TestDeviceRows: the correspondence of the device's counts with the
// engine's, run (exact, with the preflight and the counted reads) and
// window (within the slack of its edges).
func TestDeviceRows(t *testing.T) {
	r := &Run{
		Transactions: 1000, DurationS: 2, ConnectionsOpened: 1000, Handshakes: 1300,
		Whole:     Whole{Transactions: 1300, ConnectionsOpened: 1300},
		Preflight: &Preflight{OK: true, Transactions: 1, Handshakes: 1},
		Bytes:     Bytes{In: 1124000, Out: 77000},
		Device: &Device{Source: "kind=nginx", CountsReads: true, InFlight: 4,
			Run:    &DeviceCounts{Sessions: ptr(1304), Requests: ptr(1304), Handshakes: ptr(1301), Reads: 3},
			Window: &DeviceCounts{Sessions: ptr(1003), Requests: ptr(990), BytesIn: ptr(80000), Reads: 1, EdgeS: 0.004}},
	}
	rows := r.DeviceRows()
	want := map[string]struct {
		expected, diff, slack int64
		agrees                bool
	}{
		"run sessions":    {1304, 0, 0, true},
		"run handshakes":  {1301, 0, 0, true},
		"run requests":    {1304, 0, 0, true},
		"window sessions": {1001, 2, 8 + 2, true},    // 2 × 4 in flight + 1000/2 s × 0.004 s
		"window requests": {1001, -11, 8 + 2, false}, // beyond
		"window bytes_in": {77000, 3000, 0, true},    // informative
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for _, row := range rows {
		w, ok := want[row.Scope+" "+row.Counter]
		if !ok {
			t.Errorf("unexpected row %+v", row)
			continue
		}
		if row.Expected != w.expected || row.Diff != w.diff || row.Slack != w.slack || row.Agrees != w.agrees {
			t.Errorf("%s %s: expected %d diff %d slack %d agrees %v; want %+v (%s)", row.Scope, row.Counter, row.Expected, row.Diff, row.Slack, row.Agrees, w, row.Explain())
		}
	}
	if bad, missing := r.DeviceDisagreement(0); len(bad) != 0 || missing != "" {
		t.Errorf("the run's counts agree exactly, got %+v %q", bad, missing)
	}
	// One session more than explained: rejected at 0%, not at 1%.
	r.Device.Run.Sessions = ptr(1305)
	if bad, _ := r.DeviceDisagreement(0); len(bad) != 1 || !strings.Contains(bad[0].Explain(), "device counted 1305, tlsbench counted 1300 (+ preflight + 3 counter reads: 1304 expected); +1") {
		t.Errorf("0%%: %+v", bad)
	}
	if bad, _ := r.DeviceDisagreement(0.01); len(bad) != 0 {
		t.Errorf("1%%: %+v", bad)
	}
	r.Device.Error = "device counters (kind=nginx): HTTP status 404"
	if _, missing := r.DeviceDisagreement(0.01); !strings.Contains(missing, "404") {
		t.Errorf("missing = %q", missing)
	}
	if _, missing := (&Run{}).DeviceDisagreement(0); missing == "" {
		t.Error("a record without device counters is not reported")
	}
	if c := (&Run{}).DeviceCheck(); c != nil || c.Lines() != nil {
		t.Error("DeviceCheck of a record without counters")
	}
}

// TestDeviceRowsResumingPreflight: a preflight that resumes a session
// makes two requests (the full handshake's, the resumed one's); the run's
// requests expect both, so a correct run agrees exactly (the cross-check
// against Apache httpd: a false "+1 DISAGREES" with --resume).
func TestDeviceRowsResumingPreflight(t *testing.T) {
	r := &Run{
		Handshakes: 500, Whole: Whole{Transactions: 500, ConnectionsOpened: 500, Resumed: 250},
		Preflight: &Preflight{OK: true, Transactions: 2, Handshakes: 2, Resumed: 1, Requests: 2},
		Device: &Device{Source: "kind=target",
			Run: &DeviceCounts{Sessions: ptr(502), Handshakes: ptr(502), Requests: ptr(502)}},
	}
	if bad, missing := r.DeviceDisagreement(0); len(bad) != 0 || missing != "" {
		t.Errorf("a resuming preflight's two requests: %+v %q", bad, missing)
	}
	// A record made before Preflight.Requests: its successful preflight
	// made one request.
	r.Preflight = &Preflight{OK: true, Transactions: 1, Handshakes: 1}
	r.Device.Run = &DeviceCounts{Requests: ptr(501)}
	if bad, _ := r.DeviceDisagreement(0); len(bad) != 0 {
		t.Errorf("an older record's preflight: %+v", bad)
	}
}
