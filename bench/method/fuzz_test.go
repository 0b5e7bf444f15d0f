package method_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
)

// FuzzParsePlan: any bytes give a plan or a one-line error.
func FuzzParsePlan(f *testing.F) {
	f.Add([]byte(goodPlan))
	f.Add([]byte("name: x\nduts: [{name: a, url: 'https://a/'}]\ntests: [{engine: cps, profiles: [rsa2048-aes128-gcm-sha256]}]\n"))
	set := profilesSet()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := method.ParsePlan("fuzz.yaml", data, set)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
			return
		}
		if _, err := p.Marshal(); err != nil {
			t.Errorf("a valid plan does not marshal: %v", err)
		}
	})
}

// FuzzLedger: any ledger file opens or fails with an error, never a panic;
// what opens can be appended to.
func FuzzLedger(f *testing.F) {
	f.Add([]byte(`{"key":"final|a|cps|p|1|1","phase":"final","run":null}` + "\n"))
	f.Add([]byte(`{"key":"x"}` + "\n" + `{"key":"y","run":{"schema":"tlsbench/run/v1"`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, method.LedgerFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := method.OpenLedger(dir)
		if err != nil {
			return
		}
		defer l.Close()
		if err := l.Append(&method.Entry{Key: "fuzz"}); err != nil {
			t.Fatal(err)
		}
		if _, ok := l.Lookup("fuzz"); !ok {
			t.Error("appended entry not found")
		}
	})
}
