package results

import (
	"math"
	"slices"
)

// Estimate is a Hodges-Lehmann estimate with its distribution-free confidence interval, from
// ShiftInterval or RatioInterval. Lo and Hi are infinite (RatioInterval: 0 and +Inf) when the
// samples are too small for the confidence asked: no pair of order statistics reaches it.
type Estimate struct {
	Est, Lo, Hi float64
}

// Bounded reports whether the interval is finite: the samples were enough for its level.
func (iv Estimate) Bounded() bool { return !math.IsInf(iv.Hi, 1) }

// uExactLimit is the largest m+n for which uLowerTail counts the exact null distribution; beyond
// it the normal approximation is used, as R's wilcox.test does from 50.
const uExactLimit = 60

// uLowerTail is P(U <= u) for u = 0..mn/2, for the Mann-Whitney statistic U of samples of
// sizes m and n from one continuous distribution (U counts the pairs (x, y) with y < x).
func uLowerTail(m, n int) []float64 {
	half := m * n / 2
	cdf := make([]float64, half+1)
	if m+n > uExactLimit {
		mu := float64(m*n) / 2
		sigma := math.Sqrt(float64(m*n) * float64(m+n+1) / 12)
		for u := range cdf {
			cdf[u] = stdNormalCDF((float64(u) + 0.5 - mu) / sigma)
		}
		return cdf
	}
	// The number of arrangements with U = u is the number of size-m subsets of the ranks
	// 1..m+n whose sum is u + m(m+1)/2.
	base := m * (m + 1) / 2
	maxS := half + base
	count := make([][]float64, m+1)
	for k := range count {
		count[k] = make([]float64, maxS+1)
	}
	count[0][0] = 1
	for r := 1; r <= m+n; r++ {
		for k := min(r, m); k >= 1; k-- {
			prev, cur := count[k-1], count[k]
			for s := maxS; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	all := binomial(m+n, m)
	sum := 0.0
	for u := range cdf {
		sum += count[m][u+base]
		cdf[u] = sum / all
	}
	return cdf
}

// binomial is C(n, k) as a float.
func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}

// intervalRank is the 1-based rank k of the lower bound of the Mann-Whitney confidence
// interval with at most tail probability below it and above it (confidence >= 1 - 2*tail):
// the largest k with P(U <= k-1) <= tail. 0 when even the extreme pair does not reach it.
func intervalRank(m, n int, tail float64) int {
	if m == 0 || n == 0 {
		return 0
	}
	k := 0
	for _, p := range uLowerTail(m, n) {
		if p > tail {
			break
		}
		k++
	}
	return min(k, (m*n+1)/2)
}

// boundedAt reports whether samples of sizes m and n give a finite interval with tail
// probability tail on each side: intervalRank(m, n, tail) > 0, without counting the whole
// distribution (MinRuns asks it of every size up to the answer, which a tiny tail makes
// hundreds).
func boundedAt(m, n int, tail float64) bool { return m > 0 && n > 0 && lowestTail(m, n) <= tail }

// lowestTail is P(U <= 0), uLowerTail(m, n)[0]: one arrangement of the ranks in C(m+n, m)
// puts every x below every y.
func lowestTail(m, n int) float64 {
	if m+n > uExactLimit {
		mu := float64(m*n) / 2
		sigma := math.Sqrt(float64(m*n) * float64(m+n+1) / 12)
		return stdNormalCDF((0.5 - mu) / sigma)
	}
	return 1 / binomial(m+n, m)
}

// ShiftInterval estimates the shift from x to y (y's location minus x's) by Hodges-Lehmann —
// the median of the m*n differences y[j] - x[i] — and gives the Mann-Whitney confidence
// interval [D(k), D(mn+1-k)] of the sorted differences, with k from the exact null
// distribution of U (normal beyond 60 samples), so that each side of the interval misses the
// true shift with probability at most tail (confidence >= 1 - 2*tail). It assumes only that
// the two distributions differ by a shift. Lo = -Inf and Hi = +Inf when the samples are too
// small for tail; NaN estimate when either is empty.
func ShiftInterval(x, y []float64, tail float64) Estimate {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return Estimate{math.NaN(), math.Inf(-1), math.Inf(1)}
	}
	d := make([]float64, 0, m*n)
	for _, b := range x {
		for _, c := range y {
			d = append(d, c-b)
		}
	}
	slices.Sort(d)
	iv := Estimate{Est: median(d), Lo: math.Inf(-1), Hi: math.Inf(1)}
	if k := intervalRank(m, n, tail); k > 0 {
		iv.Lo, iv.Hi = d[k-1], d[m*n-k]
	}
	return iv
}

// RatioInterval is ShiftInterval on the logarithms, exponentiated: the ratio of y's location
// to x's (1.2: y is 20% larger) with its interval. Benchmark metrics change by factors, and
// their spread grows with their size, so a shift of logs suits them better than a shift of
// values. Every value must be positive.
func RatioInterval(x, y []float64, tail float64) Estimate {
	iv := ShiftInterval(logs(x), logs(y), tail)
	return Estimate{math.Exp(iv.Est), math.Exp(iv.Lo), math.Exp(iv.Hi)}
}

func logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Log(x)
	}
	return out
}

// MinRuns is the smallest number of runs per side for which judging k things at family-wise
// error rate alpha can give a finite interval (and so a conclusive verdict), each interval's
// tails at alpha/k: at 0.05, 3 runs for k = 1, 4 up to k = 3, 5 up to 12, 6 up to 46.
func MinRuns(k int, alpha float64) int {
	tail := alpha / float64(max(k, 1))
	n := 1
	for !boundedAt(n, n, tail) && n < 1000 {
		n++
	}
	return n
}

func stdNormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
