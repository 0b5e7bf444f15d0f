package main

import (
	"encoding/json"
	"io"

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
// stdout when file is "-".
func writeFileOrStdout(file string, stdout io.Writer, data []byte) error {
	if file == stdoutName {
		_, err := stdout.Write(data)
		return err
	}
	return outfile.Write(file, data, 0o644)
}

// writeRunRecord writes a run record as indented JSON to file or stdout ("-").
func writeRunRecord(file string, stdout io.Writer, r *metrics.Run) error {
	if file != stdoutName {
		return r.WriteJSON(file)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(data, '\n'))
	return err
}
