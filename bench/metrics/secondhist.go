package metrics

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// secondSigFigs is the precision of the per-second histograms: enough for a
// live display's percentiles, at a fraction of the size of SigFigs's.
const secondSigFigs = 2

// newSecondHistogram returns an empty per-second histogram.
func newSecondHistogram() *hdr.Histogram { return hdr.New(Lowest, Highest, secondSigFigs) }

// The cookies of HdrHistogram's V2 encoding: the compressed envelope and the
// uncompressed histogram inside it, each with 0x10 set (the word size byte
// of a zig-zag LEB128 encoding).
const (
	v2CompressedCookie = hdr.V2CompressedEncodingCookieBase | 0x10
	v2Cookie           = hdr.V2EncodingCookieBase | 0x10
	v2HeaderSize       = 40
)

// EncodeV2 encodes h in HdrHistogram's standard V2 compressed encoding,
// base64: the form of the record's histograms and of an interval log's
// lines, which every HdrHistogram implementation decodes (hdrhistogram-go's
// Decode, Java's decodeFromCompressedByteBuffer).
//
// The bytes before compression are those of the reference implementation
// (Java's encodeIntoByteBuffer) for the same histogram: the cookie, the
// payload length, the normalizing index offset (0), the significant
// figures, the lowest and highest trackable values, the integer-to-double
// ratio (1), then the counts up to the maximum's bucket as zig-zag LEB128
// numbers, a run of two or more empty buckets written as its negated length.
// They are compressed with zlib at its fastest level by a reused writer:
// hdrhistogram-go's Encode makes a new compressor at best compression each
// time (about a millisecond and over a megabyte a call, once a second per
// phase), and the compression level is no part of the format.
func EncodeV2(h *hdr.Histogram) string {
	e := encoders.Get().(*v2Encoder)
	defer encoders.Put(e)
	return e.encode(h)
}

// v2Encoder holds the buffers and compressor EncodeV2 reuses.
type v2Encoder struct {
	raw, out bytes.Buffer
	zw       *zlib.Writer
}

var encoders = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return &v2Encoder{zw: zw}
}}

func (e *v2Encoder) encode(h *hdr.Histogram) string {
	counts := h.Export().Counts
	// The counts up to the last non-empty bucket (at least one, as the
	// reference writes for an empty histogram).
	limit := len(counts)
	for limit > 1 && counts[limit-1] == 0 {
		limit--
	}
	limit = max(limit, 1)

	e.raw.Reset()
	var hdrBuf [v2HeaderSize]byte
	binary.BigEndian.PutUint32(hdrBuf[0:], uint32(v2Cookie))
	// hdrBuf[4:8] is the payload length, set below; [8:12] the
	// normalizing index offset, 0.
	binary.BigEndian.PutUint32(hdrBuf[12:], uint32(h.SignificantFigures()))
	binary.BigEndian.PutUint64(hdrBuf[16:], uint64(h.LowestTrackableValue()))
	binary.BigEndian.PutUint64(hdrBuf[24:], uint64(h.HighestTrackableValue()))
	binary.BigEndian.PutUint64(hdrBuf[32:], math.Float64bits(1))
	e.raw.Write(hdrBuf[:])
	var word [10]byte
	for i := 0; i < limit; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		e.raw.Write(putZigZag(word[:0], c))
	}
	raw := e.raw.Bytes()
	binary.BigEndian.PutUint32(raw[4:], uint32(len(raw)-v2HeaderSize))

	e.out.Reset()
	e.out.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	e.zw.Reset(&e.out)
	e.zw.Write(raw)
	e.zw.Close()
	out := e.out.Bytes()
	binary.BigEndian.PutUint32(out[0:], uint32(v2CompressedCookie))
	binary.BigEndian.PutUint32(out[4:], uint32(len(out)-8))
	return base64.StdEncoding.EncodeToString(out)
}

// putZigZag appends v zig-zag encoded as an LEB128 number of at most 9
// bytes, the ninth holding 8 bits (the reference's ZigZagEncoding.putLong).
func putZigZag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for n := 0; n < 8; n++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// DecodeSecondHistogram decodes a Second's HandshakeHist or TotalHist: the
// standard V2 encoding, or the private sparse encoding of records made
// before it.
func DecodeSecondHistogram(enc string) (*hdr.Histogram, error) {
	h := newSecondHistogram()
	if err := mergeSecond(h, enc); err != nil {
		return nil, err
	}
	return h, nil
}

// mergeSecond adds a per-second histogram's encoding ("" is empty) to dst,
// a per-second histogram.
func mergeSecond(dst *hdr.Histogram, enc string) error {
	if enc == "" {
		return nil
	}
	z, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return err
	}
	if len(z) >= 4 && int32(binary.BigEndian.Uint32(z))&^0xf0 == hdr.V2CompressedEncodingCookieBase {
		return mergeEncoded(dst, enc)
	}
	return mergeSparse(dst, z)
}

// mergeSparse adds the private encoding of older records to dst: for every
// non-empty bucket, the distance from the previous one's index and the
// count, as unsigned varints, deflated.
func mergeSparse(dst *hdr.Histogram, z []byte) error {
	b, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), 1<<20))
	if err != nil {
		return err
	}
	snap := dst.Export()
	for i := 0; len(b) > 0; {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return errors.New("truncated bucket index")
		}
		b = b[n:]
		c, n := binary.Uvarint(b)
		if n <= 0 || c > math.MaxInt64 {
			return errors.New("truncated or bad bucket count")
		}
		b = b[n:]
		if d > uint64(len(snap.Counts)) || i+int(d) >= len(snap.Counts) {
			return fmt.Errorf("bucket index %d out of range", uint64(i)+d)
		}
		i += int(d)
		snap.Counts[i] += int64(c)
	}
	merged := hdr.Import(snap)
	dst.Reset()
	dst.Merge(merged)
	return nil
}

// setPercentiles sets the second's percentiles (ValueAtPercentile) and
// encoded histograms (EncodeV2) from its handshake and total histograms. An
// empty histogram leaves its fields zero.
func (s *Second) setPercentiles(hs, total *hdr.Histogram) {
	if hs.TotalCount() > 0 {
		s.HandshakeP99 = float64(ValueAtPercentile(hs, 99))
		s.HandshakeHist = EncodeV2(hs)
	}
	if total.TotalCount() > 0 {
		s.TotalP50 = float64(ValueAtPercentile(total, 50))
		s.TotalP99 = float64(ValueAtPercentile(total, 99))
		s.TotalHist = EncodeV2(total)
	}
}
