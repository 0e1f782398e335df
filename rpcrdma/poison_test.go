package rpcrdma

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// lazyConn is a responder's queue pair that, while lazy is set, posts every RDMA Write with
// no data: the reply still claims the chunk's bytes, none of which reach the requester.
type lazyConn struct {
	datapath.Conn
	lazy *atomic.Bool
	wrs  []datapath.SendWR
}

func (c *lazyConn) PostSend(wrs []datapath.SendWR) (int, error) {
	if !c.lazy.Load() {
		return c.Conn.PostSend(wrs)
	}
	c.wrs = append(c.wrs[:0], wrs...)
	for i := range c.wrs {
		if c.wrs[i].Op == datapath.OpWrite {
			c.wrs[i].SGL = nil
		}
	}
	return c.Conn.PostSend(c.wrs)
}

type lazyRequest struct {
	datapath.ConnRequest
	lazy *atomic.Bool
}

func (r lazyRequest) Accept(cfg datapath.QPConfig, pd []byte) (datapath.Conn, error) {
	c, err := r.ConnRequest.Accept(cfg, pd)
	if err != nil {
		return nil, err
	}
	return &lazyConn{Conn: c, lazy: r.lazy}, nil
}

// offsetCodec is the benchmark program with SOURCE data keyed, as NFS READ data is by its file
// offset, by one of four values rather than by each call's own seed: data left in a buffer
// by an earlier call can be exactly what a later one expects.
type offsetCodec struct{ *benchprog.Codec }

func (c offsetCodec) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {
	c.Codec.EncodeArgs(b, proc, size, slot, seed%4, verify)
}

func (c offsetCodec) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	return c.Codec.DecodeResults(proc, slot, body, chunk, size, seed%4, verify)
}

// newLazyPair is newPair with a responder whose RDMA Writes can be made empty.
func newLazyPair(t *testing.T, reqCfg, rspCfg Config) (*pair, *atomic.Bool) {
	t.Helper()
	lazy := new(atomic.Bool)
	p := newPairWith(t, soft.InprocPrefix+"0", reqCfg, func(rdev datapath.Device, l datapath.Listener) (*Conn, error) {
		req, err := l.Accept(context.Background())
		if err != nil {
			return nil, err
		}
		return AcceptRequest(rdev, lazyRequest{req, lazy}, rspCfg)
	})
	return p, lazy
}

// With verify, a reply whose chunk data never arrived fails verification every time, even
// when the buffer it should have landed in holds what the call expects from an earlier call:
// the requester poisons the reply's Write chunk and Reply chunk before each call.
func TestVerifyCatchesMissingWrite(t *testing.T) {
	reqCfg := testCfg(4096)
	reqCfg.Codec = offsetCodec{&benchprog.Codec{}}
	p, lazy := newLazyPair(t, reqCfg, testCfg(4096))
	source := Call{Proc: benchprog.ProcSource, Size: 64 << 10}
	echo := Call{Proc: benchprog.ProcEcho, Size: 16 << 10}
	for i := range 8 {
		if r := p.call(p.req, echo); r.Err != nil || r.ReplyClass != rpcproto.ClassReplyChunk {
			t.Fatalf("ECHO %d, data written: %v, %s", i, r.Err, r.ReplyClass)
		}
	}
	for i := range 8 {
		if r := p.call(p.req, source); r.Err != nil || r.ReplyClass != rpcproto.ClassWriteChunk {
			t.Fatalf("SOURCE %d, data written: %v, %s", i, r.Err, r.ReplyClass)
		}
	}
	lazy.Store(true)
	passed := 0
	const n = 16
	for range n {
		if r := p.call(p.req, source); !errors.Is(r.Err, ErrVerify) {
			passed++
		}
	}
	if passed > 0 {
		t.Errorf("%d of %d SOURCE calls whose Write chunk was never written were not failed by verify", passed, n)
	}
	for range n {
		if r := p.call(p.req, echo); r.Err == nil {
			t.Fatalf("ECHO whose Reply chunk was never written succeeded")
		}
	}
}
