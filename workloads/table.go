package workloads

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Table draws a poller's RPC sequence before the run: c.TableSize requests, cycled by the
// Driver, so that the hot path neither allocates nor calls the RNG. Each mix entry appears in
// exactly its share of the table (largest-remainder rounding), shuffled with the seeded RNG,
// so every full cycle has the configured proportions; sizes are drawn per request. The same
// Seed and poller give the same table. c must be normalized.
func Table(c Config, poller int) []Request {
	rng := rand.New(rand.NewPCG(c.Seed, uint64(poller)))
	n := c.TableSize
	counts := shares(c.Mix, n)
	out := make([]Request, 0, n)
	prog := c.Table()
	for i, e := range c.Mix {
		idx, _ := prog.Lookup(e.Proc) // c is normalized: every name is in the table
		p := &prog.Procs[idx]
		for range counts[i] {
			r := Request{Proc: idx, Class: c.Class, Verify: c.Verify}
			if p.Sized() {
				call, reply := p.Sizes(drawSize(rng, e.Size))
				r.CallSize, r.ReplySize = uint32(call), uint32(reply)
			}
			out = append(out, r)
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// shares splits n table slots over the mix by weight, largest remainder first (ties to the
// earlier entry), so the counts add up to n exactly.
func shares(mix []MixEntry, n int) []int {
	total := 0
	for _, e := range mix {
		total += e.Weight
	}
	counts := make([]int, len(mix))
	type rem struct{ i, r int }
	rems := make([]rem, len(mix))
	left := n
	for i, e := range mix {
		counts[i] = n * e.Weight / total
		rems[i] = rem{i, n * e.Weight % total}
		left -= counts[i]
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; k < left; k++ {
		counts[rems[k%len(rems)].i]++
	}
	return counts
}

func drawSize(rng *rand.Rand, s Sizes) int {
	switch s.Dist {
	case "uniform":
		return s.Min + rng.IntN(s.Max-s.Min+1)
	case "lognormal":
		hi := s.Max
		if hi == 0 {
			hi = MaxSize
		}
		v := math.Exp(math.Log(float64(s.Median)) + s.Sigma*rng.NormFloat64())
		return int(math.Round(math.Min(math.Max(v, float64(s.Min)), float64(hi))))
	}
	if len(s.Values) == 1 {
		return s.Values[0]
	}
	return s.Values[rng.IntN(len(s.Values))]
}

// Gaps draws a poller's open-loop inter-arrival gaps in nanoseconds for a per-poller rate
// (RPC/s): c.TableSize exponential gaps for "poisson", nil for "constant" (the Driver then
// uses exactly 1e9/rate). Cycled like Table.
func Gaps(c Config, poller int, rate float64) []float64 {
	if c.Arrival != "poisson" || rate <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(c.Seed^0x9e3779b97f4a7c15, uint64(poller)))
	g := make([]float64, c.TableSize)
	mean := 1e9 / rate
	for i := range g {
		g[i] = rng.ExpFloat64() * mean
	}
	return g
}
