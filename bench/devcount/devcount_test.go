package devcount

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		in   string
		want Source
	}{
		{"kind=haproxy url=http://127.0.0.1:8404/stats;csv frontend=fe_p256",
			Source{Kind: KindHAProxy, URL: "http://127.0.0.1:8404/stats;csv", Frontend: "fe_p256"}},
		{"  kind=nginx\turl=http://127.0.0.1:8080/stub_status timeout=500ms ",
			Source{Kind: KindNginx, URL: "http://127.0.0.1:8080/stub_status", Timeout: 500 * time.Millisecond}},
		{`kind=prometheus url=http://h:1/metrics sessions=haproxy_frontend_connections_total{proxy="fe 1",x="a\"}b"} requests=r counts_reads=true`,
			Source{Kind: KindPrometheus, URL: "http://h:1/metrics", CountsReads: &yes, Metrics: map[Counter]string{
				Sessions: `haproxy_frontend_connections_total{proxy="fe 1",x="a\"}b"}`, Requests: "r"}}},
		{`kind=command sessions='ssh dut "show sessions"' requests="echo \"1\""`,
			Source{Kind: KindCommand, Commands: map[Counter]string{Sessions: `ssh dut "show sessions"`, Requests: `echo "1"`}}},
		{"kind=target url=http://127.0.0.1:9/stats", Source{Kind: kindTarget, URL: "http://127.0.0.1:9/stats"}},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
		// String writes it back in a form Parse reads the same.
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", got.String(), again, err, got)
		}
	}
}

func TestParseBad(t *testing.T) {
	for _, in := range []string{
		"",
		"haproxy",
		"kind=haproxy url=http://h/stats;csv",              // no frontend
		"kind=nope url=http://h/",                          // kind
		"kind=nginx url=ftp://h/",                          // scheme
		"kind=nginx url=/stub_status",                      // no host
		"kind=nginx url=http://h/ url=http://g/",           // twice
		"kind=nginx url=http://h/ timeout=-1s",             // timeout
		"kind=nginx url=http://h/ counts_reads=maybe",      // bool
		"kind=nginx url=http://h/ sessions=x",              // counters on nginx
		"kind=nginx url=http://h/ color=red",               // unknown key
		"kind=prometheus url=http://h/",                    // no metric
		"kind=prometheus url=http://h/ sessions=a{b=\"c\"", // unclosed brace
		"kind=prometheus url=http://h/ sessions=a{b=c}",    // unquoted label value
		"kind=prometheus url=http://h/ sessions=9a",        // bad name
		"kind=command",                                     // no command
		"kind=command sessions='echo 1",                    // unclosed quote
		"kind=command url=http://h/ sessions=true",         // url on command
		"kind=command sessions=''",                         // empty command
		"kind=prometheus url=http://h/ bytes=a",            // unknown counter
	} {
		_, err := Parse(in)
		var se *SpecError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a *SpecError", in, err)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): error has more than one line: %q", in, err)
		}
	}
}

func TestFor(t *testing.T) {
	s := Source{Kind: KindHAProxy, URL: "http://h/stats;csv", Frontend: "fe_{profile}", Frontends: map[string]string{"rsa": "legacy"}}
	if got := s.For("p256").Frontend; got != "fe_p256" {
		t.Errorf("For(p256).Frontend = %q", got)
	}
	if got := s.For("rsa").Frontend; got != "legacy" {
		t.Errorf("For(rsa).Frontend = %q", got)
	}
	if got := (Source{Kind: kindTarget, URL: "http://h/stats"}).For("p384").Frontend; got != "p384" {
		t.Errorf("target: For(p384).Frontend = %q", got)
	}
	p := Source{Kind: KindPrometheus, Metrics: map[Counter]string{Sessions: `m{proxy="{profile}"}`}}
	if got := p.For("x").Metrics[Sessions]; got != `m{proxy="x"}` {
		t.Errorf("prometheus For(x) = %q", got)
	}
	if p.Metrics[Sessions] != `m{proxy="{profile}"}` {
		t.Error("For changed its receiver's map")
	}
}

