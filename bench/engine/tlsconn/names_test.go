package tlsconn_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestCheckServerName: host names as RFC 1123 has them pass; what is not
// one, or cannot be sent as SNI, is refused with the reason.
func TestCheckServerName(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, ok := range []string{"localhost", "www1.tlsbench.test", "xn--bcher-kva.example", "A-1.b2.Example.COM",
		long + "." + long + "." + long + "." + strings.Repeat("b", 61), "1.example"} {
		if err := tlsconn.CheckServerName(ok); err != nil {
			t.Errorf("%q: %v, want a host name", ok, err)
		}
	}
	for _, c := range []struct{ name, why string }{
		{"", "empty"},
		{"192.0.2.1", "IP address"},
		{"::1", "IP address"},
		{"a.b.", "ends with a dot"},
		{"a..b", "empty label"},
		{".a", "empty label"},
		{"-a.test", "hyphen"},
		{"a-.test", "hyphen"},
		{"a_b.test", "'_'"},
		{"*.test", "'*'"},
		{"a b.test", "' '"},
		{"bücher.test", "letters, digits and hyphens"},
		{"www%d.test", "'%'"},
		{long + "a.test", "more than 63"},
		{strings.Repeat("a.", 127) + "ab", "more than 253"},
		{"a.123", "all digits"},
	} {
		err := tlsconn.CheckServerName(c.name)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%q: %v, want an error saying %s", c.name, err, c.why)
		}
	}
}

// TestSettingsServerNames: Validate refuses a bad or repeated name (case
// ignored) and too many names, as a field error of server_names.
func TestSettingsServerNames(t *testing.T) {
	s := tlsconn.Defaults().Settings
	s.ServerNames = []string{"a.test", "b.test"}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	many := make([]string, tlsconn.MaxServerNames+1)
	for i := range many {
		many[i] = fmt.Sprintf("n%d.test", i)
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"a.test", "a_b.test"}, "name 2"},
		{[]string{"a.test", "b.test", "A.test"}, "name 3 repeats name 1"},
		{many, "at most"},
	} {
		s.ServerNames = c.names
		err := s.Validate()
		var fe *vocab.FieldError
		if !errors.As(err, &fe) || fe.Field != "server_names" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d names: %v, want a server_names error saying %s", len(c.names), err, c.want)
		}
	}
}
