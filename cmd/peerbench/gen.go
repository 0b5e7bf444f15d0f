package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// childSlack is how much longer than --duration a generator may take before
// it is killed.
const childSlack = 60 * time.Second

// bodySize is the size of /1m on both DUTs: the throughput engine's payload
// per request.
const bodySize = 1 << 20

// sample is one generator run.
type sample struct {
	Engine  string `json:"engine"` // cps or throughput
	HTTP    string `json:"http"`   // 1.1 or 2
	DUT     string `json:"dut"`
	Profile string `json:"profile"`
	Tool    string `json:"tool"`
	Rep     int    `json:"rep"`

	// Transactions completed: tlsbench whole_run.transactions; ab
	// "Complete requests" − "Failed requests" − "Non-2xx responses"; wrk
	// "N requests" − "Non-2xx or 3xx responses".
	Transactions int64 `json:"transactions"`
	// Failed: tlsbench whole_run.errors; ab "Failed requests"; wrk its
	// socket errors (connect + read + write + timeout).
	Failed int64 `json:"failed"`
	Non2xx int64 `json:"non_2xx,omitempty"`
	// CPS over the measured window: tlsbench the record's cps (steady
	// window); ab completed transactions ÷ "Time taken for tests".
	CPS     float64 `json:"cps,omitempty"`
	WindowS float64 `json:"window_s"`

	// The generator process's own rusage and wall time (start to exit).
	UserS       float64 `json:"user_s"`
	SysS        float64 `json:"sys_s"`
	CPUS        float64 `json:"cpu_s"`
	WallS       float64 `json:"wall_s"`
	CPUPerTxnUS float64 `json:"cpu_per_txn_us"`
	// GenUtil is the generator's CPU ÷ its wall time (1 = one core busy).
	GenUtil float64 `json:"generator_utilization"`
	// DUTUtil is the DUT processes' CPU ÷ the generator's wall time, read
	// from /proc (1 = the DUT's core busy).
	DUTCPUS float64 `json:"dut_cpu_s"`
	DUTUtil float64 `json:"dut_utilization"`
	// OtherUtil is the CPU the rest of the machine used meanwhile (all of
	// /proc/stat's busy and steal time minus the generator and the DUT) ÷
	// wall time: other load on this shared machine (up to 2 on 2 cores).
	OtherUtil float64 `json:"other_utilization"`

	// RecordCPUS is tlsbench's own client.cpu_s (in-process meter, from the
	// start of the run to its end; excludes process start-up).
	RecordCPUS float64 `json:"record_cpu_s,omitempty"`
	// Negotiated is what the handshakes negotiated: as the tool reports it
	// (tlsbench, ab) or, for wrk, as nginx logged it for each connection
	// ("… ×8"), or as a default OpenSSL client was answered by the target
	// ("probe: …"; the target offers nothing else).
	Negotiated string `json:"negotiated,omitempty"`

	// Throughput engine. PayloadBytes is the whole run's body bytes of
	// successful requests: tlsbench the sum of its per-second series (warm-up
	// and drain included; equal to whole_run.transactions × 1 MiB, checked,
	// since --expect-size rejects any other body); wrk requests × 1 MiB.
	// Gbps is PayloadBytes over the tool's own run time (tlsbench ended −
	// started, wrk's "in Xs"); CPUPerGBS the generator's CPU (rusage) per 10⁹
	// payload bytes.
	PayloadBytes int64   `json:"payload_bytes,omitempty"`
	Gbps         float64 `json:"gbps,omitempty"`
	ReqPerS      float64 `json:"requests_per_s,omitempty"`
	CPUPerGBS    float64 `json:"cpu_s_per_gb,omitempty"`
	// DUTCPUPerGBS is the DUT's CPU per 10⁹ payload bytes: how much the
	// generator's way of reading costs the server.
	DUTCPUPerGBS float64 `json:"dut_cpu_s_per_gb,omitempty"`
	// RecordGbps is tlsbench's own gbps (its steady window).
	RecordGbps float64 `json:"record_gbps,omitempty"`
	// wrk as it printed itself: Requests/sec, Transfer/sec (HTTP bytes read,
	// headers included, binary units) and the "Y read" total.
	WrkReqPerS   float64 `json:"wrk_requests_per_s,omitempty"`
	WrkTransfer  string  `json:"wrk_transfer_per_s,omitempty"`
	WrkReadBytes float64 `json:"wrk_read_bytes,omitempty"`
	WrkSocketErr string  `json:"wrk_socket_errors,omitempty"`

	Command string `json:"command"`
	Error   string `json:"error,omitempty"`
}

