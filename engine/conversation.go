package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// Bounds of a Conversation's calls: each reply must come within conversationReply, and a
// call the server asks to try again later (NFS4ERR_GRACE while it recovers, up to its grace
// time: 90 s by default on Linux) is made again every laterWait until conversationLater.
const (
	conversationReply = 30 * time.Second
	conversationLater = 2 * time.Minute
	laterWait         = 250 * time.Millisecond
)

// backchannelCredits is the server's calls a Conversation's connection takes at once:
// NFSv4.1 servers make one callback per session at a time (Linux: one back channel slot),
// and a CB_NULL probe may overlap it.
const backchannelCredits = 4

// conversationTag marks a Conversation's calls among a connection's results.
const conversationTag = ^uint64(0)

// converse makes conv's calls on conn one at a time, to set the connection up or (closing)
// to tear it down: its completions come from cq, which conn may share with others of the
// poller's connections, through mux.
func converse(conn *rpcrdma.Conn, conv rpcproto.Conversation, cq datapath.CQ, mux *rpcrdma.Mux, closing bool) error {
	later := time.Now().Add(conversationLater)
	for {
		proc, size, ok := conv.Next(closing)
		if !ok {
			return nil
		}
		r, err := exchange(conn, cq, mux, proc, size)
		if err != nil {
			return fmt.Errorf("%s: %w", conv.Program().Procs[proc].Name, err)
		}
		var le interface{ Later() bool }
		if errors.As(r.Err, &le) && le.Later() && time.Now().Before(later) {
			time.Sleep(laterWait)
			continue
		}
		if r.Err != nil {
			return r.Err // the codec's errors name the step and the status
		}
	}
}

// exchange makes one call of proc on conn and waits for its result, polling cq (which conn
// may share with others, through mux). Measured calls may still be outstanding at teardown:
// their results are dropped and their credits awaited.
func exchange(conn *rpcrdma.Conn, cq datapath.CQ, mux *rpcrdma.Mux, proc, size int) (rpcrdma.Result, error) {
	var wcs [16]datapath.Completion
	var res [4]rpcrdma.Result
	deadline := time.Now().Add(conversationReply)
	for sent := false; ; {
		if time.Now().After(deadline) {
			return rpcrdma.Result{}, fmt.Errorf("no reply in %v", conversationReply)
		}
		if !sent {
			err := conn.Submit(rpcrdma.Call{Proc: proc, Size: size, Tag: conversationTag})
			if err != nil && !errors.Is(err, rpcrdma.ErrNoCredit) {
				return rpcrdma.Result{}, err
			}
			sent = err == nil
		}
		k, err := poll(cq, mux, wcs[:])
		if err != nil {
			return rpcrdma.Result{}, err
		}
		if k == 0 {
			runtime.Gosched()
		}
		n, err := conn.Results(res[:])
		for _, x := range res[:n] {
			if x.Tag == conversationTag {
				return x, nil
			}
		}
		if err != nil {
			return rpcrdma.Result{}, err
		}
	}
}

// recoverer is a Conversation that counts the sessions it set up again after the server lost
// one, and of those the ones that needed a new client ID.
type recoverer interface {
	Recoveries() (sessions, clients int)
}

// recover follows up the results of connection i: the conversation's slots may have moved
// (the server's target or highest slot, a slot it answered NFS4ERR_BADSLOT), and once it
// lost its state and the connection's calls are all in, it is set up again on the same
// connection. A recovery that fails ends the point.
func (c *engineClient) recover(i int) error {
	conn, cv := c.conns[i], c.convs[i]
	if cv.Lost() {
		if conn.Outstanding() > 0 {
			return nil // the calls still out fail the same way; the next failure comes back here
		}
		if err := converse(conn, cv, c.cq, c.mux, false); err != nil {
			return fmt.Errorf("connection %d to %s: recovering the lost %s session: %w", i, conn.RemoteAddr(), cv.Program().Name, err)
		}
	}
	if n := cv.Slots(); n > 0 {
		conn.LimitCalls(n)
	}
	return nil
}

// connInfo is what conv learns of conn once connected.
func connInfo(conn *rpcrdma.Conn, cfg *rpcrdma.Config) rpcproto.ConnInfo {
	p := conn.Params()
	return rpcproto.ConnInfo{SendSize: p.Inline.SendSize, RecvSize: p.Inline.RecvSize, MaxPayload: cfg.MaxPayload,
		Credits: cfg.Credits, ReverseCredits: cfg.ReverseCredits}
}

