package workloads

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

func TestZeroConfigDefaults(t *testing.T) {
	c, err := Config{Prog: benchprog.Prog}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Mix, nfsLike(t)) || c.Depth != DefaultDepth || c.Connections != 1 || c.Pollers != 1 ||
		time.Duration(c.Duration) != DefaultDuration || time.Duration(c.Warmup) != DefaultWarmup ||
		c.Rate != 0 || c.Seed != 1 || c.TableSize != DefaultTableSize || c.Size.Values[0] != DefaultSize {
		t.Fatalf("zero config normalized to %+v", c)
	}
	// Count alone: no default duration, so the count decides.
	if c, _ := (Config{Prog: benchprog.Prog, Count: 10}).Normalized(); c.Duration != 0 {
		t.Fatalf("count-only config got duration %v", c.Duration)
	}
	if c, _ := (Config{Prog: benchprog.Prog, Rate: 10}).Normalized(); c.Arrival != "constant" {
		t.Fatalf("open loop arrival %q", c.Arrival)
	}
	if c, _ := (Config{Prog: benchprog.Prog, TableSize: 1000}).Normalized(); c.TableSize != 1024 {
		t.Fatalf("table size %d, want 1024", c.TableSize)
	}
}

func TestNormalizedIsIdempotent(t *testing.T) {
	for _, c := range []Config{
		{}, {Warmup: -1}, {Count: 5}, {Rate: 10, Arrival: "poisson"}, {TableSize: 3}, {Mix: nfsLike(t), Warmup: NoWarmup},
		{Mix: []MixEntry{{Proc: "sink"}}, Size: Sizes{Dist: "uniform", Min: 1, Max: 9}},
	} {
		c.Prog = benchprog.Prog
		once, err := c.Normalized()
		if err != nil {
			t.Fatal(err)
		}
		twice, err := once.Normalized()
		if err != nil || !reflect.DeepEqual(once, twice) {
			t.Errorf("%+v: normalized %+v, again %+v (%v)", c, once, twice, err)
		}
		b, _ := json.Marshal(once)
		back := Config{Prog: benchprog.Prog}
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, once) {
			t.Errorf("%s does not round-trip: %+v, %v", b, back, err)
		}
	}
}

func TestConfigRejectsBadFields(t *testing.T) {
	for name, tc := range map[string]struct {
		c    Config
		want string
	}{
		"depth":       {Config{Prog: benchprog.Prog, Depth: -1}, "depth"},
		"big depth":   {Config{Prog: benchprog.Prog, Depth: MaxDepth + 1}, "depth"},
		"pollers":     {Config{Prog: benchprog.Prog, Pollers: 3, Connections: 2}, "pollers"},
		"cpu":         {Config{Prog: benchprog.Prog, CPUs: []int{-1}}, "cpu"},
		"rate":        {Config{Prog: benchprog.Prog, Rate: math.NaN()}, "rate"},
		"arrival":     {Config{Prog: benchprog.Prog, Rate: 1, Arrival: "bursty"}, "arrival"},
		"weight":      {Config{Prog: benchprog.Prog, Mix: []MixEntry{{Proc: "echo", Weight: -2}}}, "weight"},
		"proc":        {Config{Prog: benchprog.Prog, Mix: []MixEntry{{Proc: "read"}}}, "procedure"},
		"class":       {Config{Prog: benchprog.Prog, Class: 7}, "class"},
		"program":     {Config{Program: 100003}, "no default mix"},
		"no program":  {Config{Mix: Only("null", Sizes{})}, "no program"},
		"version":     {Config{Version: 3}, "without a program"},
		"chunked":     {Config{Prog: benchprog.Prog, Class: rpcproto.Chunked, Mix: Only("echo", Fixed(8))}, "DDP"},
		"size":        {Config{Prog: benchprog.Prog, Size: Sizes{Values: []int{-5}}}, "size"},
		"dist":        {Config{Prog: benchprog.Prog, Size: Sizes{Dist: "zipf"}}, "distribution"},
		"uniform":     {Config{Prog: benchprog.Prog, Size: Sizes{Dist: "uniform", Min: 5, Max: 1}}, "uniform"},
		"count":       {Config{Prog: benchprog.Prog, Count: -1}, "count"},
		"duration":    {Config{Prog: benchprog.Prog, Duration: -1}, "duration"},
		"entry size":  {Config{Prog: benchprog.Prog, Mix: []MixEntry{{Proc: "sink", Size: Sizes{Dist: "lognormal"}}}}, "median"},
		"table":       {Config{Prog: benchprog.Prog, TableSize: 1 << 30}, "table"},
		"connections": {Config{Prog: benchprog.Prog, Connections: -1}, "connections"},
		"many conns":  {Config{Prog: benchprog.Prog, Connections: MaxConnections + 1, Pollers: 1}, "connections"},
		"outstanding": {Config{Prog: benchprog.Prog, Depth: MaxDepth, Connections: 100}, "outstanding"},
		"long":        {Config{Prog: benchprog.Prog, Duration: MaxDuration + 1}, "duration"},
		"long warmup": {Config{Prog: benchprog.Prog, Warmup: MaxDuration + 1}, "warm-up"},
		"slow rate":   {Config{Prog: benchprog.Prog, Rate: 1e-300}, "rate"},
		"fast rate":   {Config{Prog: benchprog.Prog, Rate: math.Inf(1)}, "rate"},
	} {
		if _, err := tc.c.Normalized(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one mentioning %q", name, err, tc.want)
		}
	}
}

