package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// A refused connection says what to check; other failures get no advice.
func TestHintForRefusedConnection(t *testing.T) {
	refused := fmt.Errorf("poller 0: open: rpcrdma: connect: %w", &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED})
	if h := hint(refused); !strings.Contains(h, "is 'rpcrdma-bench server' running") {
		t.Errorf("hint %q", h)
	}
	if h := hint(errors.New("checksum mismatch")); h != "" {
		t.Errorf("hint for another error: %q", h)
	}
}

// A results file that could not be written is reported with the rescue file's name, never as
// written where it was not, and fails the run.
func TestPrintOutcomeRescued(t *testing.T) {
	var out, errb strings.Builder
	run := &results.Run{Status: results.Status{State: results.StateComplete}}
	o := &Outcome{Run: run, WriteErr: errors.New("write x.json: no space left on device"), Written: "/tmp/rescued.json", Rescued: true}
	if o.Print(&out, &errb, "run", "x.json") {
		t.Fatal("a run whose results were not written printed as ok")
	}
	s := errb.String()
	if !strings.Contains(s, "no space left on device") || !strings.Contains(s, "results written to /tmp/rescued.json instead") || strings.Contains(s, "results written to x.json") {
		t.Fatalf("stderr:\n%s", s)
	}
	errb.Reset()
	o.WriteErrLogged, o.Rescued, o.Written, o.RescueErr = true, false, "", errors.New("read-only file system")
	o.Print(&out, &errb, "run", "x.json")
	if s := errb.String(); strings.Contains(s, "no space") || !strings.Contains(s, "results NOT written: the fallback failed too: read-only file system") {
		t.Fatalf("stderr:\n%s", s)
	}
}

// A server that closed the connection without a reason (verbs: rdma_disconnect carries
// none) is named as such, with where the reason is; one that gave its reason needs no hint.
func TestHintForReasonlessClose(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("poller 0: run: %w", err) }
	if h := hint(wrap(&datapath.DisconnectError{})); !strings.Contains(h, "the server's log says why") {
		t.Errorf("hint for a close without a reason: %q", h)
	}
	if h := hint(wrap(&datapath.DisconnectError{Reason: "server shutting down"})); h != "" {
		t.Errorf("hint for a close with a reason: %q, want none", h)
	}
}

// The table a measuring command prints ends with the data-quality line report adds.
func TestPrintDataQuality(t *testing.T) {
	other := 42.0
	o := &Outcome{Run: &results.Run{Status: results.Status{State: results.StateComplete}, Points: []results.Point{{
		Params:   results.Params{Procedure: "ECHO", CallBytes: 64, ReplyBytes: 64, InlineThreshold: 4096, Depth: 1, Connections: 1},
		Complete: true, RTT: results.Summary{Count: 10}, HostOtherCPU: &other,
		Disturbed: []string{"other processes used 42% of the host CPU time"}}}}}
	var stdout, stderr bytes.Buffer
	o.Print(&stdout, &stderr, "run", "")
	if !strings.Contains(stdout.String(), "\ndata quality: 1 of 1 point(s) disturbed") || strings.Count(stdout.String(), "warning:") != 1 {
		t.Fatalf("stdout %q", stdout.String())
	}
}