const haproxyCSV = `# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,check_status,check_code,check_duration,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx,hrsp_other,hanafail,req_rate,req_rate_max,req_tot,
stats,FRONTEND,,,1,1,262119,3,334,0,0,0,0,,,,,OPEN,,,,,,,,,1,2,0,,,,0,1,0,1,,,,0,2,0,0,0,0,,1,1,3,
p256,FRONTEND,,,0,32,262119,1501,160607,1751167,0,0,2,,,,,OPEN,,,,,,,,,1,3,0,,,,0,0,0,900,,,,0,1499,0,1,1,0,,0,880,1501,
p256,BACKEND,0,0,0,0,26212,0,160607,1751167,0,0,,0,0,0,0,UP,0,0,0,,0,9,,,1,3,0,,0,,1,0,,0,,,,0,0,0,0,0,0,,,,0,
`

func TestParseHAProxyCSV(t *testing.T) {
	c, err := parseHAProxyCSV([]byte(haproxyCSV), "p256")
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{Sessions: 1501, Requests: 1501, BytesIn: 160607, BytesOut: 1751167, Errors: 2 + 1 + 1}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %v, want %v", c, want)
	}
	if _, err := parseHAProxyCSV([]byte(haproxyCSV), "p384"); err == nil || !strings.Contains(err.Error(), `no frontend "p384" (frontends: stats, p256)`) {
		t.Errorf("missing frontend: %v", err)
	}
	for _, bad := range []string{"", "<html>stats</html>", strings.Replace(haproxyCSV, "req_tot", "req_total", 1),
		strings.Replace(haproxyCSV, "1501,160607", "lots,160607", 1)} {
		if _, err := parseHAProxyCSV([]byte(bad), "p256"); err == nil {
			t.Errorf("no error for %.40q", bad)
		}
	}
}

