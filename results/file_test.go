package results_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

func marshalT(t testing.TB, r *results.Run) []byte {
	t.Helper()
	b, err := results.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	run := makeRun(t, 1, 1, 20000, 2)
	b := marshalT(t, run)
	got, err := results.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if b2 := marshalT(t, got); !bytes.Equal(b, b2) {
		t.Errorf("marshal(read(marshal(run))) differs:\n%s\n---\n%s", b, b2)
	}
	if len(got.Points) != len(run.Points) || !got.Points[1].Start.Equal(run.Points[1].Start) ||
		*got.Points[2].RTT.P99 != *run.Points[2].RTT.P99 || got.Points[0].RTT.P9999 != nil ||
		got.Environment.Device.Ports[0].ActiveMTU != 4096 {
		t.Errorf("read back a different run")
	}
	// The stored histogram re-analyses to the stored percentiles.
	h, err := results.DecodeHistogram(got.Points[1].Histogram)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := results.Percentile(h, 99); v != *got.Points[1].RTT.P99 {
		t.Errorf("histogram p99 %d, summary p99 %d", v, *got.Points[1].RTT.P99)
	}
}

// TestJSONShape pins the field names and the null-not-number rule for unsupported percentiles.
func TestJSONShape(t *testing.T) {
	b := marshalT(t, makeRun(t, 1, 1, 1000, 1))
	for _, want := range []string{
		`"schema_version": 9`, `"p99_ns": `, `"p999_ns": null`, `"p9999_ns": null`,
		`"rtt_histogram": "HISTF`, `"send_with_inv": {`, `"rpc_per_s": `, `"payload_gbps": `,
		`"user_ns": `, `"first_messages": [`, `"firmware_version": "1.0"`, `"state": "complete"`,
		`"inline_send_bytes": 4096`, `"remote_invalidation": true`, `"config": {`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

func TestReadRejects(t *testing.T) {
	good := string(marshalT(t, makeRun(t, 1, 1, 1000, 1)))
	p99 := `"p99_ns": `
	i := strings.Index(good, p99)
	withP999 := good[:i] + strings.Replace(good[i:], `"p999_ns": null`, `"p999_ns": 99999999`, 1)
	for _, c := range []struct {
		name, in, want string
		is             error
	}{
		{"unknown top-level", strings.Replace(good, `"tool":`, `"color": 1, "tool":`, 1), `color: unknown field`, results.ErrUnknownField},
		{"unknown nested", strings.Replace(good, `"p50_ns":`, `"p95_ns": 5, "p50_ns":`, 1), `points[0].rtt.p95_ns: unknown field`, results.ErrUnknownField},
		{"newer version", strings.Replace(good, `"schema_version": 9`, `"schema_version": 10`, 1), `schema_version 10, this build reads up to 9: upgrade`, results.ErrVersion},
		{"version 0", strings.Replace(good, `"schema_version": 9`, `"schema_version": 0`, 1), `schema_version 0`, results.ErrVersion},
		{"version string", strings.Replace(good, `"schema_version": 9`, `"schema_version": "2"`, 1), `schema_version: "2" is not an integer`, nil},
		{"no version", strings.Replace(good, `"schema_version": 9,`, ``, 1), `schema_version: missing`, nil},
		{"peer_ops in version 1", strings.Replace(strings.Replace(good, `"schema_version": 9`, `"schema_version": 1`, 1), `"ops": {`, `"peer_ops": {}, "ops": {`, 1), `points[0].peer_ops: not in schema_version 1`, nil},
		{"round in version 4", strings.Replace(strings.Replace(good, `"schema_version": 9`, `"schema_version": 4`, 1), `"ops": {`, `"round": 2, "ops": {`, 1), `points[0].round: not in schema_version 4 (added in 5)`, nil},
		{"host_other_cpu in version 4", strings.Replace(strings.Replace(good, `"schema_version": 9`, `"schema_version": 4`, 1), `"ops": {`, `"host_other_cpu": 3, "ops": {`, 1), `points[0].host_other_cpu: not in schema_version 4`, nil},
		{"negative process", strings.Replace(good, `"ops": {`, `"process": -1, "ops": {`, 1), `points[0].process: negative (-1)`, nil},
		{"process in version 7", strings.Replace(strings.Replace(good, `"schema_version": 9`, `"schema_version": 7`, 1), `"ops": {`, `"process": 2, "ops": {`, 1), `points[0].process: not in schema_version 7 (added in 8)`, nil},
		{"fanin in version 5", strings.Replace(strings.Replace(good, `"schema_version": 9`, `"schema_version": 5`, 1), `"ops": {`, `"fanin": {"ranks": [], "server_ranks": [], "skew_ns": 0, "overlap": 1, "jain_index": 1, "slowest_rank": 1, "p50_spread_ns": null, "p99_spread_ns": null}, "ops": {`, 1), `points[0].fanin: not in schema_version 5 (added in 6)`, nil},
		{"fanin overlap beyond 1", strings.Replace(good, `"ops": {`, `"fanin": {"ranks": [], "server_ranks": [], "skew_ns": 0, "overlap": 1.5, "jain_index": 1, "slowest_rank": 1, "p50_spread_ns": null, "p99_spread_ns": null}, "ops": {`, 1), `points[0].fanin.overlap: 1.5 is not between 0 and 1`, nil},
		{"host in version 8", strings.Replace(strings.Replace(good, `"schema_version": 9`, `"schema_version": 8`, 1), `"ops": {`, `"host": {"compute_ns": 2.8, "copy_ns_per_kib": 27, "cpus": 2}, "ops": {`, 1), `points[0].host: not in schema_version 8 (added in 9)`, nil},
		{"host without time", strings.Replace(good, `"ops": {`, `"host": {"compute_ns": 0, "copy_ns_per_kib": 27, "cpus": 2}, "ops": {`, 1), `points[0].host: want positive times and CPUs`, nil},
		{"host_other_cpu beyond 100", strings.Replace(good, `"ops": {`, `"host_other_cpu": 101, "ops": {`, 1), `points[0].host_other_cpu: 101 is not a percentage`, nil},
		{"empty", "", "empty file", nil},
		{"not json", "hello", "invalid JSON", nil},
		{"truncated", good[:len(good)/2], "truncated", nil},
		{"truncated end", good[:len(good)-3], "truncated", nil},
		{"trailing data", good + "{}", "data after the end", nil},
		{"unsupported percentile", withP999, `points[0].rtt.p999_ns: present but count 1000 cannot support it`, nil},
		{"bad state", strings.Replace(good, `"state": "complete"`, `"state": "done"`, 1), `status.state: "done"`, nil},
		{"failed without message", strings.Replace(good, `"state": "complete"`, `"state": "failed"`, 1), `status.message`, nil},
		{"wrong type", strings.Replace(good, `"depth": 1`, `"depth": "one"`, 1), `points.params.depth (offset `, nil},
		{"bad histogram", strings.Replace(good, `"rtt_histogram": "HISTF`, `"rtt_histogram": "XISTF`, 1), `points[0].rtt_histogram`, nil},
		{"negative duration", strings.Replace(good, `"duration_ns": `, `"duration_ns": -`, 1), `points[0].duration_ns: negative`, nil},
		{"bad class", strings.Replace(good, `"class": "short"`, `"class": "huge"`, 1), `points[0].classes[0].class`, nil},
		{"config not object", strings.Replace(good, `"config": {`, `"config": [{`, 1), `invalid JSON`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.in == good {
				t.Fatal("test case did not change the input")
			}
			_, err := results.Read(strings.NewReader(c.in))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", err, c.is)
			}
			var fe *results.FileError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FileError", err)
			}
		})
	}
}