func (s *sample) ok() bool { return s.Error == "" && s.Transactions > 0 }

func (s *sample) line() string {
	if s.Engine == "throughput" {
		return s.tpLine()
	}
	l := fmt.Sprintf("%-9s %-31s %-8s rep %d: %7.1f cps  %6.0f µs/txn  gen %3.0f%%  dut %3.0f%%  other %3.0f%%  %d txn "+
		" %d failed  [%s]",
		s.where(), s.Profile, s.Tool, s.Rep, s.CPS, s.CPUPerTxnUS, s.GenUtil*100, s.DUTUtil*100, s.OtherUtil*100,
		s.Transactions, s.Failed, s.Negotiated)
	if s.Error != "" {
		l += "  ERROR: " + s.Error
	}
	return l
}

// where is the DUT, and "/h2" over HTTP/2.
func (s *sample) where() string { return s.DUT + map[bool]string{true: "/h2"}[s.HTTP == "2"] }

func (s *sample) tpLine() string {
	l := fmt.Sprintf("%-9s %-31s %-8s rep %d: %6.3f Gbps  %6.1f req/s  %5.2f s/GB "+
		"(user %.2f sys %.2f)  gen %3.0f%%  dut %3.0f%% %5.2f s/GB  other %3.0f%%  %d req  %d failed  [%s]",
		s.where(), s.Profile, s.Tool, s.Rep, s.Gbps, s.ReqPerS, s.CPUPerGBS,
		s.CPUPerGBS*s.UserS/max(s.CPUS, 1e-9), s.CPUPerGBS*s.SysS/max(s.CPUS, 1e-9),
		s.GenUtil*100, s.DUTUtil*100, s.DUTCPUPerGBS, s.OtherUtil*100, s.Transactions, s.Failed+s.Non2xx, s.Negotiated)
	if s.Tool == "wrk" {
		l += fmt.Sprintf("  wrk: Requests/sec %.2f, Transfer/sec %s", s.WrkReqPerS, s.WrkTransfer)
		if s.WrkSocketErr != "" {
			l += ", socket errors: " + s.WrkSocketErr
		}
	}
	if s.Error != "" {
		l += "  ERROR: " + s.Error
	}
	return l
}

