package target

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// DefaultNamePattern is the pattern of the server names that tlsbench
// serve --names N serves and tlsbench cps --sni-count N sends, so that the
// two agree without more flags: name i, from 1 to N, is the pattern with
// i for its %d. .test is reserved for testing (RFC 2606).
const DefaultNamePattern = "www%d.tlsbench.test"

// NamesOf returns the n names of pattern, which holds one %d (and no other
// %): the pattern with 1, …, n for it.
func NamesOf(pattern string, n int) ([]string, error) {
	if strings.Count(pattern, "%") != 1 || !strings.Contains(pattern, "%d") {
		return nil, fmt.Errorf("pattern %q: want one %%d and no other %%", pattern)
	}
	if n < 1 {
		return nil, fmt.Errorf("%d names: want at least 1", n)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Replace(pattern, "%d", fmt.Sprint(i+1), 1)
	}
	return out, nil
}

// nameCerts are the certificates of Config.Names for one key type: one
// per name, each for that name alone, all with one key (cipher.CA.Reissue).
type nameCerts struct {
	index map[string]int // lower-case name → its place in Config.Names
	certs []tls.Certificate
}

// nameCounts counts a listener's handshakes by the name its clients sent:
// per name of Config.Names, and the names not among them (served the
// listener's default certificate).
type nameCounts struct {
	perName []atomic.Int64
	unknown atomic.Int64
}

// NameStats is a listener's handshakes by server name (Config.Names), as
// /stats serves them: the certificates chosen per name, summarised.
type NameStats struct {
	Count int `json:"count"` // names served
	// Handshakes is the certificates chosen for the names (each client's
	// hello that named one), in all, the fewest and most of a name.
	Handshakes    int64 `json:"handshakes"`
	HandshakesMin int64 `json:"handshakes_min"`
	HandshakesMax int64 `json:"handshakes_max"`
	// Unknown counts the hellos that named another name: they got the
	// default certificate, which is for none of the names.
	Unknown int64 `json:"unknown"`
}

// serveNames makes tl choose its certificate by the client's server name
// among Config.Names, issued with base's key (base is then served to
// clients that name none of them); nothing without Config.Names.
func (t *Target) serveNames(tl *tlsListener, base tls.Certificate) error {
	names := t.cfg.Names
	if len(names) == 0 {
		return nil
	}
	if t.CA == nil || base.Leaf == nil {
		return errors.New("target: server names need generated certificates (not Config.Cert)")
	}
	kt := tl.l.Profile.ServerCertKey().String()
	if t.names == nil {
		t.names = map[string]*nameCerts{}
	}
	nc, ok := t.names[kt]
	if !ok {
		nc = &nameCerts{index: make(map[string]int, len(names)), certs: make([]tls.Certificate, len(names))}
		for i, name := range names {
			c, err := t.CA.Reissue(base, []string{name})
			if err != nil {
				return err
			}
			nc.certs[i] = c
			nc.index[strings.ToLower(name)] = i
		}
		t.names[kt] = nc
	}
	counts := &nameCounts{perName: make([]atomic.Int64, len(names))}
	tl.l.names = counts
	tl.cfg.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if i, ok := nc.index[strings.ToLower(hello.ServerName)]; ok {
			counts.perName[i].Add(1)
			return &nc.certs[i], nil
		}
		counts.unknown.Add(1)
		return &base, nil
	}
	return nil
}

// NameCounts returns the listener's handshakes by name, in Config.Names'
// order (the certificates chosen for each), and those that named another;
// nil without Config.Names.
func (l *Listener) NameCounts() (perName []int64, unknown int64) {
	n := l.names
	if n == nil {
		return nil, 0
	}
	perName = make([]int64, len(n.perName))
	for i := range n.perName {
		perName[i] = n.perName[i].Load()
	}
	return perName, n.unknown.Load()
}

// nameStats is the /stats summary of the listener's names, nil without.
func (l *Listener) nameStats() *NameStats {
	per, unknown := l.NameCounts()
	if per == nil {
		return nil
	}
	s := &NameStats{Count: len(per), Unknown: unknown}
	for i, c := range per {
		s.Handshakes += c
		if i == 0 || c < s.HandshakesMin {
			s.HandshakesMin = c
		}
		s.HandshakesMax = max(s.HandshakesMax, c)
	}
	return s
}
