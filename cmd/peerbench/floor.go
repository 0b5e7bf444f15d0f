package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"io"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// The record protections of the seed profiles, for the crypto floor.
const (
	bulkGCM = "aes128-gcm"             // AES128-GCM-SHA256
	bulkCBC = "aes128-cbc-hmac-sha256" // ECDHE-ECDSA-AES128-SHA256
)

const (
	floorRecord = 16 << 10               // TLS's largest record plaintext
	floorCPU    = 1                      // the generators' CPU
	floorTrial  = 500 * time.Millisecond // at least, per trial
	floorTrials = 3
)

// cryptoFloor is what the receiving side of a 1 MiB body costs in Go's
// crypto alone, on one core: the least CPU a Go client can spend per GB of
// such bodies on these profiles (no syscalls, copies, HTTP or scheduling).
type cryptoFloor struct {
	CPU        int         `json:"cpu"` // the CPU it ran on; -1: not pinned
	RecordSize int         `json:"record_bytes"`
	GCMOpen    floorResult `json:"aes128_gcm_open"`
	CBCHMAC    floorResult `json:"aes128_cbc_decrypt_hmac_sha256"`
	Note       string      `json:"note"`
}

// floorResult is seconds of one core per 10⁹ plaintext bytes: the best of
// the trials (each a loop of at least floorTrial of the thread's CPU time)
// and all of them. The thread's CPU time, not wall time, so that other load
// on this shared machine does not count; the wall time is kept beside it.
type floorResult struct {
	SPerGB     float64   `json:"s_per_gb"`
	GBps       float64   `json:"gb_per_s"`
	Trials     []float64 `json:"trials_s_per_gb"`
	WallTrials []float64 `json:"trials_wall_s_per_gb"`
}

func (f *cryptoFloor) sPerGB(bulk string) float64 {
	switch bulk {
	case bulkGCM:
		return f.GCMOpen.SPerGB
	case bulkCBC:
		return f.CBCHMAC.SPerGB
	}
	return 0
}

// measureFloor times, in one goroutine locked to a thread pinned to the
// generators' CPU, the decryption of 16 KiB TLS 1.2 records: AES-128-GCM
// Open (13-byte additional data), and AES-128-CBC decryption of the record
// (plaintext, 32-byte MAC, 16 bytes of padding) followed by HMAC-SHA256 of
// the 13-byte header and the plaintext. The trials alternate between the two.
// Given a floor measured before, it adds its trials to that one's: this
// virtual machine's cores run much slower at times than at others (by up to
// 1.6× here), so peerbench measures before and after the generators.
func measureFloor(f *cryptoFloor) *cryptoFloor {
	if f == nil {
		f = &cryptoFloor{RecordSize: floorRecord,
			Note: "the thread's CPU time in a loop on one locked thread, best of the trials; crypto/aes, crypto/cipher, crypto/hmac, crypto/sha256 only"}
	}
	done := make(chan *cryptoFloor)
	go func() {
		// The thread is pinned and never unlocked: it exits with the
		// goroutine, so no other goroutine inherits its affinity.
		runtime.LockOSThread()
		f.CPU = -1
		if runtime.NumCPU() > floorCPU && pinThread(floorCPU) == nil {
			f.CPU = floorCPU
		}
		gcm, cbc := gcmOpener(), cbcHMACOpener()
		for range floorTrials {
			for _, m := range []struct {
				r    *floorResult
				open func()
			}{{&f.GCMOpen, gcm}, {&f.CBCHMAC, cbc}} {
				cpu, wall := timeLoop(m.open)
				m.r.Trials, m.r.WallTrials = append(m.r.Trials, cpu), append(m.r.WallTrials, wall)
			}
		}
		for _, r := range []*floorResult{&f.GCMOpen, &f.CBCHMAC} {
			r.SPerGB = r.Trials[0]
			for _, t := range r.Trials {
				r.SPerGB = min(r.SPerGB, t)
			}
			r.GBps = 1 / r.SPerGB
		}
		done <- f
	}()
	return <-done
}

