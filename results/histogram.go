package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The geometry of every RTT histogram this package records: 1 ns to 100 s at 3 significant
// digits, so every value is kept to within 0.1%. A histogram of this geometry takes
// HistogramBytes of memory; its encoded form is usually a few hundred bytes.
const (
	HistogramLowest  = 1
	HistogramHighest = 100 * 1e9
	HistogramDigits  = 3
)

// NewHistogram returns an empty histogram of the standard geometry.
func NewHistogram() *hdr.Histogram {
	return hdr.New(HistogramLowest, HistogramHighest, HistogramDigits)
}

// EncodeHistogram returns h in the HdrHistogram V2 compressed encoding (zlib-deflated counts,
// "DEFLATE" cookie 0x1c849304), base64 encoded: the same text that HdrHistogram interval logs
// carry and that every HdrHistogram implementation (Java, C, Go, Rust, Python) decodes. It is
// the format of every rtt_histogram field: exact counts, so histograms from many files can be
// merged and re-analysed.
func EncodeHistogram(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram decodes the EncodeHistogram form. It accepts only the standard geometry, so
// that a hostile header cannot make it allocate gigabytes and every decoded histogram can be
// merged with any other without loss.
func DecodeHistogram(s string) (*hdr.Histogram, error) {
	if err := checkHistogramHeader(s); err != nil {
		return nil, err
	}
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

var errHistShort = errors.New("decode histogram: too short")

// checkHistogramHeader reads the geometry from the compressed header (8 bytes of cookie and
// length, then a zlib stream whose first 40 bytes are the V2 header) before hdr.Decode sizes
// the counts array from it.
func checkHistogramHeader(s string) error {
	const outer, inner = 8, 40
	// Enough base64 for the outer header and the start of the zlib stream.
	n := base64.StdEncoding.EncodedLen(outer + 2)
	if len(s) < n {
		return errHistShort
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("decode histogram: base64: %w", err)
	}
	if len(raw) < outer {
		return errHistShort
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[outer:]))
	if err != nil {
		return fmt.Errorf("decode histogram: zlib: %w", err)
	}
	var h [inner]byte
	if _, err := io.ReadFull(z, h[:]); err != nil {
		return fmt.Errorf("decode histogram: header: %w", err)
	}
	digits := int32(binary.BigEndian.Uint32(h[12:]))
	lowest := int64(binary.BigEndian.Uint64(h[16:]))
	highest := int64(binary.BigEndian.Uint64(h[24:]))
	if digits != HistogramDigits || lowest != HistogramLowest || highest != HistogramHighest {
		return fmt.Errorf("decode histogram: geometry %d..%d at %d digits, want %d..%d at %d",
			lowest, highest, digits, int64(HistogramLowest), int64(HistogramHighest), HistogramDigits)
	}
	return nil
}

// MinTailSamples is how many samples must lie at or beyond a percentile for it to be
// reported: percentile p is supported by n samples when n*(100-p)/100 >= MinTailSamples.
// With fewer, the "percentile" is one of the few largest samples (with n=1000, perftest's
// p99.9 is the single largest sample after its trimming), which is a maximum wearing a
// percentile's name. So n=1000 supports p99 (10 samples beyond) but not p99.9 (1); p99.9
// needs n >= 10 000, p99.99 n >= 100 000. The rule applies to every percentile, p50 too
// (n >= 20).
const MinTailSamples = 10

// Supports reports whether n samples support percentile p (0 < p < 100).
func Supports(n uint64, p float64) bool {
	if !(p > 0 && p < 100) {
		return false
	}
	// Relative slack for the float rounding of (100-p): 99.99 is not exact in binary.
	return float64(n)*(100-p)/100 >= MinTailSamples*(1-1e-9)
}

// Percentile returns the value at percentile p of h and true, or false if h's count does not
// support p.
func Percentile(h *hdr.Histogram, p float64) (int64, bool) {
	if !Supports(uint64(h.TotalCount()), p) {
		return 0, false
	}
	return h.ValueAtPercentile(p), true
}

// percentiles are the ones every Summary carries.
var percentiles = [...]float64{50, 90, 99, 99.9, 99.99}

func (s *Summary) percentile(i int) **int64 {
	switch i {
	case 0:
		return &s.P50
	case 1:
		return &s.P90
	case 2:
		return &s.P99
	case 3:
		return &s.P999
	default:
		return &s.P9999
	}
}

// moments are exact running sums of samples, mergeable by addition: the sum of squares is
// kept in 128 bits (a 100 s sample squared is 1e22 ns², past int64), so that merging
// recorders gives exactly the mean and standard deviation of recording into one.
type moments struct {
	n        uint64
	sum      uint64 // fits 584 years of summed round trips
	sqHi     uint64
	sqLo     uint64
	min, max int64
}

func (m *moments) add(v int64) {
	if m.n == 0 || v < m.min {
		m.min = v
	}
	if v > m.max {
		m.max = v
	}
	m.n++
	m.sum += uint64(v)
	hi, lo := mul64(uint64(v), uint64(v))
	m.addSq(hi, lo)
}

func (m *moments) merge(o *moments) {
	if o.n == 0 {
		return
	}
	if m.n == 0 || o.min < m.min {
		m.min = o.min
	}
	if o.max > m.max {
		m.max = o.max
	}
	m.n += o.n
	m.sum += o.sum
	m.addSq(o.sqHi, o.sqLo)
}

func ptr(v int64) *int64 { return &v }

// summary fills everything but the percentiles.
func (m *moments) summary() Summary {
	s := Summary{Count: m.n}
	if m.n == 0 {
		return s
	}
	s.Min, s.Max = ptr(m.min), ptr(m.max)
	s.Mean = ptr(int64(math.Round(float64(m.sum) / float64(m.n))))
	if m.n >= 2 {
		s.Stdev = ptr(int64(math.Round(m.stdev())))
	}
	return s
}

// summarize builds the Summary of m and its histogram h.
func summarize(m *moments, h *hdr.Histogram) Summary {
	s := m.summary()
	for i, p := range percentiles {
		if v, ok := Percentile(h, p); ok {
			*s.percentile(i) = ptr(v)
		}
	}
	return s
}