// measure runs one generator on CPU 1 and fills a sample; a failure is
// recorded in the sample, not returned. prev are the samples so far.
func measure(ctx context.Context, o *options, d *dut, c cell, tool, addr string, rep int, prev []*sample) *sample {
	engine, p := c.engine, c.profile
	s := &sample{Engine: engine, HTTP: c.http, DUT: d.name, Profile: p.Name, Tool: tool, Rep: rep}
	_, port, _ := net.SplitHostPort(addr)
	args, jsonFile := command(o, d, c, tool, port, rep, prev)
	s.Command = "taskset -c 1 " + strings.Join(args, " ")

	logOffset := d.negLogSize()
	dutBefore, hostBefore := procTreeCPU(d.Pid()), hostBusy()
	out, ru, wall, err := runChild(ctx, o.taskset, append([]string{"-c", "1"}, args...), o.duration+childSlack)
	dutAfter, hostAfter := procTreeCPU(d.Pid()), hostBusy()
	s.WallS = wall.Seconds()
	if ru != nil {
		s.UserS = time.Duration(ru.Utime.Nano()).Seconds()
		s.SysS = time.Duration(ru.Stime.Nano()).Seconds()
		s.CPUS = s.UserS + s.SysS
	}
	s.DUTCPUS = (dutAfter - dutBefore).Seconds()
	if wall > 0 {
		s.GenUtil = s.CPUS / s.WallS
		s.DUTUtil = s.DUTCPUS / s.WallS
		other := (hostAfter - hostBefore).Seconds() - s.CPUS - s.DUTCPUS
		s.OtherUtil = max(0, other) / s.WallS
	}
	if err != nil {
		s.Error = err.Error()
	}
	var perr error
	switch tool {
	case "tlsbench":
		perr = s.readRecord(jsonFile, p)
	case "ab":
		perr = s.parseAB(out, p)
	case "wrk":
		perr = s.parseWrk(out)
	case "tls-perf":
		perr = s.parseTLSPerf(out, wall)
	case "h2load":
		perr = s.parseH2load(out, p)
	}
	if perr == nil && engine == "throughput" {
		perr = s.checkNegotiated(d, p, logOffset)
	}
	if perr != nil && s.Error == "" {
		s.Error = perr.Error()
	}
	if s.Transactions > 0 {
		s.CPUPerTxnUS = s.CPUS * 1e6 / float64(s.Transactions)
	}
	if s.PayloadBytes > 0 {
		s.CPUPerGBS = s.CPUS / (float64(s.PayloadBytes) / 1e9)
		s.DUTCPUPerGBS = s.DUTCPUS / (float64(s.PayloadBytes) / 1e9)
		if s.WindowS > 0 {
			s.Gbps = float64(s.PayloadBytes) * 8 / s.WindowS / 1e9
			s.ReqPerS = float64(s.Transactions) / s.WindowS
		}
	}
	if s.Error == "" && s.Transactions == 0 {
		s.Error = "no transaction completed"
	}
	return s
}

// command is the generator's command line and, for tlsbench, its record.
func command(o *options, d *dut, c cell, tool, port string, rep int, prev []*sample) (args []string, jsonFile string) {
	p, secs := c.profile, int(math.Ceil(o.duration.Seconds()))
	url, conc := "https://127.0.0.1:"+port+"/1k", o.concurrency
	if c.engine == "throughput" {
		url, conc = "https://127.0.0.1:"+port+"/1m", o.tpConc
	}
	switch {
	case tool == "tlsbench":
		jsonFile = filepath.Join(o.tmp, fmt.Sprintf("%s-%s-%s-http%s-%d.json", c.engine, d.name, p.Name, c.http, rep))
		args = []string{o.tlsbench, c.engine, strings.Replace(url, "127.0.0.1", "localhost", 1),
			"--resolve", "localhost:" + port + ":127.0.0.1", "--profile", p.Name,
			"-c", strconv.Itoa(conc), "-d", o.duration.String(), "--warmup", "0s",
			"--cacert", d.ca, "-q", "--json", jsonFile}
		if c.engine == "throughput" {
			args = append(args, "--expect-size", strconv.Itoa(bodySize))
		}
		if c.http == "2" {
			args = append(args, "--http", "2")
		}
		if c.http == "2" && c.engine == "throughput" {
			args = append(args, "--streams", strconv.Itoa(o.streams))
		}
	case tool == "wrk":
		// One thread, so that wrk runs on CPU 1 alone (its main thread
		// only waits); -d counts whole seconds here.
		args = []string{o.wrk, "-t1", "-c", strconv.Itoa(conc), "-d", strconv.Itoa(secs) + "s", url}
	case tool == "ab":
		// -t bounds the run to --duration; -n (after -t, which resets it) only
		// has to be out of reach. -r: a receive error is a failed request
		// rather than the end of the run.
		args = []string{o.ab, "-q", "-r", "-t", strconv.Itoa(secs), "-n", strconv.Itoa(max(50000, secs*20000)),
			"-c", strconv.Itoa(conc), "-f", "TLS1.2", "-Z", p.Ciphers, url}
	case tool == "tls-perf":
		// Handshakes only: no HTTP, and each connection ends with an RST
		// (SO_LINGER 0) rather than a FIN exchange. -l: connections in
		// flight, one thread (one core).
		args = []string{o.tlsPerf, "-q", "-t", "1", "-l", strconv.Itoa(conc), "-T", strconv.Itoa(secs),
			"--tls", "1.2", "-c", p.Ciphers}
		if p.Curve != "" {
			args = append(args, "-C", p.Curve)
		}
		args = append(args, "127.0.0.1", port)
	case c.engine == "throughput": // h2load, one thread, for --duration
		args = []string{o.h2load, "-c", strconv.Itoa(conc), "-m", strconv.Itoa(o.streams), "-D", strconv.Itoa(secs),
			"--ciphers", p.Ciphers, url}
	default: // h2load, N new connections with one request each
		n := strconv.Itoa(h2loadConns(prev, c, secs))
		args = []string{o.h2load, "-c", n, "-n", n, "-m", "1", "--ciphers", p.Ciphers, url}
	}
	return args, jsonFile
}

