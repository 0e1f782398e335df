package results

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Holm's step-down procedure on p-values worked by hand: it rejects in order of p while
// each is at most alpha over the hypotheses left, and stops at the first that is not.
func TestHolmKnownPValues(t *testing.T) {
	for _, tc := range []struct {
		p     []float64
		want  []bool
		level float64
	}{
		// 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2: stop, level 0.025.
		{[]float64{0.01, 0.04, 0.03, 0.005}, []bool{true, false, false, true}, 0.025},
		// Every step passes (0.012 <= 0.0167, 0.02 <= 0.025, 0.04 <= 0.05), where Bonferroni
		// (0.0167 each) rejects only the first.
		{[]float64{0.04, 0.012, 0.02}, []bool{true, true, true}, 0.05},
		// The smallest fails its step: nothing is rejected, level alpha/m.
		{[]float64{0.03, 0.5}, []bool{false, false}, 0.025},
		{nil, []bool{}, 0.05},
	} {
		got, level := Holm(tc.p, 0.05)
		for i := range tc.want {
			if got[i] != tc.want[i] {
				t.Errorf("Holm(%v): %v, want %v", tc.p, got, tc.want)
				break
			}
		}
		if math.Abs(level-tc.level) > 1e-15 {
			t.Errorf("Holm(%v): level %v, want %v", tc.p, level, tc.level)
		}
	}
}

// The p-value of a claim is the smallest tail at which ShiftInterval's bound lies beyond
// delta: at every tail, p <= tail exactly when the bound is beyond delta.
func TestShiftPValueMatchesTheInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		m, n := 3+rng.IntN(8), 3+rng.IntN(8)
		x, y := make([]float64, m), make([]float64, n)
		shift := rng.NormFloat64()
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = rng.NormFloat64() + shift
		}
		delta := rng.NormFloat64()
		pAbove, pBelow := shiftPValue(x, y, delta, true), shiftPValue(x, y, delta, false)
		for _, tail := range []float64{0.001, 0.005, 0.0125, 0.025, 0.05, 0.1} {
			iv := ShiftInterval(x, y, tail)
			if above := iv.Bounded() && iv.Lo > delta; above != (pAbove <= tail) {
				t.Fatalf("trial %d (m %d n %d) tail %g: lower bound %g vs delta %g, p %g", trial, m, n, tail, iv.Lo, delta, pAbove)
			}
			if below := iv.Bounded() && iv.Hi < delta; below != (pBelow <= tail) {
				t.Fatalf("trial %d (m %d n %d) tail %g: upper bound %g vs delta %g, p %g", trial, m, n, tail, iv.Hi, delta, pBelow)
			}
		}
	}
}

// The variance components of a small balanced design, worked by hand: processes {1, 3}
// and {5, 7}: within, variance 2; the process means 2 and 6 give a mean square of 16 over
// 2 rounds each, so the process variance is (16 - 2) / 2 = 7. On many processes of
// known components the estimates come close.
func TestVarianceComponents(t *testing.T) {
	vc := varianceComponents([][]float64{{1, 3}, {5, 7}})
	// A second side shifted by a change adds no process variance.
	if vc2 := varianceComponents([][]float64{{1, 3}, {5, 7}}, [][]float64{{101, 103}, {105, 107}}); math.Abs(vc2.Process-vc.Process) > 1e-9 || math.Abs(vc2.Round-vc.Round) > 1e-9 {
		t.Errorf("two sides %+v, want %+v", vc2, vc)
	}
	if math.Abs(vc.Round-100*math.Sqrt(2)) > 1e-9 || math.Abs(vc.Process-100*math.Sqrt(7)) > 1e-9 {
		t.Errorf("components %+v, want round %v process %v", vc, 100*math.Sqrt(2), 100*math.Sqrt(7))
	}
	// One round a process: the spread between processes, rounds included; no round level.
	if vc := varianceComponents([][]float64{{1}, {2}}); !math.IsNaN(vc.Round) || math.Abs(vc.Process-100*math.Sqrt(0.5)) > 1e-9 {
		t.Errorf("one round a process: %+v, want process %v, round NaN", vc, 100*math.Sqrt(0.5))
	}
	if vc := varianceComponents([][]float64{{1, 2}}); !math.IsNaN(vc.Process) {
		t.Errorf("one process: %+v, want no process level", vc)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var groups [][]float64
	for range 400 {
		p := 0.05 * rng.NormFloat64()
		var g []float64
		for range 3 {
			g = append(g, p+0.01*rng.NormFloat64())
		}
		groups = append(groups, g)
	}
	if vc := varianceComponents(groups); math.Abs(vc.Process-5) > 0.5 || math.Abs(vc.Round-1) > 0.1 {
		t.Errorf("components %+v, want process 5%% round 1%%", vc)
	}
}
