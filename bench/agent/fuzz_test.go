package agent_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/agent"
)

// FuzzCollector feeds the collector's request handling pushes of any
// path, headers and body, signed with the token or not: it never panics,
// answers only with the statuses it documents, and takes a record (204)
// only when the push was signed with the token; every record it takes is
// of a shard of the batch.
func FuzzCollector(f *testing.F) {
	valid, _ := json.Marshal(pushed(&testing.T{}, 0))
	for _, seed := range []struct {
		path, auth, sum string
		body            []byte
		sign            bool
	}{
		{"/runs/r1", "", "", valid, true},
		{"/runs/r1", "", "", valid, false},
		{"/", "Bearer " + testToken, "", valid, false},
		{"/runs/r1", agent.AuthScheme + " 00", "zz", []byte("{}"), false},
		{"/runs/r1", "", "", []byte(`{"schema":1,"agent":{"shard":7,"shards":2}}`), true},
		{"/runs/other", "", "", []byte("not json"), true},
		{"/runs/r1", "", "", []byte(strings.Replace(string(valid), `"shard":0`, `"shard":-1`, 1)), true},
	} {
		f.Add(seed.path, seed.auth, seed.sum, seed.body, seed.sign)
	}
	allowed := map[int]bool{204: true, 400: true, 401: true, 404: true, 409: true, 411: true, 413: true}
	f.Fuzz(func(t *testing.T, path, auth, sum string, body []byte, sign bool) {
		if u, err := url.Parse("http://collector" + path); err != nil || u.Path != path || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " ?#%") {
			path = "/runs/r1"
		}
		c := agent.NewCollector(testToken)
		c.Limits.MaxRecord = 1 << 16
		b := c.Expect("r1", 2)
		var req *http.Request
		if sign {
			req = signedRequest(t, "http://collector"+path, testToken, b.Session, body)
		} else {
			req = httptest.NewRequest(http.MethodPost, "http://collector"+path, bytes.NewReader(body))
			req.Header.Set("Authorization", auth)
			req.Header.Set(agent.HeaderContentSHA256, sum)
		}
		w := httptest.NewRecorder()
		c.ServeHTTP(w, req)
		if !allowed[w.Code] {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if w.Code == 204 && !sign {
			t.Fatalf("an unsigned push was taken")
		}
		if !sign && w.Code != 401 && w.Code != 404 {
			t.Fatalf("an unsigned push got %d, want 401", w.Code)
		}
	})
}
