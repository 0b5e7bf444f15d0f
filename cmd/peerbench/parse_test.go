package main

import (
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseWrk(t *testing.T) {
	out := `Running 5s test @ https://127.0.0.1:24443/1m
  1 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    31.65ms   17.63ms 130.92ms   74.36%
    Req/Sec   262.45     60.37   353.00     71.43%
  1315 requests in 5.08s, 1.29GB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 5
Requests/sec:    258.89
Transfer/sec:    259.15MB
`
	var s sample
	if err := s.parseWrk([]byte(out)); err != nil {
		t.Fatal(err)
	}
	if s.Transactions != 1310 || s.Non2xx != 5 || s.Failed != 3 || s.PayloadBytes != 1310<<20 {
		t.Errorf("transactions %d, non-2xx %d, failed %d, payload %d", s.Transactions, s.Non2xx, s.Failed, s.PayloadBytes)
	}
	if math.Abs(s.WindowS-5.08) > 1e-9 || s.WrkReqPerS != 258.89 || s.WrkTransfer != "259.15MB" {
		t.Errorf("window %v, req/s %v, transfer %q", s.WindowS, s.WrkReqPerS, s.WrkTransfer)
	}
	if want := 1.29 * (1 << 30); math.Abs(s.WrkReadBytes-want) > 1 {
		t.Errorf("read %v, want %v", s.WrkReadBytes, want)
	}
	if s.WrkSocketErr != "connect 0, read 2, write 0, timeout 1" {
		t.Errorf("socket errors %q", s.WrkSocketErr)
	}

	// Bodies smaller than 1 MiB are refused; no report is an error.
	var small sample
	if err := small.parseWrk([]byte("  1315 requests in 5.08s, 10.00MB read\n")); err == nil || !strings.Contains(err.Error(), "not 1 MiB") {
		t.Errorf("small bodies: %v", err)
	}
	var none sample
	if err := none.parseWrk([]byte("unable to connect to 127.0.0.1:1 Connection refused\n")); err == nil {
		t.Error("no report: no error")
	}
}

func TestWrkUnits(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5.08s": 5080 * time.Millisecond, "1.00m": time.Minute, "812.50ms": 812500 * time.Microsecond, "3.00us": 3 * time.Microsecond,
	} {
		if got, err := wrkDuration(in); err != nil || got != want {
			t.Errorf("wrkDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]float64{"259.15MB": 259.15 * (1 << 20), "1.00GB": 1 << 30, "812.00B": 812, "2.00KB": 2048} {
		if got, err := wrkBytes(in); err != nil || math.Abs(got-want) > 1e-6 {
			t.Errorf("wrkBytes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestParseNegLog(t *testing.T) {
	log := "31854|12|TLSv1.2|ECDHE-ECDSA-AES128-SHA256|prime256v1|-\n" +
		"31854|13|TLSv1.2|ECDHE-ECDSA-AES128-SHA256|prime256v1|tlsbench/dev\n" +
		"31856|14|TLSv1.2|AES128-GCM-SHA256|-|-\n" +
		"31858|15|TLSv1.2|AES128-GCM-SHA256|-|h2load nghttp2/1.52.0|HTTP/2.0\n"
	got := parseNegLog(log)
	if len(got) != 3 || got["TLSv1.2 ECDHE-ECDSA-AES128-SHA256 prime256v1"] != 2 || got["TLSv1.2 AES128-GCM-SHA256"] != 1 ||
		got["TLSv1.2 AES128-GCM-SHA256 h2"] != 1 {
		t.Errorf("parseNegLog = %v", got)
	}
}

func TestParseSClient(t *testing.T) {
	out := `CONNECTION ESTABLISHED
Protocol version: TLSv1.2
Ciphersuite: ECDHE-ECDSA-AES128-SHA256
Peer certificate: O = tlsbench, CN = localhost
Server Temp Key: ECDH, secp384r1, 384 bits
DONE`
	if got := parseSClient(out); got != "TLSv1.2 ECDHE-ECDSA-AES128-SHA256 secp384r1" {
		t.Errorf("parseSClient = %q", got)
	}
	full := `CONNECTED(00000003)
TLS server extension "renegotiation info" (id=65281), len=1
TLS server extension "encrypt-then-mac" (id=22), len=0
Server Temp Key: ECDH, prime256v1, 256 bits
New, TLSv1.2, Cipher is ECDHE-ECDSA-AES128-SHA256
SSL-Session:
    Protocol  : TLSv1.2
    Cipher    : ECDHE-ECDSA-AES128-SHA256
`
	if got := parseSClient(full); got != "TLSv1.2 ECDHE-ECDSA-AES128-SHA256 prime256v1 encrypt-then-mac" {
		t.Errorf("parseSClient(-tlsextdebug) = %q", got)
	}
	if got := parseSClient("connect:errno=111"); got != "" {
		t.Errorf("failed probe = %q", got)
	}
}

func TestNginxConfThroughputServers(t *testing.T) {
	certs := &certFiles{Cert: map[string]string{"ecdsa": "e.pem", "rsa": "r.pem"}}
	ps := []profileSpec{seedProfiles[0], seedProfiles[2]}
	conf := nginxConfig("/d", 30000, ps, certs, "", false).Text()
	if strings.Contains(conf, "keepalive_requests") || strings.Count(conf, "server {") != 2 {
		t.Errorf("without a log: keep-alive servers:\n%s", conf)
	}
	conf = nginxConfig("/d", 30000, ps, certs, "/d/neg.log", false).Text()
	for _, want := range []string{"listen 127.0.0.1:30002 ssl;", "listen 127.0.0.1:30003 ssl;", "keepalive_requests 100000;", "ssl_conf_command Options -EncryptThenMac;", "access_log /d/neg.log peerbench_tls if=$peerbench_first;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("no %q in:\n%s", want, conf)
		}
	}
	if strings.Count(conf, "server {") != 4 || strings.Index(conf, "log_format") > strings.Index(conf, "access_log /d/neg.log") {
		t.Errorf("want 4 servers, log_format before its use:\n%s", conf)
	}
	conf = nginxConfig("/d", 30000, ps, certs, "/d/neg.log", true).Text()
	if !strings.Contains(conf, "listen 127.0.0.1:30005 ssl http2 backlog=4096;") || strings.Count(conf, "server {") != 6 ||
		strings.Count(conf, "access_log /d/neg.log") != 4 || strings.Count(conf, "http2") != 2 {
		t.Errorf("want two http2 servers, logged:\n%s", conf)
	}
}

func TestCryptoFloorOpeners(t *testing.T) {
	// They panic on a failed open or MAC.
	gcmOpener()()
	cbcHMACOpener()()
}

func TestParseH2load(t *testing.T) {
	out := `TLS Protocol: TLSv1.2
Cipher: ECDHE-ECDSA-AES128-SHA256
Server Temp Key: ECDH prime256v1 256 bits
Application protocol: h2

finished in 5.04s, 136.80 req/s, 136.97MB/s
requests: 690 total, 716 started, 688 done, 686 succeeded, 4 failed, 2 errored, 0 timeout
status codes: 684 2xx, 0 3xx, 2 4xx, 0 5xx
traffic: 684.83MB (718097792) total, 75.48KB (77292) headers (space savings 38.92%), 684.00MB (717225984) data
`
	p := seedProfiles[0]
	s := sample{Engine: "throughput"}
	if err := s.parseH2load([]byte(out), p); err != nil {
		t.Fatal(err)
	}
	if s.Transactions != 684 || s.Non2xx != 2 || s.Failed != 4 || s.PayloadBytes != 684<<20 ||
		math.Abs(s.WindowS-5.04) > 1e-9 || s.Negotiated != "TLSv1.2 ECDHE-ECDSA-AES128-SHA256 prime256v1 h2" {
		t.Errorf("%+v", s)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"(717225984) data", "(1000) data", "bodies are not 1 MiB"},
		{"protocol: h2", "protocol: http/1.1", "want TLSv1.2 ECDHE-ECDSA-AES128-SHA256 prime256v1 h2"},
		{"prime256v1", "secp384r1", "negotiated TLSv1.2 ECDHE-ECDSA-AES128-SHA256 secp384r1 h2"},
		{"requests:", "nothing:", "no report from h2load"},
	} {
		s := sample{Engine: "throughput"}
		if err := s.parseH2load([]byte(strings.Replace(out, tc.from, tc.to, 1)), p); err == nil ||
			!strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s → %s: %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
	// cps: RSA key exchange, no temp key; small bodies are not checked.
	s = sample{Engine: "cps"}
	cps := strings.NewReplacer("ECDHE-ECDSA-AES128-SHA256", "AES128-GCM-SHA256", "Server Temp Key: ECDH prime256v1 256 bits\n", "",
		"5.04s", "812.5ms").Replace(out)
	if err := s.parseH2load([]byte(cps), seedProfiles[2]); err != nil || s.Transactions != 684 ||
		math.Abs(s.CPS-684/0.8125) > 1e-6 || s.Negotiated != "TLSv1.2 AES128-GCM-SHA256 h2" {
		t.Errorf("cps: %v, %+v", err, s)
	}
}

func TestH2loadConns(t *testing.T) {
	c := cell{"cps", "2", seedProfiles[0]}
	prev := []*sample{
		{Engine: "cps", HTTP: "2", Profile: c.profile.Name, Tool: "tlsbench", CPS: 900, Transactions: 1},
		{Engine: "cps", HTTP: "1.1", Profile: c.profile.Name, Tool: "tlsbench", CPS: 1200, Transactions: 1},
		{Engine: "cps", HTTP: "2", Profile: c.profile.Name, Tool: "tlsbench", Error: "failed"},
	}
	for _, tc := range []struct {
		prev []*sample
		secs int
		want int
	}{{prev, 5, 4500}, {nil, 5, 1000}, {prev, 20, 10000}, {prev[:1], 0, 16}} {
		if got := h2loadConns(tc.prev, c, tc.secs); got != tc.want {
			t.Errorf("%d samples, %ds: %d, want %d", len(tc.prev), tc.secs, got, tc.want)
		}
	}
}

// TestMoreProfiles: a profile beyond the seed ones runs when named, and
// only then.
func TestMoreProfiles(t *testing.T) {
	o, err := parseOptions([]string{"--http", "2", "--dut", "nginx", "--profiles",
		"ecdhe-ecdsa-aes128-gcm-sha256-p256"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.profiles) != 1 || o.profiles[0].Ciphers != "ECDHE-ECDSA-AES128-GCM-SHA256" || o.profiles[0].Bulk != bulkGCM {
		t.Errorf("profiles %+v", o.profiles)
	}
	if o, err = parseOptions(nil, io.Discard); err != nil || len(o.profiles) != len(seedProfiles) {
		t.Errorf("default profiles %d (%v), want the %d seed ones", len(o.profiles), err, len(seedProfiles))
	}
}
