package resultstest

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// FanIn describes a synthetic fan-in run (rpcrdma-bench fanin): a client rank per entry of
// Slow, ranks 1, 2, ... on hosts node1, node2, ..., served by rank 0 on node0, each measuring
// Sweep's points with its RTTs scaled by its entry (closed loop: a slower rank completes
// fewer RPCs). Rank k's RTTs are seeded by Sweep.Seed + k.
type FanIn struct {
	Sweep Sweep
	Slow  []float64
}

// Run builds the run f describes: each point the merge of the ranks' points (histograms
// exactly, throughput summed) with its FanIn, failing tb if results rejects it.
func (f FanIn) Run(tb testing.TB) *results.Run {
	tb.Helper()
	var ranks []*results.Run
	for k, slow := range f.Slow {
		s := f.Sweep
		s.Seed += uint64(k + 1)
		s.Slow = slow
		ranks = append(ranks, s.Run(tb))
	}
	r := ranks[0]
	r.Config = fmt.Appendf(nil, `{"command":"fanin","seed":%d,"fanin":{"ranks":%d}}`, f.Sweep.Seed, len(f.Slow)+1)
	for i := range r.Points {
		fi := results.FanIn{ServerRanks: []results.ServerRank{{Rank: 0, Host: "node0"}}, SkewNs: 1500, BarrierNs: 12000, Overlap: 1}
		var sums []results.Summary
		var hists []string
		for k, rk := range ranks {
			q := rk.Points[i]
			fi.Ranks = append(fi.Ranks, results.RankPoint{Rank: k + 1, Host: "node" + strconv.Itoa(k+1), Server: "node0:20049", Point: q})
			sums, hists = append(sums, q.RTT), append(hists, q.Histogram)
		}
		p := ranks[0].Points[i]
		p.Params.Connections = 0
		p.Throughput = results.Throughput{}
		p.Errors = []results.ErrorStats{}
		p.Classes = []results.ClassStats{}
		p.Intervals = nil
		for _, rp := range fi.Ranks {
			q := &rp.Point
			p.Params.Connections += q.Params.Connections
			p.Throughput.RPCs += q.Throughput.RPCs
			p.Throughput.PayloadBytes += q.Throughput.PayloadBytes
			p.Throughput.RPCPerSec += q.Throughput.RPCPerSec
			p.Throughput.PayloadGbps += q.Throughput.PayloadGbps
			if q.End.After(p.End) {
				p.End = q.End
			}
			p.Errors = append(p.Errors, q.Errors...)
		}
		p.DurationNs = int64(p.End.Sub(p.Start))
		var err error
		if p.RTT, p.Histogram, err = results.MergeSummaries(sums, hists); err != nil {
			tb.Fatal(err)
		}
		fi.Fairness()
		p.FanIn = &fi
		r.Points[i] = p
	}
	if err := r.Validate(); err != nil {
		tb.Fatal(err)
	}
	return r
}
