package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/reports"
)

const reportUsage = `tlsbench report INPUT... [--format text|md|csv|json|html|pdf|hlog|siege] ` +
	`[-o FILE] [--chromium PATH]

Renders campaigns (directories written by qualify) and run records (the
--json files of cps and throughput): the published table — per profile,
cipher, group or key, Throughput and CPS (SR=0) of every DUT side by side,
with each DUT's ratio to the first — and the methodology appendix behind it
(preliminary, exploratory and final phases, the published run, the
environment). Run records are grouped by DUT, engine and profile; the best
record of each group that the method's default acceptance rule accepts is
published. A DUT is a record's --dut name, else the device it measured: the
address and port dialled, the SNI and the leaf certificate's SHA-256 (two
devices of one host name, say two --resolve addresses, are two DUTs).
Records of one --dut name and profile that dialled other addresses, sent
another SNI or saw another certificate are refused (exit 2) unless
--allow-mixed-dut.

Formats: text; md (Markdown, its charts written as PNG files beside -o
FILE); csv (the published table); json (table and appendix); html (one
self-contained file, charts inline); pdf (the html printed to A4 pages by
a headless Chromium: chromium, chromium-browser or google-chrome on PATH,
or --chromium PATH; -o FILE is required, -o - writes to stdout; without a
browser the error names what is missing and the exit code is 1); hlog (the latency histograms of the
run records and of the campaigns' published runs, as an HdrHistogram
interval log; values in microseconds; the steady window tagged PHASE, each
second tagged handshake.1s and total.1s: HistogramLogProcessor -tag).`

// reportFormats are the formats of report; compare has all but hlog.
var reportFormats = []string{"text", "md", "csv", "json", "html", "pdf", "hlog", "siege"}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report")
	format, out := outputFlags(fs, reportFormats)
	mixed := allowMixedFlag(fs)
	chromium := fs.String("chromium", "", "with --format pdf: the headless Chromium to print with (`PATH`; default: "+
		"chromium, chromium-browser or google-chrome on PATH)")
	if err := parseFlags(fs, reportUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	if err := checkFormat(*format, reportFormats, *out); err != nil {
		return err
	}
	browser := ""
	if *format == "pdf" {
		if *out == "" {
			return usagef("--format pdf writes a file: give -o FILE (-o - writes to stdout)")
		}
		var err error
		if browser, err = reports.FindBrowser(*chromium); err != nil {
			if *chromium != "" {
				return usagef("--chromium %s: %v", *chromium, errors.Unwrap(err))
			}
			return fmt.Errorf("%w (install the Debian package chromium, or give --chromium PATH)", err)
		}
	} else if *chromium != "" {
		return usagef("--chromium is for --format pdf")
	}
	chartsNote(stderr, "report", *format)
	if fs.NArg() == 0 {
		return usagef("no input: give campaign directories or run record files")
	}
	var inputs []reports.Input
	for _, arg := range fs.Args() {
		in, err := readInput(arg)
		if err != nil {
			return err
		}
		inputs = append(inputs, in)
	}
	if err := checkDUTs(inputs, *mixed); err != nil {
		return err
	}
	if *format == "hlog" {
		return writeOutput(ctx, *out, stdout, stderr, func(w io.Writer) error { return reports.HistogramLog(w, inputs) })
	}
	if *format == "siege" {
		return writeOutput(ctx, *out, stdout, stderr, func(w io.Writer) error {
			d, err := reports.SiegeSummaries(inputs)
			if err != nil {
				return err
			}
			return d.Text(w)
		})
	}
	r, err := reports.Build(inputs)
	if err != nil {
		return usagef("%v", err)
	}
	if *format == "pdf" {
		var page bytes.Buffer
		if err := reports.ReportDoc(r).HTML(&page); err != nil {
			return err
		}
		pdf, err := reports.PDF(ctx, browser, page.Bytes())
		if err != nil {
			return err
		}
		return writeOutput(ctx, *out, stdout, stderr, func(w io.Writer) error { _, err := w.Write(pdf); return err })
	}
	rs := renderers[*reports.Report]{reports.ReportDoc, reports.ReportCSV, reports.ReportJSON}
	return rs.write(ctx, *format, *out, stdout, stderr, r)
}

// allowMixedFlag defines --allow-mixed-dut of report and compare.
func allowMixedFlag(fs *pflag.FlagSet) *bool {
	return fs.Bool("allow-mixed-dut", false, "report records of one --dut name that dialled other addresses or saw "+
		"other certificates as one DUT (noted in the table)")
}

// checkDUTs refuses run records of one DUT name that measured two devices,
// unless allowed.
func checkDUTs(inputs []reports.Input, allow bool) error {
	if err := reports.CheckDUTs(inputs); err != nil && !allow {
		return usagef("%s", mixedDUTText(err))
	}
	return nil
}

// outputFlags defines --format and -o of report and compare.
func outputFlags(fs *pflag.FlagSet, formats []string) (format, out *string) {
	format = fs.StringP("format", "f", "text", "`FORMAT`: "+strings.Join(formats, ", "))
	out = fs.StringP("output", "o", "", "write to `FILE` instead of stdout (-: stdout; md: its charts go beside it)")
	return format, out
}

// checkFormat checks --format against the command's formats; md needs an
// output file to put its charts beside.
func checkFormat(format string, formats []string, out string) error {
	if !slices.Contains(formats, format) {
		return usagef("unknown --format %q (formats: %s)", format, strings.Join(formats, ", "))
	}
	if format == "md" && (out == "" || out == stdoutName) {
		return usagef("--format md writes its charts as PNG files beside the report: give -o FILE")
	}
	if out != stdoutName {
		return checkOutputs([2]string{"-o", out})
	}
	return nil
}

