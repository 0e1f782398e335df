package workloads

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Sweep is a grid of runs: every inline threshold × every depth × every size. The caller runs
// each Point on fresh connections, advertising the Point's threshold in new private data, so
// no point inherits another's negotiation. The zero value sweeps ECHO over the grid.
type Sweep struct {
	// Thresholds are the inline thresholds to advertise, both directions (default 1k, 4k,
	// 16k, 64k). Each passes CheckThreshold.
	Thresholds []int `json:"thresholds,omitempty"`
	// Sizes are the payload sizes (default 64 B to 1 MiB in powers of 4).
	Sizes []int `json:"sizes,omitempty"`
	// Depths are the queue depths (default the Base workload's Depth).
	Depths []int `json:"depths,omitempty"`
	// Proc names the procedure every point runs: ECHO, whose payload goes both ways and is
	// not DDP-eligible, shows short → long; SINK and SOURCE show short → chunked. Empty means
	// the first procedure of Base's program that carries a payload (the benchmark program's
	// echo).
	Proc string `json:"proc,omitempty"`
	// Mixes, when given, replace the size axis: every threshold × depth × mix, each point
	// running the whole mix (entries without a size take Base.Size), to ask which threshold
	// suits a traffic shape rather than a size. Proc and Sizes are then unused.
	Mixes [][]MixEntry `json:"mixes,omitempty"`
	// Base is the workload of every point, whose Mix is replaced by Proc at the point's size
	// and whose Depth by the point's depth. Its zero Duration and Warmup mean 1 s and 200 ms
	// per point, shorter than a single run's defaults because a sweep has many points.
	Base Config `json:"base"`
}

// Default sweep point lengths.
const (
	DefaultPointDuration = time.Second
	DefaultPointWarmup   = 200 * time.Millisecond
)

// DefaultSweepSizes are 64 B to 1 MiB in powers of 4.
func DefaultSweepSizes() []int {
	return []int{64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}
}

// DefaultThresholds are the inline thresholds a sweep advertises by default.
func DefaultThresholds() []int { return []int{1 << 10, 4 << 10, 16 << 10, 64 << 10} }

// Point is one run of a Sweep.
type Point struct {
	// Index is the point's place in the plan, from 0.
	Index int `json:"index"`
	// Threshold is the inline threshold to advertise in both directions.
	Threshold int `json:"threshold"`
	Size      int `json:"size"`
	Depth     int `json:"depth"`
	// Mix names the point's mix (MixName) in a sweep over mixes; Size is then 0.
	Mix string `json:"mix,omitempty"`
	// Workload is the normalized workload of this point.
	Workload Config `json:"workload"`
}

