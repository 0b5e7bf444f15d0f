package httpreq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/vocab"
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

// ParseSize reads a size in bytes, tlsbench's one size grammar (objects and
// the reference target's /bytes/N): a number of 0 or more, decimals rounded
// to the byte (0.2k = 205), with an optional binary multiple in any case:
// k, kb or kib (1024), m, mb or mib (1024²), g, gb or gib (1024³), or b (1).
// Sizes above 2⁶² bytes are refused.
func ParseSize(s string) (int64, error) {
	num := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for i, unit := range []string{"g", "m", "k"} {
		if n, ok := cutAnySuffix(num, unit+"ib", unit+"b", unit); ok {
			mult, num = float64(int64(1)<<(30-10*i)), n
			break
		}
	}
	if mult == 1 {
		num = strings.TrimSuffix(num, "b")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v*mult > 1<<62 {
		return 0, fmt.Errorf("size %q is not a size in bytes (e.g. 1024, 16k, 1m, 2g)", s)
	}
	return int64(math.Round(v * mult)), nil
}

// cutAnySuffix is s without the first of sufs it ends with.
func cutAnySuffix(s string, sufs ...string) (string, bool) {
	for _, suf := range sufs {
		if n, ok := strings.CutSuffix(s, suf); ok {
			return n, true
		}
	}
	return s, false
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

// MaxObjects bounds a mix: a sample names its object in 16 bits.
const MaxObjects = 65535

// validateObjects reports the first object setting out of its domain.
func (r *Request) validateObjects() error {
	bad := func(field string, v any, want string) error {
		return &vocab.FieldError{Field: field, Value: v, Want: want}
	}
	if len(r.Objects) == 0 {
		if r.ObjectPath != "" {
			return bad("object_path", r.ObjectPath, "be set only with objects")
		}
		return nil
	}
	switch {
	case len(r.Objects) > MaxObjects:
		return bad("objects", len(r.Objects), fmt.Sprintf("hold at most %d objects", MaxObjects))
	case len(r.Paths) > 0 || r.RandomPath:
		return bad("objects", len(r.Objects), "not be set with paths or random_path (each object has its path)")
	case r.ExpectSize != -1:
		return bad("expect_size", r.ExpectSize, "be -1 with objects (each object fixes its size)")
	}
	if err := checkObjectPath(r.ObjectPath); err != nil {
		return bad("object_path", r.ObjectPath, err.Error())
	}
	sum := 0.0
	for i, o := range r.Objects {
		field := fmt.Sprintf("objects[%d]", i)
		switch {
		case o.Size < 0:
			return bad(field+".size", o.Size, "not be negative")
		case math.IsNaN(o.Weight) || math.IsInf(o.Weight, 0) || o.Weight < 0:
			return bad(field+".weight", o.Weight, "be a number of 0 or more")
		case o.Path != "" && !strings.HasPrefix(o.Path, "/"):
			return bad(field+".path", o.Path, "start with /")
		case strings.ContainsAny(o.Path, " \r\n"):
			return bad(field+".path", o.Path, "hold no space or line break")
		}
		sum += o.Weight
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return bad("objects", fmt.Sprintf("weights summing to %v", sum), "have weights of a positive (finite) sum")
	}
	return nil
}

// checkObjectPath checks a path template: a path, with {size} at most
// where a size may go; "" is the default.
func checkObjectPath(tpl string) error {
	switch {
	case tpl == "":
		return nil
	case !strings.HasPrefix(tpl, "/"):
		return fmt.Errorf("start with /")
	case strings.ContainsAny(tpl, " \r\n"):
		return fmt.Errorf("hold no space or line break")
	}
	rest := strings.ReplaceAll(tpl, "{size}", "")
	if strings.ContainsAny(rest, "{}") {
		return fmt.Errorf("use no template but {size}")
	}
	return nil
}

// picker draws an index by weight in O(1): Vose's alias table.
type picker struct {
	prob  []float64 // chance of keeping column i
	alias []int32
}

func newPicker(weights []float64) *picker {
	n := len(weights)
	p := &picker{prob: make([]float64, n), alias: make([]int32, n)}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	scaled := make([]float64, n)
	var small, large []int32
	for i, w := range weights {
		scaled[i] = w / sum * float64(n)
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small, large = small[:len(small)-1], large[:len(large)-1]
		p.prob[s], p.alias[s] = scaled[s], l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			small = append(small, l)
		} else {
			large = append(large, l)
		}
	}
	// What is left has a column of its own (1, up to rounding), but an
	// object of weight 0 is never drawn.
	some := int32(slices.IndexFunc(weights, func(w float64) bool { return w > 0 }))
	for _, i := range append(small, large...) {
		p.prob[i], p.alias[i] = 1, i
		if weights[i] == 0 {
			p.prob[i], p.alias[i] = 0, some
		}
	}
	return p
}

func (p *picker) pick(rng *rand.Rand) int {
	i := rng.IntN(len(p.prob))
	if rng.Float64() < p.prob[i] {
		return i
	}
	return int(p.alias[i])
}
