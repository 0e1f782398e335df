// Command conncost measures what connections cost a running `rpcrdma-bench server` (soft
// provider over TCP): it opens N connections, sends one NULL on each, holds them idle, and
// reports the server's resident memory and CPU time before, with the connections held, and
// the connections the server refused (--max-connections). It finds the server by its PID.
//
//	conncost -addr 127.0.0.1:20049 -pid 1234 -conns 100 -hold 10s
//
// prints
//
//	CONNCOST conns=100 opened=100 refused=0 rss_before_kib=.. rss_held_kib=.. per_conn_kib=.. cpu_held_pct=..
//
// scripts/conncost.sh runs it next to a measuring client.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:20049", "server address")
	pid := flag.Int("pid", 0, "the server's process id (for its RSS and CPU time)")
	conns := flag.Int("conns", 100, "connections to open")
	hold := flag.Duration("hold", 10*time.Second, "how long to hold them idle")
	credits := flag.Int("credits", 1, "credits each connection requests")
	flag.Parse()
	if err := run(*addr, *pid, *conns, *hold, *credits); err != nil {
		fmt.Fprintln(os.Stderr, "conncost:", err)
		os.Exit(1)
	}
}

func run(addr string, pid, n int, hold time.Duration, credits int) error {
	if pid <= 0 {
		return errors.New("-pid is required")
	}
	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		return err
	}
	defer dev.Close()
	rssBefore, err := rss(pid)
	if err != nil {
		return err
	}
	cfg := rpcrdma.Config{Credits: credits, MaxPayload: 4096}
	var held []*rpcrdma.Conn
	refused := 0
	var firstRefusal error
	for range n {
		c, err := rpcrdma.Dial(context.Background(), dev, addr, cfg)
		if err != nil {
			if firstRefusal == nil {
				firstRefusal = err
			}
			refused++
			continue
		}
		held = append(held, c)
		if err := null(c); err != nil {
			return fmt.Errorf("NULL on connection %d: %w", len(held), err)
		}
	}
	if firstRefusal != nil {
		fmt.Fprintln(os.Stderr, "conncost: first refusal:", firstRefusal)
	}
	time.Sleep(time.Second) // let the server settle
	cpu0, err := cpuTime(pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	time.Sleep(hold)
	cpu1, err := cpuTime(pid)
	if err != nil {
		return err
	}
	elapsed := time.Since(t0)
	rssHeld, err := rss(pid)
	if err != nil {
		return err
	}
	per := 0.0
	if len(held) > 0 {
		per = float64(rssHeld-rssBefore) / float64(len(held))
	}
	fmt.Printf("CONNCOST conns=%d opened=%d refused=%d rss_before_kib=%d rss_held_kib=%d per_conn_kib=%.0f cpu_held_pct=%.2f\n",
		n, len(held), refused, rssBefore, rssHeld, per, 100*float64(cpu1-cpu0)/float64(elapsed))
	for _, c := range held {
		c.Close()
	}
	return nil
}

// null sends one NULL and waits for its reply.
func null(c *rpcrdma.Conn) error {
	if err := c.Submit(rpcrdma.Call{Proc: benchprog.ProcNull}); err != nil {
		return err
	}
	var res [1]rpcrdma.Result
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		k, err := c.Progress(res[:])
		if err != nil {
			return err
		}
		if k == 1 {
			return res[0].Err
		}
	}
	return datapath.ErrTimeout
}

// rss is the process's resident set in KiB.
func rss(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status")
}

// cpuTime is the process's user + system CPU time.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command (which may hold spaces) start after the last ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, errors.New("short /proc/PID/stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("bad /proc/PID/stat")
	}
	const ticks = 100 // USER_HZ
	return time.Duration(ut+st) * time.Second / ticks, nil
}
