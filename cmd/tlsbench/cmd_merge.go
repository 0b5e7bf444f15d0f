package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/reports"
)

const mergeUsage = `tlsbench merge RECORD... -o FILE

Merges the run records of the agents of one distributed run (engine commands
run as --shard i/N from one --start-at, each applying its share of the load)
into one run record, exactly: latency histograms, per-second histograms and
counters are summed and every percentile is recomputed from them; the series
is aligned on absolute seconds; CPS, requests/s and Gbps are the sums of the
agents' own rates, each over its own steady window. The records must agree
on engine, profile, negotiated parameters and load mode, measure one device
(the same --dut name, dialled address and leaf certificate), have steady
windows that all share at least 90% of the shortest (the agents loaded the
device together), and be distinct shards of one run (or, without --shard,
distinct runs); a merged record given again contributes its agents. Prints the merged run and one line per
agent: its transactions, CPU, utilization and start skew (from --start-at,
or from the earliest agent's start when the agents had none).`

func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge")
	out := fs.StringP("output", "o", "", "write the merged record to `FILE` (required; -: stdout)")
	if err := parseFlags(fs, mergeUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	if fs.NArg() == 0 {
		return usagef("no record: give the run records of the agents to merge")
	}
	if *out == "" {
		return usagef("-o FILE is required: where to write the merged record")
	}
	if err := checkOutputs([2]string{"-o", *out}); err != nil {
		return err
	}
	var runs []*metrics.Run
	for _, file := range fs.Args() {
		r, err := metrics.ReadRun(file)
		if err != nil {
			if perr := pathErr(err); perr != err {
				return usagef("%s: %v", file, perr)
			}
			if fe := (*vocab.FieldError)(nil); errors.As(err, &fe) && fe.Field != "schema" {
				return usagef("%v", err) // a run record, not valid: file: field: what is wrong
			}
			return usagef("%v (want a run record)", err)
		}
		runs = append(runs, r)
	}
	m, err := metrics.Merge(runs)
	if err != nil {
		return usagef("%s", strings.TrimPrefix(mergeText(err), "metrics: "))
	}
	if err := m.WriteJSON(ctx, *out, stdout, stderr); err != nil {
		return usagef("-o: %v", pathErr(err))
	}
	text := stdout // with -o -, the record is stdout and the text goes to stderr
	if *out == stdoutName {
		text = stderr
	}
	if err := reports.RunSummary(m).Text(text); err != nil {
		return err
	}
	return printAgents(text, m)
}

// printAgents writes one line per agent of a merged record, and says which
// shards are missing, if any. The start skew is from the agreed start
// (--start-at) when the agent had one, else from the earliest agent's start.
func printAgents(w io.Writer, m *metrics.Run) error {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSHARD\tTRANSACTIONS\tCPU S\tUTILIZATION\tSTART SKEW MS")
	have := map[int]bool{}
	for _, a := range m.Agents {
		shard := fmt.Sprintf("%d/%d", a.Shard, a.Shards)
		if a.Shards == 0 {
			shard = fmt.Sprintf("#%d", a.Shard) // no --shard: the order given
		}
		have[a.Shard] = true
		skew, from := a.StartSkewMS, ""
		if a.StartAt.IsZero() {
			skew, from = float64(a.Started.Sub(m.Started).Microseconds())/1000, " (from the first start)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.0f%%\t%+.1f%s\n", a.Name, shard, a.Transactions, a.Client.CPUSeconds,
			a.Client.Utilization*100, skew, from)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(m.Agents) == 0 || m.Agents[0].Shards == 0 {
		return nil
	}
	var missing []string
	for i := range m.Agents[0].Shards {
		if !have[i] {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		_, err := fmt.Fprintf(w, "WARNING: %d of %d shards merged (missing %s): the record covers part of the load\n",
			len(m.Agents), m.Agents[0].Shards, strings.Join(missing, ", "))
		return err
	}
	return nil
}
