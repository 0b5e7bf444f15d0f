package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
)

// requireChromium skips the test without the Debian package chromium (it
// fails under CI, where make test installs it).
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and there is no %s (Debian package chromium): %v", chromium, err)
		}
		t.Skipf("no %s (Debian package chromium): %v", chromium, err)
	}
}

// fleet is a four-DUT campaign: the published table's widest case the
// issue names (2–4 DUTs), with DUT names as long as a lab's.
func fleet(t *testing.T) reports.Input {
	p := reporttest.Plan("fleet", "haproxy-2.6-lab", "nginx-1.22-lab", "adc-a-fw4.2", "adc-b-fw7.1")
	return campaign(t, reporttest.Scenario{Plan: p, Exec: &reporttest.Exec{
		Scale: map[string]float64{"nginx-1.22-lab": 1.1, "adc-a-fw4.2": 12.5, "adc-b-fw7.1": 31.3},
		Final: []float64{0.99, 1.0, 0.98}}})
}

// measureScript measures, once the page is laid out, the document's width
// and every table's against its container, and writes them as JSON in a
// <pre id="measure"> that --dump-dom shows.
const measureScript = `<script>
addEventListener("load", () => {
  const m = {viewport: innerWidth, document: document.documentElement.scrollWidth, tables: []};
  for (const t of document.querySelectorAll("table")) {
    const box = t.parentElement;
    m.tables.push({head: t.rows[0].innerText.replace(/\s+/g, " ").slice(0, 80), width: Math.round(t.getBoundingClientRect().width),
      scroll: box.scrollWidth, client: box.clientWidth});
  }
  const pre = document.createElement("pre");
  pre.id = "measure";
  pre.textContent = JSON.stringify(m);
  document.body.appendChild(pre);
});
</script>`

type measure struct {
	Viewport, Document int
	Tables             []struct {
		Head                  string
		Width, Scroll, Client int
	}
}

var measured = regexp.MustCompile(`(?s)<pre id="measure">(.*?)</pre>`)

// layout opens the HTML report of input in headless Chromium at a window
// width in CSS pixels and returns what measureScript measured.
func layout(t *testing.T, input reports.Input, width int) measure {
	t.Helper()
	var buf bytes.Buffer
	if err := reports.ReportDoc(build(t, input)).HTML(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	doc := strings.Replace(buf.String(), "</body>", measureScript+"\n</body>", 1)
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size="+strconv.Itoa(width)+",1000", "--dump-dom", "file://"+page)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errs.String())
	}
	sub := measured.FindSubmatch(out.Bytes())
	if sub == nil {
		t.Fatalf("chromium's DOM has no measurement:\n%.2000s\n%s", out.String(), errs.String())
	}
	var m measure
	if err := json.Unmarshal([]byte(html.UnescapeString(string(sub[1]))), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTablesFitInChromium opens the HTML reports of a two-DUT and a
// four-DUT campaign in headless Chromium 1,300 pixels wide (the issue's
// window) and checks that no table is wider than its container (no
// horizontal scroll bar hides a figure) and the page no wider than the
// window; the published table's width is logged.
func TestTablesFitInChromium(t *testing.T) {
	requireChromium(t)
	for _, tc := range []struct {
		name  string
		input reports.Input
		duts  int
	}{{"two DUTs", lab(t), 2}, {"four DUTs", fleet(t), 4}} {
		m := layout(t, tc.input, 1300)
		if m.Viewport != 1300 {
			t.Errorf("%s: viewport %d pixels wide, want 1300", tc.name, m.Viewport)
		}
		if m.Document > m.Viewport {
			t.Errorf("%s: the page is %d pixels wide in a window of %d", tc.name, m.Document, m.Viewport)
		}
		published := 0
		for _, tb := range m.Tables {
			if tb.Scroll > tb.Client {
				t.Errorf("%s: table %q is %d pixels wide in a container of %d: a scroll bar hides %d pixels", tc.name, tb.Head, tb.Scroll, tb.Client, tb.Scroll-tb.Client)
			}
			if strings.Contains(tb.Head, "Cipher (OpenSSL)") {
				published++
				t.Logf("%s: published table %q: %d pixels wide, container %d", tc.name, tb.Head, tb.Width, tb.Client)
			}
		}
		if published == 0 || len(m.Tables) < 5 {
			t.Errorf("%s: %d tables, %d published ones: the report was not laid out", tc.name, len(m.Tables), published)
		}
	}
}
