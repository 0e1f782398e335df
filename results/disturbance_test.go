package results

import (
	"strings"
	"testing"
)

func TestDisturbances(t *testing.T) {
	sec := int64(1e9)
	busy := func(cpuNs int64, invol uint64) PollerUsage {
		return PollerUsage{Poller: 0, CPU: 1, Poll: "busy", WallNs: sec, CPUNs: cpuNs, Involuntary: invol}
	}
	p := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name    string
		pollers []PollerUsage
		extra   int
		cpus    int
		other   *float64
		want    []string // substrings, one per reason, in order
	}{
		{"a quiet busy poller", []PollerUsage{busy(sec*99/100, 3)}, 1, 2, p(1), nil},
		{"descheduled", []PollerUsage{busy(sec*41/100, 412)}, 0, 2, nil, []string{"busy poller 0 (on CPU 1) ran 41% of the interval and was switched out 412 times (412/s)"}},
		{"switched out often", []PollerUsage{busy(sec*95/100, 800)}, 0, 2, nil, []string{"switched out 800 times"}},
		{"switched out now and then", []PollerUsage{busy(sec*98/100, 150)}, 1, 2, nil, nil},
		{"outnumbered", []PollerUsage{busy(sec, 0), {Poller: 1, CPU: -1, Poll: "busy", WallNs: sec, CPUNs: sec}}, 1, 2, nil,
			[]string{"3 spinning pollers for 2 CPUs"}},
		{"event pollers do not spin", []PollerUsage{{Poll: "event", WallNs: sec, CPUNs: sec / 10, Voluntary: 5000, Involuntary: 3}}, 0, 1, nil, nil},
		{"a hybrid poller that never slept spins", []PollerUsage{{Poll: "hybrid:50µs", CPU: -1, WallNs: sec, CPUNs: sec / 2}}, 1, 1, nil,
			[]string{"2 spinning pollers for 1 CPUs", "busy poller 0 (unpinned) ran 50%"}},
		{"a hybrid poller that slept", []PollerUsage{{Poll: "hybrid:50µs", WallNs: sec, CPUNs: sec / 2, Voluntary: 10}}, 0, 1, nil, nil},
		{"a neighbour", nil, 0, 2, p(35), []string{"other processes used 35% of the host CPU time"}},
		{"a quiet neighbour", nil, 0, 2, p(9), nil},
		{"no wall time", []PollerUsage{{Poll: "busy"}}, 0, 2, nil, nil},
	} {
		got := Disturbances(tc.pollers, tc.extra, tc.cpus, tc.other)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %q, want %d reasons %q", tc.name, got, len(tc.want), tc.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tc.want[i]) {
				t.Errorf("%s: reason %d is %q, want it to contain %q", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

func TestWriteTextWarnsOfDisturbance(t *testing.T) {
	r := &Run{SchemaVersion: SchemaVersion, Tool: "rpcrdma-bench", Status: Status{State: StateComplete},
		Points: []Point{{Params: Params{Procedure: "NULL", Depth: 1, Connections: 1, InlineThreshold: 4096}, Complete: true,
			Disturbed: []string{"3 spinning pollers for 2 CPUs: pollers outnumber the CPUs they may run on"}}}}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "warning: disturbed: NULL 0/0 B, threshold 4096, depth 1 × 1 connection(s) (3 spinning pollers for 2 CPUs") {
		t.Fatalf("no warning under the table:\n%s", b.String())
	}
	// Thirty disturbed points of a repeated run: one data-quality line, one warning line
	// naming the first few.
	for i := range 30 {
		p := r.Points[0]
		p.Round, p.Disturbed = i+1, []string{"other processes used 40% of the host CPU time"}
		r.Points = append(r.Points, p)
	}
	r.Points = r.Points[1:]
	b.Reset()
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "warning:"); n != 1 || !strings.Contains(b.String(), "round 3 (other processes used 40%") ||
		!strings.Contains(b.String(), "and 27 more") || strings.Count(b.String(), "data quality: 30 of 30 point(s) disturbed") != 1 {
		t.Fatalf("%d warning lines:\n%s", n, b.String())
	}
	r.Points = r.Points[:1]
	r.Points[0].Disturbed = nil
	b.Reset()
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "warning:") {
		t.Fatalf("a warning for an undisturbed point:\n%s", b.String())
	}
}
