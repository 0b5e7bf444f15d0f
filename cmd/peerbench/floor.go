package main

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
)

// The record protections of the seed profiles, for the crypto floor.
const (
	bulkGCM = "aes128-gcm"             // AES128-GCM-SHA256
	bulkCBC = "aes128-cbc-hmac-sha256" // ECDHE-ECDSA-AES128-SHA256
)

const (
	floorRecord = 16 << 10 // TLS's largest record plaintext
	floorTrials = 3
)

// cryptoFloor is what the receiving side of a 1 MiB body costs in Go's
// crypto alone, on one core: the least CPU a Go client can spend per GB of
// such bodies on these profiles (no syscalls, copies, HTTP or scheduling).
type cryptoFloor struct {
	RecordSize int         `json:"record_bytes"`
	GCMOpen    floorResult `json:"aes128_gcm_open"`
	CBCHMAC    floorResult `json:"aes128_cbc_decrypt_hmac_sha256"`
	Note       string      `json:"note"`
}

// floorResult is seconds of one core per 10⁹ plaintext bytes: the best of
// the trials (each a Go benchmark, testing.Benchmark) and all of them.
type floorResult struct {
	SPerGB float64   `json:"s_per_gb"`
	GBps   float64   `json:"gb_per_s"`
	Trials []float64 `json:"trials_s_per_gb"`
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

// floorOpeners are the record protections the floor times, by name: the
// sub-benchmarks of BenchmarkFloor (go test -bench Floor ./cmd/peerbench).
var floorOpeners = []struct {
	name string
	open func() func()
}{{"gcm-open", gcmOpener}, {"cbc-hmac-sha256", cbcHMACOpener}}

// benchFloor is one record protection's benchmark: one 16 KiB record per
// iteration, in one goroutine.
func benchFloor(open func()) func(*testing.B) {
	return func(b *testing.B) {
		b.SetBytes(floorRecord)
		for b.Loop() {
			open()
		}
	}
}

// measureFloor times, as Go benchmarks, the decryption of 16 KiB TLS 1.2
// records: AES-128-GCM Open (13-byte additional data), and AES-128-CBC
// decryption of the record (plaintext, 32-byte MAC, 16 bytes of padding)
// followed by HMAC-SHA256 of the 13-byte header and the plaintext. The
// trials alternate between the two. Given a floor measured before, it adds
// its trials to that one's: this virtual machine's cores run much slower at
// times than at others (by up to 1.6× here), so peerbench measures before
// and after the generators.
func measureFloor(f *cryptoFloor) *cryptoFloor {
	if f == nil {
		f = &cryptoFloor{RecordSize: floorRecord,
			Note: "testing.Benchmark (wall time, one goroutine), best of the trials; crypto/aes, crypto/cipher, crypto/hmac, " +
				"crypto/sha256 only"}
	}
	rs := []*floorResult{&f.GCMOpen, &f.CBCHMAC}
	for range floorTrials {
		for i, o := range floorOpeners {
			res := testing.Benchmark(benchFloor(o.open()))
			gb := float64(res.N) * floorRecord / 1e9
			rs[i].Trials = append(rs[i].Trials, res.T.Seconds()/gb)
		}
	}
	for _, r := range rs {
		r.SPerGB = slices.Min(r.Trials)
		r.GBps = 1 / r.SPerGB
	}
	return f
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
	fmt.Fprintf(w, "\nGo crypto floor (%s, one goroutine, %d KiB records, best of %d Go benchmarks):\n",
		runtime.Version(), f.RecordSize>>10, len(f.GCMOpen.Trials))
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