// h2loadConns is the N of h2load's CPS run (-c N -n N: N connections made
// at once, a request each): what the cell's last successful tlsbench run
// made in secs at its CPS, so that h2load runs about as long (200 a second
// without one), within 16 and 10,000 (h2load holds them all open).
func h2loadConns(prev []*sample, c cell, secs int) int {
	cps := 200.0
	for _, s := range slices.Backward(prev) {
		if s.Tool == "tlsbench" && s.Engine == c.engine && s.HTTP == c.http && s.Profile == c.profile.Name && s.ok() {
			cps = s.CPS
			break
		}
	}
	return min(10000, max(16, int(cps*float64(secs))))
}

// runChild runs a generator with a timeout and returns its output, its own
// rusage and its wall time.
func runChild(
	ctx context.Context,
	name string,
	args []string,
	timeout time.Duration,
) ([]byte, *syscall.Rusage, time.Duration, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ru *syscall.Rusage
	if cmd.ProcessState != nil {
		ru, _ = cmd.ProcessState.SysUsage().(*syscall.Rusage)
	}
	if err != nil {
		msg := strings.Join(strings.Fields(stderr.String()), " ")
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		switch {
		case cctx.Err() == context.DeadlineExceeded:
			err = fmt.Errorf("killed after the %s timeout: %s", timeout, msg)
		case ctx.Err() != nil:
			err = fmt.Errorf("interrupted")
		default:
			err = fmt.Errorf("%v: %s", err, msg)
		}
	}
	return stdout.Bytes(), ru, wall, err
}

// readRecord reads tlsbench's run record (schema tlsbench/run/v1).
func (s *sample) readRecord(file string, p profileSpec) error {
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("no run record: %w", err)
	}
	r, err := metrics.ReadRun(file)
	if err != nil {
		return err
	}
	s.Transactions, s.Failed = r.Whole.Transactions, r.Whole.Errors
	s.WindowS = r.DurationS
	s.RecordCPUS = r.Client.CPUSeconds
	if r.CPS != nil {
		s.CPS = *r.CPS
	}
	if r.HasThroughput() {
		// The whole run, not the steady window: the rusage CPU is the
		// whole process's.
		s.RecordGbps = metrics.Value(r.Gbps)
		s.WindowS = r.Ended.Sub(r.Started).Seconds()
		for _, sec := range r.Series {
			s.PayloadBytes += sec.PayloadBytes
		}
		if want := r.Whole.Transactions * bodySize; s.PayloadBytes != want {
			return fmt.Errorf("%s: the series count %d payload bytes, whole_run.transactions × 1 MiB = %d",
				file, s.PayloadBytes, want)
		}
	}
	n := r.Negotiated
	if n.Group == "none" {
		n.Group = ""
	}
	s.Negotiated = strings.Join(strings.Fields(n.Version+" "+n.OpenSSL+" "+n.Group+" "+n.ALPN), " ")
	switch {
	case !r.Complete:
		return fmt.Errorf("the run record says complete: false")
	case s.HTTP == "2" && n.ALPN != "h2":
		return fmt.Errorf("negotiated alpn %q, want h2", n.ALPN)
	case r.Resumed > 0:
		return fmt.Errorf("%d resumed handshakes", r.Resumed)
	case n.OpenSSL != p.Ciphers || (p.Group != "" && n.Group != p.Group):
		return fmt.Errorf("negotiated %s, want %s %s", s.Negotiated, p.Ciphers, p.Group)
	}
	return nil
}

