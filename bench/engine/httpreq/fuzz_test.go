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

// FuzzParseObjects: a list parses or fails with an error; a list that
// parses has sizes and weights of 0 or more, and, when it validates, every
// request asks for one of its objects.
func FuzzParseObjects(f *testing.F) {
	for _, s := range []string{"1k", "16k:3,64k:1", "0.2k,6k,8k,9k,10k,25k,26k,35k,59k,347k", "1k:0", ":", "1e400",
		"1k:1e308,2k:1e308", "0:0.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		objs, err := httpreq.ParseObjects(s)
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.Size < 0 || !(o.Weight >= 0) {
				t.Fatalf("%q: object %+v", s, o)
			}
		}
		r := httpreq.Defaults("/")
		r.Objects = objs
		if r.Validate() != nil {
			return
		}
		c, err := r.Compile("HTTP/1.1", "h:443")
		if err != nil {
			t.Fatalf("%q validates, but Compile refused: %v", s, err)
		}
		g := httpreq.NewGen(1)
		for range 20 {
			head, i := c.AppendObject(nil, g)
			if i < 0 || i >= len(objs) || objs[i].Weight == 0 && len(objs) > 1 ||
				!strings.HasPrefix(string(head), "GET "+objs[i].ObjectURLPath("")+" ") {
				t.Fatalf("%q: drew %d, asked %q", s, i, head)
			}
		}
	})
}
