package method_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
)

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
