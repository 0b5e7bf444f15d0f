package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// TestNginxObjectsPerConn: a cps run of a 1k:3,16k:1 mix, ten requests per
// connection, against nginx (keep-alive): nginx logged a request per
// transaction (the preflight's included), each of the size its path asks,
// on as many connections as the run opened; the record's objects add up.
func TestNginxObjectsPerConn(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	if err := os.MkdirAll(filepath.Join(dir, "www", "bytes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1024, 16384} {
		if err := os.WriteFile(filepath.Join(dir, "www", "bytes", fmt.Sprint(n)), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logf := filepath.Join(dir, "conns.log")
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, NoFile: 1088,
		HTTP: []string{`log_format conns '$connection $status $body_bytes_sent $uri';`},
		Servers: []testdut.NginxServer{{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1",
			KeepAlive: true, Extra: []string{"access_log " + logf + " conns;"}}}})
	objs, err := httpreq.ParseObjects("1k:3,16k:1")
	if err != nil {
		t.Fatal(err)
	}
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile, s.Target = "ecdhe-ecdsa-aes128-sha256-p256", metrics.Target{Address: n.Addrs[0], ServerName: "localhost"}
	s.Roots, s.Host, s.Path, s.UserAgent = ca.Pool(), "localhost", "/", "tlsbench/test"
	s.Concurrency, s.Duration, s.Warmup = 4, time.Second, 0
	s.Objects, s.RequestsPerConn = objs, 10
	r, err := runner.Run(context.Background(), &s)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Preflight == nil || !r.Preflight.OK || r.Whole.Errors != 0 {
		t.Fatalf("preflight %+v, whole run %+v, errors %v", r.Preflight, r.Whole, r.Errors)
	}
	want := r.Whole.Transactions + r.Preflight.Transactions
	var lines []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		b, err := os.ReadFile(logf)
		if err != nil {
			t.Fatal(err)
		}
		if lines = strings.Split(strings.TrimSpace(string(b)), "\n"); int64(len(lines)) >= want {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	conns := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 || f[1] != "200" || "/bytes/"+f[2] != f[3] {
			t.Fatalf("access log line %q, want a 200 of the size its path asks", l)
		}
		conns[f[0]] = true
	}
	// The preflight's transaction opened its own connection.
	if int64(len(lines)) != want || int64(len(conns)) != r.Whole.ConnectionsOpened+r.Preflight.Transactions {
		t.Errorf("nginx logged %d requests on %d connections; the run made %d transactions (+%d preflight) on %d",
			len(lines), len(conns), r.Whole.Transactions, r.Preflight.Transactions, r.Whole.ConnectionsOpened)
	}
	if len(r.Objects) != 2 || r.Objects[0].Transactions+r.Objects[1].Transactions != r.Transactions {
		t.Errorf("objects %+v, %d transactions", r.Objects, r.Transactions)
	}
	t.Logf("%d transactions on %d connections; nginx %d requests on %d", r.Whole.Transactions,
		r.Whole.ConnectionsOpened, len(lines), len(conns))
}