// parseAB reads ab's report.
func (s *sample) parseAB(out []byte, p profileSpec) error {
	var complete, taken float64
	var proto, tmpKey string
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		num := func() float64 {
			f, _ := strconv.ParseFloat(strings.Fields(v + " 0")[0], 64)
			return f
		}
		switch strings.TrimSpace(k) {
		case "Complete requests":
			complete, seen = num(), seen+1
		case "Failed requests":
			s.Failed = int64(num())
		case "Non-2xx responses":
			s.Non2xx = int64(num())
		case "Time taken for tests":
			taken, seen = num(), seen+1
		case "SSL/TLS Protocol":
			proto = v
		case "Server Temp Key":
			tmpKey = v
		}
	}
	if seen < 2 {
		return fmt.Errorf("no report from ab")
	}
	s.Transactions = int64(complete) - s.Failed - s.Non2xx
	s.WindowS = taken
	if taken > 0 {
		s.CPS = float64(s.Transactions) / taken
	}
	// "TLSv1.2,ECDHE-ECDSA-AES128-SHA256,256,128" and "ECDH secp384r1 384 bits".
	f := strings.Split(proto, ",")
	s.Negotiated = strings.Join(f[:min(2, len(f))], " ")
	if k := strings.Fields(tmpKey); len(k) >= 2 {
		s.Negotiated += " " + k[1]
	}
	curveOK := p.Curve == "" || strings.Contains(tmpKey, " "+p.Curve+" ")
	if len(f) < 2 || f[0] != "TLSv1.2" || f[1] != p.Ciphers || !curveOK {
		return fmt.Errorf("negotiated %q (temp key %q), want TLSv1.2 %s %s", proto, tmpKey, p.Ciphers, p.Curve)
	}
	return nil
}

// parseH2load reads h2load's report: the requests that succeeded (streams
// ended without error), less those answered other than 2xx, are its
// transactions (1 MiB bodies each in throughput, checked against its DATA
// bytes), over its "finished in" time; what it negotiated must be the
// profile's, over h2.
//
//	finished in 5.04s, 136.80 req/s, 136.97MB/s
//	requests: 684 total, 716 started, 684 done, 684 succeeded, 0 failed, 0 errored, 0 timeout
//	status codes: 684 2xx, 0 3xx, 0 4xx, 0 5xx
//	traffic: 684.83MB (718097792) total, 75.48KB (77292) headers (space savings 38.92%), 684.00MB (717225984) data
func (s *sample) parseH2load(out []byte, p profileSpec) error {
	kv := map[string]string{}
	var data int64
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "finished" && f[1] == "in" {
			kv["finished"] = strings.TrimSuffix(f[2], ",")
		}
	}
	var ok, c3, c4, c5 int64
	if n, _ := fmt.Sscanf(kv["requests"], "%d total, %d started, %d done, %d succeeded, %d failed",
		new(int64), new(int64), new(int64), &ok, &s.Failed); n < 5 {
		return fmt.Errorf("no report from h2load")
	}
	_, _ = fmt.Sscanf(kv["status codes"], "%d 2xx, %d 3xx, %d 4xx, %d 5xx", new(int64), &c3, &c4, &c5)
	if t := strings.Fields(kv["traffic"]); len(t) >= 2 {
		_, _ = fmt.Sscanf(t[len(t)-2], "(%d)", &data)
	}
	el, err := wrkDuration(kv["finished"])
	if err != nil {
		return fmt.Errorf("h2load: %v", err)
	}
	s.Non2xx = c3 + c4 + c5
	s.Transactions, s.WindowS = ok-s.Non2xx, el.Seconds()
	if s.WindowS > 0 {
		s.CPS = float64(s.Transactions) / s.WindowS
	}
	if s.Engine == "throughput" {
		s.PayloadBytes = s.Transactions * bodySize
	}
	// "Server Temp Key: ECDH prime256v1 256 bits"
	key := strings.Fields(kv["Server Temp Key"] + " - -")[1]
	s.Negotiated = strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s", kv["TLS Protocol"], kv["Cipher"],
		map[bool]string{true: key}[p.Curve != ""], kv["Application protocol"])), " ")
	switch {
	case data < s.PayloadBytes:
		return fmt.Errorf("h2load read %d DATA bytes for %d responses: bodies are not 1 MiB", data, s.Transactions)
	case kv["TLS Protocol"] != "TLSv1.2" || kv["Cipher"] != p.Ciphers || (p.Curve != "" && key != p.Curve) ||
		kv["Application protocol"] != "h2":
		return fmt.Errorf("h2load negotiated %s, want TLSv1.2 %s %s h2", s.Negotiated, p.Ciphers, p.Curve)
	}
	return nil
}

