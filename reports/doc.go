package reports

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
)

// A Document is what the text, Markdown and HTML formats render alike:
// headings, paragraphs, preformatted text, lists, tables and charts. Every
// report, comparison, summary and table is laid out once, as a Document;
// each format only renders its blocks, and returns the first write error.
type Document struct {
	title string // the HTML page's title
	// running is the printed pages' running header (HTML, @page), the
	// title when empty.
	running string
	blocks  []block
}

func (d *Document) add(b ...block) { d.blocks = append(d.blocks, b...) }

type block interface{ isBlock() }

// heading is a heading of level 1 (the title) to 3.
type heading struct {
	level int
	text  string
}

// para is a paragraph.
type para string

// pre is preformatted text, its lines ending in newlines: a summary laid
// out in fixed columns.
type pre string

// list is a bulleted list.
type list []string

// table is a table; right marks the columns aligned right (numbers).
type table struct {
	head  []string
	right []bool
	rows  [][]string
}

func (heading) isBlock() {}
func (para) isBlock()    {}
func (pre) isBlock()     {}
func (list) isBlock()    {}
func (*table) isBlock()  {}
func (*chart) isBlock()  {}

// newTable returns a table with the given columns; a column whose name
// starts with '>' is aligned right (the '>' is not shown).
func newTable(cols ...string) *table {
	t := &table{head: make([]string, len(cols)), right: make([]bool, len(cols))}
	for i, c := range cols {
		t.head[i], t.right[i] = strings.CutPrefix(c, ">")
	}
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// Text renders d as plain text: underlined headings, tables aligned by
// text/tabwriter, no charts.
func (d Document) Text(w io.Writer) error {
	ew := bufio.NewWriter(w) // keeps the first write error
	for i, b := range d.blocks {
		switch b := b.(type) {
		case heading:
			if i > 0 {
				fmt.Fprintln(ew)
			}
			fmt.Fprintln(ew, b.text)
			fmt.Fprintln(ew, strings.Repeat(string("=-~"[min(b.level, 3)-1]), len([]rune(b.text))))
		case para:
			fmt.Fprintln(ew, string(b))
		case pre:
			fmt.Fprint(ew, string(b))
		case list:
			for _, item := range b {
				fmt.Fprintf(ew, "  - %s\n", item)
			}
		case *table:
			tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, strings.Join(b.head, "\t"))
			for _, r := range b.rows {
				fmt.Fprintln(tw, strings.Join(r, "\t"))
			}
			tw.Flush()
		}
	}
	return ew.Flush()
}

// Markdown renders d as GitHub-flavoured Markdown. Each chart is a PNG
// image, handed to save with its name (prefix + chart + ".png"), which the
// Markdown links to as it is: save them beside the Markdown file. With save
// nil, the charts are linked but not made.
func (d Document) Markdown(w io.Writer, prefix string, save func(name string, png []byte) error) error {
	ew := bufio.NewWriter(w) // keeps the first write error
	for i, b := range d.blocks {
		if i > 0 {
			fmt.Fprintln(ew)
		}
		switch b := b.(type) {
		case heading:
			fmt.Fprintf(ew, "%s %s\n", strings.Repeat("#", b.level), mdEscape(b.text))
		case para:
			fmt.Fprintln(ew, mdEscape(string(b)))
		case pre:
			fmt.Fprintf(ew, "```\n%s```\n", string(b))
		case list:
			for _, item := range b {
				fmt.Fprintf(ew, "- %s\n", mdEscape(item))
			}
		case *table:
			cells := func(r []string) {
				fmt.Fprint(ew, "|")
				for _, c := range r {
					fmt.Fprintf(ew, " %s |", strings.ReplaceAll(mdEscape(c), "|", `\|`))
				}
				fmt.Fprintln(ew)
			}
			cells(b.head)
			fmt.Fprint(ew, "|")
			for _, right := range b.right {
				if right {
					fmt.Fprint(ew, "---:|")
				} else {
					fmt.Fprint(ew, "---|")
				}
			}
			fmt.Fprintln(ew)
			for _, r := range b.rows {
				cells(r)
			}
		case *chart:
			name := prefix + b.name + ".png"
			if save != nil {
				data, err := b.png()
				if err != nil {
					return err
				}
				if err := save(name, data); err != nil {
					return err
				}
			}
			fmt.Fprintf(ew, "![%s](%s)\n", mdEscape(b.title), name)
		}
	}
	return ew.Flush()
}

// mdEscape escapes what Markdown would take for emphasis or markup.
func mdEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;").Replace(s)
}

// htmlStyle is the report's only style: no fonts, images or anything else
// from outside the file. Tables fit their page: text cells wrap (at spaces
// and hyphens) when the page is narrow; only numbers and short cells do
// not. The print part lays out A4 pages: each top-level section on a new
// page, a running header and the page number in the page's margins
// (htmlPageStyle).
const htmlStyle = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;margin:2em auto;` +
	`max-width:1100px;padding:0 1em;color:#1b1f23;line-height:1.4}
