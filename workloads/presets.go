package workloads

import (
	"fmt"
	"strconv"
	"strings"
)

// NFSLikeMix is a mix shaped like an NFS client's traffic, so one run exercises all three
// message classes at the default inline threshold of 4 KiB (and at RFC 8166's 1 KiB):
//
//	weight  procedure    size   stands for                         class at 4 KiB
//	    5   NULL            -   NULL/ping, lease renewal           short
//	   40   ECHO        128 B   GETATTR, LOOKUP, ACCESS            short
//	    5   ECHO        8 KiB   READDIR, large GETACL (no DDP)     long
//	   15   SOURCE      4 KiB   READ, small                        short or chunked
//	   10   SOURCE     32 KiB   READ                               chunked (Write chunk)
//	    5   SOURCE    256 KiB   READ, large                        chunked (Write chunk)
//	   10   SINK        4 KiB   WRITE, small                       short or chunked
//	    7   SINK       32 KiB   WRITE                              chunked (Read chunk)
//	    3   SINK      256 KiB   WRITE, large                       chunked (Read chunk)
//
// Half the RPCs are small metadata calls, as in the SPEC SFS and published NFS workload
// studies; reads outnumber writes 3:2. Whether a 4 KiB READ/WRITE goes inline depends on the
// header overhead against the threshold, which is exactly what a threshold sweep shows.
func NFSLikeMix() []MixEntry {
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

// Only is the mix of a single procedure with payload size sizes: the plain workloads
// ("echo of 4 KiB").
func Only(p string, sizes Sizes) []MixEntry {
	return []MixEntry{{Proc: p, Weight: 1, Size: sizes}}
}

// MixName names a normalized mix for results, where the name identifies the point: "nfs-like" for
// the NFSLikeMix preset, else its entries as PROC[_SIZE][:WEIGHT] joined by "+", for example
// "echo_128:40+sink_32k:10". The name holds no '/', ',', '=' or space, which separate the
// fields of a point's key (benchstat) and of an HdrHistogram log line.
func MixName(mix []MixEntry) string {
	if sameMix(mix, NFSLikeMix()) {
		return "nfs-like"
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
