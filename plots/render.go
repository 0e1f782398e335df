package plots

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// maxSpectrumLines is how many lines one spectrum chart holds before Render splits it: more
// would make the legend and the lines unreadable.
const maxSpectrumLines = 10

// latencyPercentiles are the percentiles Render charts against size, each when some point
// supports it.
var latencyPercentiles = []float64{50, 99, 99.9, 99.99}

// Render writes every chart that applies to runs into dir (created if needed), once per
// format ("png", "svg"; both when none is given), and returns the paths written in order:
//
//   - latency-p50, latency-p99, latency-p999, latency-p9999: RTT percentile vs message size,
//     each only if some point has enough samples for it;
//   - spectrum[-inlineT][-N]: the percentile spectrum, one chart per inline threshold, split
//     into charts of at most 10 lines;
//   - throughput-rpcs, throughput-gbps: throughput vs message size;
//   - threshold-p50, threshold-p99, threshold-rpcs: each mix's metric vs inline threshold,
//     when a mix was measured at two thresholds or more;
//   - heatmap[-WHAT]: median RTT by threshold × size relative to the best of each size, one
//     per set of points that differ only in size and threshold (procedure, depth, ... and
//     run apart), named after what sets it apart; none for a set of one threshold;
//   - timeline-rpcs[-NAME]: throughput over time, for each run with intervals;
//   - ranks-rpcs[-NAME], ranks-rtt[-NAME]: RPC/s and p50/p99 per client rank, for each fan-in
//     run (rpcrdma-bench fanin).
//
// With several runs, NAME is the run's file name without ".json" (results.Run.Source), or
// runK when the files do not tell them apart.
//
// A chart with nothing to draw is skipped. Other failures (a missing or corrupt histogram, a
// file that cannot be written) do not stop the others: Render writes what it can and returns
// the paths with all the errors joined. Input that gives no chart at all is an error wrapping
// ErrNoData.
func Render(runs []*results.Run, dir string, formats ...string) ([]string, error) {
	if len(formats) == 0 {
		formats = Formats
	}
	formats = slices.Clone(formats)
	for i, f := range formats {
		formats[i] = strings.ToLower(f)
		if formats[i] != "png" && formats[i] != "svg" {
			return nil, fmt.Errorf("plots: unknown format %q (want png or svg)", f)
		}
	}
	charts, err := Charts(runs)
	if len(charts) == 0 {
		return nil, err
	}
	errs := []error{err}
	if mkErr := os.MkdirAll(dir, 0o755); mkErr != nil {
		return nil, fmt.Errorf("plots: %w", mkErr)
	}
	var paths []string
	for _, c := range charts {
		for _, f := range formats {
			path := filepath.Join(dir, c.Name+"."+f)
			if err := c.Save(path); err != nil {
				errs = append(errs, err)
				continue
			}
			paths = append(paths, path)
		}
	}
	return paths, errors.Join(errs...)
}

// Charts builds every chart Render writes, in the same order, without writing anything. A
// chart with nothing to draw is skipped; the other errors are joined and returned with the
// charts that could be built. When no chart applies at all the error wraps ErrNoData.
func Charts(runs []*results.Run) ([]*Chart, error) {
	refs, err := collect(runs)
	if err != nil {
		return nil, err
	}
	var charts []*Chart
	var errs []error
	add := func(c *Chart, err error) {
		switch {
		case errors.Is(err, ErrNoData):
		case err != nil:
			errs = append(errs, err)
		default:
			charts = append(charts, c)
		}
	}
	for _, p := range latencyPercentiles {
		add(Latency(runs, p))
	}
	for _, sel := range spectrumSets(refs) {
		add(spectrumChart(sel.refs, runs, sel.name, nil))
	}
	add(Throughput(runs, RPCRate))
	add(Throughput(runs, Gbps))
	for _, m := range []ThresholdMetric{ThresholdP50, ThresholdP99, ThresholdRPCRate} {
		add(Threshold(runs, m))
	}
	for _, sel := range heatmapSets(refs, runs) {
		add(heatmapChart(sel.refs, sel.name, sel.suffix))
	}
	for k, r := range runs {
		c, err := Timeline(r, RPCRate)
		if err == nil && len(runs) > 1 {
			c.Name += "-" + fileName(runName(k, runs))
			c.Plot.Title.Text += " · " + runLabel(k, runs)
		}
		add(c, err)
	}
	for k, r := range runs {
		for _, m := range []RankMetric{RankRPCRate, RankRTT} {
			c, err := Ranks(r, m)
			if err == nil && len(runs) > 1 {
				c.Name += "-" + fileName(runName(k, runs))
				c.Plot.Title.Text += " · " + runLabel(k, runs)
			}
			add(c, err)
		}
	}
	if len(charts) == 0 && len(errs) == 0 {
		return nil, fmt.Errorf("plots: %w: no chart applies to these runs", ErrNoData)
	}
	return charts, errors.Join(errs...)
}

