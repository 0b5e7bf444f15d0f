package main

import (
	"errors"
	"strings"
	"testing"
)

// TestParseRefuses checks that bad input is a one-line usage error (exit 2)
// naming the problem, before anything is built.
func TestParseRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no base revision"},
		{[]string{"--base", "HEAD", "--rounds", "1"}, "at least 2 rounds"},
		{[]string{"--base", "HEAD", "--duration", "10ms"}, "at least 1s"},
		{[]string{"--base", "HEAD", "--profiles", "nope"}, "--profiles"},
		{[]string{"--base", "HEAD", "extra"}, `unexpected argument "extra"`},
	} {
		_, err := parse(c.args)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parse(%q) = %v, want a one-line usage error containing %q", c.args, err, c.want)
		}
	}
	if o, err := parse([]string{"--base", "HEAD~1"}); err != nil || len(o.profiles) != 3 || o.rounds < 2 {
		t.Errorf("parse(--base HEAD~1) = %+v, %v; want the seed profiles and the default rounds", o, err)
	}
}
