package results

import (
	"fmt"
	"math"
	"strings"
)

// maxDisturbedShare is the most of a baseline's processes other work may have disturbed
// for it to be fit: beyond it, most judgements against it leave those processes out or rest
// on them, and the gate answers inconclusive whatever the current side measures.
const maxDisturbedShare = 0.25

// BaselineFitness checks runs as a baseline for judgements as cfg configures them (the
// default metrics and tolerances when cfg names none): how many of its processes other
// work disturbed, and per metric the smallest change it resolves, the half-width of the
// interval it gives against itself at the level the gate's first Holm step judges (the
// most of its points). It returns the lines to show and why the runs are unfit as a
// baseline ("" when fit): too many processes disturbed, too few processes for an interval,
// or a tolerance below what it resolves (such a metric cannot be ok).
func BaselineFitness(runs []*Run, cfg CompareConfig) (lines []string, unfit string) {
	c, err := Compare(runs, runs, cfg)
	if err != nil {
		return nil, err.Error()
	}
	procs, disturbed := 0, 0
	units := processesOf(runs)
	seen := map[int]bool{}
	bad := map[int]bool{}
	for _, r := range runs {
		for i := range r.Points {
			p := &r.Points[i]
			u := units[p]
			if !seen[u] {
				seen[u] = true
				procs++
			}
			if Disturbed(p) && !bad[u] {
				bad[u] = true
				disturbed++
			}
		}
	}
	var reasons, res []string
	for _, m := range c.Metrics {
		worst, none := 0.0, false
		for _, p := range c.Points {
			for _, r := range p.Metrics {
				if r.Metric != m {
					continue
				}
				if math.IsNaN(r.Resolution) {
					none = true
				} else {
					worst = max(worst, r.Resolution)
				}
			}
		}
		tol := c.Tolerances[m]
		switch {
		case none:
			res = append(res, fmt.Sprintf("%s none (tolerance %g%%)", m, tol))
		default:
			res = append(res, fmt.Sprintf("%s ±%.1f%% (tolerance %g%%)", m, worst, tol))
			if worst > tol {
				reasons = append(reasons, fmt.Sprintf("%s resolves only ±%.1f%% at some point, wider than its tolerance %g%%", m, worst, tol))
			}
		}
	}
	if need := MinRuns(c.Judged, c.Alpha); c.BaseProcesses < need {
		reasons = append(reasons, fmt.Sprintf("%d process(es) a point: %d judgements at alpha %g need at least %d for an interval", c.BaseProcesses, c.Judged, c.Alpha, need))
	}
	if float64(disturbed) > maxDisturbedShare*float64(procs) {
		reasons = append(reasons, fmt.Sprintf("other work disturbed %d of %d processes (more than %.0f%%)", disturbed, procs, maxDisturbedShare*100))
	}
	lines = append(lines, fmt.Sprintf("as a baseline: %s; %d of %d process(es) disturbed by other work", sideText(c.BaseRounds, c.BaseProcesses, len(runs)), disturbed, procs),
		"smallest change resolved (half-width of its interval against itself, the most of its points): "+strings.Join(res, ", "))
	if n := c.noise(); n != "" {
		lines = append(lines, n)
	}
	if len(reasons) > 0 {
		unfit = strings.Join(reasons, "; ")
		lines = append(lines, "UNFIT for a baseline: "+unfit)
	} else {
		lines = append(lines, "fit for a baseline")
	}
	return lines, unfit
}
