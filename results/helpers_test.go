package results_test

import (
	"flag"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testParams are the points of the synthetic sweep: inline both ways, a chunked call and reply,
// and a short call with a chunked reply at depth 4.
var testParams = []results.Params{
	{Procedure: "ECHO", Class: "auto", CallBytes: 64, ReplyBytes: 64, InlineThreshold: 4096, Depth: 1, Connections: 1},
	{Procedure: "ECHO", Class: "auto", CallBytes: 4096, ReplyBytes: 4096, InlineThreshold: 4096, Depth: 1, Connections: 1},
	{Procedure: "SOURCE", Class: "auto", CallBytes: 8, ReplyBytes: 65536, InlineThreshold: 4096, Depth: 4, Connections: 1},
}

// makeRun builds a deterministic run of testParams: n RPCs per point, dealt to workers, RTTs
// scaled by scale with a wide lognormal spread; every point saw one timeout, in its second
// interval.
func makeRun(tb testing.TB, seed uint64, scale float64, n, workers int) *results.Run {
	tb.Helper()
	return resultstest.Sweep{
		Seed: seed, Points: testParams, RPCs: n, Workers: workers, Slow: scale, Spread: 0.25,
		Intervals: 2, FailSizes: []int{64, 4096, 8},
	}.Run(tb)
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	resultstest.Golden(t, name, got, *update)
}
