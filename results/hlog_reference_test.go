package results_test

import (
	"bufio"
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// hdrJars are where Debian's libhdrhistogram-java puts HdrHistogram's reference
// implementation; HDRHISTOGRAM_JAR overrides them.
var hdrJars = []string{"/usr/share/java/hdrhistogram.jar", "/usr/share/java/HdrHistogram.jar"}

// requireHdrEnv makes a missing reference processor fail the test instead of skipping it:
// 'make hlogtest' (run by 'make test', so by CI) sets it after installing the package.
const requireHdrEnv = "RPCRDMA_BENCH_REQUIRE_HDRHISTOGRAM"

// referenceProcessor returns the java binary and the HdrHistogram jar, or skips (fails when
// requireHdrEnv is set) with how to install them.
func referenceProcessor(t *testing.T) (java, jar string) {
	t.Helper()
	jars := hdrJars
	if j := os.Getenv("HDRHISTOGRAM_JAR"); j != "" {
		jars = []string{j}
	}
	for _, j := range jars {
		if _, err := os.Stat(j); err == nil {
			jar = j
			break
		}
	}
	java, err := exec.LookPath("java")
	if jar == "" || err != nil {
		msg := "HdrHistogram's reference HistogramLogProcessor is not installed (java: " + strings.TrimSpace(java) +
			", jar: none of " + strings.Join(jars, ", ") + "): apt-get install libhdrhistogram-java default-jre-headless, or run 'make hlogtest' as root"
		if os.Getenv(requireHdrEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return java, jar
}

// hgrm is a percentile distribution as HistogramLogProcessor writes it (.hgrm).
type hgrm struct {
	rows       [][2]float64 // value, percentile
	count      int64
	max        float64
	sawSummary bool
}

func parseHgrm(t *testing.T, b []byte) hgrm {
	t.Helper()
	var h hgrm
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#[Max") {
			// #[Max     =    20316.159, Total count    =        43955]
			f := strings.FieldsFunc(l, func(r rune) bool { return r == '=' || r == ',' || r == ']' })
			h.max, _ = strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
			h.count, _ = strconv.ParseInt(strings.TrimSpace(f[3]), 10, 64)
			h.sawSummary = true
			continue
		}
		f := strings.Fields(l)
		if len(f) < 3 || strings.HasPrefix(l, "#") || f[0] == "Value" {
			continue
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad .hgrm row %q", l)
		}
		h.rows = append(h.rows, [2]float64{v, p})
	}
	return h
}

// process runs the reference HistogramLogProcessor over log (values in ns, reported in ns),
// for tag ("" for the untagged histograms), and returns its percentile distribution.
func process(t *testing.T, java, jar string, log []byte, tag string) hgrm {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.hlog"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, log, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", in, "-o", out, "-outputValueUnitRatio", "1"}
	if tag != "" {
		args = append(args, "-tag", tag)
	}
	b, err := exec.Command(java, args...).CombinedOutput()
	if err != nil || bytes.Contains(b, []byte("Exception")) {
		t.Fatalf("HistogramLogProcessor %q: %v\n%s", tag, err, b)
	}
	g, err := os.ReadFile(out + ".hgrm")
	if err != nil {
		t.Fatalf("HistogramLogProcessor %q wrote no distribution: %v\n%s", tag, err, b)
	}
	h := parseHgrm(t, g)
	if !h.sawSummary || len(h.rows) == 0 {
		t.Fatalf("HistogramLogProcessor %q: unreadable distribution:\n%s", tag, g)
	}
	return h
}

