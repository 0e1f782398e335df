package results

import (
	"math"
	"slices"
)

// exactLimit is the largest total sample count for which UTest computes the exact permutation
// distribution; beyond it the normal approximation is accurate to far better than alpha.
const exactLimit = 60

// UTest is the two-sided Mann-Whitney U (Wilcoxon rank-sum) test of whether samples x and y
// come from distributions with the same location, the test benchstat uses: it assumes nothing
// about the distributions' shape, which suits benchmark results (skewed, multimodal).
//
// It returns the p-value: the probability of ranks at least as far from the null hypothesis'
// expectation as observed, if both samples came from one distribution. With at most
// exactLimit samples in all it is exact (the permutation distribution of the rank sum, ties
// given their mid-ranks); beyond that it uses the normal approximation with tie and
// continuity corrections, as R's wilcox.test and benchstat (go-moremath) do. If either sample
// is empty or all values are equal, p is 1: no evidence of a difference.
func UTest(x, y []float64) float64 {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	n := n1 + n2
	type obs struct {
		v     float64
		fromX bool
	}
	all := make([]obs, 0, n)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	// Doubled mid-ranks keep ties integral: a tie group at 1-based positions i..j has rank
	// (i+j)/2, doubled i+j.
	rank2 := make([]int, n)
	w2 := 0    // doubled rank sum of x
	tie := 0.0 // sum of t^3 - t over tie groups
	for i := 0; i < n; {
		j := i
		for j+1 < n && all[j+1].v == all[i].v {
			j++
		}
		for k := i; k <= j; k++ {
			rank2[k] = i + 1 + j + 1
			if all[k].fromX {
				w2 += rank2[k]
			}
		}
		t := float64(j - i + 1)
		tie += t*t*t - t
		i = j + 1
	}
	if all[0].v == all[n-1].v {
		return 1
	}
	if n <= exactLimit {
		return exactP(rank2, n1, w2)
	}
	// Normal approximation of U1 = W1 - n1(n1+1)/2, mean n1n2/2, variance with the tie
	// correction n1n2/12 * ((N+1) - sum(t^3-t)/(N(N-1))).
	u := float64(w2)/2 - float64(n1*(n1+1))/2
	mu := float64(n1*n2) / 2
	fn := float64(n)
	sigma := math.Sqrt(float64(n1*n2) * ((fn + 1) - tie/(fn*(fn-1))) / 12)
	d := u - mu
	// Continuity correction: move half a unit towards the mean.
	switch {
	case d > 0:
		d -= 0.5
	case d < 0:
		d += 0.5
	}
	z := d / sigma
	return min(1, 2*stdNormalCDF(-math.Abs(z)))
}

func stdNormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// exactP is the two-sided permutation p-value of a doubled rank sum w2 of n1 of the
// observations with doubled ranks rank2: the fraction of the C(N, n1) equally likely subsets
// whose rank sum is at least as far from its mean as w2.
func exactP(rank2 []int, n1, w2 int) float64 {
	n := len(rank2)
	total := 0
	for _, r := range rank2 {
		total += r
	}
	// count[k][s]: subsets of size k of the ranks seen so far with doubled sum s.
	count := make([][]float64, n1+1)
	for k := range count {
		count[k] = make([]float64, total+1)
	}
	count[0][0] = 1
	for i, r := range rank2 {
		for k := min(i+1, n1); k >= 1; k-- {
			prev, cur := count[k-1], count[k]
			for s := total; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	// The mean doubled rank sum is n1*(N+1); compare doubled distances to stay integral.
	mean2 := n1 * (n + 1)
	dist := abs(w2 - mean2)
	var tail, all float64
	for s, c := range count[n1] {
		if c == 0 {
			continue
		}
		all += c
		if abs(s-mean2) >= dist {
			tail += c
		}
	}
	return min(1, tail/all)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// MinP is the smallest p-value UTest can return for samples of sizes n1 and n2 without ties:
// 2/C(n1+n2, n1) in the exact regime. When it exceeds alpha no outcome can be significant,
// so comparing that few runs cannot estimate noise: 3 runs a side give 0.1, 4 give 0.029.
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	if n1+n2 > exactLimit {
		return 0
	}
	// C(n1+n2, n1) as a float: exact enough for a threshold test.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return min(1, 2/c)
}
