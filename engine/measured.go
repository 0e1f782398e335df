package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// measuredClient runs a procedure measured alone (rpcproto.Measurement, such as NFSv4.1's
// delegation recall) as a workloads.Client: each Request is one measured request, which the
// Measurement completes with Done. Its connections, each its own Conversation, share one
// CQ; Progress polls it, hands every reply to the Measurement and lets it Step.
type measuredClient struct {
	m     rpcproto.Measurement
	name  string // the procedure's, for the log
	conns []*rpcrdma.Conn
	convs []rpcproto.Conversation
	cq    datapath.CQ
	mux   *rpcrdma.Mux
	wcs   []datapath.Completion
	res   []rpcrdma.Result
	log   io.Writer
	rec   *results.Recorder // the measured requests' figures, and the callbacks
	done  func(st []rpcrdma.Stats, rec *results.Recorder)

	tag      uint64 // the request begun
	finished []workloads.Completed
}

var (
	_ workloads.Client = (*measuredClient)(nil)
	_ workloads.Waiter = (*measuredClient)(nil)
	_ rpcproto.Driver  = (*measuredClient)(nil)
)

func (c *measuredClient) Submit(r *workloads.Request) error {
	ok, err := c.m.Begin(c)
	if !ok && err == nil {
		return workloads.ErrBusy
	}
	c.tag = r.Tag
	return err
}

// Call implements rpcproto.Driver: the tag says which connection and procedure replied.
func (c *measuredClient) Call(i, proc int) error {
	return c.conns[i].Submit(rpcrdma.Call{Proc: proc, Tag: uint64(i)<<8 | uint64(proc)})
}

// Done implements rpcproto.Driver: the request begun is complete.
func (c *measuredClient) Done(f rpcproto.Figures) {
	c.rec.RecordRecall(f.CallbackNs, f.AnswerNs, f.TotalNs, f.Retries)
	c.finished = append(c.finished, workloads.Completed{Tag: c.tag, CallClass: rpcproto.Short, ReplyClass: rpcproto.Short})
}

// Declined implements rpcproto.Driver.
func (c *measuredClient) Declined() { c.rec.RecallNotGranted() }

func (c *measuredClient) Progress(done []workloads.Completed) (int, error) {
	if _, err := poll(c.cq, c.mux, c.wcs); err != nil {
		return 0, err
	}
	for i, conn := range c.conns {
		n, err := conn.Results(c.res)
		for _, r := range c.res[:n] {
			if err := c.m.Reply(c, i, int(r.Tag&0xff), r.Err); err != nil {
				return 0, err
			}
		}
		if err != nil {
			return 0, err
		}
	}
	if err := c.m.Step(c); err != nil {
		return 0, err
	}
	n := copy(done, c.finished)
	c.finished = c.finished[:copy(c.finished, c.finished[n:])]
	return n, nil
}

func (c *measuredClient) Wait(timeout time.Duration) error { return c.cq.Wait(timeout) }

// release gives back what the measurement holds before the connections are torn down,
// which their Conversations' teardown may otherwise be refused for (NFSv4.1's
// DESTROY_CLIENTID, while a delegation is held): the calls in flight finish, then the
// Measurement's Release calls are made one at a time.
func (c *measuredClient) release() error {
	c.m.Stop()
	deadline := time.Now().Add(conversationReply)
	for !c.m.Settled() {
		if time.Now().After(deadline) {
			return fmt.Errorf("the calls in flight did not finish in %v", conversationReply)
		}
		if _, err := c.Progress(nil); err != nil {
			return err
		}
	}
	for {
		i, proc, ok := c.m.Release()
		if !ok {
			return nil
		}
		r, err := exchange(c.conns[i], c.cq, c.mux, proc, 0)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.convs[i].Program().Procs[proc].Name, err)
		}
	}
}

// Close releases what the measurement holds while every connection works, tears the
// connections down and hands their counters over.
func (c *measuredClient) Close() error {
	st := make([]rpcrdma.Stats, 0, len(c.conns))
	var first error
	working := len(c.conns) == c.m.Conns()
	for _, conn := range c.conns {
		working = working && conn.Err() == nil
	}
	if working {
		if err := c.release(); err != nil && c.log != nil {
			fmt.Fprintf(c.log, "rpcrdma-bench: %s: returning what the measurement holds: %v\n", c.name, err)
		}
	}
	for i, conn := range c.conns {
		tearDown(i, conn, c.convs[i], c.cq, c.mux, c.log)
		st = append(st, conn.Stats())
		if err := conn.Close(); err != nil && first == nil {
			first = err
		}
	}
	if c.done != nil {
		c.done(st, c.rec)
	}
	if err := c.cq.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// measuredAlone returns the procedure of w's mix when the mix is one procedure that is a
// measurement of its own (rpcproto.Procedure.Alone).
func measuredAlone(codec rpcproto.Codec, w *workloads.Config) (int, bool) {
	prog := codec.Program()
	if len(w.Mix) != 1 {
		return 0, false
	}
	i, err := prog.Lookup(w.Mix[0].Proc)
	return i, err == nil && prog.Procs[i].Alone
}

// openMeasured connects the connections of procedure proc's Measurement, which codec makes
// (rpcproto.Measurer), each set up with its own Conversation, sharing one CQ.
func (c *engineConnector) openMeasured(ctx context.Context, codec rpcproto.Codec, proc int, cfg rpcrdma.Config, done func([]rpcrdma.Stats, *results.Recorder)) (workloads.Client, error) {
	prog := codec.Program()
	mr, ok := codec.(rpcproto.Measurer)
	if !ok {
		return nil, fmt.Errorf("%s %s: a procedure measured alone, but the program's codec makes no measurement (rpcproto.Measurer)", prog.Name, prog.Procs[proc].Name)
	}
	m, err := mr.Measure(proc)
	if err != nil {
		return nil, err
	}
	n := m.Conns()
	cq, err := c.dev.NewCQ(cqNeed(c.dev, cfg, mr) * n)
	if err != nil {
		return nil, &datapath.OpError{Op: "create CQ", Err: err}
	}
	cl := &measuredClient{m: m, name: prog.Procs[proc].Name, cq: cq, mux: rpcrdma.NewMux(cq, rpcrdma.MuxConfig{KeepBroken: true}),
		wcs: make([]datapath.Completion, 64), res: make([]rpcrdma.Result, 16), log: c.log, done: done,
		finished: make([]workloads.Completed, 0, 1)}
	for i := range n {
		cc := cfg
		cc.CQ = cq
		cv := mr.NewConn()
		if cl.rec == nil {
			if cl.rec = callbackRecorder(cv); cl.rec == nil {
				cl.rec = results.NewRecorder()
			}
		}
		serve(&cc, cv, cl.rec)
		conn, err := c.dial(ctx, cc, cv, cl.mux)
		if conn != nil {
			cl.conns, cl.convs = append(cl.conns, conn), append(cl.convs, cv)
		}
		if err == nil {
			if err = m.Connected(i, cv); err != nil {
				err = fmt.Errorf("connection %d to %s: %w", i, c.addr, err)
			}
		}
		if err != nil {
			cl.Close()
			return nil, err
		}
	}
	return cl, nil
}
