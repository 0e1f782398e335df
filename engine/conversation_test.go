package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

var errTryLater = rpcproto.NewLaterError("later", "try later")

// stepConv is a Conversation over the benchmark program: NULL then ECHO (answered "later"
// once) to set up, NULL to tear down. It logs what each connection's calls were.
type stepConv struct {
	benchprog.Codec
	mu    *sync.Mutex
	log   *[][]string
	me    int
	step  int
	later bool
	info  rpcproto.ConnInfo
}

func (c *stepConv) NewConn() rpcproto.Conversation {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.log = append(*c.log, nil)
	return &stepConv{mu: c.mu, log: c.log, me: len(*c.log) - 1}
}
func (c *stepConv) Service() rpcproto.Service    { return nil }
func (c *stepConv) Start(info rpcproto.ConnInfo) { c.info = info }
func (c *stepConv) Slots() int                   { return 2 }
func (c *stepConv) Unanswered(proc, slot int)    {}
func (c *stepConv) Lost() bool                   { return false }
func (c *stepConv) note(s string) {
	c.mu.Lock()
	(*c.log)[c.me] = append((*c.log)[c.me], s)
	c.mu.Unlock()
}
func (c *stepConv) Next(closing bool) (int, int, bool) {
	switch {
	case !closing && c.step == 0:
		return benchprog.ProcNull, 0, true
	case !closing && c.step == 1:
		return benchprog.ProcEcho, 64, true
	case closing && c.step == 2:
		return benchprog.ProcNull, 0, true
	}
	return 0, 0, false
}
func (c *stepConv) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	d, err := c.Codec.DecodeResults(proc, slot, body, chunk, size, seed, verify)
	if proc == benchprog.ProcEcho && size != 64 {
		return d, err // a measured call
	}
	if proc == benchprog.ProcEcho && !c.later {
		c.later = true
		c.note("later")
		return nil, errTryLater
	}
	c.note(benchprog.Prog.Procs[proc].Name)
	c.step++
	return d, err
}

// A program whose connections hold state: each connection's conversation runs before its
// first measured call and after its last, a call the server asks to try later is made
// again, the connection learns what it negotiated, and none of it is measured.
func TestEngineConverses(t *testing.T) {
	var mu sync.Mutex
	var log [][]string
	conv := &stepConv{mu: &mu, log: &log}
	c, err := workloads.Config{Prog: benchprog.Prog, Count: 200, Warmup: workloads.NoWarmup, Depth: 4, Connections: 2,
		Mix: workloads.Only("echo", workloads.Sizes{Values: []int{100}})}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	r := runOnSoftWith(t, conv, []workloads.Point{{Threshold: 4096, Depth: 4, Workload: c}})
	if got := r.Points[0].Throughput.RPCs; got != 200 {
		t.Errorf("%d RPCs measured, want the workload's 200 alone", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(log) != 2 {
		t.Fatalf("%d connections conversed, want 2", len(log))
	}
	for i, l := range log {
		if want := "null later echo null"; join(l) != want {
			t.Errorf("connection %d: %q, want %q", i, join(l), want)
		}
	}
}

func join(l []string) string {
	s := ""
	for i, x := range l {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}

// cbService is a callback program of two procedures.
type cbService struct{}

func (cbService) Program() (uint32, uint32)                 { return 0x40000000, 1 }
func (cbService) Procs() []string                           { return []string{"cb_null", "cb_compound"} }
func (cbService) Serve(uint32, []byte, []byte) (int, error) { return 0, nil }

// serviceConv is stepConv with a callback service.
type serviceConv struct{ stepConv }

func (serviceConv) Service() rpcproto.Service { return cbService{} }

// The server's calls a connection answers are recorded by procedure and class, a number the
// program does not define as "other", and the connection takes them (reverse credits).
func TestServeRecordsCallbacks(t *testing.T) {
	cv := &serviceConv{}
	cb := callbackRecorder(cv)
	var cfg rpcrdma.Config
	serve(&cfg, cv, cb)
	if cfg.Service == nil || cfg.ReverseCredits != backchannelCredits || cfg.Codec == nil {
		t.Fatalf("config: service %v, reverse credits %d", cfg.Service, cfg.ReverseCredits)
	}
	cfg.Served(1, rpcproto.Short, 5000, false)
	cfg.Served(1, rpcproto.Short, 7000, false)
	cfg.Served(0, rpcproto.Chunked, 3000, false)
	cfg.Served(9, rpcproto.Short, 100, true)
	p, err := results.Summarize(results.Params{}, time.Time{}, time.Time{}, cb)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Callbacks {
		got = append(got, fmt.Sprintf("%s/%s:%d+%d", c.Procedure, c.Class, c.RTT.Count, c.Errors))
	}
	if want := "cb_null/chunked:1+0 cb_compound/short:2+0 other/short:0+1"; strings.Join(got, " ") != want {
		t.Errorf("callbacks %q, want %q", strings.Join(got, " "), want)
	}
	if callbackRecorder(&stepConv{}) != nil {
		t.Error("a conversation without a service got a callback recorder")
	}
}
