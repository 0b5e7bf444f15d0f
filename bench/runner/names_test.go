package runner_test

// Many server names: against the reference target serving a certificate
// per name, and against nginx choosing a server block (and its
// certificate) per name with OpenSSL's SNI callback. Every connection is
// verified against its own name; the record's count per name is checked
// against the device's own count per name.

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

const namesProfile = "ecdhe-ecdsa-aes128-sha256-p256"

// namesSpec is a short CPS run of names against addr, verified with roots.
func namesSpec(addr string, roots *x509.CertPool, names []string, d time.Duration) *runner.Spec {
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile, s.Target = namesProfile, metrics.Target{Address: addr, ServerName: names[0]}
	s.Roots, s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout = roots, 2*time.Second, 2*time.Second, 2*time.Second
	s.Host, s.Path, s.UserAgent = "localhost", "/1k", "tlsbench/test"
	s.Concurrency, s.Duration, s.Warmup, s.Drain = 8, d, 0, 10*time.Second
	s.ServerNames = names
	return &s
}

// runNames runs spec and checks what every run of names must hold: a valid
// record, a preflight of one good transaction, and the names' counts
// spread evenly (the turn is the run's: they differ by one at most),
// summing to the connections that began a handshake.
func runNames(t *testing.T, spec *runner.Spec) *metrics.Run {
	t.Helper()
	r, err := runner.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(); err != nil {
		t.Fatalf("record: %v", err)
	}
	if pf := r.Preflight; pf == nil || !pf.OK || pf.Transactions != 1 {
		t.Fatalf("preflight %+v, want one good transaction", pf)
	}
	n := r.Names
	if n == nil {
		t.Fatal("record has no names")
	}
	t.Logf("names: %d, connections %d (%d to %d per name), failed names %d; whole run %+v", n.Count,
		n.Connections, n.ConnectionsMin, n.ConnectionsMax, n.FailedNames, r.Whole)
	if n.Count != len(spec.ServerNames) || n.First != spec.ServerNames[0] || len(n.PerName) != n.Count {
		t.Fatalf("names count %d, first %q, %d counts; want %d, %q", n.Count, n.First, len(n.PerName),
			len(spec.ServerNames), spec.ServerNames[0])
	}
	if n.ConnectionsMax-n.ConnectionsMin > 1 {
		t.Errorf("names' counts range from %d to %d, want within one of each other", n.ConnectionsMin, n.ConnectionsMax)
	}
	if want := r.Whole.Transactions + r.Whole.Errors; n.Connections != want {
		t.Errorf("names count %d connections, the run %d transactions (no connect failed)", n.Connections, want)
	}
	return r
}

// TestNamesReferenceTarget: 1,000 names against the reference target
// serving each its own certificate: no error, every name used, and the
// target's count of certificates chosen per name is the record's (the
// preflight's one connection took the first name).
func TestNamesReferenceTarget(t *testing.T) {
	p, err := profiles.Builtin().Get(namesProfile)
	if err != nil {
		t.Fatal(err)
	}
	names, err := target.NamesOf(target.DefaultNamePattern, 1000)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	l := tg.Listeners[0]
	r := runNames(t, namesSpec(l.Addr, tg.CA.Pool(), names, 3*time.Second))
	n := r.Names
	if r.Errors.Total != 0 || r.Whole.Errors != 0 || n.FailedNames != 0 {
		t.Fatalf("errors %+v, whole run %+v, failed names %d: want none", r.Errors, r.Whole, n.FailedNames)
	}
	if n.Connections >= int64(n.Count) && n.ConnectionsMin < 1 {
		t.Errorf("%d connections over %d names, yet a name had none", n.Connections, n.Count)
	} else if n.Connections < int64(n.Count) {
		t.Logf("only %d connections for %d names: not every name could be used", n.Connections, n.Count)
	}
	per, unknown := l.NameCounts()
	if unknown != 0 {
		t.Errorf("the target saw %d hellos naming none of the names", unknown)
	}
	for i := range per {
		want := n.PerName[i]
		if i == 0 {
			want += r.Preflight.Transactions
		}
		if per[i] != want {
			t.Errorf("name %d (%s): the target chose its certificate %d times, the record counts %d (+ preflight)",
				i, names[i], per[i], n.PerName[i])
		}
	}
	if s := l.Stats().Names; s == nil || s.Count != 1000 || s.Handshakes != n.Connections+r.Preflight.Transactions {
		t.Errorf("/stats names %+v, want 1000 names and %d handshakes", s, n.Connections+r.Preflight.Transactions)
	}
}

// TestNamesUnknownToTarget: a name the reference target does not serve gets
// its default certificate, which is for none of the names: that name's
// connections fail as cert_name, the others pass.
func TestNamesUnknownToTarget(t *testing.T) {
	p, err := profiles.Builtin().Get(namesProfile)
	if err != nil {
		t.Fatal(err)
	}
	served := []string{"a.names.test", "b.names.test", "c.names.test"}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Names: served})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	names := append(slices.Clone(served), "absent.names.test")
	r := runNames(t, namesSpec(tg.Listeners[0].Addr, tg.CA.Pool(), names, time.Second))
	checkOneNameFails(t, r, 3)
	if _, unknown := tg.Listeners[0].NameCounts(); unknown != r.Names.PerName[3] {
		t.Errorf("the target saw %d hellos for unknown names, the record %d connections of the absent name", unknown,
			r.Names.PerName[3])
	}
}

