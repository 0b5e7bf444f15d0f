package method

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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
	// Preliminary phase only: whether the DUT would resume a session, or
	// why that is not known; ResumptionProbe is the probe's transactions
	// (Executor.Resumption), its Requests the GETs the DUT answered beside
	// the run's (absent before it was recorded: two HTTP/1.1 GETs).
	Resumption      *bool              `json:"resumption,omitempty"`
	ResumptionErr   string             `json:"resumption_error,omitempty"`
	ResumptionProbe *metrics.Preflight `json:"resumption_probe,omitempty"`
	// Round is 1 for a re-exploration's runs and the final runs after it.
	Round int `json:"round,omitempty"`
	// Repeat is the final phase's repeat (final.repeat), from 2.
	Repeat int `json:"repeat,omitempty"`
	// Device is the device's counts beside tlsbench's, in words.
	Device []string `json:"device,omitempty"`
	// Test is the plan test's name, if it has one (an RFC 9411 suite's).
	Test string `json:"test,omitempty"`
	// Verdict is the run's RFC 9411 verdict (analysis.RFC9411), "pass" or
	// "fail", for a test of the suite; Criterion the first criterion it
	// failed. Preliminary runs are not judged.
	Verdict   string `json:"verdict,omitempty"`
	Criterion string `json:"criterion,omitempty"`
}

// probed records the resumption probe's answer pf (err: none made): the
// DUT resumed a session, or refused one (not_resumed), or the probe failed
// otherwise and says how.
func (e *Entry) probed(pf *metrics.Preflight, err error) {
	e.ResumptionProbe = pf
	switch {
	case err != nil:
		e.ResumptionErr = err.Error()
	case pf == nil:
	case pf.OK || pf.Class == vocab.ClassNotResumed:
		e.Resumption = new(pf.Resumed > 0)
	default:
		e.ResumptionErr = "the probe failed: " + pf.Answer()
	}
}

// ledger is a campaign's append-only record of runs (ledger.jsonl), one
// JSON line per run, fsynced as it is written; used by one goroutine.
type ledger struct {
	f       *os.File
	entries map[string]*Entry
	order   []*Entry
	dropped int
}

// LedgerFile is the ledger's name in a campaign directory.
const LedgerFile = "ledger.jsonl"

// ReadLedger reads the entries of a ledger file without opening it for
// writing, as parseLedger does.
func ReadLedger(file string) ([]*Entry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	p, err := parseLedger(file, data)
	return p.entries, err
}

// parsedLedger is a ledger file decoded.
type parsedLedger struct {
	entries []*Entry
	keep    int  // the bytes of the entries' lines
	torn    int  // the bytes of a torn last line, dropped
	newline bool // the last entry's line has no newline: one is added
}

// parseLedger decodes ledger lines. Only a last line torn by a crash may be
// passed over: one with no newline at its end that is not JSON (Append
// writes a line and its newline at once, so a crash can cut one short but
// cannot leave a whole line that is not JSON). A last line that is JSON
// but has no newline (an editor's doing) is read as a whole line.
func parseLedger(file string, data []byte) (parsedLedger, error) {
	var p parsedLedger
	for n := 1; p.keep < len(data); n++ {
		rest := data[p.keep:]
		line, _, whole := bytes.Cut(rest, []byte("\n"))
		if !whole && !json.Valid(line) {
			p.torn = len(rest)
			break
		}
		if !json.Valid(line) {
			return parsedLedger{}, fmt.Errorf("ledger %s: line %d is not a ledger entry (not JSON); "+
				"only a last line torn by a crash (no newline at its end) is dropped: mend or remove this one", file, n)
		}
		e, err := decodeEntry(line)
		if err != nil {
			return parsedLedger{}, fmt.Errorf("ledger %s: line %d: %w", file, n, err)
		}
		p.entries = append(p.entries, e)
		p.keep += len(line)
		if whole {
			p.keep++
		}
		p.newline = !whole
	}
	return p, nil
}

// OpenLedger opens (or creates) dir's ledger and loads its entries. A last
// line torn by a crash is cut off the file (Dropped): that run will be made
// again. A ledger with any other invalid line is refused, left as it is.
func OpenLedger(dir string) (*ledger, error) {
	file := filepath.Join(dir, LedgerFile)
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	p, err := parseLedger(file, data)
	if err != nil {
		return nil, err
	}
	l := &ledger{entries: map[string]*Entry{}, order: p.entries, dropped: p.torn}
	for _, e := range p.entries {
		l.entries[e.Key] = e
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if err := l.mend(f, p); err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger %s: %w", file, err)
	}
	l.f = f
	return l, nil
}

// mend cuts a torn last line off f, ends a last line without a newline,
// and leaves f at its end.
func (l *ledger) mend(f *os.File, p parsedLedger) error {
	if p.torn > 0 {
		if err := f.Truncate(int64(p.keep)); err != nil {
			return err
		}
	}
	if _, err := f.Seek(int64(p.keep), 0); err != nil {
		return err
	}
	if p.newline {
		if _, err := f.Write([]byte("\n")); err != nil {
			return err
		}
	}
	if p.torn > 0 || p.newline {
		return f.Sync()
	}
	return nil
}

// Dropped is the number of bytes of a last line torn by a crash that
// OpenLedger cut off the file (0: none).
func (l *ledger) Dropped() int { return l.dropped }

// Lookup returns the entry with key, if the ledger has it.
func (l *ledger) Lookup(key string) (*Entry, bool) {
	e, ok := l.entries[key]
	return e, ok
}

// Entries returns the entries in the order they were written.
func (l *ledger) Entries() []*Entry { return append([]*Entry(nil), l.order...) }

var appending sync.Mutex // held while a ledger line is written and synced

// HoldLedgers, for a process about to exit, waits (at most d) for a ledger
// line being written, lets no other start, and reports whether it got the hold.
func HoldLedgers(d time.Duration) bool {
	for end := time.Now().Add(d); !appending.TryLock(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			return false
		}
	}
	return true
}

// Append writes e as one line and syncs it to disk.
func (l *ledger) Append(e *Entry) error {
	appending.Lock()
	defer appending.Unlock()
	e.Schema = LedgerSchema
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// The line and its newline in one write: a crash can only cut it short.
	if _, err := l.f.Write(append(data, '\n')); err != nil {
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
func (l *ledger) Close() error { return l.f.Close() }
