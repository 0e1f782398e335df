package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// JudgeConfig is the judgement a measuring session makes of its own results: against Base
// as results.Compare judges, or, without Base, the best of a sweep's inline thresholds.
type JudgeConfig struct {
	// Base is the baseline's runs; nil judges the best threshold.
	Base []*results.Run
	// Compare is how Base is judged; its Alpha is the family-wise error rate of the whole
	// judgement, spent over the looks (Looks).
	Compare results.CompareConfig
	// Auto adds rounds until the judgement is conclusive, at most Budget, looking after
	// every Step rounds (a block of rounds in one process; 0: every round); without it the
	// judgement looks once, after Budget rounds.
	Auto   bool
	Budget int
	Step   int
	// Points is what the session measures; Sweep says they come from a sweep.
	Points []workloads.Point
	Sweep  bool
}

// AutoRecord is how a results file's config records the judgement a run made of itself.
type AutoRecord struct {
	// Judge is "baseline" (against a baseline) or "thresholds" (the best inline threshold).
	Judge string `json:"judge"`
	// Budget is the most rounds; FirstLook the first round judged; Looks the rounds judged
	// at most, each at its own alpha, Alpha spent over them by Spending ("obrien-fleming",
	// see Spent).
	Budget    int            `json:"budget"`
	FirstLook int            `json:"first_look"`
	Looks     []session.Look `json:"looks"`
	Alpha     float64        `json:"alpha"`
	Spending  string         `json:"spending"`
}

// Judgement is a judgement planned before the session measures.
type Judgement struct {
	Record AutoRecord
	base   []*results.Run
	cfg    results.CompareConfig // Alpha is the family-wise alpha; each look judges at its own
	auto   bool
	unfit  string // why the baseline is unfit (results.BaselineFitness), "" if fit
}

// PlanJudgement plans the judgement c asks for; its errors are bad input.
func PlanJudgement(c JudgeConfig) (*Judgement, error) {
	alpha := c.Compare.Alpha
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("--alpha %g is not in (0, 1)", alpha)
	}
	budget := max(c.Budget, 1)
	j := &Judgement{auto: c.Auto, Record: AutoRecord{Budget: budget, Alpha: alpha}}
	judged := 0
	if c.Base != nil {
		self, err := results.Compare(c.Base, c.Base, c.Compare)
		if err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
		j.base, j.cfg = c.Base, c.Compare
		j.Record.Judge, judged = "baseline", self.Judged
		_, j.unfit = results.BaselineFitness(c.Base, c.Compare)
	} else {
		ths := map[int]bool{}
		for _, p := range c.Points {
			ths[p.Threshold] = true
		}
		if !c.Sweep || len(ths) < 2 {
			return nil, errors.New("--repeat auto repeats until a judgement is conclusive: give --baseline, or sweep two or more --thresholds (the best threshold is judged)")
		}
		j.Record.Judge = "thresholds"
		judged = (len(c.Points) - len(c.Points)/len(ths)) * len(results.ThresholdMetrics)
	}
	looks := []session.Look{{Round: budget, Alpha: alpha}}
	if c.Auto {
		if looks = session.Looks(budget, c.Step, judged, alpha); len(looks) == 0 {
			return nil, fmt.Errorf("--repeat auto:%d: %d judgements at --alpha %g need %d rounds before any look can be conclusive: raise the budget or judge fewer points or metrics",
				budget, judged, alpha, results.MinRuns(judged, alpha))
		}
		j.Record.Spending = "obrien-fleming"
	}
	j.Record.FirstLook, j.Record.Looks = looks[0].Round, looks
	return j, nil
}

// AgainstBaseline says the judgement is against a baseline, not of the best threshold.
func (j *Judgement) AgainstBaseline() bool { return j.base != nil }

// AfterRound is the Config.AfterRound that ends the session once the judgement is
// conclusive, nil when it looks only once.
func (j *Judgement) AfterRound() func(*results.Run, int) bool {
	if !j.auto {
		return nil
	}
	if j.base != nil {
		return session.UntilConclusive(j.Record.Looks, session.AgainstBaseline(j.base, j.cfg))
	}
	return session.UntilConclusive(j.Record.Looks, session.ThresholdsSettled())
}

// alphaAt is the alpha of the look after rounds: the last planned look at or before it
// (a run that measured fewer rounds than the plan's first look is judged at that look's).
func (j *Judgement) alphaAt(rounds int) float64 {
	a := j.Record.Looks[0].Alpha
	for _, l := range j.Record.Looks {
		if l.Round <= rounds {
			a = l.Alpha
		}
	}
	return a
}

// Verdict is a judgement of a complete run.
type Verdict struct {
	// Rounds is the rounds the run measured, Alpha the alpha of the look that judged them.
	Rounds int
	Alpha  float64
	// Comparison is the judgement against the baseline; Thresholds the best threshold's.
	Comparison *results.Comparison
	Thresholds []results.ThresholdChoice
	// Exit is the command's exit status: results.Comparison.ExitCode against a baseline;
	// for the best threshold results.ExitOK when every choice is settled,
	// results.ExitInconclusive otherwise.
	Exit int
}

// Judge judges the complete run r; its error (the baseline has nothing in common with r) is
// bad input.
func (j *Judgement) Judge(r *results.Run) (Verdict, error) {
	v := Verdict{}
	for _, p := range r.Points {
		v.Rounds = max(v.Rounds, p.Round, 1)
	}
	v.Alpha = j.alphaAt(v.Rounds)
	if j.base == nil {
		v.Thresholds = results.BestThresholds([]*results.Run{r}, v.Alpha)
		for i := range v.Thresholds {
			if !session.Settled(&v.Thresholds[i]) {
				v.Exit = results.ExitInconclusive
			}
		}
		return v, nil
	}
	cfg := j.cfg
	cfg.Alpha = v.Alpha
	cmp, err := results.Compare(j.base, []*results.Run{r}, cfg)
	if err != nil {
		return v, fmt.Errorf("--baseline: %w", err)
	}
	if j.unfit != "" {
		cmp.BaselineUnfit = j.unfit
		cmp.Notes = append(cmp.Notes, "the baseline is unfit: "+j.unfit)
	}
	v.Comparison, v.Exit = cmp, cmp.ExitCode()
	return v, nil
}

// ParseRepeat parses --repeat: a number of rounds, at least 1, or auto[:BUDGET] (rounds
// until the judgement is conclusive, at most BUDGET, default DefaultAutoBudget).
func ParseRepeat(x string) (rounds int, auto bool, err error) {
	auto = x == "auto" || strings.HasPrefix(x, "auto:")
	rounds = session.DefaultAutoBudget
	if b, ok := strings.CutPrefix(x, "auto:"); ok || !auto {
		if rounds, err = strconv.Atoi(b); err != nil || rounds < 1 {
			return 0, false, errors.New("want a number of rounds, at least 1, or auto[:BUDGET] with BUDGET rounds at least 1")
		}
	}
	return rounds, auto, nil
}
