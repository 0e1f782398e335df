package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs4"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// RecallFiles is how many files a delegation-recall measurement cycles through, named
// RecallFile(k): a server may refuse to delegate a file it recalled a moment ago (Linux
// does for 30 to 60 s), so each recall takes the next file.
const RecallFiles = 256

// RecallFile is the name of the k-th file of a delegation-recall measurement in the export's
// root (the VM's guest creates them; any empty files do).
func RecallFile(k int) string { return fmt.Sprintf("rpcrdma-bench.recall.%d", k) }

// Steps of a recall.
const (
	recallIdle      = iota // nothing held: the next Progress asks for a delegation
	recallOpening          // the holder's OPEN asking for a read delegation
	recallUngranted        // its CLOSE, no delegation granted: the next file follows
	recallHeld             // a read delegation held: a Request may start the conflict
	recallConflict         // the conflicter's OPEN for writing, the recall, DELEGRETURN
	recallClosing          // both CLOSEs, the Request already complete
)

// recallBackoff is the wait between asking for delegations once recallPatience files in a
// row were refused: a server that refuses recently recalled files (Linux, for 30 to 60 s)
// would otherwise be asked thousands of times a second.
const (
	recallPatience = 8
	recallBackoff  = 100 * time.Millisecond
)

// recallClient measures NFSv4.1 delegation recalls as a workloads.Client: each Request
// (procedure nfs4.PRecall) is one recall, from the conflicting OPEN's first sending to its
// success. Two connections, each its own NFSv4.1 client: between Requests the holder opens
// a file for reading and gets a read delegation (Submit is busy until it holds one); a
// Request makes the conflicter open the file for writing, the server recalls the delegation
// over the holder's backchannel (a CB_RECALL, an RFC 8167 reverse call on the holder's own
// connection) and answers the conflicter NFS4ERR_DELAY until the holder's DELEGRETURN. The
// conflicter's OPEN is made again as soon as DELEGRETURN's reply is in; once it succeeds
// the Request is complete and both clients close the file.
type recallClient struct {
	conns  [2]*rpcrdma.Conn // holder, conflicter
	codecs [2]*nfs4.Codec
	convs  [2]rpcproto.Conversation
	cq     datapath.CQ
	mux    *rpcrdma.Mux
	wcs    []datapath.Completion
	res    []rpcrdma.Result
	log    io.Writer
	rec    *results.Recorder // the recalls' parts, and the callbacks
	done   func(st []rpcrdma.Stats, rec *results.Recorder)

	step                      int
	tag                       uint64
	file, refused             int
	notBefore                 time.Time
	t0, tReturn, recallNs     int64
	delegReturnNs             int64
	returned, conflictWaiting bool
	stopping                  bool // Close: take no more delegations
	retries                   uint64
	closing                   int
	finished                  []workloads.Completed
}

var (
	_ workloads.Client = (*recallClient)(nil)
	_ workloads.Waiter = (*recallClient)(nil)
)

// errNoRecall: the server never recalled the delegation the conflicting OPEN broke.
var errNoRecall = rpcproto.NewResultError("no_recall", "NFSv4.1 recall: the conflicting OPEN came back before any CB_RECALL")

// errPathDown: the server said it cannot reach the holder's back channel, so the recall the
// conflicting OPEN waits for will never come.
var errPathDown = errors.New("NFSv4.1 recall: the server reports the back channel down (SEQ4_STATUS_CB_PATH_DOWN): it cannot send CB_RECALL")

func (c *recallClient) Submit(r *workloads.Request) error {
	if c.step != recallHeld {
		return workloads.ErrBusy
	}
	c.tag, c.retries, c.returned, c.conflictWaiting, c.recallNs = r.Tag, 0, false, false, 0
	c.codecs[0].Recall() // none before this conflict counts
	c.step = recallConflict
	c.t0 = nfs4.Now()
	return c.call(1, nfs4.PDelegConflict)
}

