package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// dutProfile is the profile of the two-device tests.
const dutProfile = "ecdhe-ecdsa-aes128-sha256-p256"

// twoDevices starts two reference targets on one port of 127.0.0.1 and
// 127.0.0.2, each with its own leaf certificate for www.fwtest.com (and
// localhost) from one CA: two load balancers behind one host name. It
// returns the port, the CA file and each device's address and leaf.
func twoDevices(t *testing.T) (port, ca string, addrs []string, leaves []tls.Certificate) {
	t.Helper()
	p, err := profiles.Builtin().Get(dutProfile)
	if err != nil {
		t.Fatal(err)
	}
	authority, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ca = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, authority.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	// A port free on both addresses: a few tries at most.
	for try := 0; try < 20 && port == ""; try++ {
		ln, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			t.Skipf("no 127.0.0.2 on this host: %v", err)
		}
		candidate := portOf(ln.Addr().String())
		ln.Close()
		var started []*target.Target
		for _, host := range []string{"127.0.0.1", "127.0.0.2"} {
			leaf, err := authority.Leaf(p.ServerCertKey(), []string{"www.fwtest.com", "localhost"}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := net.LookupPort("tcp", candidate)
			tg, err := target.Start(target.Config{Host: host, Port: n, Profiles: []*profiles.Profile{p}, Cert: &leaf})
			if err != nil {
				break // taken on this address: another port
			}
			started = append(started, tg)
			leaves = append(leaves, leaf)
		}
		if len(started) == 2 {
			port = candidate
			for _, tg := range started {
				t.Cleanup(func() { tg.Close() })
			}
			break
		}
		for _, tg := range started {
			tg.Close()
		}
		leaves = nil
	}
	if port == "" {
		t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	}
	return port, ca, []string{"127.0.0.1:" + port, "127.0.0.2:" + port}, leaves
}

func fingerprint(c tls.Certificate) string {
	sum := sha256.Sum256(c.Certificate[0])
	return hex.EncodeToString(sum[:])
}

