package rpcrdma

import (
	"context"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// lateRequest returns from Accept only once the requester has sent its first call: the
// responder's thread was slow to get back from accepting, as it is under load.
type lateRequest struct {
	datapath.ConnRequest
	sent <-chan struct{}
}

func (r lateRequest) Accept(cfg datapath.QPConfig, pd []byte) (datapath.Conn, error) {
	c, err := r.ConnRequest.Accept(cfg, pd)
	if err == nil {
		select {
		case <-r.sent:
		case <-time.After(5 * time.Second):
		}
	}
	return c, err
}

// A requester may send its first call the moment the connection is established, and iWARP
// has no receiver-not-ready retry (soft: RNRTimeout < 0): the responder's receives must be
// posted before the requester hears the answer, not after Accept returns, or that call ends
// the connection.
func TestReceivesPostedBeforeAnswer(t *testing.T) {
	for _, addr := range []string{soft.InprocPrefix + "norr", "127.0.0.1:0"} {
		t.Run(addr, func(t *testing.T) {
			prov := soft.New(soft.Config{RNRTimeout: -1})
			dev, err := prov.Open("")
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			rdev, err := prov.Open("")
			if err != nil {
				t.Fatal(err)
			}
			defer rdev.Close()
			l, err := rdev.Listen(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			sent := make(chan struct{})
			type res struct {
				c   *Conn
				err error
			}
			ch := make(chan res, 1)
			go func() {
				req, err := l.Accept(context.Background())
				if err != nil {
					ch <- res{nil, err}
					return
				}
				c, err := AcceptRequest(rdev, lateRequest{req, sent}, testCfg(1024))
				ch <- res{c, err}
			}()
			req, err := Dial(context.Background(), dev, l.Addr(), testCfg(1024))
			if err != nil {
				t.Fatal(err)
			}
			defer req.Close()
			if err := req.Submit(Call{Proc: benchprog.ProcNull, Tag: 1}); err != nil {
				t.Fatal(err)
			}
			var buf [4]Result
			req.Progress(buf[:]) // posts the call
			if addr != soft.InprocPrefix+"norr" {
				time.Sleep(50 * time.Millisecond) // for the call to cross the socket
			}
			close(sent)
			r := <-ch
			if r.err != nil {
				t.Fatalf("responder: %v", r.err)
			}
			defer r.c.Close()
			var got []Result
			for deadline := time.Now().Add(10 * time.Second); len(got) == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the first call never completed")
				}
				n, err := req.Progress(buf[:])
				got = append(got, buf[:n]...)
				if err != nil && n == 0 {
					t.Fatalf("requester: %v", err)
				}
				if _, err := r.c.Progress(buf[:]); err != nil {
					t.Fatalf("responder: %v", err)
				}
			}
			if got[0].Tag != 1 || got[0].Err != nil {
				t.Fatalf("first call: %+v", got[0])
			}
		})
	}
}