// Every proper prefix of a valid file is rejected, never accepted or panicking.
func TestReadTruncatedPrefixes(t *testing.T) {
	good := marshalT(t, makeRun(t, 1, 1, 100, 1))
	for n := 0; n < len(good)-1; n += 1 + n/50 {
		if _, err := results.Read(bytes.NewReader(good[:n])); err == nil {
			t.Fatalf("prefix of %d bytes accepted", n)
		}
	}
}

func TestMarshalValidates(t *testing.T) {
	r := makeRun(t, 1, 1, 1000, 1)
	p9999 := int64(5)
	r.Points[0].RTT.P9999 = &p9999
	if _, err := results.Marshal(r); err == nil || !strings.Contains(err.Error(), "points[0].rtt.p9999_ns") {
		t.Errorf("Marshal of an unsupported percentile: %v", err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	first := makeRun(t, 1, 1, 100, 1)
	if err := results.WriteFile(path, first); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path)
	if _, err := results.ReadFile(path); err != nil {
		t.Fatal(err)
	}

	second := makeRun(t, 2, 2, 100, 1)
	fail := errors.New("disk on fire")
	for _, hook := range []string{"sync", "rename"} {
		t.Run(hook, func(t *testing.T) {
			var tmp string
			sync, ren := (*os.File).Sync, os.Rename
			switch hook {
			case "sync":
				sync = func(f *os.File) error {
					tmp = f.Name()
					// The temporary file holds the new run by now: the failure is mid-way.
					if fi, _ := f.Stat(); fi.Size() == 0 {
						t.Error("sync before the data was written")
					}
					return fail
				}
			case "rename":
				ren = func(from, to string) error { tmp = from; return fail }
			}
			defer results.SetFileHooks(sync, ren)()
			err := results.WriteFile(path, second)
			if !errors.Is(err, fail) || !strings.Contains(err.Error(), path) {
				t.Errorf("WriteFile error = %v, want the cause and the path", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
				t.Error("the previous file was changed by a failed write")
			}
			if _, err := os.Stat(tmp); tmp == "" || !os.IsNotExist(err) {
				t.Errorf("temporary file %q left behind", tmp)
			}
			if names := listDir(t, dir); len(names) != 1 || names[0] != "run.json" {
				t.Errorf("directory holds %v, want only run.json", names)
			}
		})
	}

	if err := results.WriteFile(path, second); err != nil {
		t.Fatal(err)
	}
	got, err := results.ReadFile(path)
	if err != nil || got.Points[0].RTT.Count != second.Points[0].RTT.Count || *got.Points[0].RTT.P50 == *first.Points[0].RTT.P50 {
		t.Errorf("rewrite did not replace the file: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}

	if err := results.WriteFile(filepath.Join(dir, "nodir", "x.json"), second); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	if _, err := results.ReadFile(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
}

func TestCaptureEnvironment(t *testing.T) {
	e := results.CaptureEnvironment()
	if e.GoVersion == "" || e.NumCPU < 1 || e.GOMAXPROCS < 1 || e.OS == "" {
		t.Errorf("environment = %+v", e)
	}
	c, err := results.ReadCPU()
	if err != nil {
		t.Skipf("no getrusage here: %v", err)
	}
	x := 0
	for i := range 20_000_000 {
		x += i * i
	}
	c2, _ := results.ReadCPU()
	if d := c2.Sub(c); d.UserNs+d.SysNs <= 0 || x == 1 {
		t.Errorf("CPU time did not advance: %+v -> %+v", c, c2)
	}
}

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\n", "AMD EPYC 7763 64-Core Processor"},
		{"processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n", "POWER9 (raw), altivec supported"},
		{"garbage", ""},
	} {
		p := filepath.Join(dir, "cpuinfo")
		os.WriteFile(p, []byte(c.text), 0o644)
		if got := results.CPUModel(p); got != c.want {
			t.Errorf("cpuModel(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	if got := results.CPUModel(filepath.Join(dir, "none")); got != "" {
		t.Errorf("missing file: %q", got)
	}
}

// TestFuzzCorpus keeps the seed corpora in testdata/fuzz/ in step with the schema: -update
// rewrites them.
func TestFuzzCorpus(t *testing.T) {
	good := marshalT(t, makeRun(t, 3, 1, 100, 1))
	minimal := []byte(`{"schema_version":1,"tool":"","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","config":null,"environment":{},"points":[],"status":{"state":"complete"}}`)
	h := results.NewHistogram()
	h.RecordValue(1234)
	hist, _ := results.EncodeHistogram(h)
	wide := hdr.New(1, 1<<62, 5)
	wide.RecordValue(1)
	wideHist, _ := results.EncodeHistogram(wide)
	corpora := map[string]map[string]string{
		"FuzzRead": {
			"valid":     string(good),
			"truncated": string(good[:len(good)/3]),
			"version5":  string(bytes.Replace(good, []byte(`"schema_version": 9`), []byte(`"schema_version": 5`), 1)),
			"minimal":   string(minimal),
			"empty":     "",
		},
		"FuzzDecodeHistogram": {
			"valid":     hist,
			"truncated": hist[:len(hist)/2],
			"wide":      wideHist,
			"empty":     "",
		},
		"FuzzParseThresholds": {
			"typical": "p99=+10%,throughput=-5%",
			"groups":  "all=5%,p99.9=20%",
			"bad":     "p99=-1%",
		},
	}
	for target, seeds := range corpora {
		dir := filepath.Join("testdata", "fuzz", target)
		for name, v := range seeds {
			var text string
			if target == "FuzzRead" {
				text = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", v)
			} else {
				text = fmt.Sprintf("go test fuzz v1\nstring(%q)\n", v)
			}
			path := filepath.Join(dir, name)
			if *update {
				os.MkdirAll(dir, 0o755)
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if string(got) != text {
				t.Errorf("%s is stale (run with -update)", path)
			}
		}
	}
	if _, err := results.Read(bytes.NewReader(minimal)); err != nil {
		t.Errorf("minimal file rejected: %v", err)
	}
	if _, err := results.DecodeHistogram(wideHist); err == nil || !strings.Contains(err.Error(), "geometry") {
		t.Errorf("a histogram of another geometry: %v", err)
	}
}

func FuzzDecodeHistogram(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		h, err := results.DecodeHistogram(s)
		if err != nil {
			return
		}
		if h.LowestTrackableValue() != results.HistogramLowest || h.HighestTrackableValue() != results.HistogramHighest || h.SignificantFigures() != results.HistogramDigits {
			t.Fatal("accepted another geometry")
		}
	})
}

func FuzzParseThresholds(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		th, err := results.ParseThresholds(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "threshold ") {
				t.Fatalf("error does not name the token: %v", err)
			}
			return
		}
		back, err := results.ParseThresholds(th.String())
		if err != nil || back.String() != th.String() {
			t.Fatalf("%q -> %q does not parse back: %v", s, th.String(), err)
		}
		for m, v := range th {
			if v < 0 || m >= results.NumMetrics {
				t.Fatalf("%q: %v=%v", s, m, v)
			}
		}
	})
}

func FuzzRead(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := results.Read(bytes.NewReader(b))
		if err != nil {
			if r != nil {
				t.Fatal("a run and an error")
			}
			return
		}
		// What was accepted must write back and read back the same.
		out, err := results.Marshal(r)
		if err != nil {
			t.Fatalf("accepted run does not marshal: %v", err)
		}
		r2, err := results.Read(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if out2, _ := results.Marshal(r2); !bytes.Equal(out, out2) {
			t.Fatal("not stable across a round trip")
		}
	})
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range uint64(3) {
		p := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		if err := results.WriteFile(p, makeRun(t, i, 1, 50, 1)); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	runs, err := results.ReadFiles(paths...)
	if err != nil || len(runs) != 3 {
		t.Fatalf("ReadFiles: %d runs, %v", len(runs), err)
	}
	os.WriteFile(paths[1], []byte(`{"schema_version": 1, "tool": `), 0o644)
	if _, err := results.ReadFiles(paths...); err == nil || !strings.Contains(err.Error(), paths[1]) || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("ReadFiles with a truncated file: %v", err)
	}
}

