package method

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Entry is one line of the ledger: a run the method made, how it was judged,
// and its full record.
type Entry struct {
	// Schema is LedgerSchema; Append sets it.
	Schema   string            `json:"schema"`
	Key      string            `json:"key"`
	Phase    vocab.MethodPhase `json:"phase"`
	DUT      string            `json:"dut"`
	Engine   vocab.Engine      `json:"engine"`
	Profile  string            `json:"profile"`
	Level    int               `json:"level"`
	Seq      int               `json:"seq,omitempty"`
	Value    float64           `json:"value"`
	Accepted bool              `json:"accepted"`
	Reasons  []string          `json:"reasons,omitempty"`
	Time     time.Time         `json:"time"`
	Run      *metrics.Run      `json:"run"`
	// Preliminary phase only: whether the DUT would resume a session.
	Resumption    *bool  `json:"resumption,omitempty"`
	ResumptionErr string `json:"resumption_error,omitempty"`
	// Round is 1 for the runs of a re-exploration and the final runs after
	// it (a cell whose first finals fell short of its exploration).
	Round int `json:"round,omitempty"`
	// Repeat is the repeat of the final phase (final.repeat), from 2; the
	// first repeat's runs have none.
	Repeat int `json:"repeat,omitempty"`
	// Device is the device's counts beside tlsbench's, in words ("device
	// counted N, tlsbench counted M"), when the DUT names its counters.
	Device []string `json:"device,omitempty"`
}

// Ledger is a campaign's append-only record of runs (ledger.jsonl), one
// JSON line per run, fsynced as it is written. A Ledger is used by one
// goroutine.
type Ledger struct {
	f       *os.File
	entries map[string]*Entry
	order   []*Entry
}

// LedgerFile is the ledger's name in a campaign directory.
const LedgerFile = "ledger.jsonl"

// ReadLedger reads the entries of a ledger file without opening it for
// writing. A last line cut short by a crash is left out.
func ReadLedger(file string) ([]*Entry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	entries, _, err := parseLedger(file, data)
	return entries, err
}

// parseLedger decodes ledger lines; good is the length of the whole lines.
func parseLedger(file string, data []byte) (entries []*Entry, good int, err error) {
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break // a torn last line
		}
		line := data[off : off+nl]
		if !json.Valid(line) {
			if off+nl+1 == len(data) {
				break // a damaged last line
			}
			return nil, 0, fmt.Errorf("ledger %s: line %d is not a ledger entry", file, len(entries)+1)
		}
		e, err := DecodeEntry(line)
		if err != nil {
			return nil, 0, fmt.Errorf("ledger %s: line %d: %w", file, len(entries)+1, err)
		}
		entries = append(entries, e)
		off += nl + 1
		good = off
	}
	return entries, good, nil
}

// OpenLedger opens (or creates) dir's ledger and loads its entries. A last
// line cut short by a crash is dropped from the file: it is the run that was
// being written, and it will be made again.
func OpenLedger(dir string) (*Ledger, error) {
	file := filepath.Join(dir, LedgerFile)
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	entries, good, err := parseLedger(file, data)
	if err != nil {
		return nil, err
	}
	l := &Ledger{entries: map[string]*Entry{}, order: entries}
	for _, e := range entries {
		l.entries[e.Key] = e
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(int64(good)); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(int64(good), 0); err != nil {
		f.Close()
		return nil, err
	}
	l.f = f
	return l, nil
}

// Lookup returns the entry with key, if the ledger has it.
func (l *Ledger) Lookup(key string) (*Entry, bool) {
	e, ok := l.entries[key]
	return e, ok
}

// Entries returns the entries in the order they were written.
func (l *Ledger) Entries() []*Entry { return append([]*Entry(nil), l.order...) }

// Append writes e as one line and syncs it to disk.
func (l *Ledger) Append(e *Entry) error {
	e.Schema = LedgerSchema
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(l.f)
	w.Write(data)
	w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	l.entries[e.Key] = e
	l.order = append(l.order, e)
	return nil
}

// Close closes the ledger file.
func (l *Ledger) Close() error { return l.f.Close() }