// renderers are the renderers of a report or a comparison: its document
// (text, md, html), its CSV and its JSON.
type renderers[T any] struct {
	doc  func(T) reports.Document
	csv  func(io.Writer, T) error
	json func(io.Writer, T) error
}

// write renders v in format to the file out (its Markdown charts beside
// it), or to stdout.
func (rs renderers[T]) write(ctx context.Context, format, out string, stdout, stderr io.Writer, v T) error {
	return writeOutput(ctx, out, stdout, stderr, func(w io.Writer) error {
		switch format {
		case "md":
			prefix, save := chartFiles(out)
			return rs.doc(v).Markdown(w, prefix, save)
		case "csv":
			return rs.csv(w, v)
		case "json":
			return rs.json(w, v)
		case "html":
			return rs.doc(v).HTML(w)
		}
		return rs.doc(v).Text(w)
	})
}

// writeOutput renders into memory, then writes file (outfile.Write; a FIFO
// within ctx, as outfile.WriteOut), or stdout when file is "" or "-".
func writeOutput(ctx context.Context, file string, stdout, stderr io.Writer, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if file == "" || file == stdoutName {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if err := outfile.WriteContext(ctx, file, buf.Bytes(), 0o644, outfile.ReaderNote(stderr, file)); err != nil {
		return outputErr(ctx, "-o", err)
	}
	return nil
}

// chartFiles names the Markdown report's chart files after it (report.md:
// report-cps.png …) and saves them beside it.
func chartFiles(out string) (string, func(name string, png []byte) error) {
	base := filepath.Base(out)
	prefix := strings.TrimSuffix(base, filepath.Ext(base)) + "-"
	return prefix, func(name string, png []byte) error {
		if err := outfile.Write(filepath.Join(filepath.Dir(out), name), png, 0o644); err != nil {
			return usagef("-o: chart %v", err)
		}
		return nil
	}
}

// readInput reads a campaign directory or a run record.
func readInput(path string) (reports.Input, error) {
	in := reports.Input{Name: path}
	st, err := os.Stat(path)
	if err != nil {
		return in, usagef("%s: %v", path, pathErr(err))
	}
	if st.IsDir() {
		in.Campaign, err = readCampaign(path)
		return in, err
	}
	switch filepath.Base(path) {
	case method.SummaryFile, method.LedgerFile, "plan.yaml":
		return in, usagef("%s is part of a campaign: give its directory, %s", path, filepath.Dir(path))
	}
	in.Run, err = metrics.ReadRun(path)
	var fe *vocab.FieldError
	if errors.As(err, &fe) && fe.Field != "schema" {
		return in, usagef("%v", err) // a run record, not valid: file: field: what is wrong
	}
	if err != nil {
		return in, usagef("%v (want a run record or a campaign directory)", pathErr(err))
	}
	return in, nil
}

// pathErr drops the operation and path of a file system error, which the
// message already names.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readCampaign reads a campaign directory without changing it: its summary,
// its ledger (a last line torn by a crash is passed over, as qualify does)
// and its plan, if it has one.
func readCampaign(dir string) (*reports.Campaign, error) {
	c := &reports.Campaign{Dir: dir}
	data, err := os.ReadFile(filepath.Join(dir, method.SummaryFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Stat(filepath.Join(dir, method.LedgerFile)); lerr == nil {
			return nil, usagef("%s has no %s: the campaign did not finish (tlsbench qualify --resume %s)",
				dir, method.SummaryFile, dir)
		}
		return nil, usagef("%s is not a campaign directory (no %s or %s)", dir, method.LedgerFile, method.SummaryFile)
	case err != nil:
		return nil, usagef("%s: %v", dir, err)
	}
	if c.Summary, err = method.DecodeSummary(data); err != nil {
		return nil, usagef("%s: %v", filepath.Join(dir, method.SummaryFile), err)
	}
	if c.Ledger, err = readLedger(filepath.Join(dir, method.LedgerFile)); err != nil {
		return nil, err
	}
	if data, err := os.ReadFile(filepath.Join(dir, reports.BackendsFile)); err == nil {
		if c.Backends, err = reports.DecodeBackends(data); err != nil {
			return nil, usagef("%s: %v", filepath.Join(dir, reports.BackendsFile), err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "plan.yaml")); err == nil {
		c.Plan = &plan.Plan{}
		if err := yaml.Unmarshal(data, c.Plan); err != nil {
			return nil, usagef("%s: %v", filepath.Join(dir, "plan.yaml"), err)
		}
	}
	return c, nil
}

// readLedger reads a ledger's entries. As method.OpenLedger does, it
// passes over a last line torn by a crash (no newline, not JSON) and
// refuses any other line that is not an entry, naming the file and line.
func readLedger(file string) ([]*method.Entry, error) {
	entries, err := method.ReadLedger(file)
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, usagef("%s: %v", file, pathErr(err))
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	return entries, nil
}

// chartsNote says on stderr, in a build without charts (the lean agent's,
// -tags nocharts), that an HTML or Markdown document is written without
// them.
func chartsNote(stderr io.Writer, cmd, format string) {
	if !reports.HasCharts && (format == "html" || format == "md") {
		fmt.Fprintf(stderr, "tlsbench %s: charts are not in this build (built with -tags nocharts); "+
			"the %s has the tables only\n", cmd, format)
	}
}
