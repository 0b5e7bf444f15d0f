package main

import (
	"fmt"
	"io"

	"github.com/tlsbench/tlsbench/reports"
)

// chartsNote says on stderr, in a build without charts (the lean agent's,
// -tags nocharts), that an HTML or Markdown document is written without
// them.
func chartsNote(stderr io.Writer, cmd, format string) {
	if !reports.HasCharts && (format == "html" || format == "md") {
		fmt.Fprintf(stderr, "tlsbench %s: charts are not in this build (built with -tags nocharts); "+
			"the %s has the tables only\n", cmd, format)
	}
}