// measure runs a short cps and returns its record.
func measure(t *testing.T, file string, args ...string) *metrics.Run {
	t.Helper()
	// One worker: the devices are in this process, whose CPU the record
	// counts as the generator's; two workers and their servers can keep
	// both cores busy, and the report's acceptance rule (generator-bound
	// above 90%) would publish nothing.
	args = append([]string{"cps", "-q", "-c", "1", "-d", "1s", "--warmup", "0s", "--profile", dutProfile, "--json", file}, args...)
	code, _, stderr := invoke(t, context.Background(), args...)
	if code != exitOK {
		t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
	r, err := metrics.ReadRun(file)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTwoResolveDevices: one host name, two devices reached with --resolve
// (the WAF study's pattern). Each record names the address it dialled and
// the certificate it was shown; report shows two DUTs, compare labels its
// sides apart. Named alike with --dut, they are refused unless
// --allow-mixed-dut.
func TestTwoResolveDevices(t *testing.T) {
	port, ca, addrs, leaves := twoDevices(t)
	dir := t.TempDir()
	url := "https://www.fwtest.com:" + port + "/1k"
	var files []string
	for i, addr := range addrs {
		file := filepath.Join(dir, []string{"lb.json", "lb-waf.json"}[i])
		ip, _, _ := net.SplitHostPort(addr)
		r := measure(t, file, url, "--resolve", "www.fwtest.com:"+port+":"+ip, "--cacert", ca)
		want := metrics.Target{URL: url, Address: addr, ServerName: "www.fwtest.com", LeafSHA256: fingerprint(leaves[i]), CAFile: ca}
		if r.Target != want {
			t.Errorf("device %d: target %+v, want %+v", i, r.Target, want)
		}
		files = append(files, file)
	}
	if fingerprint(leaves[0]) == fingerprint(leaves[1]) {
		t.Fatal("the two devices share a certificate")
	}

	// A host name is recorded as the address it resolved to and dialled.
	r := measure(t, filepath.Join(dir, "localhost.json"), "https://localhost:"+port+"/1k", "--cacert", ca)
	if r.Target.Address != addrs[0] || r.Target.LeafSHA256 != fingerprint(leaves[0]) || r.Target.ServerName != "localhost" {
		t.Errorf("by name: target %+v, want address %s", r.Target, addrs[0])
	}

	// report: two DUTs, told apart by the address dialled.
	code, stdout, stderr := invoke(t, context.Background(), append([]string{"report", "--format", "json"}, files...)...)
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep struct {
		DUTs  []string `json:"duts"`
		Table []struct {
			Results []struct {
				DUT string   `json:"dut"`
				CPS *float64 `json:"cps"`
			} `json:"results"`
		} `json:"table"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	host := "www.fwtest.com:" + port
	if want := []string{host + " (" + addrs[0] + ")", host + " (" + addrs[1] + ")"}; !slices.Equal(rep.DUTs, want) {
		t.Errorf("report DUTs %q, want %q", rep.DUTs, want)
	}
	if len(rep.Table) != 1 || len(rep.Table[0].Results) != 2 || rep.Table[0].Results[0].CPS == nil || rep.Table[0].Results[1].CPS == nil {
		var why []string // the default acceptance rule's reasons, if it refused a record
		for _, file := range files {
			if r, err := metrics.ReadRun(file); err == nil {
				why = append(why, fmt.Sprintf("%s: %q", filepath.Base(file), method.Judge(plan.DefaultMethod().Accept, r)))
			}
		}
		t.Fatalf("table %+v: want one row with both devices' CPS (%s)", rep.Table, strings.Join(why, "; "))
	}
	for i, file := range files {
		r, _ := metrics.ReadRun(file)
		if got := *rep.Table[0].Results[i].CPS; got != metrics.Value(r.CPS) {
			t.Errorf("%s: published CPS %v, its record's %v", rep.Table[0].Results[i].DUT, got, metrics.Value(r.CPS))
		}
	}
	code, stdout, stderr = invoke(t, context.Background(), "compare", files[1], files[0])
	if code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	if want := "A: " + files[1] + ", DUT " + host + " (" + addrs[1] + "). B: " + files[0] + ", DUT " + host + " (" + addrs[0] + ")."; !strings.Contains(stdout, want) {
		t.Errorf("compare does not label the devices %q:\n%s", want, stdout)
	}

	// One --dut name on both devices: refused, naming both files.
	var named []string
	for i, addr := range addrs {
		file := filepath.Join(dir, []string{"named-1.json", "named-2.json"}[i])
		ip, _, _ := net.SplitHostPort(addr)
		if r := measure(t, file, url, "--resolve", "www.fwtest.com:"+port+":"+ip, "--cacert", ca, "--dut", "lb"); r.Target.DUT != "lb" {
			t.Errorf("--dut lb: record names %q", r.Target.DUT)
		}
		named = append(named, file)
	}
	want := "DUT lb: " + named[0] + " dialled " + addrs[0] + ", " + named[1] + " " + addrs[1] + ": two devices under one name (--allow-mixed-dut reports them as one)"
	wantUsageError(t, []string{"report", named[0], named[1]}, want)
	wantUsageError(t, []string{"compare", named[0], named[1]}, want)
	// --allow-mixed-dut: one DUT, and the table says it is two devices.
	code, stdout, stderr = invoke(t, context.Background(), "report", "--allow-mixed-dut", "--format", "json", named[0], named[1])
	if code != exitOK {
		t.Fatalf("report --allow-mixed-dut: exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.DUTs, []string{"lb"}) || !strings.Contains(stdout, "records of 2 devices under one name: "+addrs[0]) {
		t.Errorf("--allow-mixed-dut: DUTs %q, no note of the two devices:\n%s", rep.DUTs, stdout)
	}
	if code, _, stderr := invoke(t, context.Background(), "compare", "--allow-mixed-dut", named[0], named[1]); code != exitOK {
		t.Errorf("compare --allow-mixed-dut: exit %d: %s", code, stderr)
	}
	// A named record and an unnamed one of the same device are two DUTs
	// (the name is the user's word), and no error.
	code, stdout, stderr = invoke(t, context.Background(), "report", "--format", "json", named[0], files[0])
	if err := json.Unmarshal([]byte(stdout), &rep); code != exitOK || err != nil || !slices.Equal(rep.DUTs, []string{"lb", host}) {
		t.Errorf("named and unnamed: exit %d, DUTs %q: %s", code, rep.DUTs, stderr)
	}
}

// TestImpactDUTNames: impact names its two devices in the rounds' records.
func TestImpactDUTNames(t *testing.T) {
	port, ca, addrs, leaves := twoDevices(t)
	file := filepath.Join(t.TempDir(), "rounds.json")
	url := "https://www.fwtest.com:" + port + "/1k"
	code, _, stderr := invoke(t, context.Background(), "impact", "-q", "--baseline", url, "--candidate", "https://localhost:"+port+"/1k",
		"--resolve", "www.fwtest.com:"+port+":127.0.0.2", "--cacert", ca, "--baseline-dut", "lb", "--candidate-dut", "lb-waf",
		"-c", "2", "-d", "500ms", "--warmup", "0s", "--rounds", "2", "--cooldown", "0s", "--profile", dutProfile, "--json", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var runs struct{ Baseline, Candidate []*metrics.Run }
	if err := json.Unmarshal(data, &runs); err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		runs       []*metrics.Run
		dut, addr  string
		leaf       tls.Certificate
		sideString string
	}{{runs.Baseline, "lb", addrs[1], leaves[1], "baseline"}, {runs.Candidate, "lb-waf", addrs[0], leaves[0], "candidate"}} {
		if len(side.runs) != 2 {
			t.Fatalf("%s: %d rounds", side.sideString, len(side.runs))
		}
		for _, r := range side.runs {
			if r.Target.DUT != side.dut || r.Target.Address != side.addr || r.Target.LeafSHA256 != fingerprint(side.leaf) {
				t.Errorf("%s: target %+v, want DUT %s at %s", side.sideString, r.Target, side.dut, side.addr)
			}
		}
	}
}

// TestDUTBadInput: bad --dut names are refused before any load.
func TestDUTBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cps", "https://127.0.0.1:1/", "--dut", "lb one"}, `bad --dut "lb one"`},
		{[]string{"throughput", "https://127.0.0.1:1/", "--dut", "a/b"}, `bad --dut "a/b"`},
		{[]string{"cps", "https://127.0.0.1:1/", "--dut", strings.Repeat("x", 101)}, "100 bytes at most"},
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--baseline-dut", "a\tb"}, "bad --baseline-dut"},
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--baseline-dut", "x", "--candidate-dut", "x"}, "are both \"x\""},
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--dut", "x"}, "unknown flag: --dut"},
	} {
		wantUsageError(t, tc.args, tc.want)
	}
}

// TestCollectRefusesDisjointWindows: collect refuses, with exit 2, two
// agents' records whose steady windows are 25 s apart, naming both agents
// and their windows; --keep still writes each record.
func TestCollectRefusesDisjointWindows(t *testing.T) {
	dir := t.TempDir()
	ports, err := testdut.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	out := filepath.Join(dir, "merged.json")
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, se := invoke(t, context.Background(), "collect", "--listen", addr, "--expect", "2", "-o", out, "--deadline", "20s",
			"--keep", filepath.Join(dir, "agents"), "--token-file", tokenFile(t))
		done <- result{code, se}
	}()
	waitListening(t, addr)
	// Runs of now: a collection takes no record of a run made before it.
	t0 := time.Now().UTC().Truncate(time.Second)
	for i, start := range []time.Time{t0, t0.Add(25 * time.Second)} {
		r := reporttest.Run(reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "dut", Level: 4, Value: 100, Start: start})
		r.Agent = &metrics.Agent{Name: []string{"a", "b"}[i], Shard: i, Shards: 2}
		if err := agent.Push(context.Background(), "http://"+addr+"/", agent.Credentials{Token: testRunToken}, r); err != nil {
			t.Fatal(err)
		}
	}
	res := <-done
	at := func(s int) string { return t0.Add(time.Duration(s) * time.Second).Format("2006-01-02T15:04:05.000Z") }
	want := fmt.Sprintf("steady windows of agent a (shard 0/2) (%s–%s) and agent b (shard 1/2) (%s–%s) overlap by -23.000 s",
		at(1), at(3), at(26), at(28))
	lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n") // the first says what collect waits for
	if res.code != exitBadUsage || !strings.Contains(lines[len(lines)-1], want) {
		t.Errorf("collect: exit %d, %q; want exit 2 saying %q", res.code, res.stderr, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused merge was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "agents", "shard-1-of-2.json")); err != nil {
		t.Errorf("--keep: %v", err)
	}
}