// checkOneNameFails checks that the connections of name bad, and only
// those, failed, each as cert_name.
func checkOneNameFails(t *testing.T, r *metrics.Run, bad int) {
	t.Helper()
	n := r.Names
	if len(n.Failed) != 1 || n.FailedNames != 1 {
		t.Fatalf("failed names %+v, want name %d only", n.Failed, bad)
	}
	f := n.Failed[0]
	if f.Index != bad || f.Failures != n.PerName[bad] || f.Failures < 1 {
		t.Errorf("failed %+v, want name %d with all its %d connections", f, bad, n.PerName[bad])
	}
	if r.Whole.Errors != n.PerName[bad] {
		t.Errorf("whole run %d errors, name %d had %d connections", r.Whole.Errors, bad, n.PerName[bad])
	}
	if got := r.Errors.ByClass[vocab.ClassCertName]; got == 0 || got != r.Errors.Total {
		t.Errorf("errors %+v, want all cert_name", r.Errors)
	}
	if ex := r.Errors.Examples[vocab.ClassCertName]; !strings.Contains(ex, n.Failed[0].Name) {
		t.Errorf("cert_name example %q does not name %s", ex, n.Failed[0].Name)
	}
}

// nginxNames starts nginx with one server block per name on one port, each
// with its own certificate (certFor gives the names it is issued for), and
// its access log of $ssl_server_name.
func nginxNames(t *testing.T, ca *cipher.CA, names []string, certFor func(i int) []string) (addr, accessLog string) {
	t.Helper()
	testdut.RequireNginx(t)
	dir := t.TempDir()
	ports, err := testdut.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	accessLog = filepath.Join(dir, "access.log")
	cfg := testdut.NginxConfig{Dir: dir, HTTP: []string{"log_format sni '$ssl_server_name';"}}
	for i, name := range names {
		leaf, err := ca.Leaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, certFor(i), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		key, err := cipher.KeyPEM(leaf.PrivateKey)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, fmt.Sprintf("%d.pem", i))
		if err := os.WriteFile(file, append(cipher.ChainPEM(leaf), key...), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.Servers = append(cfg.Servers, testdut.NginxServer{
			Port: ports[0], Cert: file, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1",
			Extra: []string{"server_name " + name + ";", "access_log " + accessLog + " sni;"},
		})
	}
	n := testdut.StartNginxT(t, cfg)
	return n.Addrs[0], accessLog
}

// logCounts counts the access log's lines per name, waiting (5 s at most)
// until they number want: nginx writes a line when a response is sent.
func logCounts(t *testing.T, file string, want int64) map[string]int64 {
	t.Helper()
	var counts map[string]int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		counts = map[string]int64{}
		var total int64
		if f, err := os.Open(file); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				counts[sc.Text()]++
				total++
			}
			f.Close()
		}
		if total >= want || time.Now().After(deadline) {
			return counts
		}
	}
}

// TestNamesNginx: five names on one nginx port, each its server block and
// certificate for that name alone (OpenSSL's SNI callback chooses): no
// error, so every connection was verified against its own name, and the
// record's count per name is nginx's ($ssl_server_name in its access log).
func TestNamesNginx(t *testing.T) {
	ca := testdut.NewCA(t)
	names := []string{"www1.nginx.test", "www2.nginx.test", "www3.nginx.test", "www4.nginx.test", "www5.nginx.test"}
	addr, accessLog := nginxNames(t, ca, names, func(i int) []string { return names[i : i+1] })
	r := runNames(t, namesSpec(addr, ca.Pool(), names, time.Second))
	n := r.Names
	if r.Errors.Total != 0 || r.Whole.Errors != 0 || n.ConnectionsMin < 1 {
		t.Fatalf("errors %+v, whole run %+v, names %d to %d per name: want no error, every name", r.Errors, r.Whole,
			n.ConnectionsMin, n.ConnectionsMax)
	}
	counts := logCounts(t, accessLog, n.Connections+r.Preflight.Transactions)
	for i, name := range names {
		want := n.PerName[i]
		if i == 0 {
			want += r.Preflight.Transactions // the preflight took the first name
		}
		if counts[name] != want {
			t.Errorf("%s: nginx logged %d requests, the record counts %d connections (+ preflight)", name,
				counts[name], n.PerName[i])
		}
	}
	if len(counts) != len(names) {
		t.Errorf("nginx logged names %v, want only %v", counts, names)
	}
}

// TestNamesNginxWrongCertificate: nginx's server block for one name serves
// a certificate (of the trusted CA) for another name: that name's
// connections fail as cert_name, the others pass, and nginx logged no
// request for it.
func TestNamesNginxWrongCertificate(t *testing.T) {
	ca := testdut.NewCA(t)
	names := []string{"www1.nginx.test", "www2.nginx.test", "www3.nginx.test", "www4.nginx.test"}
	const bad = 2
	addr, accessLog := nginxNames(t, ca, names, func(i int) []string {
		if i == bad {
			return []string{"other.nginx.test"}
		}
		return names[i : i+1]
	})
	r := runNames(t, namesSpec(addr, ca.Pool(), names, time.Second))
	checkOneNameFails(t, r, bad)
	counts := logCounts(t, accessLog, r.Whole.Transactions+r.Preflight.Transactions)
	if counts[names[bad]] != 0 {
		t.Errorf("nginx logged %d requests for %s, whose handshakes all failed", counts[names[bad]], names[bad])
	}
	for i, name := range names {
		want := n0(i, r) + r.Names.PerName[i]
		if i != bad && counts[name] != want {
			t.Errorf("%s: nginx logged %d requests, want %d", name, counts[name], want)
		}
	}
}

// n0 is the preflight's connections on name i: it takes the first.
func n0(i int, r *metrics.Run) int64 {
	if i == 0 {
		return r.Preflight.Transactions
	}
	return 0
}