// parseTLSPerf reads tls-perf's summary: " TOTAL:  SECONDS 5; HANDSHAKES 12345"
// counts every handshake of the run, warm-up included, as the CPU does.
func (s *sample) parseTLSPerf(out []byte, wall time.Duration) error {
	for _, line := range strings.Split(string(out), "\n") {
		_, v, ok := strings.Cut(line, "HANDSHAKES ")
		if !ok || !strings.Contains(line, "TOTAL:") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("tls-perf: bad total %q", line)
		}
		s.Transactions, s.WindowS = n, wall.Seconds()
		if s.WindowS > 0 {
			s.CPS = float64(n) / s.WindowS
		}
		s.Negotiated = "(not reported by tls-perf)"
		return nil
	}
	return fmt.Errorf("no summary from tls-perf")
}

// hostBusy is the machine's busy CPU time so far (user, nice, system, irq,
// softirq and steal of all CPUs), from /proc/stat.
func hostBusy() time.Duration {
	const tick = 10 * time.Millisecond
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	var total int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		if i < len(f) {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			total += v
		}
	}
	return time.Duration(total) * tick
}

// procTreeCPU is the user+sys CPU of process pid and its children (nginx's
// master and worker), from /proc.
func procTreeCPU(pid int) time.Duration {
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	var total int64
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		_, f, ok := testdut.ProcStat(e.Name()) // f: state ppid pgrp … utime(11) stime(12)
		if !ok || len(f) < 13 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); id != pid && ppid != pid {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		total += u + st
	}
	return time.Duration(total) * tick
}

