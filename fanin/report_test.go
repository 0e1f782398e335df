package fanin_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/fanin"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// Rank 0 says where the results went on the table's own stream, after it: mpirun forwards
// stdout and stderr separately, and a line on stderr lands anywhere in the table.
func TestReportSaysWhereAfterTheTable(t *testing.T) {
	r := &results.Run{SchemaVersion: results.SchemaVersion, Status: results.Status{State: results.StateComplete},
		Points: []results.Point{{Params: results.Params{Procedure: "ECHO", CallBytes: 64, ReplyBytes: 64, InlineThreshold: 4096, Depth: 1, Connections: 1}, Complete: true}}}
	c := &fanin.Command{Run: &session.RunConfig{Out: "fanin.json"}}
	var stdout, stderr bytes.Buffer
	if err := c.Report(&stdout, &stderr, r, nil); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if i := strings.Index(out, "results written to fanin.json\n"); i < 0 || i < strings.Index(out, "ECHO") || strings.Contains(stderr.String(), "results written") {
		t.Fatalf("stdout %q, stderr %q", out, stderr.String())
	}
}