func TestConfigJSONRoundTrip(t *testing.T) {
	c, err := Config{Prog: benchprog.Prog, Mix: nfsLike(t), Rate: 1e5, Arrival: "poisson", CPUs: []int{1, 3}, Class: rpcproto.Long,
		Size: Sizes{Dist: "lognormal", Median: 8192, Sigma: 1.5}, Duration: Duration(3 * time.Second), Verify: true}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"proc":"source"`, `"class":"long"`, `"duration":"3s"`, `"warmup":"1s"`, `"dist":"lognormal"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.Prog = benchprog.Prog // the program is the caller's: the JSON records no table
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, c)
	}
	// A procedure's name is checked against the program's table when the config is
	// normalized, since the table is not in the JSON.
	if err := json.Unmarshal([]byte(`{"mix":[{"proc":"read"}]}`), &back); err != nil {
		t.Fatal(err)
	}
	if _, err := back.Normalized(); err == nil || !strings.Contains(err.Error(), `"read"`) {
		t.Fatalf("unknown proc in JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"duration":"soon"}`), &back); err == nil {
		t.Fatal("bad duration accepted")
	}
}

func TestTableHasExactMixShares(t *testing.T) {
	c, err := Config{Prog: benchprog.Prog, TableSize: 1000}.Normalized() // NFS mix, weights sum to 100
	if err != nil {
		t.Fatal(err)
	}
	tab := Table(c, 0)
	if len(tab) != c.TableSize {
		t.Fatalf("table of %d, want %d", len(tab), c.TableSize)
	}
	type key struct {
		p          string
		call, repl uint32
	}
	got := map[key]int{}
	for _, r := range tab {
		got[key{c.Table().Procs[r.Proc].Name, r.CallSize, r.ReplySize}]++
	}
	// 1024 slots over weights summing to 100: each entry gets floor or ceil of its share.
	for _, e := range c.Mix {
		z := uint32(0)
		if e.Proc != "null" {
			z = uint32(e.Size.Values[0])
		}
		k := key{e.Proc, 0, 0}
		switch e.Proc {
		case "echo":
			k.call, k.repl = z, z
		case "sink":
			k.call = z
		case "source":
			k.repl = z
		}
		share := float64(c.TableSize) * float64(e.Weight) / 100
		if n := got[k]; math.Abs(float64(n)-share) >= 1 {
			t.Errorf("%v/%v: %d entries, want %.1f", e.Proc, z, n, share)
		}
	}
	if !reflect.DeepEqual(Table(c, 0), tab) {
		t.Fatal("same seed and poller gave a different table")
	}
	if reflect.DeepEqual(Table(c, 1), tab) {
		t.Fatal("pollers share one sequence")
	}
}

