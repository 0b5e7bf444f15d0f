package reports

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// browsers are the names a headless Chromium goes by on PATH, in the order
// FindBrowser tries them.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// NoBrowserError is FindBrowser's error when no browser is installed, or
// when the one named is not an executable file.
type NoBrowserError struct {
	Named string // the browser named by the caller, if any
	Err   error  // why it cannot be used, when named
}

func (e *NoBrowserError) Error() string {
	if e.Named != "" {
		return fmt.Sprintf("browser %s: %v", e.Named, e.Err)
	}
	return "no headless Chromium to print the PDF with: none of " + strings.Join(browsers, ", ") + " is on PATH"
}

func (e *NoBrowserError) Unwrap() error { return e.Err }

// FindBrowser returns the browser to print with: named (a path, or a name
// looked up on PATH) when given, else the first of Browsers on PATH.
func FindBrowser(named string) (string, error) {
	if named != "" {
		p, err := exec.LookPath(named)
		if err != nil {
			var ee *exec.Error
			if errors.As(err, &ee) {
				err = ee.Err
			}
			return "", &NoBrowserError{Named: named, Err: err}
		}
		return p, nil
	}
	for _, name := range browsers {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", &NoBrowserError{}
}

// BrowserError is a browser that failed to print: its error and the last
// line it wrote.
type BrowserError struct {
	Browser string
	Err     error
	Output  string
}

func (e *BrowserError) Error() string {
	msg := fmt.Sprintf("%s could not print the PDF: %v", e.Browser, e.Err)
	if e.Output != "" {
		msg += " (" + e.Output + ")"
	}
	return msg
}

func (e *BrowserError) Unwrap() error { return e.Err }

// pdfTimeout bounds each run of the browser.
const pdfTimeout = 2 * time.Minute

// marginBoxes is the first Chromium version that prints the CSS @page
// margin boxes (the running header and the page numbers of htmlPageStyle);
// an earlier one prints its own header (date, title) and footer (URL,
// page numbers) instead.
const marginBoxes = 131

// PDF prints a self-contained HTML page to PDF with the headless Chromium
// browser (FindBrowser): A4 portrait, as its print stylesheet lays it
// out. The page is written to a temporary directory, opened offline with
// a fresh profile, and the directory is removed afterwards; each run of
// the browser has a deadline (PDFTimeout, or ctx's).
func PDF(ctx context.Context, browser string, html []byte) ([]byte, error) {
	dir, err := os.MkdirTemp("", "tlsbench-pdf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	page, out := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(page, html, 0o600); err != nil {
		return nil, err
	}
	args := []string{
		"--headless",
		"--disable-gpu",
		"--no-first-run",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		"--print-to-pdf=" + out,
	}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses root otherwise; the page is ours and offline
	}
	if v, err := browserVersion(ctx, browser); err != nil {
		return nil, err
	} else if v >= marginBoxes {
		args = append(args, "--no-pdf-header-footer")
	}
	if _, err := runBrowser(ctx, browser, append(args, "file://"+page)...); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(data, []byte("%PDF-")) {
		if err == nil {
			err = errors.New("its output is not a PDF")
		}
		return nil, &BrowserError{Browser: browser, Err: err}
	}
	return data, nil
}

// versionNumber is the major version in a browser's --version line.
var versionNumber = regexp.MustCompile(`(?m)^(?:Chromium|Google Chrome(?: for Testing)?|Chrome)\s+(\d+)\.`)

// browserVersion is the browser's major version; 0 when its version line
// is not Chromium's.
func browserVersion(ctx context.Context, browser string) (int, error) {
	out, err := runBrowser(ctx, browser, "--version")
	if err != nil {
		return 0, err
	}
	m := versionNumber.FindStringSubmatch(out)
	if m == nil {
		return 0, nil
	}
	return strconv.Atoi(m[1])
}

// runBrowser runs the browser with args, in a process group of its own
// killed at the deadline, and returns its output.
func runBrowser(ctx context.Context, browser string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, pdfTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w", pdfTimeout, ctx.Err())
	}
	if err != nil {
		return buf.String(), &BrowserError{Browser: browser, Err: err, Output: lastLine(buf.String())}
	}
	return buf.String(), nil
}

// lastLine is the last non-empty line of s, at most 200 bytes of it.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}