// Plan expands the sweep into its points: thresholds outermost, then depths, then sizes, so
// the points of one threshold and depth run by growing size, which is the order Switches
// reads. Every point's Workload is normalized; errors name the bad value.
func (s Sweep) Plan() ([]Point, error) {
	ths := s.Thresholds
	if len(ths) == 0 {
		ths = DefaultThresholds()
	}
	sizes := s.Sizes
	if len(sizes) == 0 {
		sizes = DefaultSweepSizes()
	}
	base := s.Base
	if base.Duration == 0 && base.Count == 0 {
		base.Duration = Duration(DefaultPointDuration)
	}
	if base.Warmup == 0 {
		base.Warmup = Duration(DefaultPointWarmup)
	}
	depths := s.Depths
	if len(depths) == 0 {
		d := base.Depth
		if d == 0 {
			d = DefaultDepth
		}
		depths = []int{d}
	}
	proc := s.Proc
	if proc == "" {
		prog := base.Table()
		if prog == nil {
			return nil, ErrNoProgram
		}
		for _, p := range prog.Procs {
			if p.Sized() && !p.Setup {
				proc = p.Name
				break
			}
		}
		if proc == "" {
			return nil, fmt.Errorf("workloads: sweep: program %s has no procedure with a payload", prog.Name)
		}
	}
	for _, t := range ths {
		if err := CheckThreshold(t); err != nil {
			return nil, fmt.Errorf("workloads: sweep threshold %d: %v", t, err)
		}
	}
	for _, d := range depths {
		if d < 1 || d > MaxDepth {
			return nil, fmt.Errorf("workloads: sweep depth %d out of range [1, %d]", d, MaxDepth)
		}
	}
	var pts []Point
	if len(s.Mixes) > 0 {
		for _, t := range ths {
			for _, d := range depths {
				for i, m := range s.Mixes {
					w := base
					w.Mix = m
					w.Depth = d
					w, err := w.Normalized()
					if err != nil {
						return nil, fmt.Errorf("workloads: sweep point threshold %d mix %d depth %d: %w", t, i+1, d, err)
					}
					pts = append(pts, Point{Index: len(pts), Threshold: t, Depth: d, Mix: MixName(w.Mix, w.Table()), Workload: w})
				}
			}
		}
		return pts, nil
	}
	for _, t := range ths {
		for _, d := range depths {
			for _, z := range sizes {
				w := base
				w.Mix = Only(proc, Fixed(z))
				w.Depth = d
				w, err := w.Normalized()
				if err != nil {
					return nil, fmt.Errorf("workloads: sweep point threshold %d size %d depth %d: %w", t, z, d, err)
				}
				pts = append(pts, Point{Index: len(pts), Threshold: t, Size: z, Depth: d, Workload: w})
			}
		}
	}
	return pts, nil
}

// RoundOrder is the order in which round (from 1) of a repeated measurement runs n points:
// the plan's order, or with shuffle a permutation drawn from seed and the round, so that
// the rounds are interleaved (every point once per round) and drift over time hits every
// point alike. The same seed gives the same orders.
func RoundOrder(n, round int, shuffle bool, seed uint64) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if shuffle {
		// A stream of its own: the workload's draws use (seed, poller).
		rng := rand.New(rand.NewPCG(seed, 1<<63|uint64(round)))
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	return order
}

// Observed is a finished point: the class counts its run produced (Stats.Classes).
type Observed struct {
	Point   Point                     `json:"point"`
	Classes [rpcproto.NumKinds]uint64 `json:"classes"`
}

// Dominant is the class most of the point's RPCs used (rpcproto.Auto when none completed or
// the Client could not tell).
func (o Observed) Dominant() rpcproto.Kind {
	best := rpcproto.Auto
	for _, c := range rpcproto.Kinds {
		if o.Classes[c] > o.Classes[best] {
			best = c
		}
	}
	return best
}

// Switch is a size at which, for one threshold and depth, the dominant message class changed
// from the previous (smaller) size's.
type Switch struct {
	Threshold int           `json:"threshold"`
	Depth     int           `json:"depth"`
	From      rpcproto.Kind `json:"from"`
	To        rpcproto.Kind `json:"to"`
	// Below is the largest swept size still in From, At the smallest in To: the true switch
	// point lies in (Below, At].
	Below int `json:"below"`
	At    int `json:"at"`
}

// Switches reports every class change along the size axis of each (threshold, depth) series,
// in the order obs lists them. obs need not be complete (an interrupted sweep): a missing
// point only widens the interval; points without a dominant class are skipped.
func Switches(obs []Observed) []Switch {
	type key struct{ t, d int }
	type last struct {
		size  int
		class rpcproto.Kind
	}
	prev := make(map[key]last)
	var out []Switch
	for _, o := range obs {
		c := o.Dominant()
		if c == rpcproto.Auto {
			continue
		}
		k := key{o.Point.Threshold, o.Point.Depth}
		p, ok := prev[k]
		if ok && p.size < o.Point.Size && p.class != c {
			out = append(out, Switch{Threshold: k.t, Depth: k.d, From: p.class, To: c, Below: p.size, At: o.Point.Size})
		}
		if !ok || p.size < o.Point.Size {
			prev[k] = last{o.Point.Size, c}
		}
	}
	return out
}
