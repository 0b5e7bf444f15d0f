package httpreq_test

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
)

func TestRequestStatic(t *testing.T) {
	r := httpreq.Request{Path: "/1k", UserAgent: "ua", Headers: [][2]string{{"X-A", "1"}}}
	c, err := r.Compile("HTTP/1.0", "10.0.0.5:443")
	if err != nil {
		t.Fatal(err)
	}
	got := string(c.Append(nil, nil))
	want := "GET /1k HTTP/1.0\r\nHost: 10.0.0.5:443\r\nUser-Agent: ua\r\nAccept: */*\r\nX-A: 1\r\n\r\n"
	if got != want || !c.Static() {
		t.Errorf("request %q (static %v), want %q", got, c.Static(), want)
	}
}

func TestTemplates(t *testing.T) {
	r := httpreq.Request{Paths: []string{"/a", "/b"}, Headers: [][2]string{
		{"User-Agent-X", "{{random.base64 500}}"}, {"X-Hex", "id-{{random.hex 4}}"}, {"X-Seq", "{{seq}}"}, {"X-Id", "{{uuid}}"},
	}}
	c, err := r.Compile("HTTP/1.1", "h:443")
	if err != nil {
		t.Fatal(err)
	}
	g := httpreq.NewGen(1)
	seen := map[string]bool{}
	for i := 1; i <= 4; i++ {
		head := string(c.Append(nil, g))
		lines := strings.Split(head, "\r\n")
		if want := []string{"GET /a HTTP/1.1", "GET /b HTTP/1.1"}[(i-1)%2]; lines[0] != want {
			t.Errorf("request %d: %q, want %q (round robin)", i, lines[0], want)
		}
		hdr := map[string]string{}
		for _, l := range lines[1:] {
			if k, v, ok := strings.Cut(l, ": "); ok {
				hdr[k] = v
			}
		}
		if b, err := base64.StdEncoding.DecodeString(hdr["User-Agent-X"]); err != nil || len(b) != 500 {
			t.Errorf("random.base64 500: %d bytes, %v", len(b), err)
		}
		if v := hdr["X-Hex"]; len(v) != 3+8 || !strings.HasPrefix(v, "id-") {
			t.Errorf("random.hex 4: %q", v)
		}
		if got, want := hdr["X-Seq"], strconv.Itoa(i); got != want {
			t.Errorf("seq %q, want %q", got, want)
		}
		if v := hdr["X-Id"]; len(v) != 36 || v[14] != '4' {
			t.Errorf("uuid %q", v)
		}
		if seen[hdr["User-Agent-X"]] {
			t.Error("random value repeated")
		}
		seen[hdr["User-Agent-X"]] = true
	}
}

func TestBadTemplates(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{{random.base64}}", "needs the number"},        // no N
		{"{{random.hex 0}}", "N must be 1 to"},           // N too small
		{"{{random.hex 99999999}}", "N must be 1"},       // N too large
		{"{{random.b64 5}}", "unknown {{random.b64 5}}"}, // unknown function
		{"abc {{seq", "not closed"},                      // unclosed
		{"abc }} x", "}} without {{"},                    // stray close
		{"{{}}", "empty"},                                // nothing inside
		{"{{seq 3}}", "takes no argument"},               // argument to seq
	} {
		if _, err := httpreq.ParseTemplate(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTemplate(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}
