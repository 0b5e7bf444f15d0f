package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// badCase is one bad invocation: its arguments and what its one line must
// say (empty: only the exit code, the single line and no stack trace are
// checked).
type badCase struct {
	args []string
	want string
}

// TestBadInputTable runs bad invocations and bad files — flags, URLs,
// profiles, plans, records, ledgers, campaigns — and checks each exits 2
// with exactly one line on stderr naming the problem, no stack trace, and
// within a bounded time (no load, no hang).
func TestBadInputTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	missing := filepath.Join(dir, "missing")
	noDir := filepath.Join(dir, "no-such-dir", "out.json")
	notPEM := write("ca.txt", "not a certificate\n")
	const url = "https://127.0.0.1:1/"
	const rsa = "rsa2048-aes128-gcm-sha256"

	var cases []badCase
	add := func(want string, args ...string) { cases = append(cases, badCase{args, want}) }

	// The command line itself.
	add("")
	add(`unknown command "frobnicate"`, "frobnicate")
	add(`unknown command "CPS"`, "CPS")
	add(`unknown topic "nope"`, "help", "nope")
	add("one topic at most", "help", "cps", "serve")
	add("takes no arguments", "version", "extra")
	add(`unknown command "--frobnicate"`, "--frobnicate")

	// Every float, duration and size flag of the engine commands.
	for _, cmd := range []string{"cps", "throughput"} {
		for _, v := range []string{"NaN", "Inf", "-Inf", "-1", "+Inf", "nan", "1e400"} {
			add("--rate", cmd, "--rate", v, url)
		}
		add("--rate", cmd, "--rate", "fast", url)
		for _, f := range []string{"--duration", "--warmup", "--connect-timeout", "--handshake-timeout", "--read-timeout", "--start-tolerance"} {
			add(f, cmd, f, "-1s", url)
			add(f, cmd, f, "soon", url)
		}
		for _, f := range []string{"--connect-timeout", "--handshake-timeout", "--read-timeout", "--duration"} {
			add(f, cmd, f, "0s", url)
		}
		// The timeline: no negative ramp or pause, no pause in open loop.
		for _, f := range []string{"--ramp-up", "--ramp-down", "--pause"} {
			add(f, cmd, f, "-1s", url)
			add(f, cmd, f, "soon", url)
		}
		add("--pause must be 0 in open loop (the rate paces the starts), got 10ms", cmd, "--rate", "100",
			"--pause", "10ms", url)
		// Session resumption: a share, a mode crypto/tls has, one the
		// profile's version can do.
		for _, v := range []string{"-0.1", "1.5", "NaN", "Inf", "half"} {
			add("--resume", cmd, "--resume", v, url)
		}
		add("never by session ID", cmd, "--resume", "1", "--resumption", "session-id", url)
		add("--resumption must be tickets (TLS 1.2) or psk (TLS 1.3), got ids2", cmd, "--resume", "1", "--resumption",
			"ids2", url)
		add("negotiates TLS1.2, which resumes with tickets", cmd, "--resume", "1", "--resumption", "psk", url)
		add("negotiates TLS1.3, which resumes with psk", cmd, "--resume", "0.5", "--resumption", "tickets", "--profile",
			"tls13-aes128-gcm-x25519", url)
		add("--drain must not be negative", cmd, "--drain", "-1s", url)
		add("--drain", cmd, "--drain", "soon", url)
		// Shorter than the deadlines it must cover (default 5s+5s+10s: 20s).
		add("--drain 5s is shorter than the deadlines it must cover", cmd, "--drain", "5s", url)
		add("= 1m30s", cmd, "--drain", "1m", "--read-timeout", "80s", "--connect-timeout", "5s", "--handshake-timeout", "5s", url)
		for _, v := range []string{"-5", "-2", "big", "1e3"} {
			add("--expect-size", cmd, "--expect-size", v, url)
		}
		for _, v := range []string{"0", "-1", "many", "1000000000", "99999999999999999999"} {
			add("-c", cmd, "-c", v, url)
		}
		add("-c 100000", cmd, "-c", "100000", url) // beyond RLIMIT_NOFILE or memory
		// URLs.
		for _, u := range []string{"http://127.0.0.1/", "ftp://h/", "https://", "https://a b/", "https://h:0/", "https://h:99999/",
			"https://h:port/", "https://user:pw@h/", "127.0.0.1:443", "https://bü_cher.test/", "https://%zz/"} {
			add("URL", cmd, u)
		}
		add("one URL at most", cmd, url, url)
		// Profiles, CA, names, headers, sources.
		add(`unknown profile "nope"`, cmd, "--profile", "nope", url)
		add("profile file", cmd, "--profile-file", missing, url)
		add("--cacert", cmd, "--cacert", missing, url)
		add("no PEM certificate", cmd, "--cacert", notPEM, url)
		add("--cacert", cmd, "--cacert", dir, url)
		add("bad --resolve", cmd, "--resolve", "h:443", url)
		add("bad --resolve", cmd, "--resolve", "h:0:127.0.0.1", url)
		add("bad --resolve", cmd, "--resolve", "h:443:nowhere", url)
		add("bad --sni", cmd, "--sni", "bü_cher.test", url)
		add("bad --header", cmd, "-H", "NoColon", url)
		add("bad --header", cmd, "-H", "Bad Name: x", url)
		add("bad --source", cmd, "--source", "1.2.3", url)
		add("bad --source", cmd, "--source", "10.0.0.0/8", url)
		add("bad --source", cmd, "--source", "::1-::2", url)
		// Outputs, checked before any load.
		add("--json", cmd, "--json", noDir, url)
		add("--json", cmd, "--json", dir, url)
		add("--cpuprofile", cmd, "--cpuprofile", noDir, url)
		add("--keylog", cmd, "--keylog", noDir, url)
		// Agents.
		add("bad --shard", cmd, "--shard", "1", url)
		add("bad --shard", cmd, "--shard", "2/2", url)
		add("bad --shard", cmd, "--shard", "a/b", url)
		add("bad --start-at", cmd, "--start-at", "tomorrow", url)
		add("bad --report-to", cmd, "--report-to", "ftp://c/", url)
		// Objects (docs/OBJECTS.md).
		add(`bad --objects "1x"`, cmd, "--objects", "1x", url)
		add(`bad --objects "1k,"`, cmd, "--objects", "1k,", url)
		add(`weight "-1" is not a number`, cmd, "--objects", "1k:-1", url)
		add("--objects must have weights of a positive (finite) sum", cmd, "--objects", "1k:0,2k:0", url)
		add("--objects and --expect-size", cmd, "--objects", "1k", "--expect-size", "1024", url)
		add("the URL's path /1k would be ignored", cmd, "--objects", "1k", "https://127.0.0.1:1/1k")
		add("--object-path takes --objects", cmd, "--object-path", "/b/{size}", url)
		add("--object-path must use no template but {size}", cmd, "--objects", "1k", "--object-path", "/{n}", url)
		add("--requests-per-conn must not be negative", cmd, "--requests-per-conn", "-1", url)
		// Issue 40: a flag ignored where its sibling is refused.
		add("--resumption tickets: needs a resume share above 0", cmd, "--resumption", "tickets", url)
		add(`bad --sni "10.0.0.1": not a host name: an IP address`, cmd, "--sni", "10.0.0.1", url)
		add(`bad --sni "bad_name": not a host name`, cmd, "--sni", "bad_name", url)
		caOut := filepath.Join(dir, "client-ca.pem")
		add("--client-ca-out and --client-ca-key-out name the same file", cmd, "--profile",
			"ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls", "--client-ca-out", caOut, "--client-ca-key-out",
			dir+"//client-ca.pem", url)
	}
	// Issue 42: the protocol (--http) and HTTP/2's streams, refused before any load.
	h2Profiles := write("profiles/h2.yaml", "name: tls10\nmin_version: TLS1.0\nmax_version: TLS1.0\n"+
		"cipher_suites: [ECDHE-ECDSA-AES128-SHA]\ngroups: [P-256]\n"+
		"expect: {version: TLS1.0, cipher_suite: ECDHE-ECDSA-AES128-SHA, group: P-256}\n---\n"+
		"name: alpn-h2\nmin_version: TLS1.2\nmax_version: TLS1.2\ncipher_suites: [ECDHE-ECDSA-AES128-SHA256]\n"+
		"groups: [P-256]\nalpn: [h2]\nexpect: {version: TLS1.2, cipher_suite: ECDHE-ECDSA-AES128-SHA256, "+
		"group: P-256, alpn: h2}\n")
	for _, cmd := range []string{"cps", "throughput", "impact"} {
		at := []string{url}
		if cmd == "impact" {
			at = []string{"--baseline", url, "--candidate", url}
		}
		add(`bad --http "4": want 1.1 or 2`, append([]string{cmd, "--http", "4"}, at...)...)
		add(`bad --http "1.0": want 1.1 or 2`, append([]string{cmd, "--http", "1.0"}, at...)...)
		add("--profile tls10: http/2 runs over TLS 1.2 or later, but the profile's max_version is TLS1.0",
			append([]string{cmd, "--http", "2", "--profile-file", h2Profiles, "--profile", "tls10"}, at...)...)
		add("profile alpn-h2 expects alpn h2, but the run speaks http/1.1",
			append([]string{cmd, "--http", "1.1", "--profile-file", h2Profiles, "--profile", "alpn-h2"}, at...)...)
	}
	add("--streams must be at least 1, got 0", "throughput", "--http", "2", "--streams", "0", url)
	add("--streams must be at least 1, got 0", "throughput", "--streams", "0", url)
	add("unknown flag: --streams", "cps", "--http", "2", "--streams", "4", url)
	add("--streams 4: HTTP/1.1 has no streams", "throughput", "--http", "1.1", "--streams", "4", url)
	add("--streams 4: HTTP/1.1 has no streams", "throughput", "--streams", "4", url)
	add("--pipeline 2: HTTP/2 multiplexes streams", "throughput", "--pipeline", "2", "--http", "2", url)
	// Issue 43: HTTP/3 over QUIC and its 0-RTT, refused before any load.
	const tls13 = "tls13-aes128-gcm-x25519"
	add("--profile "+rsa+": http/3 runs over TLS 1.3 or later, but the profile's max_version is TLS1.2",
		"cps", "--http", "3", "--profile", rsa, url)
	add("--linger0: HTTP/3 runs over UDP: there is no TCP connection to reset", "cps", "--http", "3", "--profile",
		tls13, "--linger0", url)
	add("--resumption tickets: HTTP/3 runs over TLS 1.3, which resumes with psk", "cps", "--http", "3", "--profile",
		tls13, "--resume", "1", "--resumption", "tickets", url)
	add("--early-data: needs a resume share above 0", "cps", "--http", "3", "--profile", tls13, "--early-data", url)
	add("--early-data: http/1.1 sends no 0-RTT data", "cps", "--profile", tls13, "--resume", "1", "--early-data", url)
	add("--early-data: http/2 sends no 0-RTT data", "cps", "--http", "2", "--profile", tls13, "--resume", "1",
		"--early-data", url)
	add("--early-data: needs a resume share above 0", "impact", "--http", "3", "--profile", tls13, "--early-data",
		"--baseline", url, "--candidate", url)
	add("unknown flag: --early-data", "throughput", "--http", "3", "--profile", tls13, "--early-data", url)
	add("unknown flag: --streams", "cps", "--http", "3", "--profile", tls13, "--streams", "4", url)
	add("unknown flag: --streams", "impact", "--http", "3", "--profile", tls13, "--streams", "4",
		"--baseline", url, "--candidate", url)
	add("cps of "+rsa+" over http/3: profile: http/3 runs over TLS 1.3", "qualify", "--http", "3", "--profile", rsa,
		"--dut", "a="+url, "--out", filepath.Join(dir, "q-h3"))
	add("--resume 1: throughput keeps its connections open, so none would resume", "throughput", "--resume", "1", url)
	add("--pipeline", "throughput", "--pipeline", "0", url)
	add("--pipeline", "throughput", "--pipeline", "-3", url)
	add("--verify-body", "throughput", "--verify-body", "md5:00", url)
	add("--verify-body", "throughput", "--verify-body", "sha256:xyz", url)

	// Profile files.
	for name, body := range map[string]string{
		"cipher.yaml":  "name: x\nmin_version: TLS1.2\nmax_version: TLS1.2\nciphers: [NO-SUCH-CIPHER]\n",
		"version.yaml": "name: x\nmin_version: TLS9\nmax_version: TLS1.2\nciphers: [AES128-GCM-SHA256]\n",
		"empty.yaml":   "",
		"garbage.yaml": "{{{{ not yaml",
		"field.yaml":   "name: x\nflavour: mint\n",
		"noname.yaml":  "min_version: TLS1.2\nmax_version: TLS1.2\nciphers: [AES128-GCM-SHA256]\n",
		"order.yaml":   "name: x\nmin_version: TLS1.3\nmax_version: TLS1.2\nciphers: [AES128-GCM-SHA256]\n",
		"group.yaml":   "name: x\nmin_version: TLS1.2\nmax_version: TLS1.2\nciphers: [ECDHE-ECDSA-AES128-SHA256]\ngroups: [P-999]\n",
	} {
		f := write("profiles/"+name, body)
		add(name, "cps", "--profile-file", f, url)
	}
	add(`unknown profile "nope"`, "profiles", "show", "nope")
	add("unknown arguments", "profiles", "frob")
	add("unknown arguments", "profiles", "show")
	add("profile file", "profiles", "--profile-file", missing)

	// serve.
	add("bad --port", "serve", "--port", "70000")
	add("never by session ID", "serve", "--resumption", "session-id")
	add(`--resumption "tls": want tickets`, "serve", "--resumption", "tls")
	add("--ticket-rotation needs --resumption", "serve", "--ticket-rotation", "1h")
	add("--resumption psk resumes TLS 1.3 sessions, and no listener's profile", "serve", "--resumption", "psk",
		"--profile", rsa)
	add("--resumption tickets resumes TLS 1.2 sessions", "serve", "--resumption", "tickets", "--profile",
		"tls13-aes128-gcm-x25519")
	add("--plain serves no TLS: it takes no --resumption", "serve", "--plain", "--resumption", "tickets")
	add("--client-ca-out and --client-ca-key-out name the same file", "serve", "--client-ca-out",
		filepath.Join(dir, "ca-out.pem"), "--client-ca-key-out", filepath.Join(dir, "ca-out.pem"))
	add("--ticket-rotation must not be negative", "serve", "--resumption", "tickets", "--ticket-rotation", "-1s")
	add("bad --port", "serve", "--port", "-1")
	add("bad --port", "serve", "--port", "65534")
	add("bad --admin", "serve", "--admin", "garbage")
	add("bad --admin", "serve", "--admin", "127.0.0.1:99999")
	add("bad --admin", "serve", "--admin", "nohost.example:80")
	add("bad --listen", "serve", "--listen", "nowhere")
	add("--cert and --key go together", "serve", "--key", "k.pem")
	add("--cert/--key", "serve", "--cert", missing, "--key", missing)
	add("--delay", "serve", "--delay", "-1s")
	add("bad --repeat 0", "qualify", "--quick", "--repeat", "0")
	add("bad --repeat 21", "qualify", "--quick", "--repeat", "21")
	add("--repeat", "qualify", "--quick", "--repeat", "x")
	add("--repeat", "qualify", "--resume", dir, "--repeat", "2")
	add("--slow-delay", "serve", "--slow-delay", "0s")
	add("bad --delay-ramp", "serve", "--delay-ramp", "-2ms/s")
	add("bad --delay-ramp", "serve", "--delay-ramp", "fast")
	add("bad --delay-ramp", "serve", "--delay-ramp", "0s")
	add("--delay-jitter must not be negative", "serve", "--delay-jitter", "-5ms")
	add(`unknown fault "explode"`, "serve", "--fault", "explode")
	add("fraction", "serve", "--fault", "reset-handshake:7")
	add("fraction", "serve", "--fault", "alert:NaN")
	add("fraction", "serve", "--fault", "alert:-0.5")
	add("fraction", "serve", "--fault", "alert:0")
	add("--ca-out", "serve", "--ca-out", noDir)
	add("--ca-out", "serve", "--ca-out", dir)
	add("unexpected arguments", "serve", "extra")
	add("bad --backends 0: want 1 to 65535", "serve", "--plain", "--backends", "0")
	add("bad --backends -2", "serve", "--plain", "--backends", "-2")
	add("bad --backends 70000", "serve", "--plain", "--backends", "70000")
	add("--backends needs --plain", "serve", "--backends", "4")
	add("4 listeners on consecutive ports would end at 65537", "serve", "--plain", "--backends", "4", "--port", "65534")
	add("it takes no [--fault]", "serve", "--plain", "--backends", "2", "--fault", "alert")

	// calibrate.
	add("--cps", "calibrate", "--cps", "NaN")
	add("--gbps", "calibrate", "--gbps", "-1")
	add("--duration", "calibrate", "-d", "0s")
	add(`unknown profile "nope"`, "calibrate", "--profile", "nope")

	// impact.
	add("--baseline URL and --candidate URL", "impact")
	add("--rounds", "impact", "--baseline", url, "--candidate", url, "--rounds", "0")
	add("--cooldown", "impact", "--baseline", url, "--candidate", url, "--cooldown", "-1s")
	add("--format", "impact", "--baseline", url, "--candidate", url, "--format", "pdf")
	add("scheme must be https", "impact", "--baseline", "http://h/", "--candidate", url)
	add("--rate", "impact", "--baseline", url, "--candidate", url, "--rate", "NaN")
	add("--json", "impact", "--baseline", url, "--candidate", url, "--json", noDir)
	add("--urls", "impact", "--baseline", url, "--candidate", url, "--urls", missing)
	add("no URL in it", "impact", "--baseline", url, "--candidate", url, "--urls", write("urls-empty.txt", "# nothing\n"))
	add("is not an https URL or a path", "impact", "--baseline", url, "--candidate", url, "--urls", write("urls-bad.txt", "ftp://x/\n"))

	// Plans.
	good := "duts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n"
	method := "method: {duration: 1s, warmup: 0s, cooldown: 0s, explore: {concurrency: {min: 1, max: 2}, probe_duration: 100ms, min_gain: 5%}, " +
		"accept: {max_generator_cpu: 100%}, final: {min_accepted: 1, max_runs: 1, tolerance: 10%}}\n"
	plans := []struct{ name, body, want string }{
		{"not-yaml", "{{{", "plan"},
		{"empty", "", "plan"},
		{"no-name", good + method, "name is required"},
		{"no-duts", "name: x\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "at least one DUT"},
		{"dut-space", "name: x\nduts: [{name: a b, url: \"https://a.test/\"}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "no spaces"},
		{"dut-twice", "name: x\nduts: [{name: a, url: \"https://a.test/\"}, {name: a, url: \"https://b.test/\"}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "listed twice"},
		{"dut-http", "name: x\nduts: [{name: a, url: \"http://a.test/\"}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "https"},
		{"dut-port", "name: x\nduts: [{name: a, url: \"https://a.test:0/\"}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "port"},
		{"dut-unicode", "name: x\nduts: [{name: a, url: \"https://bü_cher.test/\"}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "internationalized"},
		{"dut-resolve", "name: x\nduts: [{name: a, url: \"https://a.test/\", resolve: nowhere}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "not an IP address"},
		{"endpoint-profile", "name: x\nduts: [{name: a, url: \"https://a.test/\", endpoints: {nope: \"https://e/\"}}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "nope"},
		{"endpoint-url", "name: x\nduts: [{name: a, url: \"https://a.test/\", endpoints: {" + rsa + ": \"http://e/\"}}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "endpoint"},
		{"cacert-missing", "name: x\nduts: [{name: a, url: \"https://a.test/\", cacert: " + missing + "}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "cacert"},
		{"cacert-not-pem", "name: x\nduts: [{name: a, url: \"https://a.test/\", cacert: " + notPEM + "}]\ntests: [{engine: cps, profiles: [" + rsa + "]}]\n" + method, "no PEM certificate"},
		{"no-tests", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\n" + method, "at least one test"},
		{"engine", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: ping, profiles: [" + rsa + "]}]\n" + method, "not cps or throughput"},
		{"path", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, path: 1k, profiles: [" + rsa + "]}]\n" + method, "must start with /"},
		{"no-profiles", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps}]\n" + method, "at least one is required"},
		{"profile", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, profiles: [nope]}]\n" + method, `unknown profile "nope"`},
		{"unknown-field", "name: x\ncolour: red\n" + good + method, "colour"},
		{"suite", "name: x\nsuite: rfc2544\n" + good + method, `unknown suite "rfc2544"`},
		{"suite-size", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{name: t, engine: cps, objects: 12q, profiles: [" + rsa + "]}]\n" + method, `size "12q"`},
		{"suite-weights", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{name: t, engine: cps, objects: \"1k:0\", profiles: [" + rsa + "]}]\n" + method, "weights sum to 0"},
		{"suite-of", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{name: t, engine: cps, of: u, share: 50%, profiles: [" + rsa + "]}]\n" + method, `of "u" names no earlier test`},
		{"objects-path", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{name: t, engine: cps, objects: 1k, path: /x, profiles: [" + rsa + "]}]\n" + method, `objects are asked for at object_path: path "/x" would be ignored`},
		{"of-later", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{name: \"7.6 1k\", engine: cps, profiles: [" + rsa + "]}, {name: t, engine: cps, of: \"7.7 1k\", share: 50%, profiles: [" + rsa + "]}]\n" + method, `named before it: "7.6 1k"`},
		{"resume-above-1", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, resume: 1.5, profiles: [" + rsa + "]}]\n" + method, "resume 1.5 is not a share of connections in (0, 1]"},
		{"resume-negative", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, resume: -0.5, profiles: [" + rsa + "]}]\n" + method, "resume -0.5 is not a share"},
		{"resume-throughput", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: throughput, resume: 0.5, profiles: [" + rsa + "]}]\n" + method, "resume needs requests_per_conn"},
		{"resumption-alone", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, resumption: tickets, profiles: [" + rsa + "]}]\n" + method, "resumption needs resume"},
		{"resumption-psk", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, resume: 1, resumption: psk, profiles: [" + rsa + "]}]\n" + method, "negotiates TLS1.2, which resumes with tickets"},
		{"resumption-id", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, resume: 1, resumption: session-id, profiles: [" + rsa + "]}]\n" + method, "never resumes by session ID"},
		{"early-data-h1", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, resume: 1, early_data: true, profiles: [tls13-aes128-gcm-x25519]}]\n" + method, "over http/1.1: early_data: http/1.1 sends no 0-RTT data"},
		{"early-data-no-resume", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, http: 3, early_data: true, profiles: [tls13-aes128-gcm-x25519]}]\n" + method, "0-RTT data goes with a resumed session"},
		{"h3-tls12", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{engine: cps, http: 3, profiles: [" + rsa + "]}]\n" + method, "http/3 runs over TLS 1.3 or later"},
		{"suite-ramp", "name: x\nduts: [{name: a, url: \"https://a.test/\"}]\ntests: [{name: t, engine: cps, ramp_up: 10s, profiles: [" + rsa + "]}]\n" + method, "ramp_up 10s is longer than the run"},
	}
	for _, m := range []struct{ from, to, want string }{
		{"duration: 1s", "duration: 0s", "duration must be positive"},
		{"duration: 1s", "duration: soon", "bad duration"},
		{"duration: 1s", "duration: -1s", "bad duration"},
		{"probe_duration: 100ms", "probe_duration: 0s", "probe_duration"},
		{"min: 1, max: 2", "min: 0, max: 2", "explore.concurrency"},
		{"min: 1, max: 2", "min: 4, max: 2", "explore.concurrency"},
		{"min: 1, max: 2", "min: 1, max: 1000000000", "explore.concurrency.max"},
		{"min_gain: 5%", "min_gain: 100%", "min_gain"},
		{"min_gain: 5%", "min_gain: NaN%", "percentage"},
		{"min_gain: 5%", "min_gain: lots", "percentage"},
		{"max_generator_cpu: 100%", "max_generator_cpu: 0%", "max_generator_cpu"},
		{"max_generator_cpu: 100%", "max_generator_cpu: Inf%", "percentage"},
		{"max_generator_cpu: 100%", "max_generator_cpu: 100%, max_errors: -1", "max_errors"},
		{"max_generator_cpu: 100%", "max_generator_cpu: 100%, max_error_rate: 200%", "max_error_rate"},
		{"max_generator_cpu: 100%", "max_generator_cpu: 100%, max_other_cpu: 150%", "max_other_cpu"},
		{"max_generator_cpu: 100%", "max_generator_cpu: 100%, max_steal: -5%", "max_steal"},
		{"min_accepted: 1", "min_accepted: 0", "min_accepted"},
		{"max_runs: 1", "max_runs: 0", "max_runs"},
		{"tolerance: 10%", "tolerance: 0%", "tolerance"},
		{"tolerance: 10%", "tolerance: 100%", "tolerance"},
		{"cooldown: 0s", "cooldown: 0s, stop_on_unsupported: maybe", "plan"},
	} {
		plans = append(plans, struct{ name, body, want string }{"method-" + m.to, "name: x\n" + good + strings.Replace(method, m.from, m.to, 1), m.want})
	}
	var planOuts []string // no bad plan may create its campaign directory
	for i, p := range plans {
		f := write(filepath.Join("plans", strings.NewReplacer(" ", "", ":", "", "%", "").Replace(p.name)+".yaml"), p.body)
		out := filepath.Join(dir, "campaigns", "p"+string(rune('a'+i%26))+p.name)
		add(p.want, "qualify", "--plan", f, "--out", out)
		planOuts = append(planOuts, out)
	}
	add("plan", "qualify", "--plan", missing)
	add("bad --dut", "qualify", "--dut", "nourl")
	add("bad --dut", "qualify", "--dut", "=https://a/")
	add("scheme must be https", "qualify", "--dut", "a=http://x/")
	add("internationalized", "qualify", "--dut", "a=https://bü_cher.test/")
	add("bad --test", "qualify", "--test", "ping")
	add(`unknown suite "rfc2544"`, "qualify", "--suite", "rfc2544")
	add(`unknown test "7.10"`, "qualify", "--suite", "rfc9411", "--tests", "7.6,7.10")
	add("--tests needs --suite", "qualify", "--tests", "7.6")
	add(`bad --suite "": name a suite`, "qualify", "--suite", "")
	add(`bad --tests "": name at least one test`, "qualify", "--suite", "rfc9411", "--tests", "")
	add(`bad --tests "": name at least one test`, "qualify", "--suite", "rfc9411", "--tests=")
	add("--tests needs --suite", "qualify", "--tests", "")
	add("bad --resolve", "qualify", "--dut", "a=https://a.test/", "--resolve", "a.test:443:nowhere")
	add("no --dut URL has host b.test and port 443", "qualify", "--dut", "a=https://a.test/", "--resolve",
		"b.test:443:127.0.0.1")
	add("no --dut, --profile, --test, --suite, --tests, --resolve", "qualify", "--plan", missing, "--resolve",
		"a.test:443:127.0.0.1")
	add("no --test", "qualify", "--suite", "rfc9411", "--test", "cps")
	add("no --dut, --profile", "qualify", "--plan", missing, "--suite", "rfc9411")
	add("--resume takes", "qualify", "--resume", dir, "--suite", "rfc9411")
	add(`unknown profile "nope"`, "qualify", "--profile", "nope")
	add("cacert", "qualify", "--dut", "a=https://a.test/", "--cacert", missing)
	add("no --dut, --profile", "qualify", "--plan", write("plans/ok.yaml", "name: x\n"+good+method), "--profile", rsa)
	// Issue 42: the protocol of the default plan, a suite or a plan's tests.
	add(`bad --http "4": want 1.1 or 2`, "qualify", "--http", "4")
	add(`bad --http "1.0": want 1.1 or 2`, "qualify", "--suite", "rfc9411", "--http", "1.0")
	for _, suite := range [][]string{nil, {"--suite", "rfc9411"}} {
		add("tests[0]: cps of tls10 over http/2: profile: http/2 runs over TLS 1.2 or later", append([]string{"qualify",
			"--http", "2", "--profile-file", h2Profiles, "--profile", "tls10"}, suite...)...)
		add("expects alpn h2, but the run speaks http/1.1", append([]string{"qualify", "--http", "1.1",
			"--profile-file", h2Profiles, "--profile", "alpn-h2"}, suite...)...)
	}
	add("--resume takes", "qualify", "--resume", dir, "--http", "2")
	add("no --dut, --profile", "qualify", "--plan", write("plans/ok2.yaml", "name: x\n"+good+method), "--http", "2")
	add(`plan: tests[0]: http "4": want 1.1 or 2`, "qualify", "--plan", write("plans/http4.yaml", "name: x\n"+
		strings.Replace(good, "engine: cps,", "engine: cps, http: 4,", 1)+method))
	add("HTTP/1.1 has no streams", "qualify", "--plan", write("plans/streams.yaml", "name: x\n"+
		strings.Replace(good, "engine: cps,", "engine: throughput, streams: 2,", 1)+method))
	add("streams are throughput's", "qualify", "--plan", write("plans/cpsstreams.yaml", "name: x\n"+
		strings.Replace(good, "engine: cps,", "engine: cps, http: 2, streams: 2,", 1)+method))
	add("streams must not be negative", "qualify", "--plan", write("plans/negstreams.yaml", "name: x\n"+
		strings.Replace(good, "engine: cps,", "engine: throughput, http: 2, streams: -2,", 1)+method))
	add("--resume takes", "qualify", "--resume", dir, "--test", "cps")
	add("--resume", "qualify", "--resume", missing)
	add("--out", "qualify", "--dut", "a=https://a.test/", "--out", filepath.Join(dir, "no", "such", "campaign"))
	add("bad --executor", "qualify", "--executor", "cloud")
	add("--agents must be at least 1", "qualify", "--executor", "processes", "--agents", "-1")
	add("--start-margin", "qualify", "--executor", "processes", "--start-margin", "-1s")

	// Records, ledgers, campaigns: report, compare, merge.
	rec := writeRecord(t, dir, "rec-cps.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "a.test", Level: 4, Value: 100, CPU: 0.2})
	tput := writeRecord(t, dir, "rec-tput.json", reporttest.RunSpec{Engine: "throughput", Profile: reporttest.P384, Host: "a.test", Level: 4, Value: 1, CPU: 0.2})
	camp := writeCampaign(t, dir, "campaigns/fw", reporttest.Firmware("fw", "adc-a", 1))
	badRecords := map[string]string{
		"empty.json":     "",
		"garbage.json":   "not json",
		"array.json":     "[1, 2, 3]",
		"truncated.json": `{"schema": "tlsbench.run/v1", "engine": "cps", "pro`,
		"schema.json":    `{"schema": "something-else/v9"}`,
		"null.json":      "null",
		"number.json":    "42",
		"histogram.json": `{"schema": "tlsbench.run/v1", "histograms": {"handshake": "!!!not base64"}}`,
	}
	for name, body := range badRecords {
		f := write("bad-records/"+name, body)
		add(name, "report", f)
		add(name, "compare", f, rec)
		add(name, "merge", f, "-o", filepath.Join(dir, "merged.json"))
	}
	ledgerOnly := filepath.Join(dir, "campaigns", "unfinished")
	write("campaigns/unfinished/ledger.jsonl", "")
	badSummary := filepath.Join(dir, "campaigns", "bad-summary")
	write("campaigns/bad-summary/summary.json", "{not json")
	write("campaigns/bad-summary/ledger.jsonl", "")
	badLedger := filepath.Join(dir, "campaigns", "bad-ledger")
	write("campaigns/bad-ledger/summary.json", `{"name": "x", "rows": [], "cells": [], "preliminary": []}`)
	write("campaigns/bad-ledger/ledger.jsonl", "garbage\n{\"key\": 1}\nmore garbage\n")
	badPlan := filepath.Join(dir, "campaigns", "bad-plan")
	write("campaigns/bad-plan/summary.json", `{"name": "x", "rows": [], "cells": [], "preliminary": []}`)
	write("campaigns/bad-plan/ledger.jsonl", "")
	write("campaigns/bad-plan/plan.yaml", "{{{")
	emptyDir := filepath.Join(dir, "campaigns", "empty")
	if err := os.MkdirAll(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{ledgerOnly, badSummary, badLedger, badPlan, emptyDir} {
		add(filepath.Base(c), "report", c)
		add(filepath.Base(c), "compare", c, camp)
		add(filepath.Base(c), "qualify", "--resume", c)
	}
	add("part of a campaign", "report", filepath.Join(camp, "summary.json"))
	add("part of a campaign", "report", filepath.Join(camp, "ledger.jsonl"))
	add("part of a campaign", "report", filepath.Join(camp, "plan.yaml"))
	add("no input", "report")
	add(missing, "report", missing)
	add("unknown --format", "report", "--format", "docx", rec)
	add("give -o FILE", "report", "--format", "md", rec)
	add("give -o FILE", "report", "--format", "md", "-o", "-", rec)
	add("directory", "report", "-o", noDir, rec)
	add("directory", "report", "--format", "md", "-o", filepath.Join(dir, "no-such-dir", "r.md"), camp)
	add("is a directory", "report", "-o", dir, rec)
	add("want two inputs", "compare", rec)
	add("want two inputs", "compare", rec, rec, rec)
	add("unknown --format", "compare", "--format", "hlog", rec, rec)
	add("directory", "compare", "-o", noDir, rec, rec)
	add("", "compare", rec, tput)
	add("no record", "merge", "-o", filepath.Join(dir, "m.json"))
	add("-o FILE is required", "merge", rec)
	add("-o", "merge", rec, "-o", noDir)
	add("", "merge", rec, tput, "-o", filepath.Join(dir, "m.json"))

	// collect and k8s.
	add("--listen ADDR is required", "collect", "--expect", "2", "-o", "m.json")
	add("--expect must be at least 1", "collect", "--listen", "127.0.0.1:0", "--expect", "0", "-o", "m.json")
	add("-o FILE is required", "collect", "--listen", "127.0.0.1:0", "--expect", "2")
	add("--deadline", "collect", "--listen", "127.0.0.1:0", "--expect", "2", "-o", "m.json", "--deadline", "-1s")
	add("-o", "collect", "--listen", "127.0.0.1:0", "--expect", "2", "-o", noDir)
	add("--keep", "collect", "--listen", "127.0.0.1:0", "--expect", "2", "-o", filepath.Join(dir, "m.json"), "--keep", filepath.Join(dir, "no", "such", "dir"))
	add("want a subcommand", "k8s")
	add("unknown subcommand", "k8s", "apply")
	add("--start-in", "k8s", "manifest", "--start-in", "-1s")
	// A ramp may be any length, but the whole load must fit the Job's life.
	add("--active-deadline 1h0m0s ends before the load does", "k8s", "manifest",
		"--agents", "2", "--image", "i", "--report-to", "http://127.0.0.1:1/", "--token-file", tokenFile(t), "--",
		"cps", "https://dut/1k", "-c", "8", "--ramp-up", "1h")
	// Device counters (issue 27: items 1, 7, 8): a timeout out of range,
	// the flag twice, one "(e.g. …)" at most.
	add(`timeout "99999999999h" is out of range (at most 1m0s)`, "cps", "--device-counters",
		"kind=command sessions='sleep 600' timeout=99999999999h", url)
	add(`timeout "1h" is out of range (at most 1m0s)`, "cps", "--device-counters",
		"kind=command sessions='sleep 600' timeout=1h", url)
	add(`timeout "soon" is not a duration, e.g. 2s`, "throughput", "--device-counters",
		"kind=nginx url=http://h/ timeout=soon", url)
	add("kind=nginx has no frontend", "cps", "--device-counters", "kind=nginx url=http://h/ frontend=fe", url)
	add("kind=prometheus has no frontend", "cps", "--device-counters",
		`kind=prometheus url=http://h/ sessions=x frontend=fe`, url)
	add("--device-counters given twice", "cps", "--device-counters", "kind=nginx url=http://h/",
		"--device-counters", "kind=nginx url=http://g/", url)
	// Device counters in an agent of several (issue 27 item 7): refused,
	// not dropped from the agents' run.
	const devSpec = "kind=target url=http://127.0.0.1:1/stats"
	add("--device-counters is not for the agents", "k8s", "manifest", "--agents", "2", "--image", "i",
		"--report-to", "http://127.0.0.1:1/", "--token-file", tokenFile(t), "--", "cps", "https://dut/1k", "-c", "8",
		"--device-counters", devSpec)
	add("--device-counters is not for the agents", "cps", "--shard", "0/2", "--device-counters", devSpec, url)
	// Issue 27: --metrics-linger alone, help's subcommands, schema lists.
	add("--metrics-linger 5s keeps the metrics endpoint up: it needs --metrics-listen",
		"cps", "--metrics-linger", "5s", url)
	add("--metrics-linger 1m0s keeps the metrics endpoint up: it needs --metrics-listen",
		"serve", "--metrics-linger", "1m")
	add(`unknown topic "k8s frob" (subcommands of k8s: manifest)`, "help", "k8s", "frob")
	add(`one topic at most after "k8s manifest" (it has no subcommands)`, "help", "k8s", "manifest", "x")
	add(`no schema "nosuch" (schemas: tlsbench/backends/v1, tlsbench/compare/v1, tlsbench/`, "schema", "nosuch")
	add("want one schema at most; got 2: run, ledger", "schema", "run", "ledger")

	// Issue 27 (ledger): a resumed ledger with a whole line that is not an
	// entry is refused, naming the file and the line (the ledger untouched:
	// ledger_resume_test.go).
	for name, ledger := range map[string]string{"resume-garbage": "garbage\n", "resume-invalid": `{"key": 1}` + "\n"} {
		write("campaigns/"+name+"/plan.yaml", "name: x\n"+good+method)
		f := write("campaigns/"+name+"/ledger.jsonl", ledger)
		add(f+": line 1", "qualify", "--resume", filepath.Dir(f))
	}
	// Issue 27 (serve): faults that do not add up, a ramp past its bound.
	add("fault alert is given twice", "serve", "--fault", "alert:0.5", "--fault", "alert:0.25")
	add("the fractions add up to 1.1, more than 1", "serve", "--fault", "alert:0.6", "--fault", "status-503:0.5")
	add("the fractions add up to 2, more than 1", "serve", "--fault", "stall", "--fault", "alert")
	add("bad --delay-ramp \"1000000h/s\": at most 1s/s", "serve", "--delay-ramp", "1000000h/s")
	add("bad --delay-ramp \"2s/s\": at most 1s/s", "serve", "--delay-ramp", "2s/s")
	// Issue 27 (plans): final.repeat: 0 refused as --repeat 0 is; a DUT's
	// pid file that does not exist, refused when the plan is read.
	repeat0 := write("plans/repeat0.yaml",
		"name: x\n"+good+strings.Replace(method, "max_runs: 1,", "max_runs: 1, repeat: 0,", 1))
	add("final.repeat 0 is out of range [1, 20]",
		"qualify", "--plan", repeat0, "--out", filepath.Join(dir, "campaigns", "repeat0"))
	nopid := write("plans/nopid.yaml", "name: x\n"+strings.Replace(good, "url: \"https://a.test/\"",
		"url: \"https://a.test/\", processes: ["+filepath.Join(dir, "nginx.pid")+"]", 1)+method)
	add("pid file "+filepath.Join(dir, "nginx.pid")+": no such file",
		"qualify", "--plan", nopid, "--out", filepath.Join(dir, "campaigns", "nopid"))
	planOuts = append(planOuts, filepath.Join(dir, "campaigns", "repeat0"), filepath.Join(dir, "campaigns", "nopid"))

	if len(cases) < 150 {
		t.Fatalf("only %d cases", len(cases))
	}
	t.Logf("%d bad invocations", len(cases))
	for _, tc := range cases {
		code, stderr, timedOut := invokeBounded(t, 20*time.Second, tc.args...)
		switch {
		case timedOut:
			t.Errorf("%q: still running after 20 s", tc.args)
			continue
		case code != exitBadUsage:
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, exitBadUsage, stderr)
			continue
		case strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic:"):
			t.Errorf("%q: stack trace on stderr: %q", tc.args, stderr)
		}
		if len(tc.args) == 0 {
			continue // no command: the usage, on stderr
		}
		if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%q: %d lines on stderr, want one: %q", tc.args, lines, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q does not name %q", tc.args, stderr, tc.want)
		}
		checkHints(t, strings.Join(tc.args, " "), stderr)
		if strings.Contains(stderr, ".tmp") {
			t.Errorf("%q: stderr names a temporary file: %q", tc.args, stderr)
		}
	}
	for _, out := range planOuts {
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a bad plan created its campaign directory %s", out)
		}
	}
}

