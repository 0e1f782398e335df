package results_test

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// goldenRun is the run behind every golden file: 1000 RPCs on the first point (so p99.9 is
// "-"), 20000 on the others, a failed status, an incomplete last point and one point with
// per-interval histograms.
func goldenRun(t *testing.T) *results.Run {
	r := makeRun(t, 1, 1, 20000, 2)
	small := makeRun(t, 1, 1, 1000, 1)
	r.Points[0] = small.Points[0]
	r.Points[2].Complete = false
	r.Status = results.Status{State: results.StateFailed, Message: "rpc 20001: connection broken"}
	// Mixed classes on point 1: its own RPCs plus 300 with long replies.
	rec := results.NewRecorder()
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 20000 {
		rec.Record(rpcproto.Chunked, rpcproto.Chunked, 4000+rng.Int64N(1000)+int64(i%7)*100, 8192)
	}
	for i := range 300 {
		rec.Record(rpcproto.Short, rpcproto.Long, int64(40000+i*10), 70000)
	}
	p1 := &r.Points[1]
	p, err := results.Summarize(p1.Params, p1.Start, p1.End, rec)
	if err != nil {
		t.Fatal(err)
	}
	p.Complete, p.Negotiated, p.CPU, p.Intervals = true, p1.Negotiated, p1.CPU, p1.Intervals
	*p1 = p
	// Per-interval histograms on point 0.
	for i := range r.Points[0].Intervals {
		r.Points[0].Intervals[i].Histogram = small.Points[0].Classes[0].Histogram
	}
	if _, err := results.Marshal(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := results.WriteText(&b, goldenRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.txt", b.Bytes())
	// Columns line up: every table line has the same length in runes.
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	var width int
	for _, l := range lines[4 : len(lines)-4] {
		n := len([]rune(l))
		if width == 0 {
			width = n
		}
		if n != width {
			t.Errorf("misaligned line %q", l)
		}
	}
	if !strings.Contains(lines[5], "  -  ") {
		t.Errorf("the 1000-sample point shows a p99.9: %q", lines[5])
	}
	// Each mark is explained, the columns say what they hold, and classes have a rate.
	for _, want := range []string{"RTT p50 µs", "payload Gb/s", "RTT: full round trip", "call + reply payload",
		"-: too few RTTs", "*: incomplete"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q", want)
		}
	}
	if f := strings.Fields(lines[6]); f[6] != "chunked" || f[len(f)-2] == "0" || len(f) != 15 {
		t.Errorf("the chunked class row of a mixed point has no RPC/s of its own: %q", lines[6])
	}
	// A point's errors are counted once, on its "all" row, not repeated on each class row.
	r0 := goldenRun(t)
	r0.Points = r0.Points[1:2]
	r0.Points[0].Errors = []results.ErrorStats{{Kind: "timeout", Count: 3}}
	b.Reset()
	if err := results.WriteText(&b, r0); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		f := strings.Fields(l)
		if len(f) < 8 || (f[6] != "all" && f[6] != "short" && f[6] != "chunked" && f[6] != "long") {
			continue
		}
		if want := map[bool]string{true: "3", false: "-"}[f[6] == "all"]; f[len(f)-1] != want {
			t.Errorf("%s row shows errors %q, want %q:\n%s", f[6], f[len(f)-1], want, b.String())
		}
	}
	// A mix shows its name, not sizes of 0.
	r := goldenRun(t)
	r.Points = r.Points[:1]
	r.Points[0].Params.Procedure, r.Points[0].Params.CallBytes, r.Points[0].Params.ReplyBytes = "MIX:nfs-like", 0, 0
	b.Reset()
	if err := results.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`MIX:nfs-like +mixed +mixed +4096`).MatchString(b.String()) {
		t.Errorf("mix row:\n%s", b.String())
	}
}

