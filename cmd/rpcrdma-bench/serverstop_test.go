package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A server stopped with SIGTERM mid-run (two processes, soft over TCP) closes its
// connections with a reason, and the client prints it: the server closed the connection,
// because it is shutting down, not a generic broken connection.
func TestClientSaysServerStopped(t *testing.T) {
	log := clientWhenServerStops(t, filepath.Join(t.TempDir(), "client.json"), 500*time.Millisecond,
		func(p *os.Process) error { return p.Signal(syscall.SIGTERM) })
	if want := "the server closed the connection: server shutting down"; !strings.Contains(log, want) {
		t.Fatalf("the client's output lacks %q:\n%s", want, log)
	}
}

// clientWhenServerStops runs `server` and a `client` writing out as two processes (soft over
// TCP), stops the server with stop once the client has measured for after, and returns the
// client's output once it has exited with exitFailed (else the test fails).
func clientWhenServerStops(t *testing.T, out string, after time.Duration, stop func(*os.Process) error) string {
	t.Helper()
	srv := exec.Command(os.Args[0], "-test.run=^$")
	srv.Env = append(os.Environ(), "RPCRDMA_BENCH_MAIN=server\n--listen\n127.0.0.1:0")
	srvErr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	sc := bufio.NewScanner(srvErr)
	addr := ""
	for sc.Scan() {
		if _, a, ok := strings.Cut(sc.Text(), "listening on "); ok {
			addr, _, _ = strings.Cut(a, " ")
			break
		}
	}
	if addr == "" {
		t.Fatal("the server never said where it listens")
	}
	go io.Copy(io.Discard, srvErr)

	cl := exec.Command(os.Args[0], "-test.run=^$")
	cl.Env = append(os.Environ(), "RPCRDMA_BENCH_MAIN="+strings.Join([]string{"client", "--addr", addr, "--duration", "1h", "--warmup", "0", "--out", out}, "\n"))
	clErr, err := cl.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Start(); err != nil {
		t.Fatal(err)
	}
	defer cl.Process.Kill()
	csc := bufio.NewScanner(clErr)
	var log strings.Builder
	for csc.Scan() {
		log.WriteString(csc.Text() + "\n")
		if strings.HasPrefix(csc.Text(), "client point") {
			break
		}
	}
	time.Sleep(after)
	if err := stop(srv.Process); err != nil {
		t.Fatal(err)
	}
	for csc.Scan() {
		log.WriteString(csc.Text() + "\n")
	}
	err = cl.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailed {
		t.Fatalf("client exit: %v, want %d\n%s", err, exitFailed, log.String())
	}
	return log.String()
}
