package reports_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// TestDeviceCounts: run records with device counters show "device counted
// N, tlsbench counted M" in the run's summary, the report (a Device
// counters section counting the runs that disagreed) and compare.
func TestDeviceCounts(t *testing.T) {
	ok := reporttest.Run(reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", DUT: "lb", Level: 4, Value: 100})
	ok.Preflight = &metrics.Preflight{OK: true, Transactions: 1, Handshakes: 1}
	n := ok.Whole.ConnectionsOpened + ok.Preflight.Transactions
	ok.Device = &metrics.Device{Source: "kind=haproxy url=http://lb/stats;csv frontend=p384", InFlight: 4,
		Run: &metrics.DeviceCounts{Sessions: &n, Reads: 3}}
	off := reporttest.Run(reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", DUT: "lb", Level: 4, Value: 90})
	off.Preflight = &metrics.Preflight{OK: true, Transactions: 1, Handshakes: 1}
	m := off.Whole.ConnectionsOpened + off.Preflight.Transactions + 7
	off.Device = &metrics.Device{Source: ok.Device.Source, InFlight: 4, Run: &metrics.DeviceCounts{Sessions: &m, Reads: 3}}
	broken := reporttest.Run(reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", DUT: "lb", Level: 4, Value: 80})
	broken.Device = &metrics.Device{Source: ok.Device.Source, InFlight: 4, Error: `HAProxy's stats have no frontend "p384"`}

	var sum bytes.Buffer
	if err := reports.RunSummary(ok).Text(&sum); err != nil {
		t.Fatal(err)
	}
	want := "run sessions: device counted " + itoa(n) + ", tlsbench counted " + itoa(ok.Whole.ConnectionsOpened) + " (+ preflight: " + itoa(n) + " expected); exact"
	if !strings.Contains(sum.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, sum.String())
	}
	sum.Reset()
	if err := reports.RunSummary(broken).Text(&sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "ERROR        the device's counters could not be read: HAProxy's stats have no frontend") {
		t.Errorf("summary of a broken source:\n%s", sum.String())
	}

	rep, err := reports.Build([]reports.Input{{Name: "a.json", Run: ok}, {Name: "b.json", Run: off}, {Name: "c.json", Run: broken}})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := reports.ReportDoc(rep).Text(&text); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Device counters", "3 runs: 1 disagreed beyond what is explained, 1 could not be read", "DISAGREES", "+7", "unreadable: HAProxy's stats have no frontend"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("report lacks %q", w)
		}
	}
	cmp, err := reports.CompareInputs(reports.Input{Name: "a.json", Run: ok}, reports.Input{Name: "b.json", Run: off})
	if err != nil {
		t.Fatal(err)
	}
	if c := cmp.Cells[0]; c.DeviceA == nil || c.DeviceB == nil || c.DeviceB.Disagreements() != 1 {
		t.Fatalf("compare: %+v %+v", c.DeviceA, c.DeviceB)
	}
	var ctext bytes.Buffer
	if err := reports.ComparisonDoc(cmp).Text(&ctext); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ctext.String(), "Device counters of B (kind=haproxy") {
		t.Errorf("compare text lacks the device counts:\n%s", ctext.String())
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