// parseWrk reads wrk's report:
//
//	  1315 requests in 5.08s, 1.29GB read
//	  Socket errors: connect 0, read 2, write 0, timeout 0
//	  Non-2xx or 3xx responses: 5
//	Requests/sec:    258.89
//	Transfer/sec:    259.15MB
func (s *sample) parseWrk(out []byte) error {
	var requests int64
	seen := false
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && f[1] == "requests" && f[2] == "in" && f[5] == "read":
			n, err := strconv.ParseInt(f[0], 10, 64)
			el, err2 := wrkDuration(strings.TrimSuffix(f[3], ","))
			rd, err3 := wrkBytes(f[4])
			if err != nil || err2 != nil || err3 != nil {
				return fmt.Errorf("cannot read wrk's %q", line)
			}
			requests, s.WindowS, s.WrkReadBytes, seen = n, el.Seconds(), rd, true
		case strings.HasPrefix(line, "Socket errors:"):
			s.WrkSocketErr = strings.TrimSpace(strings.TrimPrefix(line, "Socket errors:"))
			for _, kv := range strings.Split(s.WrkSocketErr, ",") {
				if kf := strings.Fields(kv); len(kf) == 2 {
					n, _ := strconv.ParseInt(kf[1], 10, 64)
					s.Failed += n
				}
			}
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			s.Non2xx, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "Non-2xx or 3xx responses:")), 10, 64)
		case strings.HasPrefix(line, "Requests/sec:"):
			s.WrkReqPerS, _ = strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "Requests/sec:")), 64)
		case strings.HasPrefix(line, "Transfer/sec:"):
			s.WrkTransfer = strings.TrimSpace(strings.TrimPrefix(line, "Transfer/sec:"))
		}
	}
	if !seen {
		return fmt.Errorf("no report from wrk")
	}
	s.Transactions = requests - s.Non2xx
	s.PayloadBytes = s.Transactions * bodySize
	// wrk's "read" counts every HTTP byte read, headers and the partial
	// responses at the end included, to three figures: it is at least the
	// bodies unless they are not 1 MiB.
	if s.WrkReadBytes < 0.99*float64(requests*bodySize) {
		return fmt.Errorf("wrk read %.0f bytes for %d responses: bodies are not 1 MiB", s.WrkReadBytes, requests)
	}
	return nil
}

// wrkDuration parses wrk's formatted time: "5.08s", "1.00m", "812.34ms".
func wrkDuration(v string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}} {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				continue // "ms" ends in "s" too
			}
			return time.Duration(f * float64(u.unit)), nil
		}
	}
	return 0, fmt.Errorf("bad wrk duration %q", v)
}

// wrkBytes parses wrk's binary-unit sizes: "1.29GB", "259.15MB", "812.00B".
func wrkBytes(v string) (float64, error) {
	num := strings.TrimSuffix(v, "B")
	mult := 1.0
	if k := len(num); k > 0 {
		if i := strings.IndexByte("KMGTP", num[k-1]); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			num = num[:k-1]
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("bad wrk size %q", v)
	}
	return f * mult, nil
}

// checkNegotiated checks what the throughput run's connections negotiated:
// on nginx from its log (every connection of the run, either tool); for wrk
// also from the OpenSSL probe, which sees encrypt-then-mac too (the target
// offers the profile's version, suite and group only, so a connection that
// succeeded negotiated them). tlsbench's own record was checked by
// readRecord; Go's client never offers encrypt-then-mac.
func (s *sample) checkNegotiated(d *dut, p profileSpec, offset int64) error {
	want := "TLSv1.2 " + p.Ciphers
	if p.Curve != "" {
		want += " " + p.Curve
	}
	if s.HTTP == "2" {
		want += " h2"
	}
	if s.Tool == "wrk" {
		if probe := d.probes[p.Name]; probe != "" && probe != want {
			s.Negotiated = "probe: " + probe
			return fmt.Errorf("a default OpenSSL client negotiated %s, want %s", probe, want)
		}
	}
	if counts, ok := d.negotiated(offset); ok {
		var parts []string
		bad := false
		total := 0
		for k, n := range counts {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, n))
			bad = bad || k != want
			total += n
		}
		sort.Strings(parts)
		logged := strings.Join(parts, ", ")
		if s.Tool == "wrk" {
			s.Negotiated = logged
			if d.probes[p.Name] != "" {
				s.Negotiated += "; probe: no encrypt-then-mac"
			}
		}
		switch {
		case total == 0:
			return fmt.Errorf("nginx logged no connection of this run")
		case bad:
			return fmt.Errorf("nginx logged %s, want %s", logged, want)
		}
		return nil
	}
	if s.Tool == "wrk" {
		s.Negotiated = "offered only: " + want
		if probe := d.probes[p.Name]; probe != "" {
			s.Negotiated = "probe: " + probe
		}
	}
	return nil
}
