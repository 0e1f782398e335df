package plots

import (
	"flag"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// soft and rxe are the synthetic sweeps the charts are drawn from: the soft one has enough
// samples for p99.9 everywhere, the rxe one is slower and too short for p99 at 1 MiB. The 4K
// points saw one timeout.
var (
	soft = resultstest.Sweep{
		Seed: 1, Device: resultstest.SoftDevice(),
		Thresholds: []int{1024, 4096, 16384}, Sizes: []int{64, 512, 4096, 32768, 262144, 1 << 20},
		PeerRecv: 8192, Time: 300 * time.Millisecond, Tail: 0.003, Intervals: 8, FailSizes: []int{4096},
	}
	rxe = resultstest.Sweep{
		Seed: 2, Device: resultstest.RxeDevice(),
		Thresholds: []int{4096}, Sizes: []int{64, 512, 4096, 32768, 262144, 1 << 20},
		PeerRecv: 4096, Time: 200 * time.Millisecond, Slow: 1.8, Tail: 0.003, Intervals: 8, FailSizes: []int{4096},
	}
)

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	resultstest.Golden(t, name, got, *update)
}
