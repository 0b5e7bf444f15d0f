package httpreq

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultObjectPath is where an object of a mix is asked for: the reference
// target serves /bytes/N.
const DefaultObjectPath = "/bytes/{size}"

// Object is one object of a run's mix: its size in bytes, its weight (the
// share of requests that draw it is Weight over the sum of the weights) and
// its path (empty: the request's ObjectPath for its size).
type Object struct {
	Size   int64   `json:"size"`
	Weight float64 `json:"weight"`
	Path   string  `json:"path,omitempty"`
}

// ParseObjects reads a list of objects: SIZE[:WEIGHT], comma-separated,
// SIZE in bytes with an optional k or m suffix (1024, 1024²; decimals
// allowed: 0.2k is 205 bytes), WEIGHT 1 when left out.
func ParseObjects(s string) ([]Object, error) {
	var objs []Object
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("empty object in %q", s)
		}
		size, weight, hasWeight := strings.Cut(item, ":")
		n, err := ParseSize(size)
		if err != nil {
			return nil, err
		}
		o := Object{Size: n, Weight: 1}
		if hasWeight {
			w, err := strconv.ParseFloat(weight, 64)
			if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				return nil, fmt.Errorf("object %q: weight %q is not a number of 0 or more", item, weight)
			}
			o.Weight = w
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// ParseSize reads a size in bytes with an optional k or m suffix (1024,
// 1024²), rounded to the nearest byte.
func ParseSize(s string) (int64, error) {
	mult, num := 1.0, strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasSuffix(num, "k"):
		mult, num = 1<<10, strings.TrimSuffix(num, "k")
	case strings.HasSuffix(num, "m"):
		mult, num = 1<<20, strings.TrimSuffix(num, "m")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v*mult > 1<<40 {
		return 0, fmt.Errorf("size %q is not a size in bytes (e.g. 1024, 16k, 1m)", s)
	}
	return int64(math.Round(v * mult)), nil
}

// ObjectURLPath is o's path: its own, or tpl with {size} replaced.
func (o Object) ObjectURLPath(tpl string) string {
	if o.Path != "" {
		return o.Path
	}
	if tpl == "" {
		tpl = DefaultObjectPath
	}
	return strings.ReplaceAll(tpl, "{size}", strconv.FormatInt(o.Size, 10))
}
