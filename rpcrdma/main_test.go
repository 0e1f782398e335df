package rpcrdma

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if goroutines outlive the tests: every poller Serve starts, and
// every provider goroutine a connection causes, must be gone once the connections close.
func TestMain(m *testing.M) {
	before := goroutines()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(2 * time.Second)
		for len(goroutines()) > len(before) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if after := goroutines(); len(after) > len(before) {
			fmt.Fprintf(os.Stderr, "%d goroutines leaked:\n%s\n", len(after)-len(before), strings.Join(after, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// goroutines are the stacks of the goroutines running, except the runtime's and the
// testing package's own (signal handling, which fuzzing starts).
func goroutines() []string {
	buf := make([]byte, 1<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "os/signal.loop") || strings.Contains(g, "rpcrdma.TestMain") {
			continue
		}
		out = append(out, g)
	}
	return out
}
