package reports_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// poppler runs a poppler-utils tool (pdfinfo, pdftotext, pdftoppm) with a
// deadline, skipping the test without the Debian package.
func poppler(t *testing.T, tool string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and there is no %s (Debian package poppler-utils)", tool)
		}
		t.Skipf("no %s (Debian package poppler-utils)", tool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", tool, strings.Join(args, " "), err)
	}
	return string(out)
}

// printPDF prints input's HTML report to a PDF file with the Debian
// package's Chromium.
func printPDF(t *testing.T, inputs ...reports.Input) (string, *reports.Report) {
	t.Helper()
	requireChromium(t)
	r := build(t, inputs...)
	var page bytes.Buffer
	if err := reports.ReportDoc(r).HTML(&page); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pdf, err := reports.PDF(ctx, chromium, page.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report.pdf")
	if keep := os.Getenv("TLSBENCH_KEEP_PDF"); keep != "" {
		file = keep
	}
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	return file, r
}

// TestPDF prints the two-DUT campaign's report and reads it back with
// poppler: its pages (the first page about the campaign, the published
// table on the second, the appendix on a page of its own), on every page
// the campaign's name in the running header and "Page i of N", the
// published figures in the text; and each page, as a PNG, is not blank and
// not cut at the right edge.
func TestPDF(t *testing.T) {
	file, r := printPDF(t, lab(t))
	pages := pageCount(t, file)
	info := poppler(t, "pdfinfo", file)
	size := regexp.MustCompile(`(?m)^Page size:\s+([\d.]+) x ([\d.]+) pts`).FindStringSubmatch(info)
	t.Logf("%d pages, page size %s × %s pt", pages, size[1], size[2])
	w, _ := strconv.ParseFloat(size[1], 64)
	h, _ := strconv.ParseFloat(size[2], 64)
	if math.Abs(w-595.3) > 2 || math.Abs(h-841.9) > 2 {
		t.Errorf("page %s × %s pt, want A4 portrait (595 × 842)", size[1], size[2])
	}
	// A first page, the published table and its charts, the
	// configuration, the method, then the appendix of 6 cells (each with
	// three charts): more than 8 pages, fewer than 40.
	if pages < 8 || pages > 40 {
		t.Errorf("%d pages, want 8 to 40", pages)
	}
	var texts []string
	for i := 1; i <= pages; i++ {
		text := poppler(t, "pdftotext", "-layout", "-f", strconv.Itoa(i), "-l", strconv.Itoa(i), file, "-")
		texts = append(texts, text)
		if want := fmt.Sprintf("Page %d of %d", i, pages); !strings.Contains(text, want) {
			t.Errorf("page %d has no %q:\n%.600s", i, want, text)
		}
		if !strings.Contains(text, "lab") || !strings.Contains(text, "tlsbench") {
			t.Errorf("page %d has no running header (the campaign's name, lab):\n%.300s", i, text)
		}
	}
	// The first page is the one a lab signs: the title and the runs' dates,
	// the published table with its names whole, the verdict, the signature
	// block and the tool; what was tested (every endpoint, the chains'
	// verification) starts the next.
	first := texts[0]
	for _, want := range []string{"tlsbench report: lab", "lab: runs from 2026-03-01 12:00:00 UTC to 2026-03-01 12:05:05 UTC",
		"Published table", "ecdhe-ecdsa-aes128-sha256-p384", "ECDHE-ECDSA-AES128-SHA256", "rsa2048-aes128-gcm-sha256",
		"Verdict: 6 values published", "certificate chains verified", "Signatures", "Tested by", "Reviewed by",
		"Tool: tlsbench v0.5.0."} {
		if !strings.Contains(first, want) {
			t.Errorf("the first page has no %q:\n%s", want, first)
		}
	}
	if !strings.Contains(texts[1], "About this report") {
		t.Errorf("page 2 does not start what was tested:\n%.600s", texts[1])
	}
	for _, want := range []string{"What was tested", "ADC-A 5000", "Endpoint", "https://adc-a.lab.test/", "verified",
		"How", "Tool", "Raw data", "results/lab/ledger.jsonl"} {
		if !strings.Contains(texts[1], want) {
			t.Errorf("page 2 has no %q", want)
		}
	}
	appendix := -1
	for i, text := range texts {
		if strings.Contains(text, "Methodology appendix") {
			appendix = i
		}
	}
	if appendix < 2 {
		t.Errorf("the methodology appendix is on page %d, want a page after the table's", appendix+1)
	}
	figuresIn(t, r, strings.Join(texts, "\n"))
	checkPages(t, file, pages)
}

// figuresIn checks that text has every published figure of r: each DUT's
// value, and its ratio to the first DUT's.
func figuresIn(t *testing.T, r *reports.Report, all string) {
	t.Helper()
	n := 0
	for _, row := range r.Table {
		for i, res := range row.Results {
			for _, v := range []struct {
				v, ratio *float64
				format   func(float64) string
			}{{res.Gbps, res.GbpsRatio, reports.FormatGbps}, {res.CPS, res.CPSRatio, reports.FormatCPS}} {
				if v.v == nil {
					continue
				}
				want := regexp.QuoteMeta(v.format(*v.v)) + `( ±[0-9.]+%)?( \[[a-z,]+\])?`
				if i > 0 && v.ratio != nil {
					want += `[^\n]*(\n[^\n]*){0,2}? ` + regexp.QuoteMeta(fmt.Sprintf("(%.2f×)", *v.ratio))
				}
				n++
				if !regexp.MustCompile(want).MatchString(all) {
					t.Errorf("the PDF has no %q (%s, %s)", want, res.DUT, row.Profile)
				}
			}
		}
	}
	if n == 0 {
		t.Error("the report has no figure")
	}
}

// pageCount is pdfinfo's count of the PDF's pages.
func pageCount(t *testing.T, file string) int {
	t.Helper()
	info := poppler(t, "pdfinfo", file)
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)$`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("pdfinfo: no page count:\n%s", info)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// checkPages turns every page into a PNG at 50 dpi (A4: 414 × 585 pixels)
// with pdftoppm and checks that none is blank or cut at the right edge.
func checkPages(t *testing.T, file string, pages int) {
	t.Helper()
	dir := t.TempDir()
	poppler(t, "pdftoppm", "-r", "50", "-png", file, filepath.Join(dir, "page"))
	pngs, _ := filepath.Glob(filepath.Join(dir, "page-*.png"))
	sort.Strings(pngs)
	if len(pngs) != pages {
		t.Fatalf("pdftoppm made %d pages, pdfinfo says %d", len(pngs), pages)
	}
	for _, p := range pngs {
		img := decodePNG(t, p)
		b := img.Bounds()
		inked, _ := ink(img)
		if inked < b.Dx()*b.Dy()/200 {
			t.Errorf("%s looks blank: %d of %d pixels inked", filepath.Base(p), inked, b.Dx()*b.Dy())
		}
		// The margin is 12 mm (24 pixels): its right half is background
		// unless something runs off the page.
		if x, y, ok := inkRightOf(img, b.Max.X-12); ok {
			t.Errorf("%s is cut at the right edge: ink at (%d, %d), within 12 pixels of the edge", filepath.Base(p), x, y)
		}
	}
}

// TestPDFFourDUTs: the four-DUT campaign's PDF has every published figure
// and no page cut at the right edge (the table fits A4 portrait).
func TestPDFFourDUTs(t *testing.T) {
	file, r := printPDF(t, fleet(t))
	pages := pageCount(t, file)
	t.Logf("%d pages", pages)
	text := poppler(t, "pdftotext", "-layout", file, "-")
	figuresIn(t, r, text)
	checkPages(t, file, pages)
}

func decodePNG(t *testing.T, file string) image.Image {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return img
}

// inkRightOf returns the first pixel at or right of column x that is not
// white (the page's background).
func inkRightOf(img image.Image, x0 int) (x, y int, ok bool) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := max(x0, b.Min.X); x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				return x, y, true
			}
		}
	}
	return 0, 0, false
}

// TestPDFBrowserErrors: no browser is named by a one-line error; a browser
// that fails is reported with what it said.
func TestPDFBrowserErrors(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := reports.FindBrowser("")
	var nb *reports.NoBrowserError
	if !errors.As(err, &nb) || !strings.Contains(err.Error(), "chromium") || strings.Contains(err.Error(), "\n") {
		t.Errorf("FindBrowser with an empty PATH: %v, want a NoBrowserError naming chromium", err)
	}
	missing := filepath.Join(t.TempDir(), "chromium")
	if _, err := reports.FindBrowser(missing); !errors.As(err, &nb) || !strings.Contains(err.Error(), missing) {
		t.Errorf("FindBrowser(%s): %v", missing, err)
	}
	fake := filepath.Join(t.TempDir(), "fake-chromium")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'Chromium 140.0.1 built on Debian'\n[ \"$1\" = --version ] || { echo 'cannot open display' >&2; exit 3; }\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = reports.PDF(context.Background(), fake, []byte("<html></html>"))
	var be *reports.BrowserError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "cannot open display") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("PDF with a failing browser: %v", err)
	}
}

// TestPDFProtocols: the PDF's published tables name their protocols, a
// profile over HTTP/2 in a table of its own.
func TestPDFProtocols(t *testing.T) {
	h2 := record("a-cps-h2.json", reporttest.RunSpec{Engine: "cps", Profile: reporttest.P384, Host: "adc-a.lab.test",
		Level: 16, Value: 900, CPU: 0.4, Start: reporttest.T0.Add(4 * time.Minute)})
	h2.Run.Protocol = "http/2"
	file, _ := printPDF(t, append(records(), h2)...)
	text := poppler(t, "pdftotext", "-layout", "-f", "1", "-l", "1", file, "-")
	for _, want := range []string{"CPS (SR=0) over HTTP/1.1", "CPS (SR=0) over HTTP/2", "Throughput (Gbps, payload) over HTTP/1.1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the first page has no %q:\n%s", want, text)
		}
	}
}
