package metrics

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Names is how a run's connections were spread over its server names
// (tlsbench cps --sni-list, --sni-count): the record keeps a summary
// (min, max and mean per name, the names that failed), and each name's
// count in the list's order (PerName), from which the summary is made and
// by which agents' records merge exactly. A connection counts once it
// has connected and begun its handshake (a failed connect sends no name);
// the preflight's connections are not counted (Preflight counts them).
type Names struct {
	// Count is the number of names; First the first of them.
	Count int    `json:"count"`
	First string `json:"first"`
	// ListSHA256 identifies the list (SHA-256 of the names, each followed
	// by a newline, lowercase hex): records of other lists do not merge.
	ListSHA256 string `json:"list_sha256"`
	// Connections is the sum over the names; min, max and mean per name.
	Connections     int64   `json:"connections"`
	ConnectionsMin  int64   `json:"connections_min"`
	ConnectionsMax  int64   `json:"connections_max"`
	ConnectionsMean float64 `json:"connections_mean"`
	// FailedNames counts the names with a failed handshake (the device's
	// certificate refused for the name, an alert, …), Failed lists each.
	FailedNames int           `json:"failed_names"`
	Failed      []NameFailure `json:"failed,omitempty"`
	// PerName is each name's connections, in the list's order.
	PerName []int64 `json:"per_name"`
}

// NameFailure is a name whose handshakes failed: Index in the list (from
// 0), the Name and how many of its connections failed their handshake.
type NameFailure struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	Failures int64  `json:"failures"`
}

// NewNames returns the spread of the connections over list: conns and
// failed give each name's connections and failed handshakes.
func NewNames(list []string, conns, failed []int64) *Names {
	n := &Names{Count: len(list), ListSHA256: NameListSHA256(list), PerName: conns}
	if len(list) > 0 {
		n.First = list[0]
	}
	for i, f := range failed {
		if f > 0 {
			n.Failed = append(n.Failed, NameFailure{Index: i, Name: list[i], Failures: f})
		}
	}
	n.summarize()
	return n
}

// NameListSHA256 identifies a list of names: the SHA-256 of the names,
// each followed by a newline, lowercase hex.
func NameListSHA256(list []string) string {
	h := sha256.New()
	for _, name := range list {
		h.Write([]byte(name + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// summarize sets the summary from PerName and Failed.
func (n *Names) summarize() {
	n.Connections, n.ConnectionsMin, n.ConnectionsMax, n.ConnectionsMean = 0, 0, 0, 0
	for i, c := range n.PerName {
		n.Connections += c
		if i == 0 || c < n.ConnectionsMin {
			n.ConnectionsMin = c
		}
		n.ConnectionsMax = max(n.ConnectionsMax, c)
	}
	n.ConnectionsMean = divide(float64(n.Connections), float64(n.Count))
	n.FailedNames = len(n.Failed)
}

// sameNames says whether two records spread their connections over the
// same list of names (or both over one name): their merge is then exact.
func sameNames(a, b *Names) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Count == b.Count && a.ListSHA256 == b.ListSHA256 && len(a.PerName) == len(b.PerName)
}

// nameList words a record's names for Merge's refusal.
func nameList(n *Names) string {
	if n == nil {
		return "one server name"
	}
	return fmt.Sprintf("%d server names (list SHA-256 %.12s…)", n.Count, n.ListSHA256)
}

// add returns the merge of n (nil: none yet) and o, another agent's spread
// over the same names (sameNames): each name's connections and failures
// summed, the summary made again.
func (n *Names) add(o *Names) *Names {
	if o == nil {
		return n
	}
	if n == nil {
		n = &Names{Count: o.Count, First: o.First, ListSHA256: o.ListSHA256, PerName: make([]int64, len(o.PerName))}
	}
	for i := range min(len(n.PerName), len(o.PerName)) {
		n.PerName[i] += o.PerName[i]
	}
	for _, f := range o.Failed {
		k, found := slices.BinarySearchFunc(n.Failed, f.Index, func(e NameFailure, i int) int { return e.Index - i })
		if found {
			n.Failed[k].Failures += f.Failures
		} else {
			n.Failed = slices.Insert(n.Failed, k, f)
		}
	}
	n.summarize()
	return n
}

// checkNames checks the names block: PerName one count per name, the
// summary its own, the failures in order and within their names' counts.
func checkNames(c *Checker, n *Names) {
	if n == nil {
		return
	}
	c.nums("names.", []num{{"connections", n.Connections}, {"connections_min", n.ConnectionsMin},
		{"connections_max", n.ConnectionsMax}, {"connections_mean", n.ConnectionsMean}})
	switch {
	case n.Count < 1:
		c.Failf("names.count", "%d, want at least 1", n.Count)
	case len(n.PerName) != n.Count:
		c.Failf("names.per_name", "%d counts for %d names", len(n.PerName), n.Count)
	case len(n.ListSHA256) != 64 || strings.Trim(n.ListSHA256, "0123456789abcdef") != "":
		c.Failf("names.list_sha256", "%q is not a SHA-256 in lowercase hex", n.ListSHA256)
	}
	if c.Err != nil {
		return
	}
	want := Names{Count: n.Count, PerName: n.PerName, Failed: n.Failed}
	want.summarize()
	switch {
	case slices.ContainsFunc(n.PerName, func(v int64) bool { return v < 0 }):
		c.Failf("names.per_name", "has a negative count")
	case n.Connections != want.Connections:
		c.Failf("names.connections", "%d, the per-name counts sum to %d", n.Connections, want.Connections)
	case n.ConnectionsMin != want.ConnectionsMin || n.ConnectionsMax != want.ConnectionsMax:
		c.Failf("names.connections_min", "%d to %d, the per-name counts range from %d to %d", n.ConnectionsMin,
			n.ConnectionsMax, want.ConnectionsMin, want.ConnectionsMax)
	case math.Abs(n.ConnectionsMean-want.ConnectionsMean) > 1e-9*max(1, want.ConnectionsMean):
		c.Failf("names.connections_mean", "%v, the per-name counts' mean is %v", n.ConnectionsMean, want.ConnectionsMean)
	case n.FailedNames != len(n.Failed):
		c.Failf("names.failed_names", "%d, failed lists %d", n.FailedNames, len(n.Failed))
	}
	for i, f := range n.Failed {
		p := fmt.Sprintf("names.failed[%d]", i)
		switch {
		case f.Index < 0 || f.Index >= n.Count:
			c.Failf(p+".index", "%d, not a name's (0 to %d)", f.Index, n.Count-1)
		case i > 0 && f.Index <= n.Failed[i-1].Index:
			c.Failf(p+".index", "%d, not after the previous (%d)", f.Index, n.Failed[i-1].Index)
		case f.Failures < 1 || f.Failures > n.PerName[f.Index]:
			c.Failf(p+".failures", "%d, want 1 to the name's connections (%d)", f.Failures, n.PerName[f.Index])
		}
	}
}
