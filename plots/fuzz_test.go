package plots

import (
	"io"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// mutate applies the edits data encodes, two bytes each (what, which point and a value), to a
// copy of r: the odd values a hand-made or damaged results file can hold.
func mutate(r *results.Run, data []byte) *results.Run {
	r = clone(r)
	for len(data) >= 2 && len(r.Points) > 0 {
		op, arg := data[0], data[1]
		data = data[2:]
		p := &r.Points[int(arg)%len(r.Points)]
		big := int(arg) << (arg % 40)
		switch op % 18 {
		case 0:
			p.RTT.Count = uint64(arg)
		case 1:
			p.Histogram = ""
		case 2:
			p.Histogram = p.Histogram[:min(len(p.Histogram), int(arg))]
		case 3:
			p.Params.CallBytes = big
		case 4:
			p.Params.ReplyBytes = -big
		case 5:
			p.Params.InlineThreshold = big
		case 6:
			v := -int64(arg)
			p.RTT.P50, p.RTT.P99 = &v, nil
		case 7:
			p.Throughput.RPCPerSec = []float64{math.NaN(), math.Inf(1), -1, 0}[arg%4]
		case 8:
			p.Throughput.PayloadGbps, p.Throughput.RPCs = math.Inf(-1), uint64(arg)
		case 9:
			for i := range p.Intervals {
				p.Intervals[i].DurationNs -= int64(arg) * int64(time.Second)
				p.Intervals[i].OffsetNs = int64(big) << 20
			}
		case 10:
			p.Intervals = nil
		case 11:
			p.Negotiated = nil
		case 12:
			p.Classes = slices.Clone(p.Classes)
			for i := range p.Classes {
				p.Classes[i].Class = string(rune('a' + arg%26))
			}
		case 13:
			p.Params.Procedure = string(rune('A' + arg%26))
		case 14:
			p.Params.Depth = int(arg)
		case 15:
			if len(r.Points) > 1 {
				r.Points = slices.Delete(r.Points, int(arg)%len(r.Points), int(arg)%len(r.Points)+1)
			}
		case 16:
			r.Points = append(r.Points, *p)
		case 17:
			p.Start = p.Start.Add(-time.Duration(big) * time.Hour)
		}
	}
	return r
}

// FuzzCharts checks that no results a file can hold makes a chart panic: every chart that
// builds also encodes, and no chart at all comes with an error, never silence.
func FuzzCharts(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 3, 1, 4, 7, 0})
	f.Add([]byte{3, 200, 4, 17, 5, 0, 15, 1})
	f.Add([]byte{9, 5, 10, 2, 11, 3, 12, 4, 16, 0, 17, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _ := testRuns(t)
		base := clone(s)
		base.Points = []results.Point{s.Points[0], s.Points[8], s.Points[13]}
		r := mutate(base, data)
		charts, err := Charts([]*results.Run{r})
		if len(charts) == 0 && err == nil {
			t.Fatal("no chart and no error")
		}
		for _, c := range charts {
			if err := c.Encode(io.Discard, "svg"); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
	})
}