func TestParseStubStatus(t *testing.T) {
	page := "Active connections: 2 \nserver accepts handled requests\n 16 15 31 \nReading: 0 Writing: 1 Waiting: 1 \n"
	c, err := parseStubStatus([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counts{Sessions: 16, Requests: 31, Errors: 1}); !reflect.DeepEqual(c, want) {
		t.Errorf("got %v, want %v", c, want)
	}
	for _, bad := range []string{"", "<html>welcome to nginx</html>", "server accepts handled requests\n 1 2\n", "server accepts handled requests\n 1 x 3\n"} {
		if _, err := parseStubStatus([]byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

func TestParseTargetStats(t *testing.T) {
	page := `{"listeners":[{"profile":"a","address":"x","handshakes":5,"resumed":2,"requests":6,"handshake_errors":1,"connections":7,"injected":{}},
	{"profile":"b","handshakes":0,"requests":0,"handshake_errors":0,"connections":0}]}`
	c, err := parseTargetStats([]byte(page), "a")
	if err != nil {
		t.Fatal(err)
	}
	// handshakes: the full ones and the resumed ones, as tlsbench counts them.
	if want := (Counts{Sessions: 7, Handshakes: 7, Requests: 6, Errors: 1}); !reflect.DeepEqual(c, want) {
		t.Errorf("got %v, want %v", c, want)
	}
	if _, err := parseTargetStats([]byte(page), "c"); err == nil {
		t.Error("no error for a missing listener")
	}
	if _, err := parseTargetStats([]byte(`{"listeners":[{"profile":"a"}]}`), "a"); err == nil {
		t.Error("no error for a listener without counters")
	}
}

const exposition = `# HELP haproxy_frontend_connections_total Total number of connections.
# TYPE haproxy_frontend_connections_total counter
haproxy_frontend_connections_total{proxy="p256"} 1501
haproxy_frontend_connections_total{proxy="stats"} 3
haproxy_frontend_http_requests_total{proxy="p256",x="a \"quoted\" \\ value\n"} 1.501e+03 1700000000000
haproxy_frontend_http_requests_total{proxy="p256",x="other",} 9
up 1
nan_metric NaN
`

func TestParseExposition(t *testing.T) {
	series, err := parseExposition([]byte(exposition))
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 6 {
		t.Fatalf("%d series, want 6", len(series))
	}
	if got := series[2].Labels["x"]; got != "a \"quoted\" \\ value\n" {
		t.Errorf("escaped label value = %q", got)
	}
	for _, tc := range []struct {
		sel string
		v   float64
		n   int
	}{
		{`haproxy_frontend_connections_total{proxy="p256"}`, 1501, 1},
		{`haproxy_frontend_connections_total`, 1504, 2},
		{`haproxy_frontend_http_requests_total{proxy="p256"}`, 1510, 2},
		{`haproxy_frontend_http_requests_total{proxy="p256",x="other"}`, 9, 1},
		{`haproxy_frontend_connections_total{proxy="p384"}`, 0, 0},
		{`haproxy_frontend_connections`, 0, 0},
	} {
		sel, err := parseSelector(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		if v, n := sel.Sum(series); v != tc.v || n != tc.n {
			t.Errorf("%s: %g over %d series, want %g over %d", tc.sel, v, n, tc.v, tc.n)
		}
	}
	for _, bad := range []string{
		"", "# only comments\n", "<html></html>", "m{a=\"1\"} x\n", "m{a=1} 2\n", "m{a=\"1\" 2\n",
		"m{a=\"\\q\"} 1\n", "m 1 2 3\n", "m 1 1.5\n", "m{a=\"1\",a=\"2\"} 1\n", "m{=\"1\"} 1\n", "m{a=\"1\"}1\n",
	} {
		if _, err := parseExposition([]byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

func TestDelta(t *testing.T) {
	d, err := Delta(Counts{Sessions: 5, Requests: 7}, Counts{Sessions: 8, Requests: 7, Errors: 1})
	if err != nil || !reflect.DeepEqual(d, Counts{Sessions: 3, Requests: 0}) {
		t.Errorf("Delta = %v, %v", d, err)
	}
	if _, err := Delta(Counts{Sessions: 5}, Counts{Sessions: 4}); err == nil {
		t.Error("no error for a counter that went down")
	}
}

// TestReadHTTP reads pages from a local server: the right ones, and every
// kind of wrong source, each an error naming the source.
func TestReadHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/stats;csv", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(haproxyCSV)) })
	mux.HandleFunc("/stub_status", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("Active connections: 1\nserver accepts handled requests\n 3 3 4\nReading: 0 Writing: 1 Waiting: 0\n"))
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(exposition)) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	read := func(spec string) (Counts, error) {
		t.Helper()
		s, err := Parse(strings.ReplaceAll(spec, "URL", srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		return s.Read(ctx)
	}
	if c, err := read("kind=haproxy url=URL/stats;csv frontend=p256"); err != nil || c[Sessions] != 1501 {
		t.Errorf("haproxy: %v, %v", c, err)
	}
	if c, err := read("kind=nginx url=URL/stub_status"); err != nil || c[Requests] != 4 {
		t.Errorf("nginx: %v, %v", c, err)
	}
	if c, err := read(`kind=prometheus url=URL/metrics sessions=haproxy_frontend_connections_total{proxy="p256"} requests=up`); err != nil ||
		!reflect.DeepEqual(c, Counts{Sessions: 1501, Requests: 1}) {
		t.Errorf("prometheus: %v, %v", c, err)
	}
	for _, tc := range []struct{ spec, want string }{
		{"kind=haproxy url=URL/nope frontend=p256", "404"},
		{"kind=haproxy url=URL/stats;csv frontend=fe_p256", `no frontend "fe_p256"`},
		{"kind=haproxy url=URL/stub_status frontend=p256", "not HAProxy's stats CSV"},
		{"kind=nginx url=URL/stats;csv", "not nginx's stub_status"},
		{"kind=target url=URL/stub_status", "not the reference target's /stats"},
		{`kind=prometheus url=URL/metrics sessions=haproxy_frontend_connections_total{proxy="p384"}`, "no series matches"},
		{"kind=prometheus url=URL/metrics sessions=nan_metric", "not a count"},
		{"kind=prometheus url=URL/stub_status sessions=up", "exposition line 1"},
		{"kind=nginx url=URL/slow timeout=200ms", "deadline exceeded"},
		{"kind=nginx url=http://127.0.0.1:1/stub_status", "refused"},
	} {
		start := time.Now()
		_, err := read(tc.spec)
		var re *ReadError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "kind=") {
			t.Errorf("%s: error %v, want a *ReadError naming the source and %q", tc.spec, err, tc.want)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: the read took %s", tc.spec, d)
		}
	}
}

// TestReadCommand runs real commands (coreutils): a number, a failure, a
// word, and one that outlives its deadline.
func TestReadCommand(t *testing.T) {
	for _, bin := range []string{"echo", "false", "sleep"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s: %v", bin, err)
		}
	}
	ctx := context.Background()
	s, err := Parse(`kind=command sessions='echo 42' requests="echo ' 7 '" bytes_in='echo 1e3'`)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Read(ctx); err != nil || !reflect.DeepEqual(c, Counts{Sessions: 42, Requests: 7, BytesIn: 1000}) {
		t.Errorf("got %v, %v", c, err)
	}
	for _, tc := range []struct{ spec, want string }{
		{"kind=command sessions=false", "exit status 1"},
		{"kind=command sessions='echo many'", `printed "many": not a number`},
		{"kind=command sessions='echo -5.5'", "negative, not a count"},
		{"kind=command sessions=/nonexistent/counter", "no such file"},
		{"kind=command sessions='sleep 10' timeout=200ms", "deadline exceeded"},
	} {
		s, err := Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = s.Read(ctx)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.spec, err, tc.want)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: took %s", tc.spec, d)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("kind=haproxy url=http://h/stats;csv frontend=x")
	f.Add(`kind=prometheus url=http://h/ sessions=a{b="c\"}"}`)
	f.Add(`kind=command sessions='a "b" c'`)
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		again, err := Parse(s.String())
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Errorf("Parse(%q) = %#v; its String %q parses to %#v, %v", in, s, s.String(), again, err)
		}
	})
}

func FuzzParseExposition(f *testing.F) {
	f.Add(exposition)
	f.Fuzz(func(t *testing.T, in string) {
		series, err := parseExposition([]byte(in))
		if err != nil {
			return
		}
		for _, s := range series {
			if _, n := (selector{s.Name, s.Labels}).Sum(series); n < 1 {
				t.Errorf("series %v is not matched by its own name and labels", s)
			}
		}
	})
}

// TestVersion: the device's version as its stats page names it — HAProxy's
// HTML page (the CSV URL without ;csv: the CSV has none), a Prometheus
// build_info — and none from nginx's stub_status, a page that fails, or one
// that does not name it.
func TestVersion(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stats":
			if strings.Contains(r.URL.RawQuery+r.URL.Path, "csv") {
				t.Errorf("the version was read from %s", r.URL)
			}
			w.Write([]byte(`<h1><a href="http://www.haproxy.org/">HAProxy version 2.6.12-1+deb12u4, released 2026/10/17</a></h1>`))
		case "/metrics":
			w.Write([]byte("# TYPE haproxy_process_build_info gauge\nhaproxy_process_build_info{version=\"3.0.5\"} 1\n"))
		case "/other":
			w.Write([]byte("up 1\n"))
		case "/stub_status":
			w.Write([]byte("Active connections: 1\n"))
		default:
			http.Error(w, "no", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		src  Source
		want string
	}{
		{Source{Kind: KindHAProxy, URL: srv.URL + "/stats;csv"}, "HAProxy 2.6.12-1+deb12u4"},
		{Source{Kind: KindPrometheus, URL: srv.URL + "/metrics"}, "HAProxy 3.0.5"},
		{Source{Kind: KindPrometheus, URL: srv.URL + "/other"}, ""},
		{Source{Kind: KindNginx, URL: srv.URL + "/stub_status"}, ""},
		{Source{Kind: KindHAProxy, URL: srv.URL + "/missing;csv"}, ""},
	} {
		if got := tc.src.Version(context.Background()); got != tc.want {
			t.Errorf("%s: version %q, want %q", tc.src.URL, got, tc.want)
		}
	}
}