func TestTableSizeDistributions(t *testing.T) {
	for _, z := range []Sizes{
		{Dist: "uniform", Min: 100, Max: 200},
		{Dist: "lognormal", Median: 8192, Sigma: 1, Min: 512, Max: 1 << 20},
		{Values: []int{64, 4096}},
	} {
		c, err := Config{Prog: benchprog.Prog, Mix: Only("sink", z), TableSize: 1 << 14}.Normalized()
		if err != nil {
			t.Fatal(err)
		}
		var below, above int
		lo, hi := z.Min, z.Max
		if z.Dist == "" {
			lo, hi = 64, 4096
		}
		med := (lo + hi) / 2
		if z.Dist == "lognormal" {
			med = z.Median
		}
		for _, r := range Table(c, 0) {
			n := int(r.CallSize)
			if n < lo || n > hi {
				t.Fatalf("%+v drew %d", z, n)
			}
			if z.Dist == "" && n != 64 && n != 4096 {
				t.Fatalf("list drew %d", n)
			}
			if n < med {
				below++
			} else if n > med {
				above++
			}
		}
		// Symmetric around the median (list: half each): within 5% of the table.
		if d := below - above; d > 1<<14/20 || d < -(1<<14/20) {
			t.Errorf("%+v: %d below and %d above %d", z, below, above, med)
		}
	}
}

func TestPollerShare(t *testing.T) {
	c, _ := Config{Prog: benchprog.Prog, Connections: 5, Pollers: 2}.Normalized()
	if c.PollerShare(0) != 3 || c.PollerShare(1) != 2 {
		t.Fatalf("shares %d, %d", c.PollerShare(0), c.PollerShare(1))
	}
}

func TestLiveQuantile(t *testing.T) {
	var l Live
	for i := 1; i <= 1000; i++ {
		l.record(int64(i) * 1000) // 1 µs .. 1 ms
	}
	var h LiveHist
	l.AddTo(&h)
	p50, ok := h.Quantile(0.5)
	if !ok || p50 < 440*time.Microsecond || p50 > 560*time.Microsecond {
		t.Fatalf("p50 %v, want ~500 µs", p50)
	}
	var empty LiveHist
	if _, ok := empty.Quantile(0.5); ok {
		t.Fatal("quantile of nothing")
	}
	for _, v := range []int64{0, 1, 15, 16, 17, 1000, 1 << 40, math.MaxInt64} {
		b := liveBucket(v)
		if b < 0 || b >= liveBuckets {
			t.Fatalf("value %d in bucket %d", v, b)
		}
		if m := liveValue(b); v >= 16 && (float64(m) < float64(v)*0.87 || float64(m) > float64(v)*1.13) {
			t.Errorf("value %d shown as %d", v, m)
		}
	}
}

func TestMaxPayload(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want int
	}{
		{Config{Prog: benchprog.Prog}, 256 << 10}, // the NFS mix
		{Config{Prog: benchprog.Prog, Mix: Only("null", Sizes{})}, 0},
		{Config{Prog: benchprog.Prog, Mix: Only("echo", Sizes{Values: []int{64, 9000, 128}})}, 9000},
		{Config{Prog: benchprog.Prog, Mix: Only("sink", Sizes{Dist: "uniform", Min: 1, Max: 5000})}, 5000},
		{Config{Prog: benchprog.Prog, Mix: Only("source", Sizes{Dist: "lognormal", Median: 8192, Sigma: 1})}, DefaultLognormalMax},
		{Config{Prog: benchprog.Prog, Mix: Only("source", Sizes{Dist: "lognormal", Median: 4 << 20, Sigma: 1})}, 4 << 20},
	} {
		c, err := tc.c.Normalized()
		if err != nil {
			t.Fatal(err)
		}
		if got := c.MaxPayload(); got != tc.want {
			t.Errorf("%+v: MaxPayload %d, want %d", tc.c.Mix, got, tc.want)
		}
	}
}

// nfsLike is the benchmark program's NFS-shaped preset (benchprog.NFSLike) spelled out: the
// default mix.
func nfsLike(t testing.TB) []MixEntry {
	t.Helper()
	return []MixEntry{
		{Proc: "null", Weight: 5},
		{Proc: "echo", Weight: 40, Size: Fixed(128)},
		{Proc: "echo", Weight: 5, Size: Fixed(8 << 10)},
		{Proc: "source", Weight: 15, Size: Fixed(4 << 10)},
		{Proc: "source", Weight: 10, Size: Fixed(32 << 10)},
		{Proc: "source", Weight: 5, Size: Fixed(256 << 10)},
		{Proc: "sink", Weight: 10, Size: Fixed(4 << 10)},
		{Proc: "sink", Weight: 7, Size: Fixed(32 << 10)},
		{Proc: "sink", Weight: 3, Size: Fixed(256 << 10)},
	}
}
