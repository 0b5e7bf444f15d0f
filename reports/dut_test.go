package reports_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

var (
	leafA = strings.Repeat("a1", 32)
	leafB = strings.Repeat("b2", 32)
)

// device is a CPS record of the P-384 profile against www.fwtest.com.
func device(name string, s reporttest.RunSpec) reports.Input {
	s.Engine, s.Profile, s.Level, s.CPU = "cps", reporttest.P384, 16, 0.4
	if s.Host == "" {
		s.Host = "www.fwtest.com"
	}
	if s.Value == 0 {
		s.Value = 500
	}
	return record(name, s)
}

// TestDUTGrouping: records are one DUT only when they measured one device
// (address, SNI, certificate) or share a name; devices that share a host
// name are labelled by what tells them apart.
func TestDUTGrouping(t *testing.T) {
	later := reporttest.T0.Add(time.Minute)
	for _, tc := range []struct {
		name   string
		inputs []reports.Input
		duts   []string
	}{
		{"one device, two records", []reports.Input{
			device("1.json", reporttest.RunSpec{Address: "10.0.0.5:443", Leaf: leafA}),
			device("2.json", reporttest.RunSpec{Address: "10.0.0.5:443", Leaf: leafA, Start: later}),
		}, []string{"www.fwtest.com"}},
		{"two addresses", []reports.Input{
			device("1.json", reporttest.RunSpec{Address: "10.0.0.5:443", Leaf: leafA}),
			device("2.json", reporttest.RunSpec{Address: "10.0.0.6:443", Leaf: leafA, Start: later}),
		}, []string{"www.fwtest.com (10.0.0.5:443)", "www.fwtest.com (10.0.0.6:443)"}},
		{"two certificates at one address", []reports.Input{
			device("1.json", reporttest.RunSpec{Address: "10.0.0.5:443", Leaf: leafA}),
			device("2.json", reporttest.RunSpec{Address: "10.0.0.5:443", Leaf: leafB, Start: later}),
		}, []string{"www.fwtest.com (certificate a1a1a1a1a1a1)", "www.fwtest.com (certificate b2b2b2b2b2b2)"}},
		{"named: one DUT across addresses of other profiles' VIPs", []reports.Input{
			device("1.json", reporttest.RunSpec{Address: "10.0.0.5:443", DUT: "lb"}),
			record("2.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.RSA, Host: "other.test", Level: 4, Value: 100,
				Address: "10.0.0.9:443", DUT: "lb", Start: later}),
		}, []string{"lb"}},
	} {
		r := build(t, tc.inputs...)
		if !slices.Equal(r.DUTs, tc.duts) {
			t.Errorf("%s: DUTs %q, want %q", tc.name, r.DUTs, tc.duts)
		}
		if err := reports.CheckDUTs(tc.inputs); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestCheckDUTs: records of one name and profile that measured two devices
// are named, with what differs; another profile may have its own address
// and certificate; a record that saw no certificate differs in none.
func TestCheckDUTs(t *testing.T) {
	rsa := record("rsa.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.RSA, Host: "www.fwtest.com", Level: 4, Value: 100,
		Address: "10.0.0.7:443", DUT: "lb", Leaf: leafB})
	base := device("lb-1.json", reporttest.RunSpec{Address: "10.0.0.5:443", DUT: "lb", Leaf: leafA})
	for _, tc := range []struct {
		name  string
		other reports.Input
		field string
		want  string
	}{
		{"address", device("lb-2.json", reporttest.RunSpec{Address: "10.0.0.6:443", DUT: "lb", Leaf: leafA}), "address",
			"DUT lb: lb-1.json dialled 10.0.0.5:443, lb-2.json 10.0.0.6:443: two devices under one name"},
		{"SNI", device("lb-2.json", reporttest.RunSpec{Address: "10.0.0.5:443", DUT: "lb", Leaf: leafA, Host: "api.fwtest.com"}), "server_name",
			"DUT lb: lb-1.json sent SNI www.fwtest.com, lb-2.json api.fwtest.com"},
		{"certificate", device("lb-2.json", reporttest.RunSpec{Address: "10.0.0.5:443", DUT: "lb", Leaf: leafB}), "leaf_sha256",
			"DUT lb: lb-1.json was presented the certificate SHA-256 " + leafA + ", lb-2.json " + leafB},
	} {
		err := reports.CheckDUTs([]reports.Input{base, rsa, tc.other})
		var me *reports.MixedDUTError
		if !errors.As(err, &me) || me.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a MixedDUTError on %s saying %q", tc.name, err, tc.field, tc.want)
		}
		// Allowed, one DUT whose cell says it is two devices.
		r := build(t, base, tc.other)
		if !slices.Equal(r.DUTs, []string{"lb"}) || !strings.Contains(r.Table[0].Results[0].Note, "records of 2 devices under one name") {
			t.Errorf("%s: DUTs %q, note %q", tc.name, r.DUTs, r.Table[0].Results[0].Note)
		}
	}
	blind := device("lb-2.json", reporttest.RunSpec{Address: "10.0.0.5:443", DUT: "lb"})
	if err := reports.CheckDUTs([]reports.Input{base, rsa, blind}); err != nil {
		t.Errorf("a record without a certificate: %v", err)
	}
	if r := build(t, base, blind); r.Table[0].Results[0].Note != "" {
		t.Errorf("a record without a certificate is noted as another device: %q", r.Table[0].Results[0].Note)
	}
}

// TestInProcessDUT: the in-process reference target is one DUT, though each
// run has its own listener and certificate.
func TestInProcessDUT(t *testing.T) {
	a := device("1.json", reporttest.RunSpec{Address: "127.0.0.1:40001", Leaf: leafA})
	b := device("2.json", reporttest.RunSpec{Address: "127.0.0.1:40002", Leaf: leafB, Start: reporttest.T0.Add(time.Minute)})
	a.Run.Target.InProcess, b.Run.Target.InProcess = true, true
	if r := build(t, a, b); !slices.Equal(r.DUTs, []string{"reference (in-process)"}) {
		t.Errorf("DUTs %q", r.DUTs)
	}
}

// TestHistogramLogTellsDevicesApart: two unnamed devices reached under one
// host name are two tags in the interval log, labelled as the tables label
// them, not one tag numbered twice.
func TestHistogramLogTellsDevicesApart(t *testing.T) {
	later := reporttest.T0.Add(time.Minute)
	var b strings.Builder
	if err := reports.HistogramLog(&b, []reports.Input{
		device("1.json", reporttest.RunSpec{Address: "10.0.0.5:443", Leaf: leafA}),
		device("2.json", reporttest.RunSpec{Address: "10.0.0.6:443", Leaf: leafA, Start: later}),
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tag=www.fwtest.com_(10.0.0.5:443).cps.", "Tag=www.fwtest.com_(10.0.0.6:443).cps."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("log has no %q", want)
		}
	}
	if strings.Contains(b.String(), ".2.total") {
		t.Errorf("one device numbered twice:\n%s", b.String())
	}
}
