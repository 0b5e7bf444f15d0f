package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// checkStream validates every line of a stream against its schema and
// returns the second lines' count and the record of the last line.
func checkStream(t *testing.T, what, data string) (seconds int, rec map[string]any) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(data, "\n"), "\n")
	schematest.ValidLines(t, schemas.Stream, what, []byte(data))
	for i, line := range lines {
		var v struct {
			Type     string         `json:"type"`
			Protocol string         `json:"protocol"`
			Time     time.Time      `json:"time"`
			Unix     int64          `json:"unix"`
			Record   map[string]any `json:"record"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s line %d: %v: %q", what, i+1, err, line)
		}
		switch v.Type {
		case "second":
			if rec != nil {
				t.Errorf("%s line %d: a second after the record", what, i+1)
			}
			if v.Time.Unix() != v.Unix {
				t.Errorf("%s line %d: time %s, unix %d", what, i+1, v.Time, v.Unix)
			}
			if v.Protocol != "http/1.1" {
				t.Errorf("%s line %d: protocol %q, want http/1.1", what, i+1, v.Protocol)
			}
			seconds++
		case "record":
			rec = v.Record
		}
	}
	return seconds, rec
}

// TestStream runs cps with --stream to stdout and to a file: one line per
// second while it runs (valid against schemas/stream.json), then the
// record, the same as --json's; with --stream - the text goes to stderr.
func TestStream(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "run.json")
	code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "2s", "--warmup", "500ms", "--dut", "streamed",
		"--stream", "-", "--json", jsonFile)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "CPS (SR=0)") {
		t.Errorf("with --stream -, the text goes to stderr; stderr:\n%s", stderr)
	}
	n, rec := checkStream(t, "stdout", stdout)
	if n < 2 || rec == nil {
		t.Fatalf("%d second lines, record %v:\n%s", n, rec != nil, stdout)
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if rec["transactions"] != want["transactions"] || rec["started"] != want["started"] {
		t.Errorf("the stream's record: transactions %v started %v; --json's %v %v", rec["transactions"], rec["started"], want["transactions"], want["started"])
	}
	if series, _ := want["series"].([]any); len(series) < n {
		t.Errorf("%d second lines, the record's series has %d", n, len(series))
	}
	if !strings.Contains(stdout, `"dut":"streamed"`) || !strings.Contains(stdout, `"engine":"cps"`) {
		t.Errorf("the lines lack the DUT or engine:\n%.300s", stdout)
	}

	file := filepath.Join(dir, "stream.jsonl")
	code, _, stderr = invoke(t, context.Background(), "throughput", "-q", "-c", "1", "-d", "1s", "--warmup", "0s", "--stream", file)
	if code != exitOK {
		t.Fatalf("throughput: exit %d: %s", code, stderr)
	}
	data, err = os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n, rec := checkStream(t, file, string(data)); n < 1 || rec == nil || rec["engine"] != "throughput" {
		t.Errorf("%s: %d seconds, record %v", file, n, rec != nil)
	}
}

// TestLiveFlagsBadInput: the live flags' bad values are usage errors,
// found before any load.
func TestLiveFlagsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cps", "--stream", "-", "--json", "-"}, "both want stdout"},
		{[]string{"cps", "--stream", dir}, "--stream"},
		{[]string{"cps", "--stream", filepath.Join(dir, "no", "such", "dir", "s.jsonl")}, "--stream"},
		{[]string{"cps", "--metrics-listen", "nohost"}, "--metrics-listen"},
		{[]string{"cps", "--metrics-listen", ":99999"}, "--metrics-listen"},
		{[]string{"throughput", "--metrics-listen", ":9100", "--metrics-linger", "-1s"}, "--metrics-linger"},
		{[]string{"serve", "--metrics-listen", "a:b:c"}, "--metrics-listen"},
		{[]string{"qualify", "--dut", "x=https://127.0.0.1:1/", "--metrics-listen", "bad port"}, "--metrics-listen"},
	} {
		code, _, stderr := invoke(t, context.Background(), tc.args...)
		if code != exitBadUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", tc.args, code, exitBadUsage, tc.want, stderr)
		}
	}
}

// blockingWriter never returns from Write until released.
type blockingWriter struct{ release chan struct{} }

func (b blockingWriter) Write(p []byte) (int, error) {
	<-b.release
	return len(p), nil
}

// TestStreamWriterBounded: a reader that does not read delays no second
// (the engine's tick): past the queue, lines are dropped and counted in the
// record's line.
func TestStreamWriterBounded(t *testing.T) {
	w := blockingWriter{make(chan struct{})}
	s := newStreamWriter(context.Background(), func(context.Context) (io.Writer, error) { return w, nil })
	start := time.Now()
	for i := range streamQueue + 10 {
		s.second(streamHead{Profile: "p", Engine: "cps"}, metrics.Second{T: i + 1, Unix: int64(i)})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("queuing %d lines took %s", streamQueue+10, d)
	}
	s.mu.Lock()
	dropped := s.dropped
	s.mu.Unlock()
	// One line is being written (taken from the queue), streamQueue wait.
	if dropped < 9 || dropped > 10 {
		t.Errorf("dropped %d lines, want 9 or 10", dropped)
	}
	close(w.release)
	if err := s.close(); err != nil {
		t.Error(err)
	}
}

// TestStreamRecordKeptForALateReader: a FIFO's reader that comes after
// the queue filled still gets the record's line, last, with the seconds
// dropped counted in it.
func TestStreamRecordKeptForALateReader(t *testing.T) {
	var buf bytes.Buffer
	opened := make(chan struct{})
	s := newStreamWriter(context.Background(), func(context.Context) (io.Writer, error) {
		<-opened
		return &buf, nil
	})
	for i := range streamQueue + 10 {
		s.second(streamHead{Profile: "p", Engine: "cps"}, metrics.Second{T: i + 1, Unix: int64(i)})
	}
	done := make(chan struct{})
	go func() { s.record(&metrics.Run{Profile: "p"}); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the record's line waited for the reader")
	}
	close(opened)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var last streamRecord
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "record" {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	if len(lines) != streamQueue || last.Dropped != 11 {
		t.Errorf("%d lines, %d dropped; want %d lines, the record counting 11 dropped", len(lines), last.Dropped, streamQueue)
	}
}
