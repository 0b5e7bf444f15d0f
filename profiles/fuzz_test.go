package profiles_test

import (
	"crypto/tls"
	"os"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/profiles"
)

// FuzzParse: any bytes give profiles or a one-line error, never a panic.
func FuzzParse(f *testing.F) {
	for _, name := range profiles.Builtin().Names() {
		p, _ := profiles.Builtin().Get(name)
		f.Add(p.YAML())
	}
	if data, err := os.ReadFile("testdata/good/multi.yaml"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := profiles.Parse("fuzz.yaml", data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
			return
		}
		for _, p := range ps {
			if p.ClientConfig(&tls.Config{}) == nil {
				t.Error("no client config")
			}
		}
	})
}
