package reports_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/reports"
)

// chromium is the Debian package's browser (make test installs it).
const chromium = "/usr/bin/chromium"

// TestHTMLInChromium opens the HTML report in headless Chromium, offline
// and with a fresh profile, takes a screenshot and checks that it shows
// something: a page, not a blank or an error.
func TestHTMLInChromium(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and there is no %s (Debian package chromium): %v", chromium, err)
		}
		t.Skipf("no %s (Debian package chromium): %v", chromium, err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := reports.ReportDoc(build(t, lab(t))).HTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1200,2000", "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if got, want := img.Bounds().Size(), image.Pt(1200, 2000); got != want {
		t.Errorf("screenshot of %v pixels, want %v", got, want)
	}
	inked, colours := ink(img)
	total := img.Bounds().Dx() * img.Bounds().Dy()
	t.Logf("%d of %d pixels inked, %d colours", inked, total, colours)
	// Text, table rules and bars: a blank page has none, an error page
	// little and in few colours.
	if inked < total/50 || colours < 16 {
		t.Errorf("the screenshot looks blank: %d of %d pixels differ from the background, %d colours", inked, total, colours)
	}
}

// ink counts the pixels that differ from the most common colour (the
// background), and the distinct colours.
func ink(img image.Image) (inked, colours int) {
	counts := map[[4]uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			counts[[4]uint32{r, g, bl, a}]++
		}
	}
	background := 0
	for _, n := range counts {
		background = max(background, n)
	}
	return b.Dx()*b.Dy() - background, len(counts)
}
