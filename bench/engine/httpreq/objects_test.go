package httpreq_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

func TestParseObjects(t *testing.T) {
	objs, err := httpreq.ParseObjects("0.2k,6k,8k,9k,10k,25k,26k,35k,59k,347k")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 10 || objs[0].Size != 205 || objs[9].Size != 347*1024 || objs[3].Weight != 1 {
		t.Errorf("RFC 9411 mix: %+v", objs)
	}
	objs, err = httpreq.ParseObjects("16k:3, 64k:1")
	if err != nil || len(objs) != 2 || objs[0] != (httpreq.Object{Size: 16384, Weight: 3}) ||
		objs[1].Weight != 1 {
		t.Errorf("16k:3,64k:1: %+v, %v", objs, err)
	}
	for _, bad := range []string{"", "1k,", "x", "1k:-1", "1k:x", "-5", "1k:NaN"} {
		if _, err := httpreq.ParseObjects(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestParseSize: the one size grammar, for --objects and the reference
// target's /bytes/N alike.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"1024": 1024, " 1024 ": 1024, "0": 0, "512b": 512, "1k": 1 << 10, "16K": 16 << 10, "1m": 1 << 20,
		"2g": 2 << 30, "1MiB": 1 << 20, "16KiB": 16 << 10, "3kb": 3 << 10, "1GB": 1 << 30,
		"0.2k": 205, "1.5m": 3 << 19, "1e3": 1000, "4294967296g": 1 << 62,
	} {
		if got, err := httpreq.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "-5", "k", "b", "kib", "x", "1x", "1kk", "1bb", "NaN", "Inf", "1e400",
		"99999999999g", "4294967297g"} {
		if got, err := httpreq.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, got)
		}
	}
}

func TestValidateObjects(t *testing.T) {
	base := func() httpreq.Request {
		r := httpreq.Defaults("/1k")
		r.Objects = []httpreq.Object{{Size: 1024, Weight: 1}, {Size: 0, Weight: 2}}
		return r
	}
	if r := base(); r.Validate() != nil {
		t.Fatalf("a good mix: %v", r.Validate())
	}
	tests := []struct {
		field string
		edit  func(r *httpreq.Request)
	}{
		{"objects[0].size", func(r *httpreq.Request) { r.Objects[0].Size = -1 }},
		{"objects[1].weight", func(r *httpreq.Request) { r.Objects[1].Weight = -1 }},
		{"objects[1].weight", func(r *httpreq.Request) { r.Objects[1].Weight = math.Inf(1) }},
		{"objects", func(r *httpreq.Request) { r.Objects[0].Weight, r.Objects[1].Weight = 0, 0 }},
		{"objects", func(r *httpreq.Request) { r.Objects = make([]httpreq.Object, httpreq.MaxObjects+1) }},
		{"objects", func(r *httpreq.Request) { r.Paths = []string{"/a", "/b"} }},
		{"objects", func(r *httpreq.Request) { r.RandomPath = true }},
		{"expect_size", func(r *httpreq.Request) { r.ExpectSize = 1024 }},
		{"object_path", func(r *httpreq.Request) { r.ObjectPath = "bytes/{size}" }},
		{"object_path", func(r *httpreq.Request) { r.ObjectPath = "/b/{bytes}" }},
		{"object_path", func(r *httpreq.Request) { r.ObjectPath = "/b /{size}" }},
		{"objects[0].path", func(r *httpreq.Request) { r.Objects[0].Path = "x" }},
		{"object_path", func(r *httpreq.Request) { r.Objects, r.ObjectPath = nil, "/b/{size}" }},
	}
	for _, tt := range tests {
		r := base()
		tt.edit(&r)
		var fe *vocab.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%s: %v, want an error of field %s", tt.field, err, tt.field)
		}
	}
}

// TestDrawObjects: the draw follows the weights (within 5 binomial
// standard deviations), never draws a weight of 0, and asks for each
// object at its path.
func TestDrawObjects(t *testing.T) {
	r := httpreq.Defaults("")
	r.ObjectPath = "/o/{size}/x"
	r.Objects = []httpreq.Object{{Size: 1, Weight: 1}, {Size: 2, Weight: 0}, {Size: 3, Weight: 6},
		{Size: 4, Weight: 3, Path: "/own"}}
	c, err := r.Compile("HTTP/1.1", "h:1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Objects() != 4 || c.ObjectSize(2) != 3 || c.ObjectSize(-1) != -1 || c.Static() {
		t.Fatalf("objects %d, size of 2 %d, static %v", c.Objects(), c.ObjectSize(2), c.Static())
	}
	g := httpreq.NewGen(7)
	const n = 40000
	var counts [4]int
	want := []string{"GET /o/1/x ", "", "GET /o/3/x ", "GET /own "}
	var buf []byte
	for range n {
		var i int
		buf, i = c.AppendObject(buf[:0], g)
		counts[i]++
		if !strings.HasPrefix(string(buf), want[i]) {
			t.Fatalf("object %d asked as %q", i, buf)
		}
	}
	for i, w := range []float64{0.1, 0, 0.6, 0.3} {
		sd := math.Sqrt(n * w * (1 - w))
		if math.Abs(float64(counts[i])-n*w) > 5*sd {
			t.Errorf("object %d drawn %d times of %d, want %.0f ± %.0f", i, counts[i], n, n*w, 5*sd)
		}
	}
	// One object: a static request, index 0; no object: -1.
	r.Objects = r.Objects[3:]
	c, _ = r.Compile("HTTP/1.1", "h:1")
	if b, i := c.AppendObject(nil, nil); i != 0 || !c.Static() || !strings.HasPrefix(string(b), "GET /own ") {
		t.Errorf("one object: %q, index %d, static %v", b, i, c.Static())
	}
	r.Objects = nil
	c, _ = r.Compile("HTTP/1.1", "h:1")
	if _, i := c.AppendObject(nil, nil); i != -1 || c.Objects() != 0 {
		t.Errorf("no object: index %d", i)
	}
}
