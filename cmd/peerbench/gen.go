package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childSlack is how much longer than --duration a generator may take before
// it is killed.
const childSlack = 60 * time.Second

// sample is one generator run.
type sample struct {
	DUT     string `json:"dut"`
	Profile string `json:"profile"`
	Tool    string `json:"tool"`
	Rep     int    `json:"rep"`

	// Transactions completed: tlsbench whole_run.transactions; ab
	// "Complete requests" − "Failed requests" − "Non-2xx responses".
	Transactions int64 `json:"transactions"`
	// Failed: tlsbench whole_run.errors; ab "Failed requests".
	Failed int64 `json:"failed"`
	Non2xx int64 `json:"non_2xx,omitempty"`
	// CPS over the measured window: tlsbench the record's cps (steady
	// window); ab completed transactions ÷ "Time taken for tests".
	CPS     float64 `json:"cps"`
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
	// Negotiated is what the handshakes negotiated as the tool reports it.
	Negotiated string `json:"negotiated,omitempty"`
	Command    string `json:"command"`
	Error      string `json:"error,omitempty"`
}

func (s *sample) ok() bool { return s.Error == "" && s.Transactions > 0 }

func (s *sample) line() string {
	l := fmt.Sprintf("%-6s %-31s %-8s rep %d: %7.1f cps  %6.0f µs/txn  gen %3.0f%%  dut %3.0f%%  other %3.0f%%  %d txn  %d failed  [%s]",
		s.DUT, s.Profile, s.Tool, s.Rep, s.CPS, s.CPUPerTxnUS, s.GenUtil*100, s.DUTUtil*100, s.OtherUtil*100, s.Transactions, s.Failed, s.Negotiated)
	if s.Error != "" {
		l += "  ERROR: " + s.Error
	}
	return l
}

// measure runs one generator on CPU 1 and fills a sample; a failure is
// recorded in the sample, not returned.
func measure(ctx context.Context, o *options, d *dut, tool string, p profileSpec, addr string, rep int) *sample {
	s := &sample{DUT: d.name, Profile: p.Name, Tool: tool, Rep: rep}
	_, port, _ := net.SplitHostPort(addr)
	var args []string
	var jsonFile string
	switch tool {
	case "tlsbench":
		jsonFile = filepath.Join(o.tmp, fmt.Sprintf("%s-%s-%d.json", d.name, p.Name, rep))
		args = []string{o.tlsbench, "cps", "https://localhost:" + port + "/1k",
			"--resolve", "localhost:" + port + ":127.0.0.1", "--profile", p.Name,
			"-c", strconv.Itoa(o.concurrency), "-d", o.duration.String(), "--warmup", "0s",
			"--cacert", d.ca, "-q", "--json", jsonFile}
	case "ab":
		// -t bounds the run to --duration; -n (after -t, which resets it) only
		// has to be out of reach. -r: a receive error is a failed request
		// rather than the end of the run.
		secs := int(math.Ceil(o.duration.Seconds()))
		args = []string{o.ab, "-q", "-r", "-t", strconv.Itoa(secs), "-n", strconv.Itoa(max(50000, secs*20000)),
			"-c", strconv.Itoa(o.concurrency), "-f", "TLS1.2", "-Z", p.Ciphers, "https://127.0.0.1:" + port + "/1k"}
	}
	s.Command = "taskset -c 1 " + strings.Join(args, " ")

	dutBefore, hostBefore := procTreeCPU(d.pid()), hostBusy()
	out, ru, wall, err := runChild(ctx, o.taskset, append([]string{"-c", "1"}, args...), o.duration+childSlack)
	dutAfter, hostAfter := procTreeCPU(d.pid()), hostBusy()
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
	switch tool {
	case "tlsbench":
		if perr := s.readRecord(jsonFile, p); perr != nil && s.Error == "" {
			s.Error = perr.Error()
		}
	case "ab":
		if perr := s.parseAB(out, p); perr != nil && s.Error == "" {
			s.Error = perr.Error()
		}
	}
	if s.Transactions > 0 {
		s.CPUPerTxnUS = s.CPUS * 1e6 / float64(s.Transactions)
	}
	if s.Error == "" && s.Transactions == 0 {
		s.Error = "no transaction completed"
	}
	return s
}

// runChild runs a generator with a timeout and returns its output, its own
// rusage and its wall time.
func runChild(ctx context.Context, name string, args []string, timeout time.Duration) ([]byte, *syscall.Rusage, time.Duration, error) {
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

// runRecord is the part of tlsbench's run record (schema tlsbench/run/v1)
// that peerbench reads.
type runRecord struct {
	Schema       string  `json:"schema"`
	Complete     bool    `json:"complete"`
	DurationS    float64 `json:"duration_s"`
	Transactions int64   `json:"transactions"`
	CPS          float64 `json:"cps"`
	Resumed      int64   `json:"resumed"`
	Errors       struct {
		Total int64 `json:"total"`
	} `json:"errors"`
	Whole struct {
		Transactions int64 `json:"transactions"`
		Errors       int64 `json:"errors"`
	} `json:"whole_run"`
	Client struct {
		CPUSeconds float64 `json:"cpu_s"`
	} `json:"client"`
	Negotiated struct {
		Version string `json:"version"`
		OpenSSL string `json:"cipher_suite_openssl"`
		Group   string `json:"group"`
	} `json:"negotiated"`
}

func (s *sample) readRecord(file string, p profileSpec) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("no run record: %w", err)
	}
	var r runRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if r.Schema != "tlsbench/run/v1" {
		return fmt.Errorf("%s: schema %q, want tlsbench/run/v1", file, r.Schema)
	}
	s.Transactions, s.Failed = r.Whole.Transactions, r.Whole.Errors
	s.CPS, s.WindowS = r.CPS, r.DurationS
	s.RecordCPUS = r.Client.CPUSeconds
	n := r.Negotiated
	if n.Group == "none" {
		n.Group = ""
	}
	s.Negotiated = strings.TrimSpace(fmt.Sprintf("%s %s %s", n.Version, n.OpenSSL, n.Group))
	switch {
	case !r.Complete:
		return fmt.Errorf("the run record says complete: false")
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
	if len(f) < 2 || f[0] != "TLSv1.2" || f[1] != p.Ciphers || (p.Curve != "" && !strings.Contains(tmpKey, " "+p.Curve+" ")) {
		return fmt.Errorf("negotiated %q (temp key %q), want TLSv1.2 %s %s", proto, tmpKey, p.Ciphers, p.Curve)
	}
	return nil
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
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:])) // state ppid pgrp … utime(11) stime(12)
		if len(f) < 13 {
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
