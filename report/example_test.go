package report

import (
	"os"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// TestExample writes the report of a wider synthetic sweep, a second run and a failed one
// into $REPORT_OUT for a person to look at:
//
//	REPORT_OUT=/tmp/report-demo go test ./report -run TestExample
func TestExample(t *testing.T) {
	dir := os.Getenv("REPORT_OUT")
	if dir == "" {
		t.Skip("set REPORT_OUT=dir to write an example report")
	}
	wide := soft
	wide.Thresholds = []int{1024, 4096, 16384}
	wide.Sizes = []int{64, 512, 4096, 32768, 262144, 1 << 20}
	wide.Time = 60 * time.Millisecond
	x := rxe
	x.Sizes = wide.Sizes
	x.Time = 60 * time.Millisecond
	failed := x.Run(t)
	failed.Points = failed.Points[:2]
	failed.Points[1].Complete = false
	failed.Status = results.Status{State: results.StateFailed, Message: "rpc: remote access error (status 10) on RDMA READ"}
	h, m, err := Write([]*results.Run{wide.Run(t), x.Run(t), failed}, dir, Config{
		Title:   "rpcrdma-bench: soft vs rxe (synthetic)",
		Sources: []string{"soft-sweep.json", "rxe-sweep.json", "rxe-failed.json"},
	})
	t.Log(h, m, err)
	if err != nil {
		t.Fatal(err)
	}
}
