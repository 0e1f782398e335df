package results_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// mixRun is a run of the shapes whose payload has no one size: a mix of several procedures
// (with a row per procedure) and one procedure whose size varies per RPC.
func mixRun(t *testing.T) *results.Run {
	t.Helper()
	r := makeRun(t, 3, 1, 1000, 1)
	r.Points = r.Points[:2]
	rng := rand.New(rand.NewPCG(7, 7))
	start := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	mix := results.NewRecorder()
	mix.SetProcedures([]string{"null", "echo", "source"})
	for i := range 3000 {
		rtt := 3000 + rng.Int64N(2000)
		proc, class, size := i%3, rpcproto.Short, 0
		switch proc {
		case 1:
			size = 128
		case 2:
			class, size, rtt = rpcproto.Chunked, 32768, rtt+5000
		}
		mix.Record(rpcproto.Short, class, rtt, size)
		mix.RecordProc(proc, rtt)
	}
	p, err := results.Summarize(results.Params{Procedure: "MIX:null+echo_128+source_32k", Class: "auto",
		InlineThreshold: 4096, Depth: 16, Connections: 1}, start, start.Add(time.Second), mix)
	if err != nil {
		t.Fatal(err)
	}
	p.Complete = true
	varied := results.NewRecorder()
	for i := range 2000 {
		size, class := 64, rpcproto.Short
		if i%2 == 1 {
			size, class = 4096, rpcproto.Long
		}
		varied.Record(class, class, 4000+rng.Int64N(3000), 2*size)
	}
	q, err := results.Summarize(results.Params{Procedure: "ECHO", Class: "auto", CallSizes: "64,4k", ReplySizes: "64,4k",
		InlineThreshold: 4096, Depth: 16, Connections: 1}, start.Add(time.Second), start.Add(2*time.Second), varied)
	if err != nil {
		t.Fatal(err)
	}
	q.Complete = true
	r.Points[0], r.Points[1] = p, q
	r.Start, r.End = start, start.Add(2*time.Second)
	if _, err := results.Marshal(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A mix's text table names what was measured, never a size of 0, with a row per procedure.
func TestMixText(t *testing.T) {
	var b bytes.Buffer
	if err := results.WriteText(&b, mixRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "mix.txt", b.Bytes())
	out := b.String()
	for _, bad := range []string{"ECHO  0  0", " 0/0 B", "call=0/reply=0"} {
		if strings.Contains(out, bad) {
			t.Errorf("the table shows %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"mixed  mixed", "  NULL  mixed", "  SOURCE  mixed", "ECHO  64,4k  64,4k"} {
		if !strings.Contains(strings.Join(strings.Fields(out), "  "), strings.Join(strings.Fields(want), "  ")) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// A mix's CSV has its total, then a row per procedure; varied sizes are named, not 0.
func TestMixCSV(t *testing.T) {
	r := mixRun(t)
	var b bytes.Buffer
	if err := results.WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "mix.csv", b.Bytes())
	rows, col := csvOf(t, r)
	var procs []string
	for _, row := range rows[1:] {
		if row[col["rtt_class"]] == "procedure" {
			procs = append(procs, row[col["mix_procedure"]])
			if row[col["count"]] != "1000" {
				t.Errorf("%s: count %s, want 1000", row[col["mix_procedure"]], row[col["count"]])
			}
		}
		if row[col["call_bytes"]] == "0" && row[col["procedure"]] != "NULL" {
			t.Errorf("a row says call_bytes 0: %q", row)
		}
		if row[col["procedure"]] == "ECHO" && (row[col["call_sizes"]] != "64,4k" || row[col["call_bytes"]] != "") {
			t.Errorf("varied ECHO row: call_bytes %q, call_sizes %q", row[col["call_bytes"]], row[col["call_sizes"]])
		}
	}
	if strings.Join(procs, ",") != "null,echo,source" {
		t.Errorf("procedure rows %q, want null,echo,source", procs)
	}
}

// Keys and warnings name a mix's payload as mixed and a varied one by its sizes.
func TestPayloadLabels(t *testing.T) {
	for _, c := range []struct {
		p            results.Params
		key, payload string
	}{
		{results.Params{Procedure: "MIX:nfs-like"}, "proc=MIX:nfs-like/call=mixed/reply=mixed/", "mixed sizes"},
		{results.Params{Procedure: "ECHO", CallSizes: "64,4k", ReplySizes: "64,4k"}, "proc=ECHO/call=64,4k/reply=64,4k/", "64,4k/64,4k B"},
		{results.Params{Procedure: "SOURCE", ReplySizes: "uniform:1k-64k"}, "proc=SOURCE/call=0/reply=uniform:1k-64k/", "0/uniform:1k-64k B"},
		{results.Params{Procedure: "ECHO", CallBytes: 64, ReplyBytes: 64}, "proc=ECHO/call=64/reply=64/", "64/64 B"},
		{results.Params{Procedure: "NULL"}, "proc=NULL/call=0/reply=0/", "0/0 B"},
	} {
		if k := c.p.Key(); !strings.HasPrefix(k, c.key) {
			t.Errorf("%+v: key %q, want prefix %q", c.p, k, c.key)
		}
		if got := c.p.PayloadLabel(); got != c.payload {
			t.Errorf("%+v: payload %q, want %q", c.p, got, c.payload)
		}
	}
}

// A repeated measurement's table shows each point's rounds together, in round order, then
// their median, whatever order the rounds ran the points in.
func TestRoundsTogetherWithMedian(t *testing.T) {
	src := makeRun(t, 4, 1, 1000, 1)
	a, b := src.Points[0], src.Points[1]
	r := *src
	r.Points = nil
	for round, first := range []bool{true, false, true} { // a shuffled order per round
		pa, pb := a, b
		pa.Round, pb.Round = round+1, round+1
		pa.Throughput.RPCPerSec, pb.Throughput.RPCPerSec = float64(100*(round+1)), float64(1000*(3-round))
		if first {
			r.Points = append(r.Points, pa, pb)
		} else {
			r.Points = append(r.Points, pb, pa)
		}
	}
	var buf bytes.Buffer
	if err := results.WriteText(&buf, &r); err != nil {
		t.Fatal(err)
	}
	var rounds, rates []string
	for _, l := range strings.Split(buf.String(), "\n") {
		f := strings.Fields(l)
		if len(f) > 10 && (f[6] == "short" || f[6] == "all" || f[6] == "chunked" || f[6] == "long") && f[len(f)-1] != "round" {
			rounds = append(rounds, f[len(f)-1])
			rates = append(rates, f[len(f)-4])
		}
	}
	if got := strings.Join(rounds, ","); got != "1,2,3,median,1,2,3,median" {
		t.Fatalf("rounds %s:\n%s", got, buf.String())
	}
	if rates[3] != "200" || rates[7] != "2000" {
		t.Errorf("median RPC/s %s and %s, want 200 and 2000:\n%s", rates[3], rates[7], buf.String())
	}
}

// A sweep of one threshold has no best threshold to choose: one line says so, not a row per
// point repeating it.
func TestThresholdsOfOneThreshold(t *testing.T) {
	r := resultstest.Sweep{Seed: 5, Thresholds: []int{4096}, Sizes: []int{64, 4096, 65536}, RPCs: 1000}.Run(t)
	var b bytes.Buffer
	if err := results.WriteThresholds(&b, results.BestThresholds([]*results.Run{r}, 0)); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "only one threshold measured (4k)") {
		t.Errorf("%q", got)
	}
}
