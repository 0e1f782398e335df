package results

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// BenchName is the benchmark name of p in runs on a machine with the given GOMAXPROCS:
// "BenchmarkRPC/" + Key, with the "-N" suffix the testing package adds.
func BenchName(p Params, gomaxprocs int) string {
	name := "BenchmarkRPC/" + p.Key()
	if gomaxprocs > 1 {
		name += "-" + strconv.Itoa(gomaxprocs)
	}
	return name
}

// benchPercentiles are the units WriteBench writes for Summary percentiles.
var benchPercentiles = [...]string{"p50-ns", "p90-ns", "p99-ns", "p99.9-ns", "p99.99-ns"}

// WriteBench writes runs in the Go benchmark format (golang.org/design/14313-benchmark-format)
// so that benchstat can compare them: configuration lines (goos, goarch, cpu, pkg, provider,
// device), then one line per point per run:
//
//	BenchmarkRPC/proc=ECHO/call=64/reply=64/thr=4096/depth=1/conns=1/class=auto-2  20000  3000 ns/op  2601 p50-ns  ...  85.3 MB/s  333333 rpc/s
//
// The iteration count is the number of RPCs; ns/op is the point's duration divided by it
// (the Go convention: wall time per operation, which at depth > 1 is less than the RTT);
// p50-ns .. p99.99-ns and mean-ns are RTTs (a percentile the count does not support is left
// out of the line, never printed as a number); MB/s is payload in 10^6 bytes per second as
// the testing package reports it; rpc/s is throughput. Repeated runs of the same point become
// repeated lines, which benchstat treats as samples. Points with no successful RPC are
// written as comments.
func WriteBench(w io.Writer, runs ...*Run) error {
	bw := bufio.NewWriter(w)
	cfg := map[string]string{}
	for _, r := range runs {
		e := &r.Environment
		dev := ""
		if e.Device != nil {
			dev = e.Device.Name
		}
		for _, kv := range [][2]string{{"goos", e.OS}, {"goarch", e.Arch}, {"cpu", e.CPUModel},
			{"pkg", "github.com/rpcrdma-bench/rpcrdma-bench"}, {"provider", e.Provider}, {"device", dev}} {
			// A config line holds until changed, so write only what changed.
			v := strings.Join(strings.Fields(kv[1]), " ")
			if old, ok := cfg[kv[0]]; !ok || old != v {
				fmt.Fprintf(bw, "%s: %s\n", kv[0], v)
				cfg[kv[0]] = v
			}
		}
		for i := range r.Points {
			p := &r.Points[i]
			name := BenchName(p.Params, e.GOMAXPROCS)
			n := p.Throughput.RPCs
			if n == 0 || p.DurationNs <= 0 {
				fmt.Fprintf(bw, "# %s: no completed RPCs\n", name)
				continue
			}
			fmt.Fprintf(bw, "%s\t%d\t%s ns/op", name, n, fmtFloat(float64(p.DurationNs)/float64(n)))
			for j := range percentiles {
				if v := *p.RTT.percentile(j); v != nil {
					fmt.Fprintf(bw, "\t%d %s", *v, benchPercentiles[j])
				}
			}
			if p.RTT.Mean != nil {
				fmt.Fprintf(bw, "\t%d mean-ns", *p.RTT.Mean)
			}
			mbs := float64(p.Throughput.PayloadBytes) / 1e6 / (float64(p.DurationNs) / 1e9)
			fmt.Fprintf(bw, "\t%s MB/s\t%s rpc/s\n", fmtFloat(mbs), fmtFloat(p.Throughput.RPCPerSec))
		}
	}
	return bw.Flush()
}

// fmtFloat prints v with about 4 significant digits and no exponent, as testing does.
func fmtFloat(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
}
