package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMakeTestChecksBudgets: `make test` runs TestScale without the race
// detector too, so that CI asserts the memory budgets per connection (which
// TestScale checks only when the race detector is off).
func TestMakeTestChecksBudgets(t *testing.T) {
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\ntest:")
	if !ok {
		t.Fatal("the Makefile has no test target")
	}
	var recipe []string
	for _, line := range strings.Split(after, "\n")[1:] {
		if !strings.HasPrefix(line, "\t") {
			break
		}
		recipe = append(recipe, line)
	}
	scale := regexp.MustCompile(`^\t\$\(GO\) test (.* )?-run '\^TestScale\$\$' (.* )?\./cmd/scale$`)
	for _, line := range recipe {
		if scale.MatchString(line) && !strings.Contains(line, "-race") {
			return
		}
	}
	t.Errorf("make test's recipe has no line running TestScale in ./cmd/scale without -race:\n%s", strings.Join(recipe, "\n"))
}
