package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/outfile"
)

// stdoutName is the output file name that means standard output, for every
// output flag.
const stdoutName = "-"

// checkOutputs checks, before any work, that each named output file can be
// written: flag → file ("" is not set). A bad destination is a usage error.
func checkOutputs(files ...[2]string) error {
	for _, f := range files {
		if f[1] == "" {
			continue
		}
		if err := outfile.Check(f[1]); err != nil {
			return usagef("%s: %v", f[0], err)
		}
	}
	return nil
}

// writeFileOrStdout writes data to file atomically (outfile.Write), or to
// stdout when file is "-". A FIFO is written through within ctx: its wait
// for a reader is said on stderr, and ends with ctx (the first signal).
func writeFileOrStdout(ctx context.Context, file string, stdout, stderr io.Writer, data []byte) error {
	if file == stdoutName {
		_, err := stdout.Write(data)
		return err
	}
	return outfile.WriteContext(ctx, file, data, 0o644, readerNote(stderr, file))
}

// writeRunRecord writes a run record as indented JSON to file or stdout
// ("-"), as writeFileOrStdout.
func writeRunRecord(ctx context.Context, file string, stdout, stderr io.Writer, r *metrics.Run) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeFileOrStdout(ctx, file, stdout, stderr, append(data, '\n'))
}

// readerNote says on stderr (nil: nowhere) that file, a FIFO, is waited
// for: what blocks, for how long, and how to give up.
func readerNote(stderr io.Writer, file string) func() {
	if stderr == nil {
		return nil
	}
	return func() {
		fmt.Fprintf(stderr, "tlsbench: waiting up to %s for a reader of the FIFO %s (an interrupt gives up)\n",
			outfile.ReaderWait, file)
	}
}

// createOutput opens file to write as it goes (mode: os.O_TRUNC or
// os.O_APPEND): a FIFO or a device through outfile.OpenThrough (a FIFO
// without a reader waited for within ctx, the wait said on stderr), any
// other file created, private (0600: a key log holds secrets).
func createOutput(ctx context.Context, file string, mode int, stderr io.Writer) (*os.File, error) {
	if outfile.IsThrough(file) {
		return outfile.OpenThrough(ctx, file, readerNote(stderr, file))
	}
	return os.OpenFile(file, os.O_CREATE|os.O_WRONLY|mode, 0o600)
}

// outputErr words the failure to open or write flag's file: bad usage,
// unless ctx has ended (an interrupted wait for a FIFO's reader).
func outputErr(ctx context.Context, flag string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return usagef("%s: %v", flag, err)
}