// invokeBounded runs the CLI in-process with a deadline: past it, the
// context is cancelled and the call reported as timed out.
func invokeBounded(t *testing.T, limit time.Duration, args ...string) (code int, stderr string, timedOut bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb testdut.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, &out, &errb) }()
	select {
	case code = <-done:
		return code, errb.String(), false
	case <-time.After(limit):
		cancel()
		select {
		case code = <-done:
		case <-time.After(10 * time.Second):
		}
		return code, errb.String(), true
	}
}

// TestBadDeviceCountersTable: device counters that cannot be read, or bad
// ones (issue 27, items 4, 5, 8), each with its exit code and message: an
// unreadable source fails before the load (exit 1, "no load sent", the
// target counts no connection), a bad one is bad input (exit 2); every
// message is one line with one "(e.g. …)" at most.
func TestBadDeviceCountersTable(t *testing.T) {
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/garbage":
			fmt.Fprint(w, "<html>hello</html>")
		case "/negative":
			fmt.Fprint(w, "Active connections: 1\nserver accepts handled requests\n -7 -7 3\n")
		case "/csv":
			fmt.Fprint(w, "# pxname,svname,stot,bin,bout,ereq,hrsp_4xx,hrsp_5xx,req_tot\nfe,FRONTEND,1,1,1,0,0,0,1\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer pages.Close()
	url, conns := countingTarget(t)
	for _, tc := range []struct {
		spec string
		code int
		want string
	}{
		{"kind=nginx url=http://127.0.0.1:1/stub_status", exitFailed, "connection refused"},
		{"kind=nginx url=" + pages.URL + "/garbage", exitFailed, "not nginx's stub_status page"},
		{"kind=command sessions='sleep 600' timeout=300ms", exitFailed, "no answer within the timeout, 300ms"},
		{"kind=haproxy url=" + pages.URL + "/csv frontend=fe_nope", exitFailed, `no frontend "fe_nope" (frontends: fe)`},
		{"kind=nginx url=" + pages.URL + "/negative", exitFailed, `"-7": negative, not a count`},
		{"kind=command sessions='echo -3'", exitFailed, `printed "-3": negative, not a count`},
		{"kind=command sessions='echo 2.5'", exitFailed, `printed "2.5": not a whole number, not a count`},
		{"kind=command sessions='echo 99999999999999999999'", exitFailed,
			"out of range, a count is at most 9223372036854775807"},
		{"kind=command sessions='sleep 1' timeout=99999999999h", exitBadUsage,
			`timeout "99999999999h" is out of range (at most 1m0s)`},
		{"kind=command sessions='sleep 1' timeout=-1s", exitBadUsage, `timeout "-1s" is not above 0, e.g. 2s`},
		{"kind=command", exitBadUsage, "names a command per counter, e.g. sessions="},
	} {
		args := []string{"cps", "-q", "-k", "--profile", countingProfile, "-c", "2", "-d", "1s", "--warmup", "0s",
			"--device-counters", tc.spec, url}
		code, stderr, timedOut := invokeBounded(t, 20*time.Second, args...)
		switch {
		case timedOut:
			t.Errorf("%s: still running after 20 s", tc.spec)
		case code != tc.code:
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.spec, code, tc.code, stderr)
		case strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want):
			t.Errorf("%s: stderr %q, want one line naming %q", tc.spec, stderr, tc.want)
		case strings.Count(stderr, "e.g.") > 1:
			t.Errorf("%s: stderr %q has more than one example", tc.spec, stderr)
		case code == exitFailed && !strings.Contains(stderr, "no load sent"):
			t.Errorf("%s: stderr %q does not say no load was sent", tc.spec, stderr)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the target counted %d connections: load was sent with unreadable counters", n)
	}
	// The control: counters that can be read, and the target counts the load.
	code, stderr, _ := invokeBounded(t, 20*time.Second, "cps", "-q", "-k", "--profile", countingProfile, "-c", "2",
		"-d", "300ms", "--warmup", "0s", "--device-counters", "kind=command sessions='echo 0'", url)
	if code != exitOK || conns.Load() == 0 {
		t.Errorf("readable counters: exit %d, %d connections (stderr %q); want the load", code, conns.Load(), stderr)
	}
}