// pinThread sets the calling thread's CPU affinity to cpu.
func pinThread(cpu int) error {
	var mask [16]uint64 // 1024 CPUs
	mask[cpu/64] |= 1 << (cpu % 64)
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
	if e != 0 {
		return e
	}
	return nil
}

// timeLoop runs open (one 16 KiB record each) until the thread has spent at
// least floorTrial of CPU time and returns seconds of CPU and of wall time per
// 10⁹ plaintext bytes.
func timeLoop(open func()) (cpu, wall float64) {
	for range 16 { // warm caches and the branch predictor
		open()
	}
	start, cpu0 := time.Now(), threadCPU()
	n := 0
	for {
		for range 32 {
			open()
		}
		n += 32
		if used := threadCPU() - cpu0; used >= floorTrial {
			gb := float64(n) * floorRecord / 1e9
			return used.Seconds() / gb, time.Since(start).Seconds() / gb
		}
	}
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		panic("peerbench: clock_gettime(CLOCK_THREAD_CPUTIME_ID): " + e.Error())
	}
	return time.Duration(ts.Nano())
}

// floorKey is an arbitrary key: the cost does not depend on it.
var floorKey = []byte("peerbench floor key, 32 bytes..!")

// gcmOpener returns a function that opens one sealed 16 KiB record.
func gcmOpener() func() {
	block, err := aes.NewCipher(floorKey[:16])
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	nonce := make([]byte, aead.NonceSize()) // 4-byte salt + 8-byte explicit nonce
	aad := make([]byte, 13)                 // sequence number, type, version, length
	plain := make([]byte, floorRecord)
	sealed := aead.Seal(nil, nonce, plain, aad)
	out := make([]byte, 0, floorRecord)
	return func() {
		if _, err := aead.Open(out[:0], nonce, sealed, aad); err != nil {
			panic(err)
		}
	}
}

// cbcHMACOpener returns a function that decrypts one 16 KiB AES-128-CBC
// record and checks its HMAC-SHA256 (MAC-then-encrypt, as TLS 1.2).
func cbcHMACOpener() func() {
	block, err := aes.NewCipher(floorKey[:16])
	if err != nil {
		panic(err)
	}
	mac := hmac.New(sha256.New, floorKey)
	header := make([]byte, 13)
	plain := make([]byte, floorRecord)
	mac.Write(header)
	mac.Write(plain)
	record := mac.Sum(append([]byte(nil), plain...))
	pad := aes.BlockSize - len(record)%aes.BlockSize // 1..16 bytes of value pad-1
	for range pad {
		record = append(record, byte(pad-1))
	}
	iv := make([]byte, aes.BlockSize)
	sealed := make([]byte, len(record))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(sealed, record)
	out := make([]byte, len(sealed))
	sum := make([]byte, 0, sha256.Size)
	return func() {
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, sealed)
		n := len(out) - int(out[len(out)-1]) - 1 - sha256.Size
		mac.Reset()
		mac.Write(header)
		mac.Write(out[:n])
		if !hmac.Equal(mac.Sum(sum[:0]), out[n:n+sha256.Size]) {
			panic("peerbench: crypto floor: bad MAC")
		}
	}
}

func printFloor(w io.Writer, f *cryptoFloor) {
	where := fmt.Sprintf("CPU %d", f.CPU)
	if f.CPU < 0 {
		where = "not pinned"
	}
	fmt.Fprintf(w, "\nGo crypto floor (%s, one goroutine, %d KiB records, best of %d loops of ≥%s of thread CPU time; %s):\n",
		runtime.Version(), f.RecordSize>>10, len(f.GCMOpen.Trials), floorTrial, where)
	row := func(name string, r floorResult) {
		fmt.Fprintf(w, "  %-42s %6.3f s/GB  (%5.2f GB/s; trials", name, r.SPerGB, r.GBps)
		for _, t := range r.Trials {
			fmt.Fprintf(w, " %.3f", t)
		}
		fmt.Fprintln(w, ")")
	}
	row("AES-128-GCM open", f.GCMOpen)
	row("AES-128-CBC decrypt + HMAC-SHA256 verify", f.CBCHMAC)
}
