package report

import (
	"flag"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// soft and rxe are the synthetic sweeps the reports are made of. Chunked points also carry a
// quarter of short RPCs (so the summary has per-class rows and an "all" row) and the 4096-byte
// points saw one timeout.
var (
	soft = resultstest.Sweep{
		Seed: 1, Device: resultstest.SoftDevice(),
		Thresholds: []int{1024, 4096}, Sizes: []int{64, 4096, 65536},
		PeerRecv: 8192, Time: 20 * time.Millisecond, Tail: 0.003, Mixed: true, FailSizes: []int{4096},
	}
	rxe = resultstest.Sweep{
		Seed: 2, Device: resultstest.RxeDevice(),
		Thresholds: []int{4096}, Sizes: []int{64, 4096, 65536},
		PeerRecv: 4096, Time: 15 * time.Millisecond, Slow: 1.8, Tail: 0.003, Mixed: true, FailSizes: []int{4096},
	}
)

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	resultstest.Golden(t, name, got, *update)
}
