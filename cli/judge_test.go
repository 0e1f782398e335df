package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// A judgement of the best threshold needs a sweep of two or more; a budget too small for
// any conclusive look is refused; a plan records its looks with alpha split over them.
func TestPlanJudgement(t *testing.T) {
	two := []workloads.Point{{Threshold: 1024, Size: 64}, {Threshold: 4096, Size: 64}}
	for _, tc := range []struct {
		c    JudgeConfig
		want string
	}{
		{JudgeConfig{Compare: results.CompareConfig{Alpha: 0.05}, Auto: true, Budget: 10, Points: two[:1], Sweep: true}, "give --baseline"},
		{JudgeConfig{Compare: results.CompareConfig{Alpha: 1}, Auto: true, Budget: 10, Points: two, Sweep: true}, "--alpha 1 is not in (0, 1)"},
		{JudgeConfig{Compare: results.CompareConfig{Alpha: 0.05}, Auto: true, Budget: 2, Points: two, Sweep: true}, "need"},
	} {
		if _, err := PlanJudgement(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.c, err, tc.want)
		}
	}
	j, err := PlanJudgement(JudgeConfig{Compare: results.CompareConfig{Alpha: 0.05}, Auto: true, Budget: 10, Points: two, Sweep: true})
	if err != nil {
		t.Fatal(err)
	}
	looks := session.Looks(10, 1, len(results.ThresholdMetrics), 0.05)
	want := AutoRecord{Judge: "thresholds", Budget: 10, FirstLook: looks[0].Round, Looks: looks, Alpha: 0.05, Spending: "obrien-fleming"}
	if fmt.Sprint(j.Record) != fmt.Sprint(want) || j.AgainstBaseline() || j.AfterRound() == nil {
		t.Fatalf("record %+v, want %+v", j.Record, want)
	}
}
