package workloads

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"0", 0}, {"64", 64}, {"4k", 4096}, {"4K", 4096}, {"4kb", 4096}, {"4KiB", 4096},
		{"1m", 1 << 20}, {"1MiB", 1 << 20}, {"1g", 1 << 30}, {"100b", 100}, {" 8k ", 8192},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "k", "b", "-1", "4x", "1.5k", "2g", "99999999999", "0x10", "k4", "1ib", "4 k"} {
		_, err := ParseSize(in)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Token != in {
			t.Errorf("ParseSize(%q) = %v; want a ParseError naming %q", in, err, in)
		}
	}
}

func TestParseSizesNamesBadToken(t *testing.T) {
	got, err := ParseSizes("64,4k,64k,1m")
	if err != nil || !reflect.DeepEqual(got, []int{64, 4096, 65536, 1 << 20}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for in, tok := range map[string]string{"64,4q,1m": "4q", "64,,1m": "", "64,": "", "": ""} {
		_, err := ParseSizes(in)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Token != tok || !strings.Contains(err.Error(), `"`+tok+`"`) {
			t.Errorf("ParseSizes(%q) = %v; want the error to name %q", in, err, tok)
		}
	}
}

func TestParseThresholds(t *testing.T) {
	got, err := ParseThresholds("1k,4k,64k")
	if err != nil || !reflect.DeepEqual(got, []int{1024, 4096, 65536}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{"4k,512": `"512"`, "1500": "multiple of 1024", "512k": "262144", "4k,x": `"x"`} {
		if _, err := ParseThresholds(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseThresholds(%q) = %v; want an error mentioning %s", in, err, want)
		}
	}
}

func TestParseMix(t *testing.T) {
	got, err := ParseMix("null:1,echo:4,source/32k:2,sink/4k", benchprog.Prog)
	want := []MixEntry{
		{Proc: "null", Weight: 1},
		{Proc: "echo", Weight: 4},
		{Proc: "source", Weight: 2, Size: Fixed(32 << 10)},
		{Proc: "sink", Weight: 1, Size: Fixed(4 << 10)},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := ParseMix("echo", nil); !errors.Is(err, ErrNoProgram) {
		t.Errorf(`ParseMix("echo", nil) = %v: want ErrNoProgram`, err)
	}
	if got, err := ParseMix("NFS-like", benchprog.Prog); err != nil || !reflect.DeepEqual(got, nfsLike(t)) {
		t.Fatalf("nfs preset: %v", err)
	}
	for in, tok := range map[string]string{
		"null:1,ehco:4": "ehco:4", "echo:0": "echo:0", "echo:-1": "echo:-1", "echo:x": "echo:x",
		"sink/4q": "sink/4q", "null/4k": "null/4k", "echo,,null": "", "": "", "source/:2": "source/:2",
	} {
		_, err := ParseMix(in, benchprog.Prog)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Token != tok {
			t.Errorf("ParseMix(%q, benchprog.Prog) = %v; want the error to name %q", in, err, tok)
		}
	}
}

func TestParseCPUs(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0,2-3": {0, 2, 3}, "3,1": {3, 1}, "4-4": {4}} {
		got, err := ParseCPUs(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCPUs(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, tok := range map[string]string{
		"": "", "a": "a", "0,3-1": "3-1", "1,1": "1", "0-2,2": "2", "-1": "-1", "0,": "", "5000": "5000", "1-": "1-",
	} {
		_, err := ParseCPUs(in)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Token != tok {
			t.Errorf("ParseCPUs(%q) = %v; want the error to name %q", in, err, tok)
		}
	}
}

func TestParseSizeSpec(t *testing.T) {
	for in, want := range map[string]Sizes{
		"4k":                      {Values: []int{4096}},
		"64,1k":                   {Values: []int{64, 1024}},
		"uniform:1k-64k":          {Dist: "uniform", Min: 1024, Max: 65536},
		"lognormal:8k":            {Dist: "lognormal", Median: 8192, Sigma: 1},
		"lognormal:8k:1.5:512-1m": {Dist: "lognormal", Median: 8192, Sigma: 1.5, Min: 512, Max: 1 << 20},
	} {
		got, err := ParseSizeSpec(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseSizeSpec(%q) = %+v, %v", in, got, err)
		}
	}
	for in, tok := range map[string]string{
		"uniform:64k-1k": "64k-1k", "uniform:1k": "1k", "lognormal:0": "0", "lognormal:8k:-1": "-1",
		"lognormal:8k:NaN": "NaN", "zipf:3": "zipf", "lognormal:1k:1:2k-1k": "2k-1k", "lognormal:1:1:1-2:3": "1:1:1-2:3",
	} {
		_, err := ParseSizeSpec(in)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Token != tok {
			t.Errorf("ParseSizeSpec(%q) = %v; want the error to name %q", in, err, tok)
		}
	}
}

func TestParseProgram(t *testing.T) {
	for in, want := range map[string][2]uint32{"nfs": {100003, 3}, "NFS4": {100003, 4}, "100005:3": {100005, 3}, "0x186a3": {100003, 1}} {
		p, v, err := ParseProgram(in)
		if err != nil || [2]uint32{p, v} != want {
			t.Errorf("ParseProgram(%q) = %d, %d, %v", in, p, v, err)
		}
	}
	for in, tok := range map[string]string{"": "", "0": "0", "x": "x", "100003:v3": "v3", "99999999999": "99999999999"} {
		_, _, err := ParseProgram(in)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Token != tok {
			t.Errorf("ParseProgram(%q) = %v; want the error to name %q", in, err, tok)
		}
	}
}

func TestParseClassAndProc(t *testing.T) {
	for in, want := range map[string]rpcproto.Kind{"auto": rpcproto.Auto, "short": rpcproto.Short, "INLINE": rpcproto.Short, "chunked": rpcproto.Chunked, "long": rpcproto.Long} {
		if got, err := ParseClass(in); err != nil || got != want {
			t.Errorf("ParseClass(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseClass("medium"); err == nil || !strings.Contains(err.Error(), `"medium"`) {
		t.Errorf("ParseClass(medium) = %v", err)
	}
}

func TestFormatSizeRoundTrips(t *testing.T) {
	for _, n := range []int{0, 1, 64, 1000, 1024, 1536, 4096, 1 << 20, 3 << 20, 1 << 30} {
		got, err := ParseSize(FormatSize(n))
		if err != nil || got != n {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, FormatSize(n), got, err)
		}
	}
}

// FuzzParse feeds arbitrary strings to every parser: each returns a value or an error, never
// panics, and every size it accepts formats back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"64,4k,64k,1m", "null:1,echo:4,source/32k:2", "0,2-3", "lognormal:8k:1.5:512-1m", "uniform:1k-64k", "nfs", "kib", ",,", "1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseSizes(s); err == nil {
			for _, n := range v {
				if n < 0 || n > MaxSize {
					t.Fatalf("ParseSizes(%q) accepted %d", s, n)
				}
				if m, err := ParseSize(FormatSize(n)); err != nil || m != n {
					t.Fatalf("size %d does not round-trip", n)
				}
			}
		}
		if mix, err := ParseMix(s, benchprog.Prog); err == nil {
			if _, err := (Config{Prog: benchprog.Prog, Mix: mix}).Normalized(); err != nil {
				t.Fatalf("ParseMix(%q, benchprog.Prog) accepted a mix Normalized rejects: %v", s, err)
			}
		}
		if cpus, err := ParseCPUs(s); err == nil {
			if _, err := (Config{Prog: benchprog.Prog, CPUs: cpus}).Normalized(); err != nil {
				t.Fatalf("ParseCPUs(%q) accepted CPUs Normalized rejects: %v", s, err)
			}
		}
		if z, err := ParseSizeSpec(s); err == nil {
			if err := z.validate(); err != nil {
				t.Fatalf("ParseSizeSpec(%q) accepted %+v that validate rejects: %v", s, z, err)
			}
		}
		_, _ = ParseThresholds(s)
		_, _ = ParseDepths(s)
		_, _ = ParseClass(s)
	})
}
