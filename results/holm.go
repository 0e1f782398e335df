package results

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Holm is Holm's step-down procedure at family-wise error rate alpha over the p-values p:
// sorted ascending, the i-th smallest (from 0) is rejected while it is at most
// alpha/(len(p)-i), and the first that is not stops it. It returns which were rejected and
// the level at which the procedure stopped, alpha/(len(p)-rejected) (alpha when every one
// was): every rejected p-value is at most that level and every other one above it, so an
// interval at that level excludes exactly the rejected hypotheses. Holm controls the same
// family-wise error as Bonferroni's alpha/len(p) and never rejects less.
func Holm(p []float64, alpha float64) (rejected []bool, level float64) {
	m := len(p)
	rejected = make([]bool, m)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	n := 0
	for i, k := range order {
		if !(p[k] <= alpha/float64(m-i)) {
			break
		}
		rejected[k] = true
		n++
	}
	return rejected, alpha / float64(max(m-n, 1))
}

// shiftPValue is the one-sided p-value, by the Mann-Whitney distribution of ShiftInterval,
// that the shift from x to y exceeds delta (above true) or falls short of it (above false):
// the smallest tail at which ShiftInterval's bound on that side lies beyond delta. It counts
// the differences y[j]-x[i] on the wrong side of delta; 1 when the samples are too few.
func shiftPValue(x, y []float64, delta float64, above bool) float64 {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return 1
	}
	wrong := 0
	for _, b := range x {
		for _, c := range y {
			if d := c - b; (above && d <= delta) || (!above && d >= delta) {
				wrong++
			}
		}
	}
	cdf := uLowerTail(m, n)
	if wrong >= len(cdf) || wrong >= (m*n+1)/2 {
		return 1
	}
	return cdf[wrong]
}

// VarianceComponents are the two levels of noise in a metric's log values, as standard
// deviations in percent (the sd of the log value, times 100): between processes of the
// same configuration, and between rounds inside one process. NaN when the samples cannot
// tell: Round without a process of two rounds, Process without two processes on a side.
// With one round a process, Process is the whole spread between processes, its rounds'
// noise included.
type VarianceComponents struct {
	Process, Round float64
}

// varianceComponents estimates the components of sides (per side, the log values of each
// process's rounds) by the one-way random-effects analysis of variance (method of moments)
// with the side as a fixed effect, so that a change between the sides is not taken for
// noise: the round variance is the pooled variance within processes, the process variance
// the mean square between processes of a side less the part their rounds explain, at least
// 0.
func varianceComponents(sides ...[][]float64) VarianceComponents {
	vc := VarianceComponents{math.NaN(), math.NaN()}
	var ssw, dfw, ssb, dfb, n, n2w float64
	for _, groups := range sides {
		var means, sizes []float64
		for _, g := range groups {
			if len(g) == 0 {
				continue
			}
			mu := stat.Mean(g, nil)
			means, sizes = append(means, mu), append(sizes, float64(len(g)))
			for _, v := range g {
				ssw += (v - mu) * (v - mu)
			}
			dfw += float64(len(g) - 1)
		}
		if len(means) < 2 {
			continue
		}
		grand := stat.Mean(means, sizes)
		var ns, ns2 float64
		for i, mu := range means {
			ssb += sizes[i] * (mu - grand) * (mu - grand)
			ns += sizes[i]
			ns2 += sizes[i] * sizes[i]
		}
		dfb += float64(len(means) - 1)
		n += ns
		n2w += ns2 / ns
	}
	if dfw > 0 {
		vc.Round = math.Sqrt(ssw/dfw) * 100
	}
	if dfb == 0 {
		return vc
	}
	if dfw == 0 {
		vc.Process = math.Sqrt(ssb/dfb) * 100 // one round a process: the levels are not separable
		return vc
	}
	// The effective rounds per process of an unbalanced design (the ANOVA's n0).
	n0 := (n - n2w) / dfb
	vc.Process = math.Sqrt(max(0, (ssb/dfb-ssw/dfw)/n0)) * 100
	return vc
}