// openNext starts the holder's OPEN of the next file.
func (c *recallClient) openNext() error {
	name := RecallFile(c.file % RecallFiles)
	c.file++
	c.codecs[0].SetRecallFile(name)
	c.codecs[1].SetRecallFile(name)
	c.step = recallOpening
	return c.call(0, nfs4.PDelegOpen)
}

func (c *recallClient) call(who, proc int) error {
	return c.conns[who].Submit(rpcrdma.Call{Proc: proc, Tag: uint64(who)<<8 | uint64(proc)})
}

func (c *recallClient) Progress(done []workloads.Completed) (int, error) {
	if c.step == recallIdle && !c.stopping && !time.Now().Before(c.notBefore) {
		if err := c.openNext(); err != nil {
			return 0, err
		}
	}
	if _, err := poll(c.cq, c.mux, c.wcs); err != nil {
		return 0, err
	}
	for who, conn := range c.conns {
		n, err := conn.Results(c.res)
		for _, r := range c.res[:n] {
			if err := c.on(who, int(r.Tag&0xff), r.Err); err != nil {
				return 0, fmt.Errorf("delegation recall of %s: %s: %w", RecallFile((c.file-1)%RecallFiles), nfs4.Prog.Procs[r.Tag&0xff].Name, err)
			}
		}
		if err != nil {
			return 0, err
		}
	}
	if c.step == recallConflict && !c.returned && c.recallNs == 0 {
		if c.codecs[0].CallbackPathDown() {
			return 0, errPathDown
		}
		if _, at, ok := c.codecs[0].Recall(); ok {
			c.recallNs = at - c.t0
			c.tReturn = nfs4.Now()
			if err := c.call(0, nfs4.PDelegReturn); err != nil {
				return 0, err
			}
		}
	}
	n := copy(done, c.finished)
	c.finished = c.finished[:copy(c.finished, c.finished[n:])]
	return n, nil
}

// on advances the recall with the result of who's call of proc; an error ends the run
// (the two clients' state would no longer be known).
func (c *recallClient) on(who, proc int, err error) error {
	var le interface{ Later() bool }
	switch {
	case proc == nfs4.PDelegOpen:
		if err != nil {
			return err
		}
		if !c.codecs[0].Delegated() {
			c.rec.RecallNotGranted()
			c.step = recallUngranted
			return c.call(0, nfs4.PDelegClose)
		}
		c.step, c.refused = recallHeld, 0
	case proc == nfs4.PDelegClose && c.step == recallUngranted:
		if err != nil {
			return err
		}
		c.step = recallIdle
		if c.refused++; c.refused >= recallPatience {
			c.notBefore = time.Now().Add(recallBackoff)
		}
	case proc == nfs4.PDelegReturn:
		if err != nil {
			return err
		}
		c.delegReturnNs, c.returned = nfs4.Now()-c.tReturn, true
		if c.conflictWaiting {
			c.conflictWaiting = false
			return c.call(1, nfs4.PDelegConflict)
		}
	case proc == nfs4.PDelegConflict && errors.As(err, &le) && le.Later():
		c.retries++
		if c.returned {
			return c.call(1, nfs4.PDelegConflict)
		}
		c.conflictWaiting = true
	case proc == nfs4.PDelegConflict:
		if err != nil {
			return err
		}
		if !c.returned {
			return errNoRecall
		}
		c.rec.RecordRecall(c.recallNs, c.delegReturnNs, nfs4.Now()-c.t0, c.retries)
		c.finished = append(c.finished, workloads.Completed{Tag: c.tag, CallClass: rpcproto.Short, ReplyClass: rpcproto.Short})
		c.step, c.closing = recallClosing, 2
		if err := c.call(0, nfs4.PDelegClose); err != nil {
			return err
		}
		return c.call(1, nfs4.PDelegClose)
	case proc == nfs4.PDelegClose && c.step == recallClosing:
		if err != nil {
			return err
		}
		if c.closing--; c.closing == 0 {
			c.step = recallIdle
		}
	}
	return nil
}

