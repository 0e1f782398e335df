package workloads

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// defaultMix is prog's DefaultMix preset, the mix of a Config that names none.
func defaultMix(prog *rpcproto.Program) ([]MixEntry, error) {
	p, ok := prog.Presets[prog.DefaultMix]
	if prog.DefaultMix == "" || !ok {
		return nil, fmt.Errorf("workloads: no mix, and program %s has no default mix", prog.Name)
	}
	mix, err := parseEntries(p, prog)
	if err != nil {
		return nil, fmt.Errorf("workloads: program %s's default mix %s: %v", prog.Name, prog.DefaultMix, err)
	}
	return mix, nil
}

// Only is the mix of a single procedure with payload size sizes: the plain workloads
// ("echo of 4 KiB").
func Only(p string, sizes Sizes) []MixEntry {
	return []MixEntry{{Proc: p, Weight: 1, Size: sizes}}
}

// MixName names a normalized mix of prog for results, where the name identifies the point:
// prog's DefaultMix ("nfs-like") for that preset, else its entries as PROC[_SIZE][:WEIGHT]
// joined by "+", for example "echo_128:40+sink_32k:10". The name holds no '/', ',', '=' or
// space, which separate the fields of a point's key (benchstat) and of an HdrHistogram log
// line.
func MixName(mix []MixEntry, prog *rpcproto.Program) string {
	if d, err := defaultMix(prog); err == nil && sameMix(mix, d) {
		return prog.DefaultMix
	}
	parts := make([]string, len(mix))
	for i, e := range mix {
		s := e.Proc
		if !e.Size.IsZero() {
			s += "_" + sizesName(e.Size)
		}
		if e.Weight > 1 {
			s += ":" + strconv.Itoa(e.Weight)
		}
		parts[i] = s
	}
	return strings.Join(parts, "+")
}

// SizesLabel names s for a reader, in the syntax --sizes takes: "64,4k", "uniform:1k-64k",
// "lognormal:8k:1:0-1m".
func SizesLabel(s Sizes) string {
	if s.Dist == "" || s.Dist == "list" {
		return strings.ReplaceAll(sizesName(s), "~", ",")
	}
	return sizesName(s)
}

// sizesName is a compact name of s without ',' or '/'.
func sizesName(s Sizes) string {
	switch s.Dist {
	case "", "list":
		v := make([]string, len(s.Values))
		for i, n := range s.Values {
			v[i] = FormatSize(n)
		}
		return strings.Join(v, "~")
	case "uniform":
		return "uniform:" + FormatSize(s.Min) + "-" + FormatSize(s.Max)
	}
	return fmt.Sprintf("lognormal:%s:%g:%s-%s", FormatSize(s.Median), s.Sigma, FormatSize(s.Min), FormatSize(s.Max))
}

// sameMix reports whether a and b draw the same procedures, sizes and weights, a missing
// weight counting as 1.
func sameMix(a, b []MixEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Proc != y.Proc || max(x.Weight, 1) != max(y.Weight, 1) || sizesName(x.Size) != sizesName(y.Size) {
			return false
		}
	}
	return true
}
