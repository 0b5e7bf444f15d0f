package reports

import (
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"
)

// A Document is what the text, Markdown and HTML formats render alike:
// headings, paragraphs, preformatted text, lists, tables and charts. Every
// report, comparison, summary and table is laid out once, as a Document;
// each format only renders its blocks, and returns the first write error.
type Document struct {
	title  string // the HTML page's title
	blocks []block
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
	ew := &errWriter{w: w}
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
	return ew.err
}

// Markdown renders d as GitHub-flavoured Markdown. Each chart is a PNG
// image, handed to save with its name (prefix + chart + ".png"), which the
// Markdown links to as it is: save them beside the Markdown file. With save
// nil, the charts are linked but not made.
func (d Document) Markdown(w io.Writer, prefix string, save func(name string, png []byte) error) error {
	ew := &errWriter{w: w}
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
	return ew.err
}

// mdEscape escapes what Markdown would take for emphasis or markup.
func mdEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;").Replace(s)
}

// htmlStyle is the report's only style: no fonts, images or anything else
// from outside the file.
const htmlStyle = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#1b1f23;line-height:1.4}
h1{font-size:1.6em;border-bottom:2px solid #1b1f23;padding-bottom:.2em}
h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
h3{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}
th,td{border:1px solid #d0d7de;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#f6f8fa}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}
td.n,th.n{white-space:nowrap}
.wide{overflow-x:auto}
tr:nth-child(even) td{background:#fbfcfd}
figure{margin:1em 0}
figure svg{width:100%;max-width:900px;height:auto;display:block}
ul{padding-left:1.4em}`

// HTML renders d as one self-contained HTML file: an inline style, charts
// as inline SVG, nothing fetched when it is opened.
func (d Document) HTML(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n",
		html.EscapeString(d.title), htmlStyle)
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
					// Numbers align right; short cells (names, values)
					// do not wrap; long ones (reasons, notes) do.
					var classes []string
					if i < len(b.right) && b.right[i] {
						classes = append(classes, "r")
					}
					if len([]rune(c)) <= 32 {
						classes = append(classes, "n")
					}
					class := ""
					if len(classes) > 0 {
						class = ` class="` + strings.Join(classes, " ") + `"`
					}
					fmt.Fprintf(ew, "<%s%s>%s</%s>", tag, class, html.EscapeString(c), tag)
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
	return ew.err
}

// errWriter keeps the first write error, so that a renderer checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
