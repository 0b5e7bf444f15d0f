package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// report is the JSON written to --out.
type report struct {
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Complete bool      `json:"complete"`
	Engines  []string  `json:"engines"`
	Reps     int       `json:"reps"`
	Duration string    `json:"duration"`
	// Concurrency is the cps engine's, TPConcurrency the throughput engine's.
	Concurrency   int               `json:"concurrency,omitempty"`
	TPConcurrency int               `json:"throughput_concurrency,omitempty"`
	HTTP          []string          `json:"http"`              // the HTTP versions compared
	Streams       int               `json:"streams,omitempty"` // HTTP/2 throughput's, per connection
	Host          metrics.Host      `json:"host"`
	Tools         map[string]string `json:"tools"`
	Floor         *cryptoFloor      `json:"crypto_floor,omitempty"`
	Samples       []*sample         `json:"samples"`
	Rows          []*row            `json:"medians"`            // cps: tlsbench vs ab or h2load
	TPRows        []*tpRow          `json:"throughput_medians"` // throughput: tlsbench vs wrk or h2load
}

// median summarises one tool's samples on one DUT and profile.
type median struct {
	Samples     int     `json:"samples"` // successful samples the medians are of
	Runs        int     `json:"runs"`    // all runs, failed ones included
	CPS         float64 `json:"cps"`
	CPUPerTxnUS float64 `json:"cpu_per_txn_us"`
	GenUtil     float64 `json:"generator_utilization"`
	DUTUtil     float64 `json:"dut_utilization"`
	OtherUtil   float64 `json:"other_utilization"`
	Failed      int64   `json:"failed"` // failed transactions, summed over all runs
}

// cellKey names a table row: DUT, profile, HTTP version (1.1 or 2) and the
// peer generator there.
type cellKey struct {
	DUT     string `json:"dut"`
	Profile string `json:"profile"`
	HTTP    string `json:"http"`
	Peer    string `json:"peer"` // ab, wrk or h2load
}

// row is one DUT × profile × HTTP version.
type row struct {
	cellKey
	Tlsbench median  `json:"tlsbench"`
	PeerM    median  `json:"peer_median"`
	Ratio    float64 `json:"ratio_cpu_per_txn_tlsbench_over_peer,omitempty"`
	// TLSPerf: tls-perf's handshakes (no HTTP), when it ran.
	TLSPerf      *median `json:"tls_perf,omitempty"`
	RatioTLSPerf float64 `json:"ratio_cpu_per_txn_tlsbench_over_tls_perf,omitempty"`
}

// tpMedian summarises one tool's throughput samples on one DUT and profile.
type tpMedian struct {
	Samples   int     `json:"samples"` // successful samples the medians are of
	Runs      int     `json:"runs"`    // all runs, failed ones included
	Gbps      float64 `json:"gbps"`    // payload
	ReqPerS   float64 `json:"requests_per_s"`
	CPUPerGBS float64 `json:"cpu_s_per_gb"`
	GenUtil   float64 `json:"generator_utilization"`
	DUTUtil   float64 `json:"dut_utilization"`
	DUTPerGBS float64 `json:"dut_cpu_s_per_gb"`
	OtherUtil float64 `json:"other_utilization"`
	// wrk's own Transfer/sec (HTTP bytes incl. headers), MiB/s.
	WrkTransferMiBps float64 `json:"wrk_transfer_mib_per_s,omitempty"`
	Failed           int64   `json:"failed"` // errors and non-2xx responses, summed over all runs
}

// tpRow is one DUT × profile × HTTP version of the throughput engine.
type tpRow struct {
	cellKey
	Tlsbench tpMedian `json:"tlsbench"`
	PeerM    tpMedian `json:"peer_median"`
	Ratio    float64  `json:"ratio_cpu_per_gb_tlsbench_over_peer,omitempty"`
	// FloorSPerGB is the Go crypto floor of the profile's record protection.
	FloorSPerGB float64 `json:"go_crypto_floor_s_per_gb,omitempty"`
}