// check compares the reference processor's distribution with want (the histogram we wrote)
// and its p50 and p99 with ours (the Summary).
func check(t *testing.T, name string, got hgrm, want *hdr.Histogram, s *results.Summary) {
	t.Helper()
	if got.count != want.TotalCount() || math.Abs(got.max-float64(want.Max())) > 1 {
		t.Errorf("%s: processor count %d max %.0f, ours %d %d", name, got.count, got.max, want.TotalCount(), want.Max())
	}
	// Each row's value must be the bucket of ours where the cumulative count crosses the
	// row's percentile (within one sample: the two implementations round the rank apart).
	bars := want.Distribution()
	for _, r := range got.rows {
		var below, through int64
		for _, b := range bars {
			if float64(b.To) < r[0]-0.5 {
				below += b.Count
			}
			if float64(b.From) <= r[0]+0.5 {
				through += b.Count
			}
		}
		rank := r[1] * float64(want.TotalCount())
		if float64(below) > rank+1 || float64(through) < rank-1 {
			t.Errorf("%s: at percentile %v the processor says %.0f ns; ours has %d values below and %d through it, want the %.1fth in between",
				name, r[1], r[0], below, through, rank)
		}
	}
	for _, q := range []struct {
		p   float64
		our *int64
	}{{0.5, s.P50}, {0.99, s.P99}} {
		if q.our == nil {
			continue
		}
		// The processor prints percentiles on a halving scale: take its row at q.p, or the
		// first beyond it, and ours must not exceed it (nor be below the row before).
		for i, r := range got.rows {
			if r[1] >= q.p {
				lo := 0.0
				if i > 0 {
					lo = got.rows[i-1][0]
				}
				if v := float64(*q.our); v > r[0]+1 || v < lo-1 || (r[1] == q.p && math.Abs(v-r[0]) > 1) {
					t.Errorf("%s: our p%g is %.0f ns, the processor's rows give (%.0f, %.0f] at %v", name, q.p*100, v, lo, r[0], r[1])
				}
				break
			}
		}
	}
}

// HdrHistogram's reference HistogramLogProcessor (Java) reads our logs without a -tag (the
// untagged histograms: every RPC), per point and per class with -tag, and finds the same
// counts and percentiles we report.
func TestHlogReferenceProcessor(t *testing.T) {
	java, jar := referenceProcessor(t)
	r := goldenRun(t)
	// Point 0 with real per-interval histograms: two halves recorded apart, of two classes.
	p0 := &r.Points[0]
	rng := rand.New(rand.NewPCG(7, 7))
	var recs [2]*results.Recorder
	var halves [2]results.Point
	for i := range recs {
		recs[i] = results.NewRecorder()
		for k := range 3000 {
			c := rpcproto.Short
			if k%3 == 0 {
				c = rpcproto.Chunked
			}
			recs[i].Record(c, c, int64(3000+i*500)+rng.Int64N(2000)+int64(k%50)*40, 128)
		}
		h, err := results.Summarize(p0.Params, p0.Start, p0.End, recs[i])
		if err != nil {
			t.Fatal(err)
		}
		halves[i] = h
	}
	whole, err := results.Summarize(p0.Params, p0.Start, p0.End, recs[0], recs[1])
	if err != nil {
		t.Fatal(err)
	}
	whole.Complete, whole.Negotiated = true, p0.Negotiated
	half := whole.DurationNs / 2
	whole.Intervals = []results.Interval{
		{OffsetNs: 0, DurationNs: half, RPCs: halves[0].Throughput.RPCs, PayloadBytes: halves[0].Throughput.PayloadBytes, Histogram: halves[0].Histogram},
		{OffsetNs: half, DurationNs: whole.DurationNs - half, RPCs: halves[1].Throughput.RPCs, PayloadBytes: halves[1].Throughput.PayloadBytes, Histogram: halves[1].Histogram},
	}
	*p0 = whole
	if _, err := results.Marshal(r); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := results.WriteHlog(&b, r); err != nil {
		t.Fatal(err)
	}
	log := b.Bytes()

	// Untagged: all the run's RPCs.
	all, _ := results.DecodeHistogram(r.Points[0].Histogram)
	for _, p := range r.Points[1:] {
		h, _ := results.DecodeHistogram(p.Histogram)
		all.Merge(h)
	}
	check(t, "untagged", process(t, java, jar, log, ""), all, &results.Summary{})

	for _, p := range r.Points {
		key := p.Params.Key()
		h, _ := results.DecodeHistogram(p.Histogram)
		check(t, key, process(t, java, jar, log, key), h, &p.RTT)
		for _, c := range p.Classes {
			if c.RTT.Count == 0 {
				continue
			}
			h, _ := results.DecodeHistogram(c.Histogram)
			check(t, key+" "+c.Class, process(t, java, jar, log, key+"/rtt_class="+c.Class), h, &c.RTT)
		}
	}
}