h1{font-size:1.6em;border-bottom:2px solid #1b1f23;padding-bottom:.2em}
h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
h3{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em;max-width:100%}
th,td{border:1px solid #d0d7de;padding:.3em .6em;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f6f8fa}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}
td.n,th.n,span.n{white-space:nowrap;overflow-wrap:normal}
.wide{overflow-x:auto}
tr:nth-child(even) td{background:#fbfcfd}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:.6em;font-size:.85em}
figure{margin:1em 0}
figure svg{width:100%;height:auto;display:block}
ul{padding-left:1.4em}
@media print{
body{margin:0;max-width:none;padding:0;font-size:9.5pt}
h1{margin-top:0}
h2{break-before:page;margin-top:0}
h1+h2,h1+p+h2{break-before:auto}
figure svg{max-width:none!important}
figure[id$="-series"],figure[id$="-latency"]{display:inline-block;width:49.5%;margin:.3em 0;vertical-align:top}
h2,h3{break-after:avoid}
tr,figure,pre{break-inside:avoid}
.wide{overflow:visible}
}`

// htmlPageStyle is the printed page (A4 portrait) and its margin boxes:
// the running header (%s, a CSS string) and "Page N of M" (Chromium 131
// and later print them; earlier ones leave the margins blank).
const htmlPageStyle = `@page{size:A4 portrait;margin:16mm 12mm 16mm 12mm;
@top-left{content:%s;font:8pt Arial,Helvetica,sans-serif;color:#57606a}
@top-right{content:"tlsbench";font:8pt Arial,Helvetica,sans-serif;color:#57606a}
@bottom-right{content:"Page " counter(page) " of " counter(pages);font:8pt Arial,Helvetica,sans-serif;color:#57606a}}`

// cssString quotes s as a CSS string that is safe inside a <style>
// element.
func cssString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '<' || r == '>' || r == '&' || r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\%x ", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// HTML renders d as one self-contained HTML file: an inline style, charts
// as inline SVG, nothing fetched when it is opened.
func (d Document) HTML(w io.Writer) error {
	ew := bufio.NewWriter(w) // keeps the first write error
	running := cmp.Or(d.running, d.title)
	fmt.Fprintf(ew, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"+
		"<title>%s</title>\n<style>\n%s\n%s\n</style>\n</head>\n<body>\n",
		html.EscapeString(d.title), htmlStyle, fmt.Sprintf(htmlPageStyle, cssString(running)))
	for _, b := range d.blocks {
		switch b := b.(type) {
		case heading:
			fmt.Fprintf(ew, "<h%d>%s</h%d>\n", b.level, html.EscapeString(b.text), b.level)
		case para:
			fmt.Fprintf(ew, "<p>%s</p>\n", html.EscapeString(string(b)))
		case pre:
			fmt.Fprintf(ew, "<pre>%s</pre>\n", html.EscapeString(string(b)))
		case list:
			fmt.Fprintln(ew, "<ul>")
			for _, item := range b {
				fmt.Fprintf(ew, "<li>%s</li>\n", html.EscapeString(item))
			}
			fmt.Fprintln(ew, "</ul>")
		case *table:
			fmt.Fprintln(ew, "<div class=\"wide\"><table>")
			row := func(tag string, r []string) {
				fmt.Fprint(ew, "<tr>")
				for i, c := range r {
					// A name (a cell of one word: a profile, a cipher, a
					// date) or a short cell never wraps; numbers align
					// right and wrap only before a ratio (1.25×); a
					// heading may wrap at its hyphens.
					class, text := "", html.EscapeString(c)
					right := i < len(b.right) && b.right[i]
					switch {
					case tag == "th" && right:
						class = ` class="r"`
					case tag == "th":
					case right:
						class = ` class="r n"`
						if groups := numberGroups(c); len(groups) > 1 && (strings.HasSuffix(c, "×)") ||
							strings.Contains(c, " [") || spreadRE.MatchString(c)) {
							class, text = ` class="r"`, `<span class="n">`+strings.Join(groups, `</span> <span class="n">`)+
								`</span>`
						}
					case len([]rune(c)) <= 12 || !strings.Contains(c, " "):
						class = ` class="n"`
					}
					fmt.Fprintf(ew, "<%s%s>%s</%s>", tag, class, text, tag)
				}
				fmt.Fprintln(ew, "</tr>")
			}
			row("th", b.head)
			for _, r := range b.rows {
				row("td", r)
			}
			fmt.Fprintln(ew, "</table></div>")
		case *chart:
			svg, err := b.svg()
			if err != nil {
				return err
			}
			fmt.Fprintf(ew, "<figure id=\"%s\">\n%s</figure>\n", b.name, svg)
		}
	}
	fmt.Fprintln(ew, "</body>\n</html>")
	return ew.Flush()
}

// spreadRE finds a value's spread in a cell (±3.0%).
var spreadRE = regexp.MustCompile(` ±[0-9.]+%`)

// numberGroups are a numeric cell's parts that never wrap, escaped: the
// value, its spread (±3.0%), its marks ([i,r]) and its ratio ((1.25×)); a
// narrow column wraps between them.
func numberGroups(c string) []string {
	var groups []string
	for _, f := range strings.Fields(c) {
		if n := len(groups); n > 0 && !strings.HasPrefix(f, "±") && !strings.HasPrefix(f, "[") &&
			!strings.HasPrefix(f, "(") {
			groups[n-1] += " " + html.EscapeString(f)
			continue
		}
		groups = append(groups, html.EscapeString(f))
	}
	return groups
}