func (c *recallClient) Wait(timeout time.Duration) error { return c.cq.Wait(timeout) }

// release returns what the measurement holds before the sessions are torn down, which
// DESTROY_CLIENTID would otherwise refuse (the client's state is busy): the calls in flight
// finish, and a delegation held is returned and its file closed.
func (c *recallClient) release() error {
	c.stopping = true
	deadline := time.Now().Add(conversationReply)
	for c.step != recallIdle && c.step != recallHeld {
		if time.Now().After(deadline) {
			return fmt.Errorf("the calls in flight did not finish in %v", conversationReply)
		}
		if _, err := c.Progress(nil); err != nil {
			return err
		}
	}
	if c.step != recallHeld {
		return nil
	}
	c.step = recallIdle
	for _, proc := range []int{nfs4.PDelegReturn, nfs4.PDelegClose} {
		r, err := exchange(c.conns[0], c.cq, c.mux, proc, 0)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			return fmt.Errorf("%s: %w", nfs4.Prog.Procs[proc].Name, err)
		}
	}
	return nil
}

func (c *recallClient) Close() error {
	st := make([]rpcrdma.Stats, 0, 2)
	var first error
	if c.conns[1] != nil && c.conns[0].Err() == nil && c.conns[1].Err() == nil {
		if err := c.release(); err != nil && c.log != nil {
			fmt.Fprintf(c.log, "rpcrdma-bench: recall: returning the delegation held: %v\n", err)
		}
	}
	for i, conn := range c.conns {
		if conn == nil {
			continue
		}
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

// measuredAlone reports whether w's mix is one procedure that is a measurement of its own
// (rpcproto.Procedure.Alone): NFSv4.1's delegation recall is the one this engine has.
func measuredAlone(codec rpcproto.Codec, w *workloads.Config) bool {
	prog := codec.Program()
	if len(w.Mix) != 1 {
		return false
	}
	i, err := prog.Lookup(w.Mix[0].Proc)
	return err == nil && prog.Procs[i].Alone
}

// openRecall connects the recall measurement's two clients, each set up over its own
// connection (codec, NFSv4.1's), sharing one CQ.
func (c *engineConnector) openRecall(ctx context.Context, codec rpcproto.Codec, cfg rpcrdma.Config, done func([]rpcrdma.Stats, *results.Recorder)) (workloads.Client, error) {
	conv, ok := codec.(*nfs4.Codec)
	if !ok {
		return nil, fmt.Errorf("%s: a procedure measured alone, which this engine measures for NFSv4.1's recall only", codec.Program().Name)
	}
	cq, err := c.dev.NewCQ(cqNeed(c.dev, cfg, conv) * 2)
	if err != nil {
		return nil, &datapath.OpError{Op: "create CQ", Err: err}
	}
	cl := &recallClient{cq: cq, mux: rpcrdma.NewMux(cq, rpcrdma.MuxConfig{KeepBroken: true}), wcs: make([]datapath.Completion, 64),
		res: make([]rpcrdma.Result, 16), log: c.log, done: done}
	for i := range cl.conns {
		cc := cfg
		cc.CQ = cq
		cv := conv.NewConn()
		if cl.rec == nil {
			if cl.rec = callbackRecorder(cv); cl.rec == nil {
				cl.rec = results.NewRecorder()
			}
		}
		serve(&cc, cv, cl.rec)
		conn, err := c.dial(ctx, cc, cv, cl.mux)
		if conn != nil {
			cl.conns[i], cl.codecs[i], cl.convs[i] = conn, cv.(*nfs4.Codec), cv
		}
		if err == nil && i == 0 && !cl.codecs[0].BackChannel() {
			err = fmt.Errorf("delegation recall: %s bound no back channel to the session (its CREATE_SESSION result lacks CONN_BACK_CHAN): it cannot recall a delegation", c.addr)
		}
		if err != nil {
			cl.Close()
			return nil, err
		}
	}
	return cl, nil
}