// TestEmptyWindowFails: a run whose measured window has no successful
// transaction (issue 40 item 5: --rate 1e12, every start of the window
// dropped) exits 1 with the reason, and its table quotes no latency.
func TestEmptyWindowFails(t *testing.T) {
	code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "--rate", "1e12", "--ramp-up", "1s", "-d",
		"1s", "--warmup", "0s")
	if code != exitFailed || strings.Count(stderr, "\n") > 2 || !strings.Contains(stderr, "nothing in the measured window") {
		t.Errorf("exit %d, stderr %q: want exit %d naming the empty window", code, stderr, exitFailed)
	}
	if strings.Contains(stdout, " 0 µs") {
		t.Errorf("a latency quoted for an empty window:\n%s", stdout)
	}
}

// TestQualifyResolve: qualify --resolve HOST:PORT:ADDR makes the --dut DUTs
// whose URL is HOST:PORT dial ADDR (the plan's resolve), as the engines'.
func TestQualifyResolve(t *testing.T) {
	q, err := parseQualify([]string{"--dut", "a=https://A.test:8443/", "--dut", "b=https://b.test/", "--resolve",
		"a.test:8443:127.0.0.2", "--out", filepath.Join(t.TempDir(), "c")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d := q.plan.DUTs; len(d) != 2 || d[0].Resolve != "127.0.0.2" || d[1].Resolve != "" {
		t.Errorf("DUTs %+v: want a dialled at 127.0.0.2, b by its name", d)
	}
}

// TestQualifyUnresolvedDUT: a DUT whose name does not resolve stops the
// campaign in the preliminary phase with the resolver's answer (exit 1),
// not as a profile the device does not support (issue 40 item 8).
func TestQualifyUnresolvedDUT(t *testing.T) {
	code, stdout, stderr := invoke(t, context.Background(), "qualify", "-q", "--quick", "--dut",
		"a=https://nosuch.invalid/", "--test", "cps", "--profile", "rsa2048-aes128-gcm-sha256", "--out",
		filepath.Join(t.TempDir(), "c"))
	if code != exitFailed || !strings.Contains(stderr, "cannot resolve nosuch.invalid") ||
		strings.Contains(stdout+stderr, "not supported") {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit %d naming the resolver's failure", code, stdout, stderr,
			exitFailed)
	}
}

// TestStatusNamesPath: a preflight answered with a status names the path
// asked for, once (issue 40 item 9: "status (status 404)").
func TestStatusNamesPath(t *testing.T) {
	code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-d", "1s", "--objects", "1k,2k", "--object-path",
		"/nope/{size}")
	if code != exitFailed || !strings.Contains(stderr, "the server's answer: status 404 for /nope/") ||
		strings.Contains(stderr, "status (status") {
		t.Errorf("exit %d, stderr %q: want exit %d, status 404 for /nope/…", code, stderr, exitFailed)
	}
}
