package results

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestUTestKnownValues(t *testing.T) {
	seq := func(n int, f func(i int) float64) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = f(i)
		}
		return s
	}
	l1 := seq(500, func(i int) float64 { return float64(i * 2) })
	l2 := seq(600, func(i int) float64 { return float64(i*2 - 41) })
	l3 := append([]float64{}, l2...)
	copy(l3[:30], l1[:30])
	for _, c := range []struct {
		name string
		x, y []float64
		p    float64
	}{
		// Exact, no ties: 2/C(6,3), 2/C(8,4), 2/C(10,5) for fully separated samples.
		{"3v3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		{"4v4 separated", []float64{2, 1, 3, 5}, []float64{12, 11, 13, 15}, 0.028571428571428577}, // go-moremath utest_test.go
		{"5v5 separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 2.0 / 252},
		{"4v4 interleaved", []float64{2, 1, 3, 5}, []float64{0, 4, 6, 7}, 0.48571428571428577}, // go-moremath
		// R: wilcox.test(x, y) for these gives W = 35, p-value = 0.2544 (R's documentation
		// example, one-sided p 0.1272).
		{"R example", []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			[]float64{1.15, 0.88, 0.90, 0.74, 1.21}, 0.2544},
		{"identical", []float64{2, 1, 3, 5}, []float64{2, 1, 3, 5}, 1},
		{"all equal", []float64{7, 7}, []float64{7, 7, 7}, 1},
		{"empty", nil, []float64{1}, 1},
		// Normal approximation, checked against R's wilcox.test in go-moremath's tests.
		{"500v600", l1, l2, 0.0049335360814172224},
		{"500v600 ties", l1, l3, 0.0038703814239617884},
		{"500v500 same", l1, l1, 1},
	} {
		got := UTest(c.x, c.y)
		tol := 1e-12
		if c.name == "R example" {
			tol = 5e-5 // R prints 4 digits
		}
		if math.Abs(got-c.p) > tol {
			t.Errorf("%s: p = %.17g, want %.17g", c.name, got, c.p)
		}
		if back := UTest(c.y, c.x); math.Abs(back-got) > 1e-12 {
			t.Errorf("%s: not symmetric: %v vs %v", c.name, got, back)
		}
	}
}

// bruteP enumerates every way of drawing len(x) of the pooled values as "x" and counts rank
// sums at least as extreme: an independent check of exactP, ties included.
func bruteP(x, y []float64) float64 {
	pool := append(append([]float64{}, x...), y...)
	n := len(pool)
	rank := make([]float64, n)
	for i, v := range pool {
		var less, eq float64
		for _, w := range pool {
			if w < v {
				less++
			} else if w == v {
				eq++
			}
		}
		rank[i] = less + (eq+1)/2
	}
	var w, mean float64
	for i := range x {
		w += rank[i]
	}
	mean = float64(len(x)) * float64(n+1) / 2
	var tail, all float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != len(x) {
			continue
		}
		var s float64
		for i := range n {
			if mask&(1<<i) != 0 {
				s += rank[i]
			}
		}
		all++
		if math.Abs(s-mean) >= math.Abs(w-mean)-1e-9 {
			tail++
		}
	}
	return tail / all
}

func popcount(m int) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}

func TestUTestExactMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n1, n2 := 1+rng.IntN(7), 1+rng.IntN(7)
		x, y := make([]float64, n1), make([]float64, n2)
		for i := range x {
			x[i] = float64(rng.IntN(6)) // small range: many ties
		}
		for i := range y {
			y[i] = float64(rng.IntN(6) + rng.IntN(3))
		}
		want := bruteP(x, y)
		allEq := true
		for _, v := range append(x[1:], y...) {
			allEq = allEq && v == x[0]
		}
		if allEq {
			want = 1
		}
		if got := UTest(x, y); math.Abs(got-want) > 1e-12 {
			t.Fatalf("UTest(%v, %v) = %v, enumeration says %v", x, y, got, want)
		}
	}
}

// Under the null hypothesis p < alpha happens about alpha of the time, no more: the gate's
// false alarm rate on pure noise.
func TestUTestCalibrated(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{5, 10, 40} {
		var rejects int
		const trials = 2000
		for range trials {
			x, y := make([]float64, n), make([]float64, n)
			for i := range x {
				x[i] = math.Exp(rng.NormFloat64())
				y[i] = math.Exp(rng.NormFloat64())
			}
			if UTest(x, y) < 0.05 {
				rejects++
			}
		}
		if rate := float64(rejects) / trials; rate > 0.065 || rate < 0.02 {
			t.Errorf("n=%d: false positive rate %.3f at alpha 0.05", n, rate)
		}
	}
}

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		n1, n2 int
		p      float64
	}{{1, 1, 1}, {3, 3, 0.1}, {3, 4, 2.0 / 35}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {0, 5, 1}, {40, 40, 0}} {
		if got := MinP(c.n1, c.n2); math.Abs(got-c.p) > 1e-12 {
			t.Errorf("MinP(%d, %d) = %v, want %v", c.n1, c.n2, got, c.p)
		}
	}
	// MinP is what UTest returns for fully separated samples.
	x, y := []float64{1, 2, 3}, []float64{4, 5, 6, 7, 8}
	if UTest(x, y) != MinP(3, 5) {
		t.Errorf("UTest of separated 3v5 = %v, MinP = %v", UTest(x, y), MinP(3, 5))
	}
}
