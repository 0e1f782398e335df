package fanin

import (
	"fmt"
	"slices"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// mergePoint merges the client ranks' points of one point (rps, in rank order) into the
// point rank 0's file holds: the round trips of every rank in one histogram, the throughput
// summed, the connections of all ranks, the window from the first start to the last end,
// and the FanIn that keeps every rank's own point and how evenly they ran.
func mergePoint(rps []results.RankPoint, fi results.FanIn) (results.Point, error) {
	if len(rps) == 0 {
		return results.Point{}, fmt.Errorf("merge: no rank measured the point")
	}
	first := &rps[0].Point
	p := results.Point{Params: first.Params, Complete: true, Negotiated: first.Negotiated, Round: first.Round,
		Classes: []results.ClassStats{}, Errors: []results.ErrorStats{}, Intervals: []results.Interval{}}
	p.Params.Connections = 0
	p.Start, p.End = rank0(&rps[0], first.Start), rank0(&rps[0], first.End)
	sums, hists := make([]results.Summary, len(rps)), make([]string, len(rps))
	peer := true
	var peerOps results.Ops
	for i := range rps {
		q := &rps[i].Point
		p.Params.Connections += q.Params.Connections
		p.Complete = p.Complete && q.Complete
		p.Start, p.End = minTime(p.Start, rank0(&rps[i], q.Start)), maxTime(p.End, rank0(&rps[i], q.End))
		sums[i], hists[i] = q.RTT, q.Histogram
		addOps(&p.Ops, &q.Ops)
		if q.PeerOps == nil {
			peer = false
		} else {
			addOps(&peerOps, q.PeerOps)
			p.PeerOpsInferred = p.PeerOpsInferred || q.PeerOpsInferred
		}
		t := &p.Throughput
		t.RPCs += q.Throughput.RPCs
		t.PayloadBytes += q.Throughput.PayloadBytes
		t.RPCPerSec += q.Throughput.RPCPerSec
		t.PayloadGbps += q.Throughput.PayloadGbps
		p.CPU.UserNs += q.CPU.UserNs
		p.CPU.SysNs += q.CPU.SysNs
		for _, e := range q.Errors {
			addError(&p.Errors, e, rps[i].Rank)
		}
		for _, d := range q.Disturbed {
			p.Disturbed = append(p.Disturbed, fmt.Sprintf("rank %d: %s", rps[i].Rank, d))
		}
	}
	if peer {
		p.PeerOps = &peerOps
	}
	p.DurationNs = int64(p.End.Sub(p.Start))
	var err error
	if p.RTT, p.Histogram, err = results.MergeSummaries(sums, hists); err != nil {
		return results.Point{}, err
	}
	if p.Classes, err = mergeClasses(rps); err != nil {
		return results.Point{}, err
	}
	prs, cbs, rcs := make([][]results.ProcStats, len(rps)), make([][]results.ProcStats, len(rps)), make([]*results.Recalls, len(rps))
	for i := range rps {
		prs[i], cbs[i], rcs[i] = rps[i].Point.Procedures, rps[i].Point.Callbacks, rps[i].Point.Recalls
	}
	if p.Procedures, err = results.MergeProcedures(prs); err != nil {
		return results.Point{}, err
	}
	if p.Callbacks, err = results.MergeCallbacks(cbs); err != nil {
		return results.Point{}, err
	}
	if p.Recalls, err = results.MergeRecalls(rcs); err != nil {
		return results.Point{}, err
	}
	if len(fi.Failed) > 0 {
		p.Complete = false
	}
	fi.Ranks = rps
	fi.Overlap = overlap(rps)
	fi.Fairness()
	fi.SkewNs, fi.SkewErrorNs = skew(rps)
	p.FanIn = &fi
	return p, nil
}

// rank0 is rp's clock reading t in rank 0's clock.
func rank0(rp *results.RankPoint, t time.Time) time.Time {
	return t.Add(time.Duration(rp.ClockOffsetNs))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func addOps(a, b *results.Ops) {
	for _, x := range []struct{ a, b *results.OpCount }{{&a.Send, &b.Send}, {&a.SendInv, &b.SendInv},
		{&a.Write, &b.Write}, {&a.Read, &b.Read}, {&a.Recv, &b.Recv}, {&a.LocalInv, &b.LocalInv}, {&a.BindMW, &b.BindMW}} {
		x.a.Count += x.b.Count
		x.a.Bytes += x.b.Bytes
	}
}

// addError adds rank's errors of one kind to errs, its messages naming the rank.
func addError(errs *[]results.ErrorStats, e results.ErrorStats, rank int) {
	i := slices.IndexFunc(*errs, func(x results.ErrorStats) bool { return x.Kind == e.Kind })
	if i < 0 {
		*errs = append(*errs, results.ErrorStats{Kind: e.Kind, Messages: []string{}})
		i = len(*errs) - 1
	}
	x := &(*errs)[i]
	x.Count += e.Count
	for _, m := range e.Messages {
		if len(x.Messages) < results.MaxErrorMessages {
			x.Messages = append(x.Messages, fmt.Sprintf("rank %d: %s", rank, m))
		}
	}
}

// mergeClasses merges the ranks' per-class statistics, class by class, histograms exactly.
func mergeClasses(rps []results.RankPoint) ([]results.ClassStats, error) {
	var out []results.ClassStats
	for _, class := range []string{"short", "chunked", "long"} {
		var sums []results.Summary
		var hists []string
		cs := results.ClassStats{Class: class}
		for i := range rps {
			for _, c := range rps[i].Point.Classes {
				if c.Class == class {
					cs.Calls += c.Calls
					cs.Replies += c.Replies
					sums, hists = append(sums, c.RTT), append(hists, c.Histogram)
				}
			}
		}
		if len(sums) == 0 {
			continue
		}
		var err error
		if cs.RTT, cs.Histogram, err = results.MergeSummaries(sums, hists); err != nil {
			return nil, fmt.Errorf("class %s: %w", class, err)
		}
		out = append(out, cs)
	}
	if out == nil {
		out = []results.ClassStats{}
	}
	return out, nil
}

// overlap is the share of the longest measured interval during which every rank measured,
// in rank 0's clock, at least: each rank's interval is shrunk by its clock's error bound at
// both ends.
func overlap(rps []results.RankPoint) float64 {
	if len(rps) == 1 {
		return 1
	}
	bound := func(rp *results.RankPoint) time.Duration { return time.Duration(rp.ClockErrorNs) }
	start, end := rank0(&rps[0], rps[0].Point.Start).Add(bound(&rps[0])), rank0(&rps[0], rps[0].Point.End).Add(-bound(&rps[0]))
	var longest time.Duration
	for i := range rps {
		q := &rps[i].Point
		start, end = maxTime(start, rank0(&rps[i], q.Start).Add(bound(&rps[i]))), minTime(end, rank0(&rps[i], q.End).Add(-bound(&rps[i])))
		longest = max(longest, q.End.Sub(q.Start))
	}
	if longest <= 0 {
		return 1
	}
	return min(1, max(0, float64(end.Sub(start))/float64(longest)))
}

// skew is the spread of the ranks' clocks read as the point's start verdict arrived, in
// rank 0's clock, and its error bound: the two largest of the ranks' bounds added (the
// spread is between two ranks' readings).
func skew(rps []results.RankPoint) (int64, int64) {
	lo := rank0(&rps[0], rps[0].StartClock)
	hi := lo
	var e1, e2 int64 // the largest bounds
	for i := range rps {
		t := rank0(&rps[i], rps[i].StartClock)
		lo, hi = minTime(lo, t), maxTime(hi, t)
		if e := rps[i].ClockErrorNs; e > e1 {
			e1, e2 = e, e1
		} else if e > e2 {
			e2 = e
		}
	}
	if len(rps) == 1 {
		return 0, 0
	}
	return int64(hi.Sub(lo)), e1 + e2
}
