// Package rpcrdmatest checks an RPC-over-RDMA requester end to end against any responder on
// any datapath provider: the message class matrix of the benchmark program, and a
// closed-loop driver for call streams such as 10,000 NFS NULL calls at a given depth. The
// package's own tests run it over the soft provider; the soft-RoCE VM harness runs the same
// checks over datapath/verbs, against this project's responder and the Linux NFS server.
package rpcrdmatest

import (
	"errors"
	"fmt"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
)

// Case is a call and the classes it must travel in.
type Case struct {
	Name                  string
	Call                  rpcrdma.Call
	CallClass, ReplyClass rpcproto.Class
}

var procNames = [...]string{"NULL", "ECHO", "SINK", "SOURCE"}

// Cases lists calls that exercise every message class at the inline threshold t (both
// directions equal), chosen automatically and forced. Payloads go up to 2t, so the
// connections need Config.MaxPayload of at least 2t+4. With responderRead (both ends must
// enable them), cases for responder-provided Read chunks are included and long replies
// chosen automatically come in one.
func Cases(t int, responderRead bool) []Case {
	var cs []Case
	add := func(proc int, size int, force, wc, wr rpcproto.Class) {
		cs = append(cs, Case{
			Name: fmt.Sprintf("%s/%d/%s", procNames[proc], size, force),
			Call: rpcrdma.Call{Proc: proc, Size: size, Class: force}, CallClass: wc, ReplyClass: wr,
		})
	}
	const (
		N, E, K, S = benchprog.ProcNull, benchprog.ProcEcho, benchprog.ProcSink, benchprog.ProcSource
	)
	const (
		auto, short, read, write = rpcproto.ClassAuto, rpcproto.ClassShort, rpcproto.ClassReadChunk, rpcproto.ClassWriteChunk
		pos0, reply, rread       = rpcproto.ClassPosZeroRead, rpcproto.ClassReplyChunk, rpcproto.ClassResponderRead
	)
	big := 2 * t
	long := reply // a reply that needs a Reply chunk comes in a responder-provided Read chunk
	if responderRead {
		long = rread
	}
	add(N, 0, auto, short, short)
	add(E, 100, auto, short, short)
	add(E, big, auto, pos0, long)
	add(K, 7, auto, short, short)
	add(K, big+3, auto, read, short)
	add(S, 5, auto, short, short)
	add(S, big+1, auto, short, write)
	add(N, 0, short, short, short)
	add(K, 0, read, read, short)
	add(K, 301, read, read, short)
	add(N, 0, pos0, pos0, short)
	add(E, 17, pos0, pos0, short)
	add(K, 999, pos0, pos0, short)
	add(S, 0, write, short, write)
	add(S, min(4099, big), write, short, write)
	add(N, 0, reply, short, reply)
	add(E, 10, reply, short, reply)
	add(S, big, reply, short, reply)
	if responderRead {
		add(E, big, rread, pos0, rread)
		add(S, big, rread, short, rread)
		add(S, 10, rread, short, short)
	}
	return cs
}

// ErrTimeout: Drive did not finish in time.
var ErrTimeout = errors.New("rpcrdmatest: calls did not finish in time")

// Drive runs calls on c in a closed loop, keeping up to depth outstanding (fewer if the
// credits granted are fewer), and returns their Results in completion order. Results whose
// RPC failed are returned too; the error is for the run itself (the connection broke, or
// timeout passed). Result.Data is not valid after Drive returns.
func Drive(c *rpcrdma.Conn, calls []rpcrdma.Call, depth int, timeout time.Duration) ([]rpcrdma.Result, error) {
	res := make([]rpcrdma.Result, 0, len(calls))
	buf := make([]rpcrdma.Result, 64)
	deadline := time.Now().Add(timeout)
	sent, inflight := 0, 0
	for len(res) < len(calls) {
		for sent < len(calls) && inflight < depth {
			call := calls[sent]
			if call.Tag == 0 {
				call.Tag = uint64(sent)
			}
			err := c.Submit(call)
			if errors.Is(err, rpcrdma.ErrNoCredit) {
				break
			}
			sent++
			if err != nil {
				res = append(res, rpcrdma.Result{Tag: call.Tag, Err: err})
				continue
			}
			inflight++
		}
		n, err := c.Progress(buf)
		for _, r := range buf[:n] {
			r.Data = nil
			res = append(res, r)
		}
		inflight -= n
		if err != nil {
			return res, err
		}
		if time.Now().After(deadline) {
			return res, ErrTimeout
		}
	}
	return res, nil
}

// Mismatch is a Case that failed or travelled in other classes.
type Mismatch struct {
	Case   Case
	Result rpcrdma.Result
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s: err %v, classes %s/%s, want %s/%s", m.Case.Name, m.Result.Err,
		m.Result.CallClass, m.Result.ReplyClass, m.Case.CallClass, m.Case.ReplyClass)
}

// Check runs every case on c one at a time and returns those that failed or used other
// classes than expected, and an error if the connection broke or a call timed out.
// Verification is whatever c's Config.Verify says; turn it on.
func Check(c *rpcrdma.Conn, cases []Case, timeout time.Duration) ([]Mismatch, error) {
	var bad []Mismatch
	for i, tc := range cases {
		call := tc.Call
		call.Tag = uint64(i)
		rs, err := Drive(c, []rpcrdma.Call{call}, 1, timeout)
		if err != nil {
			return bad, fmt.Errorf("%s: %w", tc.Name, err)
		}
		r := rs[0]
		if r.Err != nil || r.CallClass != tc.CallClass || r.ReplyClass != tc.ReplyClass {
			bad = append(bad, Mismatch{tc, r})
		}
	}
	return bad, nil
}
