package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// campaignProgress draws a campaign's progress on stderr. On a terminal:
// one live line (phase, cell, run k of at most n, the run's second, runs
// done and left, elapsed, the estimate), redrawn every second of a run and
// cleared before each finished run's line. Without one: a plain line at the
// start of every run. Its methods may be called from the campaign's
// goroutine and the runs' per-second callbacks at once.
type campaignProgress struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool
	quiet  bool // no live line (the run-start lines of a log remain)
	status func() method.Progress
	drawn  bool // a live line is on the terminal
	last   method.Progress
	run    string               // the run's last second on the live line
	plain  func(metrics.Second) // without a terminal: the per-second lines
}

func newCampaignProgress(w io.Writer, quiet bool) *campaignProgress {
	return &campaignProgress{w: w, tty: isTerminal(w), quiet: quiet,
		plain: statusLine(w, "  ", false, 0, secondText)}
}

func secondText(s metrics.Second) string {
	return fmt.Sprintf("%d transactions  %d errors", s.Transactions, s.Errors)
}

// watch is the campaign's Watch: without a terminal, a line when a run
// starts; on one, the live line redrawn.
func (p *campaignProgress) watch(pr method.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	starts := pr.Running && (!p.last.Running || pr.RunsDone != p.last.RunsDone)
	p.last = pr
	if starts || !pr.Running {
		p.run = ""
	}
	switch {
	case p.tty && !p.quiet:
		p.draw(progressText(pr, ""))
	case !p.tty && starts:
		fmt.Fprintln(p.w, "progress    "+progressText(pr, ""))
	}
}

// second is the per-second callback inside runs: the live line with the
// second's counts (on a terminal); without one, a line per second as the
// other commands print, unless quiet.
func (p *campaignProgress) second(s metrics.Second) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		p.plain(s)
		return
	}
	p.run = fmt.Sprintf("%ds %s", s.T, secondText(s))
	p.redraw()
}

// redraw draws the live line with the campaign's status now (p.mu held).
func (p *campaignProgress) redraw() {
	pr := p.last
	if p.status != nil {
		pr = p.status()
	}
	p.draw(progressText(pr, p.run))
}

// follow reads the campaign's status and, on a terminal, redraws the live
// line every second (the elapsed time and the estimate move between runs
// too) until the returned stop, which clears it.
func (p *campaignProgress) follow(status func() method.Progress) (stop func()) {
	p.mu.Lock()
	p.status = status
	p.mu.Unlock()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if !p.tty || p.quiet {
			return
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				p.mu.Lock()
				if p.drawn {
					p.redraw()
				}
				p.mu.Unlock()
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		p.done()
	}
}

// event prints a finished run's line, below the live line's place.
func (p *campaignProgress) event(e method.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintln(p.w, eventLine(e))
	if p.tty && !p.quiet {
		p.redraw() // the live line stays below the finished runs
	}
}

// done clears the live line.
func (p *campaignProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func (p *campaignProgress) draw(line string) {
	if n := termWidth(p.w); n > 1 && utf8.RuneCountInString(line) >= n {
		line = string([]rune(line)[:n-1]) // no wrap: \r would not reach the first row
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

func (p *campaignProgress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// progressText is the campaign's progress in one line, the times first (a
// terminal narrower than the line cuts its end); run, if set, is the
// current second of the run (one line, here cut in two):
//
//	3m12s elapsed, ≤21m40s left | runs 14 done, ≤43 left |
//	final run 2/≤10 a cps ecdhe-rsa-aes128-gcm-sha256-p256 c=32 | 12s 3400 transactions  0 errors
func progressText(pr method.Progress, run string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s elapsed, ≤%s left | runs %d done",
		roughDuration(pr.Elapsed), roughDuration(pr.Remaining), pr.RunsDone)
	if pr.RunsCached > 0 {
		fmt.Fprintf(&b, " (%d from the ledger)", pr.RunsCached)
	}
	fmt.Fprintf(&b, ", ≤%d left", pr.RunsLeft)
	if pr.DUT != "" {
		fmt.Fprintf(&b, " | %s run %d/≤%d %s", pr.Phase, pr.Run, pr.Of, pr.Cell())
		if pr.Phase != vocab.Preliminary {
			fmt.Fprintf(&b, " c=%d", pr.Level)
		}
	}
	if run != "" {
		b.WriteString(" | " + run)
	}
	return b.String()
}

// roughDuration writes d to the second ("1h02m03s", "4m05s", "12s").
func roughDuration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// termWidth is the width of the terminal w writes to, 0 if unknown.
func termWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	var ws struct{ row, col, x, y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.col)
}

// tcpStatus is the status line's note of the second's TCP retransmissions
// and resets received, when there were any (Linux: TCP_INFO at each close).
func tcpStatus(s metrics.Second) string {
	out := ""
	if s.TCPRetransmits > 0 {
		out += fmt.Sprintf("  retrans %d", s.TCPRetransmits)
		if s.TCPSynRetransmits > 0 {
			out += fmt.Sprintf(" (SYN %d)", s.TCPSynRetransmits)
		}
	}
	if s.TCPResets > 0 {
		out += fmt.Sprintf("  resets %d", s.TCPResets)
	}
	return out
}