type selection struct {
	name, suffix string
	refs         []ref
}

// spectrumSets splits the points with samples by inline threshold, and each threshold into
// even chunks of at most maxSpectrumLines.
func spectrumSets(refs []ref) []selection {
	var thrs []int
	by := map[int][]ref{}
	for _, f := range refs {
		if f.p.RTT.Count == 0 {
			continue
		}
		t := f.p.Params.InlineThreshold
		if _, ok := by[t]; !ok {
			thrs = append(thrs, t)
		}
		by[t] = append(by[t], f)
	}
	slices.Sort(thrs)
	var sets []selection
	for _, t := range thrs {
		name := "spectrum"
		if len(thrs) > 1 {
			name += "-inline" + bytesLabel(t)
		}
		// Sort by size, then run, so that a split keeps the runs' lines of a size together.
		// A point's repeats are one line: split by points, not by refs.
		fs := repeats(by[t])
		slices.SortStableFunc(fs, func(a, b []ref) int {
			return cmp.Or(cmp.Compare(size(a[0].p.Params), size(b[0].p.Params)), cmp.Compare(a[0].run, b[0].run))
		})
		n := (len(fs) + maxSpectrumLines - 1) / maxSpectrumLines
		for i := range n {
			part := slices.Concat(fs[i*len(fs)/n : (i+1)*len(fs)/n]...)
			nm := name
			if n > 1 {
				nm += "-" + strconv.Itoa(i+1)
			}
			sets = append(sets, selection{name: nm, refs: part})
		}
	}
	return sets
}

// heatmapSets groups the points that differ only in size and threshold: one heatmap each.
func heatmapSets(refs []ref, runs []*results.Run) []selection {
	multi := distinctRuns(refs) > 1
	type cell struct {
		k    seriesKey
		refs []ref
	}
	var sets []cell
	for _, f := range refs {
		k := keyOf(f, multi)
		k.threshold = 0
		found := false
		for i := range sets {
			if sets[i].k == k {
				sets[i].refs = append(sets[i].refs, f)
				found = true
				break
			}
		}
		if !found {
			sets = append(sets, cell{k: k, refs: []ref{f}})
		}
	}
	keys := make([]seriesKey, len(sets))
	for i := range sets {
		keys[i] = sets[i].k
	}
	v := varying(keys)
	// A mix has no size axis: its heatmap would be one column of "0 B".
	// One threshold is trivially the best of every size: its heatmap (1 × 1 for a single
	// size) would say nothing.
	sets = slices.DeleteFunc(sets, func(c cell) bool {
		thr := map[int]bool{}
		for _, f := range c.refs {
			thr[f.p.Params.InlineThreshold] = true
		}
		return !slices.ContainsFunc(c.refs, func(f ref) bool { return size(f.p.Params) > 0 }) || len(thr) < 2
	})
	var out []selection
	names := map[string]bool{}
	for i, s := range sets {
		sel := selection{name: "heatmap", refs: s.refs}
		if len(sets) > 1 {
			parts := v.parts(s.k, runs)
			// Named after what sets it apart (heatmap-echo): the run by its file alone
			// when runs differ; numbered if that is not unique.
			np := v.parts(s.k, runs)
			if v.run && s.k.run >= 0 {
				np = []string{runName(s.k.run, runs)}
			}
			sel.name += "-" + fileName(strings.Join(np, "-"))
			if sel.name == "heatmap-" || names[sel.name] {
				sel.name = "heatmap-" + strconv.Itoa(i+1)
			}
			names[sel.name] = true
			sel.suffix = " · " + strings.Join(parts, " · ")
		}
		out = append(out, sel)
	}
	return out
}
