package results

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

var cbNames = []string{"CB_NULL", "CB_COMPOUND"}

// recordBackchannel records n forward RPCs and, alongside, callbacks and recalls whose values
// depend on i only, so that any split of i over recorders must summarize the same.
func recordBackchannel(r *Recorder, i int) {
	r.Record(rpcproto.Short, rpcproto.Short, int64(10000+i), 8)
	if i%3 == 0 {
		r.RecordCallback(1, rpcproto.Short, int64(2000+7*i))
	}
	if i%50 == 0 {
		r.FailCallback(1, rpcproto.Short)
	}
	if i%10 == 0 {
		r.RecordRecall(int64(30000+i), int64(15000+2*i), int64(90000+5*i), uint64(i%3))
	}
	if i%25 == 0 {
		r.RecallNotGranted()
	}
}

// Callbacks and recalls are summarized apart from the forward RPCs, and merging recorders
// gives exactly what one recorder of all the samples gives (histograms merged, not
// percentiles averaged).
func TestBackchannelSummarize(t *testing.T) {
	one := NewRecorder()
	one.SetCallbacks(cbNames)
	many := []*Recorder{NewRecorder(), NewRecorder(), NewRecorder()}
	for _, r := range many[:2] {
		r.SetCallbacks(cbNames)
	}
	// many[2] has no SetCallbacks: its recalls allocate their histograms at the first one.
	for i := range 3000 {
		recordBackchannel(one, i)
		recordBackchannel(many[i%3], i)
	}
	a, err := Summarize(echo64, t0, t0.Add(1e9), one)
	if err != nil {
		t.Fatal(err)
	}
	if a.RTT.Count != 3000 || a.Throughput.RPCs != 3000 || len(a.Errors) != 0 {
		t.Errorf("forward RPCs: count %d, rpcs %d, errors %+v; want 3000, 3000, none", a.RTT.Count, a.Throughput.RPCs, a.Errors)
	}
	if len(a.Callbacks) != 1 || a.Callbacks[0].Procedure != "CB_COMPOUND" || a.Callbacks[0].RTT.Count != 1000 ||
		a.Callbacks[0].Errors != 60 || *a.Callbacks[0].RTT.Min != 2000 || *a.Callbacks[0].RTT.Max != 2000+7*2997 {
		t.Errorf("callbacks %+v, want one CB_COMPOUND row of 1000 calls from 2000 to 22979 ns and 60 errors", a.Callbacks)
	}
	if h, err := DecodeHistogram(a.Callbacks[0].Histogram); err != nil || h.TotalCount() != 1000 {
		t.Errorf("callbacks histogram: %v, err %v", h, err)
	}
	rc := a.Recalls
	if rc == nil || rc.Count != 300 || rc.NotGranted != 120 || rc.Retries != 300 ||
		*rc.Recall.RTT.Min != 30000 || *rc.DelegReturn.RTT.Max != 15000+2*2990 || *rc.Conflict.RTT.Max != 90000+5*2990 ||
		rc.Conflict.RTT.P50 == nil || rc.Conflict.RTT.P99 != nil {
		t.Fatalf("recalls %+v, want 300 recalls, 120 not granted, 300 retries", rc)
	}
	for _, l := range []*Latency{&rc.Recall, &rc.DelegReturn, &rc.Conflict} {
		if h, err := DecodeHistogram(l.Histogram); err != nil || uint64(h.TotalCount()) != rc.Count {
			t.Errorf("recall histogram: err %v", err)
		}
	}
	run := &Run{SchemaVersion: SchemaVersion, Start: t0, End: t0.Add(1e9), Status: Status{State: StateComplete}, Points: []Point{a}}
	if err := run.Validate(); err != nil {
		t.Errorf("summarized point does not validate: %v", err)
	}

	// The same samples split over recorders, one without the callbacks table: recalls merge
	// exactly; its callbacks were dropped, so compare the recorders that had the table.
	b, err := Summarize(echo64, t0, t0.Add(1e9), many...)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Recalls, b.Recalls) {
		t.Errorf("merged recalls differ:\n%+v\n%+v", a.Recalls, b.Recalls)
	}
	two := NewRecorder()
	two.SetCallbacks(cbNames)
	for i := range 3000 {
		if i%3 != 2 {
			recordBackchannel(two, i)
		}
	}
	c, err := Summarize(echo64, t0, t0.Add(1e9), two)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Callbacks, b.Callbacks) {
		t.Errorf("merged callbacks differ:\n%+v\n%+v", c.Callbacks, b.Callbacks)
	}

	// Reset clears them.
	one.Reset()
	one.Record(rpcproto.Short, rpcproto.Short, 1000, 8)
	if p, _ := Summarize(echo64, t0, t0.Add(1e9), one); p.Callbacks != nil || p.Recalls != nil {
		t.Errorf("after Reset: callbacks %+v, recalls %+v", p.Callbacks, p.Recalls)
	}
	// Recorders that disagree on the callback procedures do not merge.
	other := NewRecorder()
	other.SetCallbacks([]string{"CB_NULL", "CB_RECALL"})
	if _, err := Summarize(echo64, t0, t0.Add(1e9), many[0], other); err == nil {
		t.Error("merged recorders of different callback procedures")
	}
}