func TestWriteCSV(t *testing.T) {
	r := goldenRun(t)
	var b bytes.Buffer
	if err := results.WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.csv", b.Bytes())
	rows, col := csvOf(t, r)
	// Per point: a row per class with round trips, then the total ("all").
	k := 1
	for i, p := range r.Points {
		for _, c := range p.Classes {
			if c.RTT.Count == 0 {
				continue
			}
			row := rows[k]
			k++
			if row[col["rtt_class"]] != c.Class || row[col["count"]] != strconv.FormatUint(c.RTT.Count, 10) ||
				row[col["p50_ns"]] != results.CSVInt(c.RTT.P50) || row[col["rpc_per_s"]] == "0.000" {
				t.Errorf("point %d class %s row %q", i, c.Class, row)
			}
		}
		row := rows[k]
		k++
		if row[col["rtt_class"]] != "all" || row[col["procedure"]] != p.Params.Procedure {
			t.Errorf("point %d: total row %q", i, row)
		}
		if got := row[col["p99_ns"]]; got != strconv.FormatInt(*p.RTT.P99, 10) {
			t.Errorf("point %d p99_ns %s, want %d", i, got, *p.RTT.P99)
		}
		if got, want := row[col["p999_ns"]], results.CSVInt(p.RTT.P999); got != want {
			t.Errorf("point %d p999_ns %q, want %q", i, got, want)
		}
		if row[col["run_start"]] != r.Start.Format(time.RFC3339Nano) || row[col["provider"]] != r.Environment.Provider {
			t.Errorf("point %d: origin columns %q", i, row[:5])
		}
	}
	if k != len(rows) {
		t.Fatalf("%d rows, want %d", len(rows), k)
	}
	if rows[1][col["p999_ns"]] != "" {
		t.Error("unsupported p99.9 is not empty")
	}
	// Named sources go in the first column.
	b.Reset()
	if err := results.WriteCSVSources(&b, []string{"a.json"}, r); err != nil {
		t.Fatal(err)
	}
	if rows, _ := csv.NewReader(&b).ReadAll(); rows[1][0] != "a.json" {
		t.Errorf("source %q", rows[1][0])
	}
}

func TestWriteHlog(t *testing.T) {
	r := goldenRun(t)
	var b bytes.Buffer
	if err := results.WriteHlog(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.hlog", b.Bytes())

	// hdrhistogram-go's own log reader reads it back: tags, times and histograms. Per point:
	// untagged and tagged with its key (per interval if it has interval histograms), then
	// one line per class with round trips.
	type line struct {
		tag   string
		start float64
		hist  string
	}
	var want []line
	for i, p := range r.Points {
		s := p.Start.Sub(r.Start).Seconds()
		for _, tag := range []string{"", p.Params.Key()} {
			if i > 0 {
				want = append(want, line{tag, s, p.Histogram})
				continue
			}
			for _, iv := range p.Intervals {
				want = append(want, line{tag, s + float64(iv.OffsetNs)/1e9, iv.Histogram})
			}
		}
		for _, c := range p.Classes {
			if c.RTT.Count > 0 {
				want = append(want, line{p.Params.Key() + "/rtt_class=" + c.Class, s, c.Histogram})
			}
		}
	}
	if len(r.Points[0].Intervals) != 2 || r.Points[1].Intervals != nil && r.Points[1].Intervals[0].Histogram != "" {
		t.Fatal("the golden run should have interval histograms in its first point only")
	}
	lr := hdr.NewHistogramLogReader(&b)
	for i, w := range want {
		h, err := lr.NextIntervalHistogram()
		if err != nil || h == nil {
			t.Fatalf("interval %d: %v %v", i, h, err)
		}
		wh, _ := results.DecodeHistogram(w.hist)
		if !h.Equals(wh) || h.Tag() != w.tag {
			t.Errorf("interval %d: tag %q, want %q; histograms equal: %v", i, h.Tag(), w.tag, h.Equals(wh))
		}
		startMs := float64(r.Start.UnixMilli()) + w.start*1000
		if d := float64(h.StartTimeMs()) - startMs; d < -2 || d > 2 {
			t.Errorf("interval %d starts at %d ms, want %.0f", i, h.StartTimeMs(), startMs)
		}
	}
	if h, err := lr.NextIntervalHistogram(); h != nil || err != nil {
		t.Errorf("extra interval: %v %v", h, err)
	}
}

// benchLine is the Go benchmark format: name, iterations, then value-unit pairs.
var benchLine = regexp.MustCompile(`^Benchmark[^\s]+-\d+\t\d+(\t\d+(\.\d+)? [^\s]+)+$`)

func TestWriteBench(t *testing.T) {
	r := goldenRun(t)
	var b bytes.Buffer
	if err := results.WriteBench(&b, r, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.bench", b.Bytes())
	var n int
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		switch {
		case strings.HasPrefix(l, "Benchmark"):
			n++
			if !benchLine.MatchString(l) {
				t.Errorf("not a benchmark line: %q", l)
			}
		case regexp.MustCompile(`^[a-z][^\s:]*: `).MatchString(l):
		default:
			t.Errorf("neither a config nor a benchmark line: %q", l)
		}
	}
	if n != 2*len(r.Points) {
		t.Errorf("%d benchmark lines, want %d", n, 2*len(r.Points))
	}
	if first := strings.Split(b.String(), "\n")[6]; strings.Contains(first, "p99.9-ns") || !strings.Contains(first, "p99-ns") {
		t.Errorf("1000-sample point: %q, want p99 and no p99.9", first)
	}
}

// TestBenchstat runs the real benchstat on two generated files when it is installed
// (go install golang.org/x/perf/cmd/benchstat@latest).
func TestBenchstat(t *testing.T) {
	bs, err := exec.LookPath("benchstat")
	if err != nil {
		if home, _ := os.UserHomeDir(); home != "" {
			bs = filepath.Join(home, "go", "bin", "benchstat")
		}
		if _, err := os.Stat(bs); err != nil {
			t.Skip("benchstat not installed: go install golang.org/x/perf/cmd/benchstat@latest")
		}
	}
	dir := t.TempDir()
	var base, slow bytes.Buffer
	var baseRuns, slowRuns []*results.Run
	for i := range uint64(5) {
		baseRuns = append(baseRuns, makeRun(t, 10+i, 1, 2000, 1))
		slowRuns = append(slowRuns, makeRun(t, 20+i, 1.3, 2000, 1))
	}
	results.WriteBench(&base, baseRuns...)
	results.WriteBench(&slow, slowRuns...)
	os.WriteFile(filepath.Join(dir, "base.txt"), base.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "slow.txt"), slow.Bytes(), 0o644)
	out, err := exec.Command(bs, filepath.Join(dir, "base.txt"), filepath.Join(dir, "slow.txt")).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	s := string(out)
	t.Logf("benchstat output:\n%s", s)
	for _, want := range []string{"p99-sec", "p50-sec", "B/s", "rpc/s", "proc=ECHO", "p=0.008 n=5"} {
		if !strings.Contains(s, want) {
			t.Errorf("benchstat output lacks %q", want)
		}
	}
	if strings.Contains(s, "parsing") || strings.Contains(s, "syntax") {
		t.Errorf("benchstat complained")
	}
}

