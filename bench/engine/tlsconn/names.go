package tlsconn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/profiles"
)

// MaxServerNames bounds a run's server names (Settings.ServerNames): each
// has its client configuration and its counters for the run (and, on the
// reference target, its certificate).
const MaxServerNames = 100_000

// CheckServerName reports why name cannot be sent as a server name (SNI)
// and verified: it must be a host name as RFC 1123 has it, in ASCII (an
// internationalized name in its A-label form, xn--…): labels of 1 to 63
// letters, digits and hyphens, neither first nor last a hyphen, 253
// characters in all, without a trailing dot, the last label not all digits.
// An IP address is refused: RFC 6066 keeps it out of SNI.
func CheckServerName(name string) error {
	switch {
	case name == "":
		return errors.New("empty")
	case net.ParseIP(name) != nil:
		return errors.New("an IP address (SNI carries host names only, RFC 6066)")
	case len(name) > 253:
		return fmt.Errorf("%d characters, more than 253", len(name))
	case strings.HasSuffix(name, "."):
		return errors.New("ends with a dot (give the name without it)")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return err
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return errors.New("its last label is all digits")
	}
	return nil
}

// checkLabel checks one label of a host name.
func checkLabel(l string) error {
	switch {
	case l == "":
		return errors.New("an empty label (two dots in a row, or a leading dot)")
	case len(l) > 63:
		return fmt.Errorf("label %q has %d characters, more than 63", l, len(l))
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("label %q begins or ends with a hyphen", l)
	}
	for _, r := range l {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-'
		if !ok {
			return fmt.Errorf("label %q has %q: letters, digits and hyphens only", l, r)
		}
	}
	return nil
}

// validateNames checks ServerNames: valid host names, distinct (ignoring
// case, as DNS does), MaxServerNames at most.
func (s *Settings) validateNames() error {
	if n := len(s.ServerNames); n > MaxServerNames {
		return &vocab.FieldError{Field: "server_names", Value: n, Want: fmt.Sprintf("hold at most %d names", MaxServerNames)}
	}
	seen := make(map[string]int, len(s.ServerNames))
	for i, name := range s.ServerNames {
		if err := CheckServerName(name); err != nil {
			return &vocab.FieldError{Field: "server_names", Value: name,
				Want: fmt.Sprintf("hold host names only (name %d: %v)", i+1, err)}
		}
		key := strings.ToLower(name)
		if j, ok := seen[key]; ok {
			return &vocab.FieldError{Field: "server_names", Value: name,
				Want: fmt.Sprintf("hold distinct names (name %d repeats name %d)", i+1, j+1)}
		}
		seen[key] = i
	}
	return nil
}

// serverNames are a run's server names, taken in turn by its connections:
// one client configuration per name, built once per run
// (Profile.ClientConfigs), and the count of each name's connections and of
// its failed handshakes.
//
// The turn is the run's, not each worker's: the n-th connection of the run
// (counting those that connected) takes name n mod len(list), so that
// however many workers and however short the run, the names' counts differ
// by one at most. It costs one atomic addition per connection, as the count
// of open connections does.
type serverNames struct {
	list    []string
	configs []*tls.Config
	turn    atomic.Uint64
	conns   []atomic.Int64 // connections that began their handshake, by name
	failed  []atomic.Int64 // those whose handshake (or its verification) failed
}

// newServerNames returns the run's names, or nil when it has none (the
// run's one configuration is then used).
func newServerNames(p *profiles.Profile, base *tls.Config, list []string) *serverNames {
	if len(list) == 0 {
		return nil
	}
	return &serverNames{
		list: list, configs: p.ClientConfigs(base, list),
		conns: make([]atomic.Int64, len(list)), failed: make([]atomic.Int64, len(list)),
	}
}

// clientConfig returns the configuration of the dialer's next connection:
// the run's one, or that of the next name in turn, noted in d.name.
func (d *Dialer) clientConfig() *tls.Config {
	n := d.c.names
	if n == nil {
		return d.c.tls
	}
	i := int((n.turn.Add(1) - 1) % uint64(len(n.list)))
	n.conns[i].Add(1)
	d.name = i
	return n.configs[i]
}

// nameFailed counts a failed handshake against the name of the dialer's
// connection.
func (d *Dialer) nameFailed() {
	if n := d.c.names; n != nil {
		n.failed[d.name].Add(1)
	}
}

// Names returns how the run's connections were spread over its server
// names since the last ResetNames: nil when the run has none.
func (e *Endpoint) Names() *metrics.Names {
	n := e.names
	if n == nil {
		return nil
	}
	conns := make([]int64, len(n.list))
	failed := make([]int64, len(n.list))
	for i := range n.list {
		conns[i], failed[i] = n.conns[i].Load(), n.failed[i].Load()
	}
	return metrics.NewNames(n.list, conns, failed)
}

// ResetNames starts the names' counts and their turn afresh; no connection
// may be opening meanwhile. The runner calls it after the preflight, whose
// connections the record counts apart.
func (e *Endpoint) ResetNames() {
	n := e.names
	if n == nil {
		return
	}
	n.turn.Store(0)
	for i := range n.list {
		n.conns[i].Store(0)
		n.failed[i].Store(0)
	}
}