// Only a refused delegation: Recalls is there, with empty latencies.
func TestRecallNotGrantedOnly(t *testing.T) {
	r := NewRecorder()
	r.RecallNotGranted()
	p, err := Summarize(echo64, t0, t0.Add(1e9), r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Recalls == nil || p.Recalls.NotGranted != 1 || p.Recalls.Count != 0 || p.Recalls.Conflict.RTT.Count != 0 || p.Recalls.Conflict.Histogram == "" {
		t.Fatalf("recalls %+v", p.Recalls)
	}
	run := &Run{SchemaVersion: SchemaVersion, Start: t0, End: t0.Add(time.Second), Status: Status{State: StateComplete}, Points: []Point{p}}
	if err := run.Validate(); err != nil {
		t.Error(err)
	}
}

func TestRecordBackchannelNoAllocs(t *testing.T) {
	r := NewRecorder()
	r.SetCallbacks(cbNames)
	var v int64
	allocs := testing.AllocsPerRun(1000, func() {
		v += 997
		r.RecordCallback(0, rpcproto.Short, v%5e6)
		r.RecordCallback(1, rpcproto.Short, -1)
		r.RecordCallback(7, rpcproto.Short, v) // out of the table: ignored
		r.FailCallback(1, rpcproto.Short)
		r.RecordRecall(v%5e6, v%1e6, 1<<62, 2)
		r.RecallNotGranted()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per recording, want 0", allocs)
	}
}

// backchannelRun is a valid run of one point with callbacks and recalls.
func backchannelRun(t *testing.T) *Run {
	t.Helper()
	r := NewRecorder()
	r.SetCallbacks(cbNames)
	for i := range 3000 {
		recordBackchannel(r, i)
	}
	r.RecordCallback(0, rpcproto.Short, 500)
	p, err := Summarize(echo64, t0, t0.Add(1e9), r)
	if err != nil {
		t.Fatal(err)
	}
	p.Complete = true
	return &Run{SchemaVersion: SchemaVersion, Start: t0, End: t0.Add(time.Second), Status: Status{State: StateComplete},
		Config: []byte("null"), Points: []Point{p}}
}

// Nonsense in callbacks or recalls is rejected naming the field; the fields do not exist
// before schema version 7, and a version-6 file without them stays valid.
func TestValidateBackchannel(t *testing.T) {
	good := backchannelRun(t)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Points[0].Callbacks, good.Points[0].Callbacks) || !reflect.DeepEqual(back.Points[0].Recalls, good.Points[0].Recalls) {
		t.Errorf("read back callbacks %+v recalls %+v", back.Points[0].Callbacks, back.Points[0].Recalls)
	}
	for _, c := range []struct {
		name, want string
		edit       func(r *Run)
	}{
		{"callbacks in version 6", "points[0].callbacks: not in schema_version 6 (added in 7)", func(r *Run) { r.SchemaVersion = 6 }},
		{"recalls in version 6", "points[0].recalls: not in schema_version 6 (added in 7)", func(r *Run) { r.SchemaVersion = 6; r.Points[0].Callbacks = nil }},
		{"procedure histogram in version 6", "points[0].procedures[0].rtt_histogram: not in schema_version 6 (added in 7)", func(r *Run) {
			r.SchemaVersion, r.Points[0].Callbacks, r.Points[0].Recalls = 6, nil, nil
			r.Points[0].Procedures = []ProcStats{{Procedure: "read", RTT: r.Points[0].RTT, Histogram: r.Points[0].Histogram}}
		}},
		{"procedure histogram of another count", "points[0].procedures[0].rtt_histogram: holds 1 samples, count is 3000", func(r *Run) {
			r.Points[0].Procedures = []ProcStats{{Procedure: "read", RTT: r.Points[0].RTT, Histogram: r.Points[0].Callbacks[0].Histogram}}
		}},
		{"unnamed callback", `points[0].callbacks[1].procedure: "" empty or listed twice`, func(r *Run) { r.Points[0].Callbacks[1].Procedure = "" }},
		{"callback twice", `points[0].callbacks[1].procedure: "CB_NULL" empty or listed twice`, func(r *Run) { r.Points[0].Callbacks[1].Procedure = "CB_NULL" }},
		{"callback of an unknown class", `points[0].callbacks[0].class: "bogus": want short, chunked or long`, func(r *Run) {
			r.Points[0].Callbacks[0].Class = "bogus"
		}},
		{"procedure row with a class", `points[0].procedures[0].class: "short": a procedure's row spans its classes`, func(r *Run) {
			r.Points[0].Procedures = []ProcStats{{Procedure: "read", Class: "short", RTT: r.Points[0].RTT}}
		}},
		{"empty callback row", "points[0].callbacks[0].rtt.count: 0 and no errors", func(r *Run) {
			r.Points[0].Callbacks[0] = ProcStats{Procedure: "CB_NULL"}
		}},
		{"callback histogram corrupt", "points[0].callbacks[1].rtt_histogram: decode histogram", func(r *Run) { r.Points[0].Callbacks[1].Histogram = "HISTFAAAA" }},
		{"callback histogram of another count", "points[0].callbacks[1].rtt_histogram: holds 1 samples, count is 1000", func(r *Run) {
			r.Points[0].Callbacks[1].Histogram = r.Points[0].Callbacks[0].Histogram
		}},
		{"callback percentile unsupported", "points[0].callbacks[1].rtt.p999_ns: present but count 1000", func(r *Run) {
			r.Points[0].Callbacks[1].RTT.P999 = r.Points[0].Callbacks[1].RTT.Max
		}},
		{"empty recalls", "points[0].recalls.count: 0 with not_granted 0", func(r *Run) { r.Points[0].Recalls = &Recalls{} }},
		{"retries without recalls", "points[0].recalls.retries: 3 with count 0", func(r *Run) { r.Points[0].Recalls = &Recalls{NotGranted: 1, Retries: 3} }},
		{"recall count differs", "points[0].recalls.recall.rtt.count: 300, count is 301", func(r *Run) { r.Points[0].Recalls.Count = 301 }},
		{"delegreturn count differs", "points[0].recalls.delegreturn.rtt.count: 299, count is 300", func(r *Run) { r.Points[0].Recalls.DelegReturn.RTT.Count = 299 }},
		{"conflict histogram", "points[0].recalls.conflict.rtt_histogram: decode histogram", func(r *Run) { r.Points[0].Recalls.Conflict.Histogram = "" }},
		{"conflict min above max", "points[0].recalls.conflict.rtt.min_ns", func(r *Run) { r.Points[0].Recalls.Conflict.RTT.Min = ptr(int64(1e12)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := backchannelRun(t)
			c.edit(r)
			err := r.Validate()
			var fe *FieldError
			if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate: %v, want a *FieldError saying %q", err, c.want)
			}
		})
	}
	old := backchannelRun(t)
	old.SchemaVersion = 6
	old.Points[0].Callbacks, old.Points[0].Recalls = nil, nil
	if err := old.Validate(); err != nil {
		t.Errorf("a version-6 point without callbacks or recalls: %v", err)
	}
}

// The text report shows a point's callbacks and recalls under the table, exactly so.
func TestWriteTextBackchannel(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, backchannelRun(t)); err != nil {
		t.Fatal(err)
	}
	want := `run 2026-11-22 04:00:00Z .. 04:00:01  complete
host   kernel   cpu    GOMAXPROCS=0  provider   device - port 0

  proc  call  reply   thr  depth  conns  class  count  RTT p50 µs  p90 µs  p99 µs  p99.9 µs  max µs  RPC/s  payload Gb/s  errors
  ECHO    64     64  4096      1      1  short   3000       11.50   12.70   12.97         -   13.00   3000         0.000       0
call, reply: payload bytes; thr: inline threshold in effect, bytes; count: RPCs measured.
RTT: full round trip, call sent to reply received. payload Gb/s: call + reply payload of the point, headers excluded.
-: too few RTTs for this percentile (it needs at least 10 beyond it); never estimated.
callbacks of ECHO 64/64 B, threshold 4096, depth 1 × 1 connection(s): the peer's calls over its connections (RFC 8167), µs from a call's arrival to the completion of the reply's Send (calls answered with a failure: errors, untimed):
           proc  class  calls  p50 µs  p99 µs  max µs  errors
        CB_NULL  short      1       -       -    0.50       0
    CB_COMPOUND  short   1060   12.48   22.78   22.98      60
delegation recalls of ECHO 64/64 B, threshold 4096, depth 1 × 1 connection(s): 300 recalled and returned, 120 not granted, 300 retries (NFS4ERR_DELAY), µs:
        latency  count  p50 µs  p90 µs  p99 µs  max µs
         recall    300   31.50   32.70       -   32.99
    delegreturn    300   17.98   20.38       -   20.98
       conflict    300   97.47  103.49       -  104.95
  recall: conflicting OPEN sent to CB_RECALL's arrival; delegreturn: DELEGRETURN's round trip; conflict: conflicting OPEN first sent to its success.
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// Points' callbacks and recalls merge (as a fan-in merges its ranks') exactly as the
// recorders of all their samples summarize: histograms added, percentiles read from the sum.
func TestMergeBackchannel(t *testing.T) {
	recs := []*Recorder{NewRecorder(), NewRecorder(), NewRecorder()}
	all := NewRecorder()
	for _, r := range append(recs, all) {
		r.SetCallbacks(cbNames)
	}
	for i := range 3000 {
		recordBackchannel(all, i)
		recordBackchannel(recs[i%3], i)
	}
	recs[1].RecordCallback(0, rpcproto.Short, 700)
	all.RecordCallback(0, rpcproto.Short, 700)
	var cbs [][]ProcStats
	var rcs []*Recalls
	for _, r := range recs {
		p, err := Summarize(echo64, t0, t0.Add(1e9), r)
		if err != nil {
			t.Fatal(err)
		}
		cbs, rcs = append(cbs, p.Callbacks), append(rcs, p.Recalls)
	}
	want, err := Summarize(echo64, t0, t0.Add(1e9), all)
	if err != nil {
		t.Fatal(err)
	}
	gotCbs, err := MergeCallbacks(cbs)
	if err != nil {
		t.Fatal(err)
	}
	gotRc, err := MergeRecalls(append(rcs, nil))
	if err != nil {
		t.Fatal(err)
	}
	// The mean and deviation are pooled from the parts' rounded ones: within 1 ns.
	same := func(name string, a, b Summary, ha, hb string) {
		t.Helper()
		if ha != hb {
			t.Errorf("%s: histograms differ", name)
		}
		if d := *a.Mean - *b.Mean; d < -1 || d > 1 {
			t.Errorf("%s: mean %d, want %d", name, *a.Mean, *b.Mean)
		}
		a.Mean, b.Mean, a.Stdev, b.Stdev = nil, nil, nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: %+v, want %+v", name, a, b)
		}
	}
	if len(gotCbs) != 2 || gotCbs[0].Procedure != "CB_NULL" || gotCbs[1].Errors != want.Callbacks[1].Errors {
		t.Fatalf("merged callbacks %+v, want %+v", gotCbs, want.Callbacks)
	}
	for i := range gotCbs {
		same(gotCbs[i].Procedure, gotCbs[i].RTT, want.Callbacks[i].RTT, gotCbs[i].Histogram, want.Callbacks[i].Histogram)
	}
	if gotRc.Count != want.Recalls.Count || gotRc.NotGranted != want.Recalls.NotGranted || gotRc.Retries != want.Recalls.Retries {
		t.Errorf("merged recalls %+v, want %+v", gotRc, want.Recalls)
	}
	wl := want.Recalls.Latencies()
	for i, l := range gotRc.Latencies() {
		same(l.Name, l.Latency.RTT, wl[i].Latency.RTT, l.Latency.Histogram, wl[i].Latency.Histogram)
	}
	if m, err := MergeRecalls([]*Recalls{nil}); m != nil || err != nil {
		t.Errorf("no recalls merged into %+v, %v", m, err)
	}
	cbs[0][0].Histogram = ""
	if _, err := MergeCallbacks(cbs); err == nil || !strings.Contains(err.Error(), "CB_COMPOUND has no histogram") {
		t.Errorf("a row without a histogram merged: %v", err)
	}
}

// A "-" shown only in the callbacks rows is explained too.
func TestWriteTextBackchannelMissing(t *testing.T) {
	one := int64(500)
	p := Point{Params: echo64, Complete: true, Callbacks: []ProcStats{{Procedure: "CB_NULL", RTT: Summary{Count: 1, Min: &one, Max: &one, Mean: &one}}}}
	var b strings.Builder
	if err := WriteText(&b, &Run{Points: []Point{p}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "-: too few RTTs") {
		t.Errorf("no legend for the callbacks' -:\n%s", b.String())
	}
}

// TestCallbacksByClass: a procedure's callbacks that came in different classes are rows of
// their own, like forward RPCs' classes; a class that is no message class is not counted.
func TestCallbacksByClass(t *testing.T) {
	r := NewRecorder()
	r.SetCallbacks([]string{"cb_null", "cb_compound"})
	r.RecordCallback(1, rpcproto.Short, 1000)
	r.RecordCallback(1, rpcproto.Short, 3000)
	r.RecordCallback(1, rpcproto.Long, 9000)
	r.FailCallback(1, rpcproto.Chunked)
	r.RecordCallback(1, rpcproto.Auto, 5000)
	p, err := Summarize(Params{}, time.Time{}, time.Time{}, r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Callbacks {
		got = append(got, fmt.Sprintf("%s/%s:%d+%d", c.Procedure, c.Class, c.RTT.Count, c.Errors))
	}
	if want := "cb_compound/short:2+0 cb_compound/chunked:0+1 cb_compound/long:1+0"; strings.Join(got, " ") != want {
		t.Errorf("callbacks rows %q, want %q", strings.Join(got, " "), want)
	}
}
