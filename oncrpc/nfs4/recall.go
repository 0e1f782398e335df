package nfs4

import (
	"errors"
	"fmt"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// RecallFiles is how many files a delegation-recall measurement cycles through, named
// RecallFile(k): a server may refuse to delegate a file it recalled a moment ago (Linux
// does for 30 to 60 s), so each recall takes the next file.
const RecallFiles = 256

// RecallFile is the name of the k-th file of a delegation-recall measurement in the export's
// root (the VM's guest creates them; any empty files do).
func RecallFile(k int) string { return fmt.Sprintf("rpcrdma-bench.recall.%d", k) }

// The recall's two clients, by connection index.
const (
	holder     = 0
	conflicter = 1
)

// Steps of a recall.
const (
	recallIdle      = iota // nothing held: the next Step asks for a delegation
	recallOpening          // the holder's OPEN asking for a read delegation
	recallUngranted        // its CLOSE, no delegation granted: the next file follows
	recallHeld             // a read delegation held: a Begin may start the conflict
	recallConflict         // the conflicter's OPEN for writing, the recall, DELEGRETURN
	recallClosing          // both CLOSEs, the request already complete
	recallReleasing        // Release's DELEGRETURN made, its CLOSE next
)

// recallBackoff is the wait between asking for delegations once recallPatience files in a
// row were refused: a server that refuses recently recalled files (Linux, for 30 to 60 s)
// would otherwise be asked thousands of times a second.
const (
	recallPatience = 8
	recallBackoff  = 100 * time.Millisecond
)

// recall measures NFSv4.1 delegation recalls as an rpcproto.Measurement: each request
// (procedure PRecall) is one recall, from the conflicting OPEN's first sending to its
// success. Two connections, each its own NFSv4.1 client: between requests the holder opens
// a file for reading and gets a read delegation (Begin is not ready until it holds one); a
// request makes the conflicter open the file for writing, the server recalls the delegation
// over the holder's back channel (a CB_RECALL, an RFC 8167 reverse call on the holder's own
// connection) and answers the conflicter NFS4ERR_DELAY until the holder's DELEGRETURN. The
// conflicter's OPEN is made again as soon as DELEGRETURN's reply is in; once it succeeds
// the request is complete and both clients close the file.
type recall struct {
	codecs [2]*Codec // holder, conflicter
	now    func() int64

	step                      int
	file, refused             int
	notBefore                 int64
	t0, tReturn, recallNs     int64
	delegReturnNs             int64
	returned, conflictWaiting bool
	stopping                  bool // Stop: take no more delegations
	retries                   uint64
	closing                   int
}

var (
	_ rpcproto.Measurer    = (*Codec)(nil)
	_ rpcproto.Measurement = (*recall)(nil)
)

// errNoRecall: the server never recalled the delegation the conflicting OPEN broke.
var errNoRecall = rpcproto.NewResultError("no_recall", "NFSv4.1 recall: the conflicting OPEN came back before any CB_RECALL")

// errPathDown: the server said it cannot reach the holder's back channel, so the recall the
// conflicting OPEN waits for will never come.
var errPathDown = errors.New("NFSv4.1 recall: the server reports the back channel down (SEQ4_STATUS_CB_PATH_DOWN): it cannot send CB_RECALL")

// errNoBackChannel: the holder's session cannot be called back, so it cannot be recalled.
var errNoBackChannel = errors.New("delegation recall: the server bound no back channel to the session (its CREATE_SESSION result lacks CONN_BACK_CHAN): it cannot recall a delegation")

// Measure implements rpcproto.Measurer: PRecall is a delegation recall, made by two
// connections of c's (NewConn).
func (c *Codec) Measure(proc int) (rpcproto.Measurement, error) {
	if proc != PRecall {
		return nil, fmt.Errorf("NFSv4.1: procedure %d is not measured alone (want %s)", proc, Prog.Procs[PRecall].Name)
	}
	return &recall{now: Now}, nil
}

// Conns is the holder and the conflicter.
func (r *recall) Conns() int { return len(r.codecs) }

// Connected takes connection i's client; the holder's session must have a back channel.
func (r *recall) Connected(i int, cv rpcproto.Conversation) error {
	c, ok := cv.(*Codec)
	if !ok || i < 0 || i >= len(r.codecs) {
		return fmt.Errorf("delegation recall: connection %d is not one of its two NFSv4.1 clients", i)
	}
	if i == holder && !c.BackChannel() {
		return errNoBackChannel
	}
	r.codecs[i] = c
	return nil
}

// Begin starts the conflict once a delegation is held.
func (r *recall) Begin(d rpcproto.Driver) (bool, error) {
	if r.step != recallHeld {
		return false, nil
	}
	r.retries, r.returned, r.conflictWaiting, r.recallNs = 0, false, false, 0
	r.codecs[holder].Recall() // none before this conflict counts
	r.step = recallConflict
	r.t0 = r.now()
	return true, d.Call(conflicter, PDelegConflict)
}

// Step asks for the next delegation when nothing is held (after the backoff, if any), and
// returns the delegation once CB_RECALL came.
func (r *recall) Step(d rpcproto.Driver) error {
	if r.step == recallIdle && !r.stopping && r.now() >= r.notBefore {
		r.openNext()
		return d.Call(holder, PDelegOpen)
	}
	if r.step == recallConflict && !r.returned && r.recallNs == 0 {
		if r.codecs[holder].CallbackPathDown() {
			return errPathDown
		}
		if _, at, ok := r.codecs[holder].Recall(); ok {
			r.recallNs = at - r.t0
			r.tReturn = r.now()
			return d.Call(holder, PDelegReturn)
		}
	}
	return nil
}

// openNext names the next file for both clients, whose OPEN the holder makes.
func (r *recall) openNext() {
	name := RecallFile(r.file % RecallFiles)
	r.file++
	r.codecs[holder].SetRecallFile(name)
	r.codecs[conflicter].SetRecallFile(name)
	r.step = recallOpening
}

// Reply advances the recall with the outcome of who's call of proc; its errors name the
// file and the procedure.
func (r *recall) Reply(d rpcproto.Driver, who, proc int, err error) error {
	if err := r.on(d, who, proc, err); err != nil {
		return fmt.Errorf("delegation recall of %s: %s: %w", RecallFile((r.file-1)%RecallFiles), Prog.Procs[proc].Name, err)
	}
	return nil
}

func (r *recall) on(d rpcproto.Driver, who, proc int, err error) error {
	var le interface{ Later() bool }
	switch {
	case proc == PDelegOpen:
		if err != nil {
			return err
		}
		if !r.codecs[holder].Delegated() {
			d.Declined()
			r.step = recallUngranted
			return d.Call(holder, PDelegClose)
		}
		r.step, r.refused = recallHeld, 0
	case proc == PDelegClose && r.step == recallUngranted:
		if err != nil {
			return err
		}
		r.step = recallIdle
		if r.refused++; r.refused >= recallPatience {
			r.notBefore = r.now() + int64(recallBackoff)
		}
	case proc == PDelegReturn:
		if err != nil {
			return err
		}
		r.delegReturnNs, r.returned = r.now()-r.tReturn, true
		if r.conflictWaiting {
			r.conflictWaiting = false
			return d.Call(conflicter, PDelegConflict)
		}
	case proc == PDelegConflict && errors.As(err, &le) && le.Later():
		r.retries++
		if r.returned {
			return d.Call(conflicter, PDelegConflict)
		}
		r.conflictWaiting = true
	case proc == PDelegConflict:
		if err != nil {
			return err
		}
		if !r.returned {
			return errNoRecall
		}
		d.Done(rpcproto.Figures{CallbackNs: r.recallNs, AnswerNs: r.delegReturnNs, TotalNs: r.now() - r.t0, Retries: r.retries})
		r.step, r.closing = recallClosing, 2
		if err := d.Call(holder, PDelegClose); err != nil {
			return err
		}
		return d.Call(conflicter, PDelegClose)
	case proc == PDelegClose && r.step == recallClosing:
		if err != nil {
			return err
		}
		if r.closing--; r.closing == 0 {
			r.step = recallIdle
		}
	}
	return nil
}

// Stop takes no more delegations.
func (r *recall) Stop() { r.stopping = true }

// Settled: nothing in flight, a delegation held or none.
func (r *recall) Settled() bool { return r.step == recallIdle || r.step == recallHeld }

// Release returns a delegation held and closes its file, which DESTROY_CLIENTID would
// otherwise refuse (the client's state is busy).
func (r *recall) Release() (who, proc int, ok bool) {
	switch r.step {
	case recallHeld:
		r.step = recallReleasing
		return holder, PDelegReturn, true
	case recallReleasing:
		r.step = recallIdle
		return holder, PDelegClose, true
	}
	return 0, 0, false
}
