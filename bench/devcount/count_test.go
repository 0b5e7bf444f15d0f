package devcount

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/internal/testdut"
)

// TestCountsThatAreNotCounts: every kind refuses a negative, fractional,
// out-of-range or non-numeric count, with the same words (ParseCount and
// CountOf), where commands, nginx and HAProxy took a negative one.
func TestCountsThatAreNotCounts(t *testing.T) {
	words := map[string]string{
		"-5":                   "negative, not a count",
		"1.5":                  "not a whole number, not a count",
		"99999999999999999999": "out of range, a count is at most 9223372036854775807",
		"1e300":                "out of range, a count is at most 9223372036854775807",
		"many":                 "not a number",
	}
	for text, want := range words {
		if _, err := parseCount(text); err == nil || err.Error() != want {
			t.Errorf("ParseCount(%q) = %v, want %q", text, err, want)
		}
	}
	for text, want := range map[string]int64{"0": 0, "42": 42, "1e3": 1000, "7.0": 7, "9223372036854775807": 1<<63 - 1} {
		if n, err := parseCount(text); err != nil || n != want {
			t.Errorf("ParseCount(%q) = %d, %v, want %d", text, n, err, want)
		}
	}
	csv := func(stot string) string {
		return "# pxname,svname,stot,bin,bout,ereq,hrsp_4xx,hrsp_5xx,req_tot\nfe,FRONTEND," + stot + ",1,1,0,0,0,1\n"
	}
	stub := func(accepts string) string {
		return "Active connections: 1\nserver accepts handled requests\n " + accepts +
			" 0 3\nReading: 0 Writing: 1 Waiting: 0\n"
	}
	target := func(n string) string {
		return `{"listeners":[{"profile":"p","connections":` + n + `,"handshakes":1,"resumed":0,"requests":1,"handshake_errors":0}]}`
	}
	prom := func(n string) string { return "m " + n + "\n" }
	pages := map[string]func(string) string{"haproxy": csv, "nginx": stub, "target": target, "prometheus": prom}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, text, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		fmt.Fprint(w, pages[kind](text))
	}))
	defer srv.Close()
	for text, want := range words {
		specs := []string{
			"kind=haproxy frontend=fe url=" + srv.URL + "/haproxy/" + text,
			"kind=nginx url=" + srv.URL + "/nginx/" + text,
			"kind=prometheus sessions=m url=" + srv.URL + "/prometheus/" + text,
			"kind=command sessions='echo " + text + "'",
		}
		if text != "many" { // not JSON
			specs = append(specs, "kind=target frontend=p url="+srv.URL+"/target/"+text)
		}
		for _, spec := range specs {
			s, err := Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			c, err := s.Read(context.Background())
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, %v; want an error with %q", spec, c, err, want)
			}
		}
	}
}

// TestTimeoutBound: timeout= is above 0 and at most MaxTimeout; a duration
// too large for Go is out of range, not "not a duration"; a word is not a
// duration. The plan's form (Check) has the same bound.
func TestTimeoutBound(t *testing.T) {
	for v, want := range map[string]string{
		"99999999999h": `timeout "99999999999h" is out of range (at most 1m0s)`,
		"1h":           `timeout "1h" is out of range (at most 1m0s)`,
		"61s":          `timeout "61s" is out of range (at most 1m0s)`,
		"0s":           `timeout "0s" is not above 0`,
		"-1s":          `timeout "-1s" is not above 0`,
		"soon":         `timeout "soon" is not a duration`,
		"5x":           `timeout "5x" is not a duration`,
		"":             `timeout "" is not a duration`,
	} {
		_, err := Parse("kind=nginx url=http://h/ timeout=" + v)
		var se *SpecError
		if !errors.As(err, &se) || !strings.HasPrefix(se.Why, want) || strings.Count(err.Error(), "e.g.") > 1 {
			t.Errorf("timeout=%s: %v, want %q", v, err, want)
		}
	}
	if s, err := Parse("kind=nginx url=http://h/ timeout=1m"); err != nil || s.Timeout != maxTimeout {
		t.Errorf("timeout=1m: %v, %v", s.Timeout, err)
	}
	s := Source{Kind: KindNginx, URL: "http://h/", Timeout: time.Hour}
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "out of range (at most 1m0s)") {
		t.Errorf("Check with an hour: %v", err)
	}
}

// TestCommandGroupKilled: a command that starts children and hangs is
// killed with its children (its process group) at its deadline and when
// the read's context is cancelled; a command that leaves a child behind
// when it exits has that child killed too. Each shell writes its own pid
// and its children's to a file; all must be gone (or zombies) within a
// second of the read's end.
func TestCommandGroupKilled(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		script  string
		timeout string
		cancel  bool
	}{
		{"echo $$ > %[1]s; sleep 600 & echo $! >> %[1]s; sleep 600 & echo $! >> %[1]s; wait; echo 1", "300ms", false},
		{"echo $$ > %[1]s; sleep 600 & echo $! >> %[1]s; wait; echo 1", "1m", true},
		{"echo $$ > %[1]s; sleep 600 >/dev/null 2>&1 & echo $! >> %[1]s; echo 1", "1m", false},
	} {
		pidFile := filepath.Join(dir, strconv.Itoa(i))
		script := fmt.Sprintf(tc.script, pidFile)
		s, err := Parse(fmt.Sprintf(`kind=command sessions="sh -c '%s'" timeout=%s`, script, tc.timeout))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if tc.cancel {
			time.AfterFunc(300*time.Millisecond, cancel)
		}
		start := time.Now()
		_, err = s.Read(ctx)
		took := time.Since(start)
		cancel()
		if took > 2*time.Second {
			t.Errorf("%d: the read took %s", i, took)
		}
		if i < 2 && err == nil {
			t.Errorf("%d: a hung command read without error", i)
		}
		b, rerr := os.ReadFile(pidFile)
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil && p > 1 {
				pids = append(pids, p)
			}
		}
		if rerr != nil || len(pids) < 2 {
			t.Fatalf("%d: pids %q: %v", i, b, rerr)
		}
		if live := testdut.Running(pids, time.Second); len(live) > 0 {
			t.Errorf("%d: processes of the command %v still alive a second after the read: %v", i, pids, live)
			for _, p := range live {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}
}
