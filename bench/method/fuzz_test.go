package method_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
)

// FuzzLedger: any ledger file opens or fails with an error, never a panic;
// what opens can be appended to.
func FuzzLedger(f *testing.F) {
	f.Add([]byte(`{"key":"final|a|cps|p|1|1","phase":"final","run":null}` + "\n"))
	f.Add([]byte(`{"key":"x"}` + "\n" + `{"key":"y","run":{"schema":"tlsbench/run/v1"`))
	f.Add([]byte("\n\n"))
	f.Add([]byte("garbage\n"))                   // a whole line, not JSON: refused
	f.Add([]byte(`{"key": 1}` + "\n"))           // JSON, not an entry: refused
	f.Add([]byte(`{"key":"x","phase":"fin`))     // torn: dropped
	f.Add([]byte("\x00\x00\x00\x00"))            // a crash's zeroed tail: dropped
	f.Add([]byte(`{"key":"x"}` + "\n" + "tail")) // a refused line, then a torn one
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, method.LedgerFile)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := method.OpenLedger(dir)
		after, _ := os.ReadFile(file)
		if err != nil {
			// Refused: one line, and the file as it was.
			if strings.Contains(err.Error(), "\n") || !bytes.Equal(after, data) {
				t.Errorf("refused with %q, file changed: %v", err, !bytes.Equal(after, data))
			}
			return
		}
		defer l.Close()
		// Opened: at most a torn last line (not JSON) was cut, or a newline added.
		switch {
		case bytes.Equal(after, append(bytes.Clone(data), '\n')):
		case bytes.HasPrefix(data, after) && l.Dropped() == len(data)-len(after):
			if torn := data[len(after):]; bytes.Contains(torn, []byte("\n")) || (len(torn) > 0 && json.Valid(torn)) {
				t.Errorf("dropped %q, not a torn last line", torn)
			}
		default:
			t.Errorf("file changed from %q to %q (dropped %d)", data, after, l.Dropped())
		}
		if err := l.Append(&method.Entry{Key: "fuzz"}); err != nil {
			t.Fatal(err)
		}
		if _, ok := l.Lookup("fuzz"); !ok {
			t.Error("appended entry not found")
		}
	})
}