// A point whose peer capped the offered threshold is filed under the threshold in effect:
// the table says so under it, a file with an offer not above it is refused.
func TestCappedThresholdNote(t *testing.T) {
	r := makeRun(t, 1, 1, 1000, 2)
	r.Points[1].Params.OfferedInlineThreshold = r.Points[1].Params.InlineThreshold * 4
	var b bytes.Buffer
	if err := results.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	th := r.Points[1].Params.InlineThreshold
	want := "note: the peer capped the inline threshold: " + strconv.Itoa(4*th) + " offered, " + strconv.Itoa(th) + " in effect"
	if !strings.Contains(b.String(), want) || strings.Count(b.String(), "capped") != 1 {
		t.Fatalf("want one %q:\n%s", want, b.String())
	}
	if _, err := results.Read(bytes.NewReader(mustMarshal(t, r))); err != nil {
		t.Fatalf("a capped point is valid: %v", err)
	}
	r.Points[1].Params.OfferedInlineThreshold = th
	if _, err := results.Marshal(r); err == nil || !strings.Contains(err.Error(), "points[1].params.offered_inline_threshold_bytes") {
		t.Fatalf("an offer not above the threshold in effect: %v", err)
	}
}

func mustMarshal(t *testing.T, r *results.Run) []byte {
	t.Helper()
	b, err := results.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The points of a repeated measurement carry their round into the table and the CSV.
func TestRoundColumn(t *testing.T) {
	r := makeRun(t, 1, 1, 1000, 2)
	for i := range r.Points {
		r.Points[i].Round = i%2 + 1
	}
	var b bytes.Buffer
	if err := results.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	var head, first string
	for i, l := range lines {
		if strings.Contains(l, "proc") && strings.Contains(l, "count") {
			head, first = l, lines[i+1]
			break
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(head), "errors  round") || !strings.HasSuffix(strings.TrimSpace(first), " 1") {
		t.Fatalf("table without the round column:\n%s", b.String())
	}
	rows, col := csvOf(t, r)
	if k, ok := col["round"]; !ok || rows[len(rows)-1][k] != strconv.Itoa(r.Points[len(r.Points)-1].Round) {
		t.Fatalf("csv round column: %q / %q", rows[0], rows[len(rows)-1])
	}
}
