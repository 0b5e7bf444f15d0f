package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/tlsbench/tlsbench/internal/testdut"
)

// sample is one look at the generators from outside.
type sample struct {
	at          time.Time
	established int64 // to the target, the kernel's view; -1 if unknown
	closeWait   int64 // closed by the target, not yet by the generator
	rss         int64 // the generators' resident sets, summed
	fds         int   // the generators' open descriptors, summed
}

// startSampler samples the generators whose pids arrive on pids (n of
// them; 0 for one that did not start) and the connections to addrs (udp:
// connected UDP sockets, QUIC's), once a second from the parent, until stop.
func startSampler(addrs []string, udp bool, pids <-chan int, n int, verbose bool, w io.Writer) (stop func() []sample) {
	var all []sample
	var procs []int
	stopTicks := everySecond(func() {
	started:
		for ; n > 0; n-- {
			select {
			case pid := <-pids:
				if pid != 0 { // 0: did not start
					procs = append(procs, pid)
				}
			default:
				break started
			}
		}
		s := sample{at: time.Now(), established: countState("established", addrs, udp),
			closeWait: countState("close-wait", addrs, udp)}
		for _, pid := range procs {
			s.rss += testdut.RSS(pid)
			s.fds += testdut.FDs(pid)
		}
		if verbose {
			fmt.Fprintf(w, "scale: %s  %6d established  %6d close-wait  %6d descriptors  %6.0f MB RSS\n",
				s.at.Format("15:04:05"), s.established, s.closeWait, s.fds, float64(s.rss)/1e6)
		}
		all = append(all, s)
	})
	return func() []sample {
		stopTicks()
		return all
	}
}

// summarize fills the kernel's count of connections held from the samples
// of the generators' common steady window.
func (r *result) summarize(samples []sample) {
	var from, to time.Time
	for i, a := range r.Run.Agents {
		f := a.Started.Add(time.Duration(a.SteadyStartS * float64(time.Second)))
		t := f.Add(time.Duration(a.DurationS * float64(time.Second)))
		if i == 0 || f.After(from) {
			from = f
		}
		if i == 0 || t.Before(to) {
			to = t
		}
	}
	var sum float64
	r.HeldPeak, r.HeldMin, r.Samples = 0, 0, 0
	for _, s := range samples {
		r.HeldPeak = max(r.HeldPeak, s.established)
		r.Sockets = max(r.Sockets, s.fds)
		if s.established < 0 || s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		r.CloseWaitPeak = max(r.CloseWaitPeak, s.closeWait)
		if r.Samples == 0 || s.established < r.HeldMin {
			r.HeldMin = s.established
		}
		sum += float64(s.established)
		r.Samples++
	}
	if r.Samples > 0 {
		r.HeldMean = sum / float64(r.Samples)
	}
}

// countState counts the TCP connections in a state (ss(8) state names) from
// the generators' source addresses to one of addrs (host:port): the
// generators' side of their connections to the target, as the kernel sees
// them (ss asks it through sock_diag, cheaply however many TIME_WAIT sockets
// the target's closes leave); -1 when ss cannot be run. The kernel's dump
// walks its hash table in batches and skips entries when others leave the
// table meanwhile (thousands of TIME_WAIT sockets expiring after a CPS run):
// the count is the higher of two dumps.
// udp: the connected UDP sockets (ss's state ESTAB; never close-wait)
// instead, QUIC's connections.
func countState(state string, addrs []string, udp bool) int64 {
	return max(countStateOnce(state, addrs, udp), countStateOnce(state, addrs, udp))
}

func countStateOnce(state string, addrs []string, udp bool) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	flags := "-Htn"
	if udp {
		flags = "-Hun"
	}
	args := []string{flags, "state", state, "("}
	for i, a := range addrs {
		if i > 0 {
			args = append(args, "or")
		}
		args = append(args, "dst", a)
	}
	args = append(args, ")", "and", "src", sourcePrefix)
	out, err := exec.CommandContext(ctx, "ss", args...).Output()
	if err != nil {
		return -1
	}
	return int64(bytes.Count(out, []byte("\n")))
}