// callbackRecorder records the calls cv's Service answers, a row per procedure and one for
// any other number; nil when cv answers none.
func callbackRecorder(cv rpcproto.Conversation) *results.Recorder {
	svc := cv.Service()
	if svc == nil {
		return nil
	}
	r := results.NewRecorder()
	r.SetCallbacks(append(append([]string{}, svc.Procs()...), "other"))
	return r
}

// serve makes cfg's connection answer cv's Service, recording into cb.
func serve(cfg *rpcrdma.Config, cv rpcproto.Conversation, cb *results.Recorder) {
	cfg.Codec, cfg.Service = cv, cv.Service()
	if cfg.Service == nil {
		return
	}
	cfg.ReverseCredits = backchannelCredits
	other := len(cfg.Service.Procs())
	cfg.Served = func(proc uint32, class rpcproto.Kind, ns int64, failed bool) {
		i := min(int(proc), other)
		if failed {
			cb.FailCallback(i, class)
		} else {
			cb.RecordCallback(i, class, ns)
		}
	}
}

// cqNeed is the completion queue entries a connection of codec's needs: its server's calls
// too, when it converses.
func cqNeed(dev datapath.Device, cfg rpcrdma.Config, codec rpcproto.Codec) int {
	if _, ok := codec.(rpcproto.Conversation); ok {
		cfg.ReverseCredits = backchannelCredits
	}
	return rpcrdma.CQNeed(dev, cfg)
}

// poll polls cq once and hands its completions to mux, or gives mux its idle work when there
// were none; it returns how many there were.
func poll(cq datapath.CQ, mux *rpcrdma.Mux, wcs []datapath.Completion) (int, error) {
	k, err := cq.Poll(wcs)
	if err != nil {
		return 0, &datapath.OpError{Op: "poll CQ", Err: err}
	}
	if k > 0 {
		mux.Handle(wcs[:k])
	} else {
		mux.Idle()
	}
	return k, nil
}

// dial connects to c's server with cfg (its CQ set) and attaches the connection to mux;
// with a Conversation cv, it then sets the connection up. A connection whose setup failed is
// returned with the error, for the caller to tear down with the others.
func (c *engineConnector) dial(ctx context.Context, cfg rpcrdma.Config, cv rpcproto.Conversation, mux *rpcrdma.Mux) (*rpcrdma.Conn, error) {
	conn, err := rpcrdma.Dial(ctx, c.dev, c.addr, cfg)
	if err != nil {
		return nil, err
	}
	mux.Attach(conn)
	if cv == nil {
		return conn, nil
	}
	cv.Start(connInfo(conn, &cfg))
	if err := converse(conn, cv, cfg.CQ, mux, false); err != nil {
		return conn, fmt.Errorf("setting up the %s connection to %s: %w", cv.Program().Name, c.addr, err)
	}
	if b, ok := cv.(backChanneler); ok && cv.Service() != nil && !b.BackChannel() && c.log != nil {
		fmt.Fprintf(c.log, "rpcrdma-bench: warning: %s bound no back channel to the %s session: it can make no callbacks\n", c.addr, cv.Program().Name)
	}
	return conn, nil
}

// backChanneler is a Conversation whose server may call back over the connection: whether
// the server bound the connection as the back channel, and whether it later said the
// back channel was down.
type backChanneler interface {
	BackChannel() bool
	CallbackPathDown() bool
}

// tearDown runs cv's closing calls on connection i while it works. A teardown that fails
// loses nothing measured: it is told to log, not returned.
func tearDown(i int, conn *rpcrdma.Conn, cv rpcproto.Conversation, cq datapath.CQ, mux *rpcrdma.Mux, log io.Writer) {
	if conn.Err() != nil {
		return
	}
	if b, ok := cv.(backChanneler); ok && b.CallbackPathDown() && log != nil {
		fmt.Fprintf(log, "rpcrdma-bench: warning: connection %d to %s: the server reported the back channel down (SEQ4_STATUS_CB_PATH_DOWN)\n", i, conn.RemoteAddr())
	}
	if err := converse(conn, cv, cq, mux, true); err != nil && log != nil {
		fmt.Fprintf(log, "rpcrdma-bench: connection %d to %s: tearing down: %v\n", i, conn.RemoteAddr(), err)
	}
}
