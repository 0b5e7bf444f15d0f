package outfile_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/outfile/outfiletest"
)

// TestWriteSymlinkToFIFO: a symbolic link to a FIFO is written through,
// and stays a symbolic link (never renamed over).
func TestWriteSymlinkToFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo, got := outfiletest.FIFO(t, dir, "fifo", func(b []byte) bool { return bytes.HasSuffix(b, []byte("\n")) }, 5*time.Second)
	link := filepath.Join(dir, "out.json")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	if err := outfile.Check(link); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := outfile.Write(link, []byte(`{"x":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if string(s) != `{"x":1}`+"\n" {
			t.Errorf("the FIFO received %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO received nothing")
	}
	st, err := os.Lstat(link)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link: %v %v", link, st.Mode(), err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is no longer a FIFO: %v", fifo, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%d entries left in the directory, want 2 (no temporary file)", len(ents))
	}
}

// TestWriteSymlinkToRegular: the target of the link is replaced, the
// link stays.
func TestWriteSymlinkToRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := outfile.Write(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "new" {
		t.Errorf("target holds %q", data)
	}
}

// TestWriteRefused: a directory is refused, and a missing directory is
// named in the error, without a temporary file name.
func TestWriteRefused(t *testing.T) {
	dir := t.TempDir()
	if err := outfile.Write(dir, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	missing := filepath.Join(dir, "no", "run.json")
	for _, err := range []error{outfile.Write(missing, []byte("x"), 0o644), outfile.Check(missing)} {
		if err == nil || strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), missing) {
			t.Errorf("a missing directory: %v", err)
		}
	}
	if err := outfile.Check(dir); err == nil {
		t.Error("Check accepted a directory")
	}
	if err := outfile.Check(filepath.Join(dir, "ok.json")); err != nil {
		t.Errorf("Check: %v", err)
	}
	// Links to a directory, or to nothing, are refused and left alone.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"to-dir": sub, "dangling": filepath.Join(dir, "nothing", "x")} {
		link := filepath.Join(dir, name)
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
		if err := outfile.Write(link, []byte("x"), 0o644); err == nil {
			t.Errorf("%s: written", name)
		}
		if err := outfile.Check(link); err == nil {
			t.Errorf("%s: Check accepted it", name)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link", name)
		}
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.json")
	tests := []struct {
		data []byte
		perm os.FileMode
	}{
		// A new private file.
		{[]byte("first\n"), 0o600},
		// Replaced by shorter content and another mode.
		{[]byte("2\n"), 0o644},
		// The mode is exactly as asked, whatever the umask.
		{[]byte("third, longer than the others\n"), 0o666},
		// Empty content.
		{nil, 0o640},
	}
	for i, tt := range tests {
		// Someone reading the old version keeps reading it: the new content
		// is a new file renamed over the old one, not a rewrite in place.
		var old *os.File
		var oldData []byte
		if i > 0 {
			var err error
			if old, err = os.Open(file); err != nil {
				t.Fatal(err)
			}
			oldData = tests[i-1].data
		}
		if err := outfile.Write(file, tt.data, tt.perm); err != nil {
			t.Fatalf("Write #%d: %v", i, err)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, tt.data) {
			t.Errorf("#%d: content %q, want %q", i, got, tt.data)
		}
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode(), tt.perm; got != want {
			t.Errorf("#%d: mode %v, want %v", i, got, want)
		}
		if got, want := dirNames(t, dir), []string{"run.json"}; !reflect.DeepEqual(got, want) {
			t.Errorf("#%d: directory holds %q, want %q (no temporary files)", i, got, want)
		}
		if old != nil {
			prev, err := io.ReadAll(old)
			old.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(prev, oldData) {
				t.Errorf("#%d: an open reader of the old file sees %q, want the old %q", i, prev, oldData)
			}
		}
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty directory: the rename fails and the
	// temporary file is removed.
	target := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(target, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := outfile.Write(target, []byte("x"), 0o644); err == nil {
		t.Error("Write over a directory succeeded")
	}
	if got, want := dirNames(t, dir), []string{"taken"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after a failed Write the directory holds %q, want %q", got, want)
	}
	// A missing directory.
	if err := outfile.Write(filepath.Join(dir, "missing", "run.json"), []byte("x"), 0o644); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}

// TestWriteContextFIFO: a FIFO without a reader is waited for until ctx
// ends, and the error says nothing was written; once ctx has ended, a
// reader already there still gets the data (an interrupted run's record).
func TestWriteContextFIFO(t *testing.T) {
	dir := t.TempDir()
	lonely := filepath.Join(dir, "lonely")
	if err := syscall.Mkfifo(lonely, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	waited := 0
	start := time.Now()
	err := outfile.WriteContext(ctx, lonely, []byte("x\n"), 0o644, func() { waited++ })
	if err == nil || !strings.Contains(err.Error(), "interrupted while waiting for a reader of the FIFO: nothing written") {
		t.Errorf("no reader, ctx cancelled: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second || waited != 1 {
		t.Errorf("returned after %s, the wait said %d times (want once)", d, waited)
	}
	// The reader opens first (O_RDWR: at once), then reads what the
	// pipe's buffer holds.
	fifo := filepath.Join(dir, "read")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := outfile.WriteContext(ctx, fifo, []byte(`{"x":1}`+"\n"), 0o644, nil); err != nil {
		t.Fatalf("a reader there, ctx ended: %v", err)
	}
	_ = r.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != `{"x":1}`+"\n" {
		t.Errorf("the FIFO received %q (%v)", buf[:n], err)
	}
}
