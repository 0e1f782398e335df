package results_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/results/resultstest"
)

// faninRun is a fan-in of two ECHO points over three client ranks, rank 3 three times slower.
func faninRun(tb testing.TB) *results.Run {
	return resultstest.FanIn{Sweep: resultstest.Sweep{Seed: 5, Sizes: []int{64, 8192}, RPCs: 1000, FailSizes: []int{8192}},
		Slow: []float64{1, 1, 3}}.Run(tb)
}

// A fan-in point's CSV rows: the aggregate's, then a row per client rank marked rtt_class
// rank, with its rank and host, its own count, percentiles, rate and errors.
func TestWriteCSVFanInRanks(t *testing.T) {
	rows, col := csvOf(t, faninRun(t))
	var got []string
	for _, row := range rows[1:] {
		var cells []string
		for _, c := range []string{"call_bytes", "rtt_class", "rank", "host", "connections", "count", "p50_ns", "p99_ns", "rpc_per_s", "errors"} {
			cells = append(cells, row[col[c]])
		}
		got = append(got, strings.Join(cells, ","))
	}
	want := []string{
		"64,all,,,3,3000,4571,15967,557836.006,0",
		"64,rank,1,node1,1,1000,4167,5875,238054.485,0",
		"64,rank,2,node2,1,1000,4131,5803,239433.672,0",
		"64,rank,3,node3,1,1000,12295,17535,80347.848,0",
		"8192,all,,,3,3000,29391,103807,87228.041,3",
		"8192,rank,1,node1,1,1000,26463,37471,37465.405,1",
		"8192,rank,2,node2,1,1000,26415,37663,37274.148,1",
		"8192,rank,3,node3,1,1000,79231,108799,12488.488,1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// csvOf is r's CSV, rows and the index of each header.
func csvOf(t *testing.T, r *results.Run) ([][]string, map[string]int) {
	var b bytes.Buffer
	if err := results.WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	return rows, col
}
