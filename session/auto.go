package session

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// DefaultAutoBudget is the most rounds --repeat auto measures when no budget is given.
const DefaultAutoBudget = 10

// Spent is the O'Brien-Fleming-type alpha spending function of Lan and DeMets: the share
// of the family-wise error rate alpha spent by information fraction t in (0, 1] (here the
// rounds so far over the budget), 2 - 2*Phi(z/sqrt(t)) with z the normal quantile of
// 1 - alpha/2. It spends almost nothing early and nearly all of alpha at the budget, so a
// session that needs every round judges at almost the level of a single look, while a
// change large enough is still caught early.
func Spent(t, alpha float64) float64 {
	if t >= 1 {
		return alpha
	}
	if t <= 0 {
		return 0
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	return 2 - 2*distuv.UnitNormal.CDF(z/math.Sqrt(t))
}

// Look is one planned look at the judgement: after Round rounds, at Alpha.
type Look struct {
	Round int     `json:"round"`
	Alpha float64 `json:"alpha"`
}

// Looks plans a session that adds rounds until a judgement of judged things at family-wise
// error rate alpha is conclusive, with at most budget rounds, in blocks of step rounds (a
// block runs in one process, so a look is at a block's end). Every look is a chance to err,
// so alpha is spent over the looks by Spent: a look judges at the alpha Spent adds from the
// previous look to its round, and the looks' alphas sum to alpha (Bonferroni over the
// looks, which holds whatever their correlation). There are three looks at most: at the
// first block end from which a look can be conclusive at all (results.MinRuns at its
// alpha), at the block end halfway from there to the budget, and at the budget; every
// further look would take alpha from the last, where a same-configuration run is decided.
// No looks: the budget is too small for any conclusive look.
func Looks(budget, step, judged int, alpha float64) []Look {
	budget, step = max(budget, 1), max(step, 1)
	var ends []int
	for r := step; ; r += step {
		r = min(r, budget)
		ends = append(ends, r)
		if r == budget {
			break
		}
	}
	spent := func(r int) float64 { return Spent(float64(r)/float64(budget), alpha) }
	first := -1
	for i, r := range ends {
		if results.MinRuns(judged, spent(r)) <= r {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	rounds := []int{ends[first]}
	if mid := (first + len(ends) - 1) / 2; mid > first && mid < len(ends)-1 {
		rounds = append(rounds, ends[mid])
	}
	if last := ends[len(ends)-1]; last != rounds[len(rounds)-1] {
		rounds = append(rounds, last)
	}
	looks := make([]Look, len(rounds))
	prev := 0.0
	for i, r := range rounds {
		cum := spent(r)
		looks[i], prev = Look{r, cum - prev}, cum
	}
	return looks
}

// UntilConclusive is a Config.AfterRound that ends the session once conclusive says the
// judgement of the run so far, at the look's alpha, is decided; it judges only at the
// planned looks.
func UntilConclusive(looks []Look, conclusive func(r *results.Run, alpha float64) bool) func(*results.Run, int) bool {
	return func(r *results.Run, round int) bool {
		for _, l := range looks {
			if l.Round == round {
				return !conclusive(r, l.Alpha)
			}
		}
		return true
	}
}

// AgainstBaseline is a judgement for UntilConclusive: results.Compare of base against the run
// so far at the look's alpha, decided when every judged metric is
// (results.Comparison.Conclusive) or any regressed: more rounds cannot turn the gate's
// answer, and the look's alpha already covers the claim.
func AgainstBaseline(base []*results.Run, cfg results.CompareConfig) func(*results.Run, float64) bool {
	return func(r *results.Run, alpha float64) bool {
		cfg.Alpha = alpha
		c, err := results.Compare(base, []*results.Run{r}, cfg)
		return err == nil && (c.Conclusive() || c.Verdict == results.Regressed)
	}
}

// ThresholdsSettled is a judgement for UntilConclusive: results.BestThresholds of the run so
// far at the look's alpha, decided when every choice is settled (see Settled).
func ThresholdsSettled() func(*results.Run, float64) bool {
	return func(r *results.Run, alpha float64) bool {
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