// A poller's turnaround probe: read back as written, printed under the text table, refused
// in a file of an older schema or with quantiles out of order.
func TestTurnaroundInFile(t *testing.T) {
	r := makeRun(t, 1, 1, 1000, 1)
	r.Points[0].Pollers = []results.PollerUsage{{Poller: 0, CPU: -1, Poll: "busy", WallNs: 1e9, CPUNs: 1e9,
		Turnaround: &results.Turnaround{Count: 10, MeanNs: 2000, P50Ns: 1900, P90Ns: 2500, P99Ns: 4000, PostMeanNs: 500}}}
	b := marshalT(t, r)
	back, err := results.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Points[0].Pollers[0].Turnaround; got == nil || *got != *r.Points[0].Pollers[0].Turnaround {
		t.Fatalf("read back %+v", got)
	}
	var out bytes.Buffer
	if err := results.WriteText(&out, back); err != nil {
		t.Fatal(err)
	}
	if want := "poller 0: p50 1.9  p90 2.5  p99 4.0  mean 2.00  posts 0.50  (10)"; !strings.Contains(out.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, out.String())
	}
	for _, c := range []struct{ name, in, want string }{
		{"version 3", strings.Replace(string(b), `"schema_version": 9`, `"schema_version": 3`, 1), "points[0].pollers[0].turnaround: not in schema_version 3"},
		{"out of order", strings.Replace(string(b), `"p90_ns": 2500`, `"p90_ns": 1000`, 1), "points[0].pollers[0].turnaround: negative or out-of-order"},
	} {
		if _, err := results.Read(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
