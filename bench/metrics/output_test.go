package metrics

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileSymlinkToFIFO: a symbolic link to a FIFO is written through,
// and stays a symbolic link (never renamed over).
func TestWriteFileSymlinkToFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "out.json")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		// O_RDWR never blocks on a FIFO; read until the writer's data is in.
		f, err := os.OpenFile(fifo, os.O_RDWR, 0)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		_ = f.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b strings.Builder
		buf := make([]byte, 64)
		for !strings.HasSuffix(b.String(), "\n") {
			n, err := f.Read(buf)
			b.Write(buf[:n])
			if err != nil && err != io.EOF {
				break
			}
		}
		got <- b.String()
	}()
	if err := CheckOutput(link); err != nil {
		t.Fatalf("CheckOutput: %v", err)
	}
	if err := WriteFile(link, []byte(`{"x":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != `{"x":1}`+"\n" {
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

// TestWriteFileSymlinkToRegular: the target of the link is replaced, the
// link stays.
func TestWriteFileSymlinkToRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "new" {
		t.Errorf("target holds %q", data)
	}
}

// TestWriteFileRefused: a directory is refused, and a missing directory is
// named in the error, without a temporary file name.
func TestWriteFileRefused(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(dir, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	missing := filepath.Join(dir, "no", "run.json")
	for _, err := range []error{WriteFile(missing, []byte("x"), 0o644), CheckOutput(missing)} {
		if err == nil || strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), missing) {
			t.Errorf("a missing directory: %v", err)
		}
	}
	if err := CheckOutput(dir); err == nil {
		t.Error("CheckOutput accepted a directory")
	}
	if err := CheckOutput(filepath.Join(dir, "ok.json")); err != nil {
		t.Errorf("CheckOutput: %v", err)
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
		if err := WriteFile(link, []byte("x"), 0o644); err == nil {
			t.Errorf("%s: written", name)
		}
		if err := CheckOutput(link); err == nil {
			t.Errorf("%s: CheckOutput accepted it", name)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link", name)
		}
	}
}
