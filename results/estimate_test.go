package results

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestULowerTailKnownValues(t *testing.T) {
	for _, c := range []struct {
		m, n, u int
		want    float64
	}{
		{5, 5, 0, 1.0 / 252}, // only the fully separated arrangement
		{5, 5, 1, 2.0 / 252},
		{5, 5, 2, 4.0 / 252},
		{5, 5, 3, 7.0 / 252},
		{4, 4, 0, 1.0 / 70},
		{3, 3, 0, 1.0 / 20},
		// R's wilcox.test documentation example (10 vs 5, W = 35): two-sided p = 0.2544,
		// 2 P(U >= 35) = 2 P(U <= 15) by symmetry.
		{10, 5, 15, 0.2544 / 2},
	} {
		got := uLowerTail(c.m, c.n)[c.u]
		if math.Abs(got-c.want) > 5e-5 {
			t.Errorf("P(U <= %d) for %d and %d = %.6f, want %.6f", c.u, c.m, c.n, got, c.want)
		}
	}
	// The exact distribution and the normal approximation agree where they meet.
	exact := uLowerTail(30, 30)
	mu, sigma := 450.0, math.Sqrt(900*61/12.0)
	for _, u := range []int{300, 380, 420} {
		approx := stdNormalCDF((float64(u) + 0.5 - mu) / sigma)
		if math.Abs(exact[u]-approx) > 0.002 {
			t.Errorf("30 v 30, u %d: exact %.5f, normal %.5f", u, exact[u], approx)
		}
	}
}

// Critical values of the two-sided Mann-Whitney test at 0.05 from the published tables
// (reject when U <= the value): the lower bound of the 95% interval is the difference of
// rank critical+1.
func TestIntervalRankTables(t *testing.T) {
	for _, c := range []struct{ m, n, critical int }{
		{4, 5, 1}, {5, 5, 2}, {6, 6, 5}, {7, 7, 8}, {8, 8, 13}, {10, 10, 23}, {20, 20, 127},
	} {
		if k := intervalRank(c.m, c.n, 0.025); k != c.critical+1 {
			t.Errorf("%d v %d: rank %d, want %d", c.m, c.n, k, c.critical+1)
		}
	}
	if k := intervalRank(2, 2, 0.025); k != 0 {
		t.Errorf("2 v 2 reaches 95%%: rank %d", k)
	}
}

func TestShiftIntervalByHand(t *testing.T) {
	// The 25 differences y - x are 10 + (j - i): 6 once, 7 twice, ... 10 five times, ... 14
	// once. Median (13th) 10; 95% (5 v 5: k = 3) from the 3rd smallest, 7, to the 3rd
	// largest, 13.
	x, y := []float64{0, 1, 2, 3, 4}, []float64{10, 11, 12, 13, 14}
	if iv := ShiftInterval(x, y, 0.025); iv != (Estimate{10, 7, 13}) {
		t.Errorf("95%%: %+v, want {10 7 13}", iv)
	}
	// At 99.2% (tail 1/252 each side: k = 1) it spans every difference.
	if iv := ShiftInterval(x, y, 1.0/252); iv != (Estimate{10, 6, 14}) {
		t.Errorf("99.2%%: %+v, want {10 6 14}", iv)
	}
	// Beyond what 5 v 5 can reach, no interval.
	if iv := ShiftInterval(x, y, 0.001); iv.Bounded() || iv.Est != 10 {
		t.Errorf("99.8%%: %+v, want unbounded", iv)
	}
	// Ratios: every current value 1.5 times a base value.
	r := RatioInterval([]float64{2, 4, 8, 16}, []float64{3, 6, 12, 24}, 0.05)
	if math.Abs(r.Est-1.5) > 1e-12 || !(r.Lo < 1.5 && r.Hi > 1.5) || !r.Bounded() {
		t.Errorf("ratio %+v, want 1.5 inside", r)
	}
}

func TestMinRuns(t *testing.T) {
	for _, c := range []struct {
		k     int
		alpha float64
		want  int
	}{{1, 0.05, 3}, {2, 0.05, 4}, {3, 0.05, 4}, {4, 0.05, 5}, {12, 0.05, 5}, {13, 0.05, 6}, {46, 0.05, 6}, {47, 0.05, 7},
		// The first rounds of a long --repeat auto spend almost nothing.
		{9, 1e-9, 18}} {
		if got := MinRuns(c.k, c.alpha); got != c.want {
			t.Errorf("MinRuns(%d, %g) = %d, want %d", c.k, c.alpha, got, c.want)
		}
	}
}

// boundedAt answers as the whole interval would, on both sides of the exact distribution's
// limit and for unequal sides.
func TestBoundedAtIsTheIntervalsAnswer(t *testing.T) {
	for m := 1; m <= 40; m++ {
		for _, n := range []int{1, 2, 3, 5, 8, 13, 21, 26, 34} {
			for _, tail := range []float64{0.5, 0.025, 0.0028, 1e-4, 1e-9, 1e-30, 0} {
				if got, want := boundedAt(m, n, tail), intervalRank(m, n, tail) > 0; got != want {
					t.Errorf("boundedAt(%d, %d, %g) = %v, the interval's rank says %v", m, n, tail, got, want)
				}
			}
		}
	}
	if boundedAt(0, 5, 0.5) || boundedAt(5, 0, 0.5) {
		t.Error("an empty side gave a bounded interval")
	}
}

// The interval's coverage is what it claims: over many draws from shifted lognormals, the
// true ratio falls below the lower bound at most tail of the time (a little less: U is
// discrete).
func TestRatioIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const trials, tail = 4000, 0.025
	var below, above int
	draw := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * math.Exp(0.3*rng.NormFloat64())
		}
		return v
	}
	for range trials {
		iv := RatioInterval(draw(6, 1), draw(7, 1.3), tail)
		if 1.3 < iv.Lo {
			below++
		}
		if 1.3 > iv.Hi {
			above++
		}
	}
	if f := float64(below) / trials; f > tail*1.2 {
		t.Errorf("true ratio below the interval in %.3f of draws, want <= %.3f", f, tail)
	}
	if f := float64(above) / trials; f > tail*1.2 {
		t.Errorf("true ratio above the interval in %.3f of draws, want <= %.3f", f, tail)
	}
}
