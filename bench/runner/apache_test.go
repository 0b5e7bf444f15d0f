package runner_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/reports"
)

// startApache starts Apache httpd 2.4 (mod_ssl, the event MPM) on a free
// port of 127.0.0.1 with its defaults for keep-alive (MaxKeepAliveRequests
// 100), serving /64k; it is stopped when the test ends. Its access log has
// a line per request: %k, the request's number on its connection (0: the
// connection's first).
func startApache(t *testing.T, cert string) (addr, accessLog string) {
	t.Helper()
	bin, err := exec.LookPath("apache2")
	if err != nil {
		if bin, err = "/usr/sbin/apache2", nil; !fileExists(bin) {
			t.Skip("apache2 not installed")
		}
	}
	dir := t.TempDir()
	// The workers run as nobody when started by root: the objects are in a
	// directory anyone may read.
	www, err := os.MkdirTemp("", "apache-www")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(www) })
	if err := os.Chmod(www, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(www, "64k"), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	ports, err := testdut.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	accessLog = filepath.Join(dir, "access.log")
	mods := "/usr/lib/apache2/modules/"
	conf := strings.Join([]string{
		"ServerName localhost", "Listen " + addr, "PidFile " + filepath.Join(dir, "httpd.pid"),
		"ErrorLog " + filepath.Join(dir, "error.log"), "User nobody", "Group nogroup",
		"LoadModule mpm_event_module " + mods + "mod_mpm_event.so",
		"LoadModule authz_core_module " + mods + "mod_authz_core.so",
		"LoadModule socache_shmcb_module " + mods + "mod_socache_shmcb.so",
		"LoadModule ssl_module " + mods + "mod_ssl.so",
		"DocumentRoot " + www, "<Directory " + www + ">", "Require all granted", "</Directory>",
		`LogFormat "%k %r" ka`, "CustomLog " + accessLog + " ka",
		"KeepAlive On", "MaxKeepAliveRequests 100",
		"SSLEngine on", "SSLProtocol TLSv1.2", "SSLCertificateFile " + cert, "",
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "httpd.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-d", dir, "-f", filepath.Join(dir, "httpd.conf"), "-DFOREGROUND")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its process group: the workers too
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return addr, accessLog
		}
		if time.Now().After(deadline) {
			errLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("apache2 did not listen on %s: %s %s", addr, out, errLog)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestReconnectsApache: Apache closes each kept-alive connection after 100
// requests (its default MaxKeepAliveRequests), with Connection: close. A
// throughput run reconnects inside its window; the record counts those
// reconnections, and Apache's access log counts every connection the run
// opened (first requests: %k = 0), the preflight's included. The default
// acceptance (max_reconnect_share 10%) accepts the ~1% share; 0% rejects it.
func TestReconnectsApache(t *testing.T) {
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, t.TempDir(), cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	addr, accessLog := startApache(t, cert)
	spec := runner.Defaults(vocab.EngineThroughput)
	spec.Profile, spec.Target = runner.DefaultProfile, metrics.Target{Address: addr, ServerName: "localhost"}
	spec.Roots, spec.ConnectTimeout, spec.HandshakeTimeout, spec.ReadTimeout = ca.Pool(), 2*time.Second,
		2*time.Second, 5*time.Second
	spec.Host, spec.Path, spec.ExpectSize = "localhost", "/64k", 64<<10
	spec.Concurrency, spec.Duration, spec.Warmup = 2, 1500*time.Millisecond, 0
	r, err := runner.Run(context.Background(), &spec)
	if err != nil {
		t.Fatal(err)
	}
	n, req := metrics.Value(r.Reconnects), metrics.Value(r.Requests)
	t.Logf("%d requests, %d reconnections, %d connections opened (whole run %d, preflight %d)", req, n,
		r.ConnectionsOpened, r.Whole.ConnectionsOpened, r.Preflight.Transactions)
	if r.Errors.Total != 0 || req < 300 {
		t.Fatalf("%d requests, errors %v %v: too few to pass Apache's limit", req, r.Errors.ByClass, r.Errors.Examples)
	}
	// No warm-up: each worker's first connection is in the window, and
	// every other connection of the window is a reconnection.
	if n == 0 || n != r.ConnectionsOpened-int64(spec.Concurrency) || n < req/100-int64(spec.Concurrency) {
		t.Errorf("%d reconnections: want the window's %d connections but the workers' first, about %d requests / 100",
			n, r.ConnectionsOpened, req)
	}
	var sum strings.Builder
	if err := reports.RunSummary(r).Text(&sum); err != nil || !strings.Contains(sum.String(), "reconnects   ") {
		t.Errorf("the summary does not show the reconnections (%v):\n%s", err, sum.String())
	}
	t.Log(sum.String())
	data, err := os.ReadFile(accessLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	firsts := int64(0)
	for _, l := range lines {
		if strings.HasPrefix(l, "0 ") {
			firsts++
		}
	}
	if want := r.Whole.ConnectionsOpened + r.Preflight.Transactions; firsts != want {
		t.Errorf("Apache's log: %d connections, the run's %d (whole run + preflight)", firsts, want)
	}
	a := plan.DefaultMethod().Accept
	a.MaxGeneratorCPU = 1
	for _, why := range method.Judge(a, r) {
		if strings.Contains(why, "reconnect") {
			t.Errorf("Apache's default limit rejected: %s", why)
		}
	}
	a.MaxReconnectShare = new(plan.Percent(0))
	if why := fmt.Sprint(method.Judge(a, r)); !strings.Contains(why, "above max_reconnect_share 0%") {
		t.Errorf("max_reconnect_share 0%% does not reject: %s", why)
	}
}
