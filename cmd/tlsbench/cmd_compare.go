package main

import (
	"context"
	"io"

	"github.com/tlsbench/tlsbench/reports"
)

const compareUsage = `tlsbench compare A B [--format text|md|csv|json|html] [-o FILE]

Sets every metric of A beside B's, with the impact A − B, absolute and
relative to B (the baseline), in the layout of an A/B impact study:
transactions, availability, elapsed time, data transferred, response time,
transaction rate, throughput, concurrency (Little's law), successful and
failed transactions, longest and shortest, p50/p90/p99 of every phase, CPS,
Gbps and the generator's CPU. A and B are two run records of one engine, or
two campaign directories, compared cell by cell (DUT, engine and profile;
engine and profile when each has one DUT), each cell by its published run.
Two run records are labelled with their DUTs as report labels them; two
records of one --dut name that measured two devices are refused (exit 2)
unless --allow-mixed-dut.

Two campaigns are first judged as a repeat ("does B confirm A?"): per
cell, the two published values, B − A and its % of A, confirmed within
the plans' final tolerance (the stricter if they differ) or flagged
beyond it; cells of one campaign only, not supported or without an
accepted run are listed as such.`

var compareFormats = []string{"text", "md", "csv", "json", "html"}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare")
	format, out := outputFlags(fs, compareFormats)
	mixed := allowMixedFlag(fs)
	if err := parseFlags(fs, compareUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	if err := checkFormat(*format, compareFormats, *out); err != nil {
		return err
	}
	chartsNote(stderr, "compare", *format)
	if fs.NArg() != 2 {
		return usagef("want two inputs, A and B (run records or campaign directories); got %d", fs.NArg())
	}
	a, err := readInput(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := readInput(fs.Arg(1))
	if err != nil {
		return err
	}
	if err := checkDUTs([]reports.Input{a, b}, *mixed); err != nil {
		return err
	}
	c, err := reports.CompareInputs(a, b)
	if err != nil {
		return usagef("%v", err)
	}
	return renderers[*reports.ComparisonReport]{reports.ComparisonDoc, reports.ComparisonCSV,
		reports.ComparisonJSON}.write(ctx, *format, *out, stdout, stderr, c)
}