func (r *report) summarize() {
	r.summarizeCPS()
	r.summarizeThroughput()
}

// cells returns the DUT × profile × HTTP version cells of an engine's
// samples, in the order first seen, each with its peer.
func (r *report) cells(engine string) []cellKey {
	seen := map[cellKey]bool{}
	var out []cellKey
	for _, s := range r.Samples {
		c := cellKey{s.DUT, s.Profile, s.HTTP, map[bool]string{true: "ab", false: "wrk"}[engine == "cps"]}
		if s.HTTP == "2" {
			c.Peer = "h2load"
		}
		if s.Engine == engine && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func (r *report) summarizeThroughput() {
	r.TPRows = nil
	for _, c := range r.cells("throughput") {
		rw := &tpRow{cellKey: c}
		r.TPRows = append(r.TPRows, rw)
		rw.Tlsbench = r.tpMedian(c, "tlsbench")
		rw.PeerM = r.tpMedian(c, c.Peer)
		rw.Ratio = ratioOf(rw.Tlsbench.CPUPerGBS, rw.PeerM.CPUPerGBS, rw.Tlsbench.Samples, rw.PeerM.Samples)
		if p, ok := lookupProfile(rw.Profile); ok && r.Floor != nil {
			rw.FloorSPerGB = r.Floor.sPerGB(p.Bulk)
		}
	}
}

// of reports whether s is a sample of tool in cell c of engine.
func (c cellKey) of(s *sample, engine, tool string) bool {
	return s.Engine == engine && s.DUT == c.DUT && s.Profile == c.Profile && s.HTTP == c.HTTP && s.Tool == tool
}

func (r *report) tpMedian(c cellKey, tool string) tpMedian {
	var m tpMedian
	var gbps, rps, cpu, gen, du, dgb, other, xfer []float64
	for _, s := range r.Samples {
		if !c.of(s, "throughput", tool) {
			continue
		}
		m.Runs++
		m.Failed += s.Failed + s.Non2xx
		if !s.ok() {
			continue
		}
		m.Samples++
		gbps, rps, cpu = append(gbps, s.Gbps), append(rps, s.ReqPerS), append(cpu, s.CPUPerGBS)
		gen, du, other = append(gen, s.GenUtil), append(du, s.DUTUtil), append(other, s.OtherUtil)
		dgb = append(dgb, s.DUTCPUPerGBS)
		if b, err := wrkBytes(s.WrkTransfer); err == nil && s.WrkTransfer != "" {
			xfer = append(xfer, b/(1<<20))
		}
	}
	m.Gbps, m.ReqPerS, m.CPUPerGBS = med(gbps), med(rps), med(cpu)
	m.GenUtil, m.DUTUtil, m.OtherUtil, m.WrkTransferMiBps = med(gen), med(du), med(other), med(xfer)
	m.DUTPerGBS = med(dgb)
	return m
}

func (r *report) summarizeCPS() {
	r.Rows = nil
	for _, c := range r.cells("cps") {
		rw := &row{cellKey: c}
		r.Rows = append(r.Rows, rw)
		rw.Tlsbench = r.median(c, "tlsbench")
		rw.PeerM = r.median(c, c.Peer)
		rw.Ratio = ratioOf(rw.Tlsbench.CPUPerTxnUS, rw.PeerM.CPUPerTxnUS, rw.Tlsbench.Samples, rw.PeerM.Samples)
		if tp := r.median(c, "tls-perf"); tp.Runs > 0 {
			rw.TLSPerf = &tp
			rw.RatioTLSPerf = ratioOf(rw.Tlsbench.CPUPerTxnUS, tp.CPUPerTxnUS, rw.Tlsbench.Samples, tp.Samples)
		}
	}
}

// ratioOf is a/b when both tools have samples and b is positive, else 0.
func ratioOf(a, b float64, samplesA, samplesB int) float64 {
	if samplesA > 0 && samplesB > 0 && b > 0 {
		return a / b
	}
	return 0
}

func (r *report) median(c cellKey, tool string) median {
	var m median
	var cps, us, gen, du, other []float64
	for _, s := range r.Samples {
		if !c.of(s, "cps", tool) {
			continue
		}
		m.Runs++
		m.Failed += s.Failed
		if !s.ok() {
			continue
		}
		m.Samples++
		cps, us = append(cps, s.CPS), append(us, s.CPUPerTxnUS)
		gen, du, other = append(gen, s.GenUtil), append(du, s.DUTUtil), append(other, s.OtherUtil)
	}
	m.CPS, m.CPUPerTxnUS, m.GenUtil, m.DUTUtil, m.OtherUtil = med(cps), med(us), med(gen), med(du), med(other)
	return m
}

// med is the median (the mean of the middle two for an even count).
func med(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Sorted(slices.Values(v))
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// peers are the peer generators of rows (by their cellKey), in order: a
// table each.
func peers[T any](rows []T, key func(T) cellKey) []string {
	var out []string
	for _, rw := range rows {
		if p := key(rw).Peer; !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func printTable(w io.Writer, r *report) {
	for _, peer := range peers(r.Rows, func(rw *row) cellKey { return rw.cellKey }) {
		printCPSTable(w, r, peer)
	}
	printTLSPerf(w, r)
}

// printCPSTable is the CPS table of tlsbench against peer.
func printCPSTable(w io.Writer, r *report, peer string) {
	how := "vs ab"
	if peer == "h2load" {
		how = "--http 2 vs h2load -c N -n N -m 1, HTTP/2"
	}
	fmt.Fprintf(w, "\nClient CPU per transaction, tlsbench cps %s (medians of %d interleaved runs of %s each, "+
		"-c %d; generator on CPU 1, DUT on CPU 0)\n\n",
		how, r.Reps, r.Duration, r.Concurrency)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "DUT\tPROFILE\t│\t"+
		"tlsbench CPS\tµs/txn\tgen\tDUT\tother\terrors\t│\t"+
		peer+" CPS\tµs/txn\tgen\tDUT\tother\tfailed\t│\t"+
		"RATIO tlsbench/"+peer+"\t")
	cell := func(m median) string {
		if m.Samples == 0 {
			return fmt.Sprintf("no result (%d runs)\t-\t-\t-\t-\t%d", m.Runs, m.Failed)
		}
		return fmt.Sprintf("%.1f%s\t%.0f\t%s\t%s\t%s\t%d",
			m.CPS, okNote(m.Samples, m.Runs), m.CPUPerTxnUS, pct(m.GenUtil), pct(m.DUTUtil), pct(m.OtherUtil), m.Failed)
	}
	for _, rw := range r.Rows {
		if rw.Peer == peer {
			fmt.Fprintf(tw, "%s\t%s\t│\t%s\t│\t%s\t│\t%s\t\n", rw.DUT, rw.Profile, cell(rw.Tlsbench), cell(rw.PeerM),
				ratioCell(rw.Ratio))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\nµs/txn: the generator's user+sys CPU (its rusage, start-up included) per completed transaction;")
	fmt.Fprintln(w, "gen/DUT: CPU of the generator / of the DUT processes over the run's wall time "+
		"(100% = its core busy);")
	fmt.Fprintln(w, "other: CPU used meanwhile by the rest of this shared 2-core machine "+
		"(/proc/stat busy+steal minus both; up to 200%);")
	if peer == "h2load" {
		fmt.Fprintln(w, "h2load: N new connections at once (-c N -n N -m 1), a /1k request each, N = the cell's last "+
			"tlsbench CPS × the duration;")
		fmt.Fprintln(w, "  its CPS is its 2xx responses over its \"finished in\" time; failed: its failed requests "+
			"(summed over the runs). Lower ratio = tlsbench cheaper.")
		return
	}
	fmt.Fprintln(w, "errors: tlsbench whole-run errors; failed: ab \"Failed requests\" (summed over the runs). "+
		"Lower ratio = tlsbench cheaper.")
}

// printTLSPerf adds tls-perf's column when it ran: its handshakes per second
// and client CPU per handshake (no HTTP, connections reset), against
// tlsbench's per transaction.
func printTLSPerf(w io.Writer, r *report) {
	if !slices.ContainsFunc(r.Rows, func(rw *row) bool { return rw.TLSPerf != nil }) {
		return
	}
	fmt.Fprintf(w, "\ntls-perf (handshakes only: no HTTP, each connection reset), same runs interleaved\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "DUT\tPROFILE\t│\ttlsbench µs/txn\t│\ttls-perf hs/s\tµs/hs\tgen\t│\tRATIO tlsbench/tls-perf\t")
	for _, rw := range r.Rows {
		if rw.TLSPerf == nil {
			continue
		}
		m := rw.TLSPerf
		cell := fmt.Sprintf("no result (%d runs)\t-\t-", m.Runs)
		if m.Samples > 0 {
			cell = fmt.Sprintf("%.1f%s\t%.0f\t%s", m.CPS, okNote(m.Samples, m.Runs), m.CPUPerTxnUS, pct(m.GenUtil))
		}
		fmt.Fprintf(tw, "%s\t%s\t│\t%.0f\t│\t%s\t│\t%s\t\n", rw.DUT, rw.Profile, rw.Tlsbench.CPUPerTxnUS, cell,
			ratioCell(rw.RatioTLSPerf))
	}
	tw.Flush()
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// ratioCell is a ratio's cell: "-" when there is none.
func ratioCell(v float64) string {
	if v > 0 {
		return fmt.Sprintf("%.2f", v)
	}
	return "-"
}

// okNote is " (k/n ok)" when only k of a tool's n runs succeeded.
func okNote(samples, runs int) string {
	if samples < runs {
		return fmt.Sprintf(" (%d/%d ok)", samples, runs)
	}
	return ""
}

func printThroughputTable(w io.Writer, r *report) {
	for _, peer := range peers(r.TPRows, func(rw *tpRow) cellKey { return rw.cellKey }) {
		printTPTable(w, r, peer)
	}
}

// printTPTable is the throughput table of tlsbench against peer.
func printTPTable(w io.Writer, r *report, peer string) {
	how := "vs wrk -t1"
	if peer == "h2load" {
		how = fmt.Sprintf("--http 2 --streams %d vs h2load -m %[1]d, HTTP/2", r.Streams)
	}
	fmt.Fprintf(w, "\nClient CPU per GB of 1 MiB bodies over keep-alive connections, tlsbench throughput %s "+
		"(medians of %d interleaved runs of %s each, -c %d; generator on CPU 1, DUT on CPU 0)\n\n",
		how, r.Reps, r.Duration, r.TPConcurrency)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "DUT\tPROFILE\t│\t"+
		"tlsbench Gbps\treq/s\ts/GB\tgen\tDUT\tDUT s/GB\tother\terrors\t│\t"+
		peer+" Gbps\treq/s\tTransfer/s\ts/GB\tgen\tDUT\tDUT s/GB\tother\terrors\t│\t"+
		"RATIO tlsbench/"+peer+"\t│\tGo floor s/GB\ttlsbench/floor\t")
	cell := func(m tpMedian, wrk bool) string {
		xfer := ""
		if wrk {
			xfer = "\t-"
			if m.WrkTransferMiBps > 0 {
				xfer = fmt.Sprintf("\t%.1fMB", m.WrkTransferMiBps)
			}
		}
		if m.Samples == 0 {
			return fmt.Sprintf("no result (%d runs)\t-%s\t-\t-\t-\t-\t-\t%d", m.Runs, xfer, m.Failed)
		}
		return fmt.Sprintf("%.3f%s\t%.1f%s\t%.2f\t%s\t%s\t%.2f\t%s\t%d",
			m.Gbps, okNote(m.Samples, m.Runs), m.ReqPerS, xfer, m.CPUPerGBS, pct(m.GenUtil), pct(m.DUTUtil),
			m.DUTPerGBS, pct(m.OtherUtil), m.Failed)
	}
	for _, rw := range r.TPRows {
		if rw.Peer != peer {
			continue
		}
		floor, overFloor := "-", "-"
		if rw.FloorSPerGB > 0 {
			floor = fmt.Sprintf("%.3f", rw.FloorSPerGB)
			if rw.Tlsbench.Samples > 0 {
				overFloor = fmt.Sprintf("%.1f×", rw.Tlsbench.CPUPerGBS/rw.FloorSPerGB)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t│\t%s\t│\t%s\t│\t%s\t│\t%s\t%s\t\n",
			rw.DUT, rw.Profile, cell(rw.Tlsbench, false), cell(rw.PeerM, true), ratioCell(rw.Ratio), floor, overFloor)
	}
	tw.Flush()
	if peer == "h2load" {
		fmt.Fprintln(w, "\nh2load: -c connections × -m streams for --duration (-D), one thread; Gbps and s/GB from its "+
			"2xx responses × 1 MiB over its \"finished in\" time;")
		fmt.Fprintln(w, "  nginx logs every connection's protocol, cipher, curve and h2 (checked, both tools). "+
			"Transfer/s: wrk's only.")
		return
	}
	printTPNotes(w)
}

// printTPNotes explains the columns of the table against wrk.
func printTPNotes(w io.Writer) {
	fmt.Fprintln(w, "\nGbps: body bytes of successful requests (tlsbench: its whole-run per-second series, "+
		"= whole_run.transactions × 1 MiB; wrk: requests × 1 MiB)")
	fmt.Fprintln(w, "  over the tool's own run time (tlsbench ended − started; wrk \"in Xs\"); req/s likewise;")
	fmt.Fprintln(w, "s/GB: the generator's user+sys CPU (its rusage, start-up and handshakes included) per 10⁹ body "+
		"bytes;")
	fmt.Fprintln(w, "Transfer/s: wrk's own figure (HTTP bytes read incl. headers, MiB/s); gen/DUT/other as above;")
	fmt.Fprintln(w, "DUT s/GB: the DUT's CPU per 10⁹ body bytes it served to that generator;")
	fmt.Fprintln(w, "errors: tlsbench whole-run errors; wrk socket errors + non-2xx (summed over the runs). "+
		"Lower ratio = tlsbench cheaper;")
	fmt.Fprintln(w, "Go floor: one core's AES-128-GCM open (GCM profiles) or AES-128-CBC decrypt + HMAC-SHA256 "+
		"(CBC-SHA256 profiles) of 16 KiB")
	fmt.Fprintln(w, "  records per 10⁹ plaintext bytes (see below); tlsbench/floor = tlsbench s/GB ÷ that.")
	fmt.Fprintln(w, "Negotiated: nginx logs every connection's protocol, cipher and curve (checked, both tools); "+
		"the target offers only the")
	fmt.Fprintln(w, "  profile's version, suite and group (tlsbench's record is checked); "+
		"an openssl s_client probe of each DUT checks that")
	fmt.Fprintln(w, "  an OpenSSL client like wrk gets the same, without encrypt-then-mac (refused by nginx here, "+
		"as Go's client never")
	fmt.Fprintln(w, "  offers it), so both generators decrypt the same records. See the per-run lines.")
}

func (r *report) write(file string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// toolVersions records the first line each tool prints about its version.
func toolVersions(ctx context.Context, o *options) map[string]string {
	v := map[string]string{"go": runtime.Version()}
	probe := func(key, name string, args ...string) {
		if name == "" {
			return
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(cctx, name, args...).CombinedOutput()
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				v[key] = l
				return
			}
		}
	}
	probe("tlsbench", o.tlsbench, "version")
	probe("ab", o.ab, "-V")
	probe("wrk", o.wrk, "-v") // wrk -v prints its version and usage, and exits 1
	probe("nginx", o.nginx, "-v")
	probe("h2load", o.h2load, "--version")
	probe("openssl", "openssl", "version")
	return v
}
