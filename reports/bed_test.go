package reports_test

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// bedRecords are CPS records of one DUT: SR=0, SR=1 (tickets, verification
// skipped, nginx's Server header in its preflight) and the RSA profile at a
// VIP of its own.
func bedRecords() []reports.Input {
	sr0 := record("sr0.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "adc-a.lab.test", Level: 16,
		Value: 640, CPU: 0.4})
	sr1 := record("sr1.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "adc-a.lab.test", Level: 16,
		Value: 1500, CPU: 0.4, Start: reporttest.T0.Add(time.Minute)})
	sr1.Run.Resumption = &metrics.Resumption{Mode: "tickets", Ratio: 1, Full: 16, Resumed: 1484}
	sr1.Run.Preflight = &metrics.Preflight{OK: true, Transactions: 2, Requests: 2, BodySize: 1024, Server: "nginx/1.22.1"}
	sr1.Run.Target.InsecureSkipVerify = true
	rsa := record("rsa.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.RSA, Host: "adc-a.lab.test", Level: 16,
		Value: 1600, CPU: 0.4, Start: reporttest.T0.Add(2 * time.Minute)})
	rsa.Run.Target.URL = "https://adc-a.lab.test:9442/1k"
	return []reports.Input{sr0, sr1, rsa}
}

// TestTestBedAndReuse: a CPS record at SR=1 is published as SSL TPS with
// session reuse (with its footnote), apart from the SR=0 value; the
// device's Server header is its version, marked as read; a run that skipped
// verification says NOT verified in every format.
func TestTestBedAndReuse(t *testing.T) {
	r := build(t, bedRecords()...)
	if got := *r.Table[0].Results[0].CPS; got != 640 {
		t.Errorf("CPS (SR=0) = %v, want 640 (the SR=1 record apart)", got)
	}
	if len(r.Reuse) != 2 || r.Reuse[1].Value == nil || *r.Reuse[1].Value != 1500 || r.Reuse[1].Runs.Accepted != 1 ||
		r.Reuse[0].Ratio != 0 || r.Reuse[0].Value == nil || *r.Reuse[0].Value != 640 {
		t.Fatalf("session reuse rows %+v, want SR=0's 640 beside SR=1's 1500 TPS, accepted", r.Reuse)
	}
	want := "SR=1 (tickets), 1 request(s) per connection, object 1024 B, TLS1.2 ECDHE-ECDSA-AES128-SHA256"
	if !strings.HasPrefix(r.Reuse[1].Footnote, want) || !strings.HasSuffix(r.Reuse[1].Footnote, "HTTP/1.1") {
		t.Errorf("footnote %q, want it to start %q", r.Reuse[1].Footnote, want)
	}
	var text, md, csv, js bytes.Buffer
	if err := reports.ReportDoc(r).Text(&text); err != nil {
		t.Fatal(err)
	}
	if err := reports.ReportDoc(r).Markdown(&md, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := reports.ReportCSV(&csv, r); err != nil {
		t.Fatal(err)
	}
	if err := reports.ReportJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"SSL TPS with session reuse", "1 (tickets)", "nginx/1.22.1 (read: Server header)",
		"NOT verified (insecure)", "CERTIFICATE CHAINS NOT VERIFIED (adc-a.lab.test)"} {
		if !strings.Contains(text.String(), w) || !strings.Contains(md.String(), w) {
			t.Errorf("text or Markdown lacks %q:\n%s", w, text.String())
		}
	}
	// Every endpoint, a line per profile.
	for _, w := range []string{"| adc-a.lab.test | ecdhe-ecdsa-aes128-sha256-p384 | https://adc-a.lab.test/1k |",
		"| adc-a.lab.test | rsa2048-aes128-gcm-sha256 | https://adc-a.lab.test:9442/1k |"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("Markdown lacks the endpoint %q:\n%s", w, md.String())
		}
	}
	if strings.Contains(text.String(), "resumed by design") {
		t.Errorf("the SR=1 record is refused:\n%s", text.String())
	}
	if !strings.Contains(csv.String(), "NOT verified (insecure)") {
		t.Errorf("CSV does not say the chains were not verified:\n%s", csv.String())
	}
	if !strings.Contains(js.String(), `"verified": false`) || !strings.Contains(js.String(), `"server": "nginx/1.22.1"`) {
		t.Errorf("JSON lacks the test bed's verification or server:\n%s", js.String())
	}
}

// TestPDFTestBed prints the records' report with Chromium and reads it as a
// person would (pdftotext): the first page has the SR row beside the
// SR=0 table, the verdict says the chains were NOT verified, the signature
// block; the second names the Server header read, every endpoint whole and
// the warning.
func TestPDFTestBed(t *testing.T) {
	file, _ := printPDF(t, bedRecords()...)
	var texts []string
	for i := 1; i <= 2; i++ {
		texts = append(texts, poppler(t, "pdftotext", "-layout", "-f", strconv.Itoa(i), "-l", strconv.Itoa(i), file, "-"))
	}
	for _, want := range []string{"SSL TPS with session reuse", "1 (tickets)", "1.50k", "[2] SR=1 (tickets)",
		"certificate chains NOT verified (adc-a.lab.test)", "Tested by", "Signatures"} {
		if !strings.Contains(texts[0], want) {
			t.Errorf("the first page has no %q:\n%s", want, texts[0])
		}
	}
	for _, want := range []string{"nginx/1.22.1 (read: Server header)", "NOT verified (insecure)", "CERTIFICATE CHAINS NOT VERIFIED",
		"https://adc-a.lab.test:9442/1k", "rsa2048-aes128-gcm-sha256", "ecdhe-ecdsa-aes128-sha256-p384"} {
		if !strings.Contains(texts[1], want) {
			t.Errorf("page 2 has no %q:\n%s", want, texts[1])
		}
	}
}

// TestThroughputReuseApart: a throughput record that resumed sessions
// (--resume with --requests-per-conn) is published apart, with its SR and
// footnote, never as the SR=0 throughput value (the better of the two here).
func TestThroughputReuseApart(t *testing.T) {
	sr0 := record("t0.json", reporttest.RunSpec{Engine: "throughput", Profile: reporttest.P384, Host: "adc-a.lab.test",
		Level: 8, Value: 5.3, CPU: 0.4})
	sr := record("t1.json", reporttest.RunSpec{Engine: "throughput", Profile: reporttest.P384, Host: "adc-a.lab.test",
		Level: 8, Value: 7.1, CPU: 0.4, Start: reporttest.T0.Add(time.Minute)})
	sr.Run.Resumption = &metrics.Resumption{Mode: "tickets", Ratio: 0.5, Full: 10, Resumed: 10}
	r := build(t, sr0, sr)
	near := func(v *float64, want float64) bool { return v != nil && math.Abs(*v-want) < 0.01 }
	if got := r.Table[0].Results[0].Gbps; !near(got, 5.3) {
		t.Errorf("throughput (SR=0) = %v, want 5.3 (the resumed record apart)", *got)
	}
	if len(r.Reuse) != 2 || r.Reuse[1].Ratio != 0.5 || !near(r.Reuse[1].Value, 7.1) || !near(r.Reuse[0].Value, 5.3) ||
		!strings.HasPrefix(r.Reuse[1].Footnote, "SR=0.5 (tickets)") {
		t.Fatalf("session reuse rows %+v, want SR=0's 5.3 beside SR=0.5's 7.1", r.Reuse)
	}
	var text bytes.Buffer
	if err := reports.ReportDoc(r).Text(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "7.10 Gbps") {
		t.Errorf("the text has no 7.10 Gbps row:\n%s", text.String())
	}
}
