package session

import (
	"errors"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// DefaultAutoBudget is the most rounds --repeat auto measures when no budget is given.
const DefaultAutoBudget = 10

// ParseRepeat parses --repeat: a number of rounds, at least 1, or auto[:BUDGET] (rounds
// until the judgement is conclusive, at most BUDGET, default DefaultAutoBudget).
func ParseRepeat(x string) (rounds int, auto bool, err error) {
	auto = x == "auto" || strings.HasPrefix(x, "auto:")
	rounds = DefaultAutoBudget
	if b, ok := strings.CutPrefix(x, "auto:"); ok || !auto {
		if rounds, err = strconv.Atoi(b); err != nil || rounds < 1 {
			return 0, false, errors.New("want a number of rounds, at least 1, or auto[:BUDGET] with BUDGET rounds at least 1")
		}
	}
	return rounds, auto, nil
}

// Looks plans a session that adds rounds until a judgement of judged things at family-wise
// error rate alpha is conclusive, with at most budget rounds. Every look at the data is a
// chance to err, so alpha is split evenly over the looks (Bonferroni over time, as
// results.Compare advises): each look judges at lookAlpha = alpha/looks. The first look is at
// the round from which a look can be conclusive at all (results.MinRuns at alpha/budget, a
// bound that holds for every smaller number of looks), and there is one look per round from
// there to the budget. first > budget: the budget is too small for any conclusive look.
func Looks(budget, judged int, alpha float64) (first, looks int, lookAlpha float64) {
	first = results.MinRuns(judged, alpha/float64(max(budget, 1)))
	looks = max(budget-first+1, 1)
	return first, looks, alpha / float64(looks)
}

// UntilConclusive is a Config.AfterRound that ends the session once conclusive says the
// judgement of the run so far is decided, looking from round first on.
func UntilConclusive(first int, conclusive func(*results.Run) bool) func(*results.Run, int) bool {
	return func(r *results.Run, round int) bool {
		return round < first || !conclusive(r)
	}
}

// AgainstBaseline is a judgement for UntilConclusive: results.Compare of base against the run
// so far, decided when every judged metric is (results.Comparison.Conclusive) or any
// regressed: more rounds cannot turn the gate's answer, and the look's alpha already
// covers the claim.
func AgainstBaseline(base []*results.Run, cfg results.CompareConfig) func(*results.Run) bool {
	return func(r *results.Run) bool {
		c, err := results.Compare(base, []*results.Run{r}, cfg)
		return err == nil && (c.Conclusive() || c.Verdict == results.Regressed)
	}
}

// ThresholdsSettled is a judgement for UntilConclusive: results.BestThresholds of the run so
// far at alpha, decided when every choice is settled (see Settled).
func ThresholdsSettled(alpha float64) func(*results.Run) bool {
	return func(r *results.Run) bool {
		cs := results.BestThresholds([]*results.Run{r}, alpha)
		for i := range cs {
			if !Settled(&cs[i]) {
				return false
			}
		}
		return len(cs) > 0
	}
}

// Settled says a threshold choice is decided: a clear winner (every other threshold worse
// beyond noise), or a clear tie: every interval bounded and lying within the metric's
// results.DefaultTolerance of the best, so that no other threshold can be worse by more than
// that (the same interval and level as the winner's, an equivalence test). A choice of one
// threshold asks nothing and is settled.
func Settled(c *results.ThresholdChoice) bool {
	if c.Clear || c.Compared < 2 {
		return true
	}
	tol := results.DefaultTolerance[c.Metric] / 100
	for _, e := range c.Versus {
		if !e.Bounded() {
			return false
		}
		if c.Metric.HigherIsBetter() {
			if e.Lo < 1-tol {
				return false
			}
		} else if e.Hi > 1+tol {
			return false
		}
	}
	return true
}
