package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tlsbench/tlsbench/bench/outfile"
)

// stdoutName is the output file name that means standard output, for every
// output flag.
const stdoutName = outfile.Stdout

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

// createOutput opens file to write as it goes (mode: os.O_TRUNC or
// os.O_APPEND): a FIFO or a device through outfile.OpenThrough (a FIFO
// without a reader waited for within ctx, the wait said on stderr), any
// other file created, private (0600: a key log holds secrets).
func createOutput(ctx context.Context, file string, mode int, stderr io.Writer) (*os.File, error) {
	if outfile.IsThrough(file) {
		return outfile.OpenThrough(ctx, file, outfile.ReaderNote(stderr, file))
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
