package session_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// compare of a fan-in whose only point is incomplete (a rank failed) says why there is
// nothing to compare: the point is left out, and which rank failed.
func TestCompareSaysWhyAFanInHasNothing(t *testing.T) {
	dir := t.TempDir()
	good := resultstest.FanIn{Sweep: resultstest.Sweep{Seed: 3, Sizes: []int{64}, RPCs: 1000}, Slow: []float64{1, 1}}.Run(t)
	bad := resultstest.FanIn{Sweep: resultstest.Sweep{Seed: 4, Sizes: []int{64}, RPCs: 1000}, Slow: []float64{1, 1}}.Run(t)
	bad.Points[0].Complete = false
	bad.Points[0].FanIn.Failed = []results.RankFailure{{Rank: 2, Host: "node2", Cause: "connect: connection refused"}}
	bad.Status = results.Status{State: results.StateFailed, Message: "rank 2 failed"}
	base, cur := filepath.Join(dir, "base.json"), filepath.Join(dir, "cur.json")
	for f, r := range map[string]*results.Run{base: good, cur: bad} {
		if err := results.WriteFile(f, r); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	_, err := session.Compare(nil, &out, session.CompareFiles{Base: []string{base}, Current: []string{cur}, Alpha: 0.05, Format: "text"})
	if err == nil || !strings.Contains(err.Error(), "nothing to compare") ||
		!strings.Contains(err.Error(), "current has 1 incomplete point(s) of 1, which compare leaves out (rank 2 (host node2) failed: connect: connection refused)") {
		t.Fatalf("error %v", err)
	}
}
