package httpreq_test

import (
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
)

// FuzzTemplate: a header template parses or fails with an error; one that
// parses generates a single header line.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"{{random.base64 500}}", "id-{{random.hex 4}}-{{seq}}", "{{uuid}}", "plain", "{{", "}}", "{{random.hex 99999999}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "\r\n") {
			return // header values cannot hold line breaks (the CLI refuses them)
		}
		tpl, err := httpreq.ParseTemplate(s)
		if err != nil {
			return
		}
		r := httpreq.Request{Path: "/", Headers: [][2]string{{"X", s}}}
		c, err := r.Compile("HTTP/1.1", "h:443")
		if err != nil {
			t.Fatalf("ParseTemplate accepted %q, Compile refused: %v", s, err)
		}
		head := string(c.Append(nil, httpreq.NewGen(1)))
		if got := strings.Count(head, "\r\n"); got != 6 { // 5 header lines and the empty one
			t.Errorf("template %q (static %v) made %d lines: %q", s, tpl.Static(), got, head)
		}
	})
}
