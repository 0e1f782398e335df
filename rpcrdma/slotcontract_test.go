package rpcrdma

import (
	"errors"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// tellConv is a Conversation of prog that checks the slot contract: every call it encoded
// ends in exactly one of DecodeResults and Unanswered, while the call still holds its
// transport slot.
type tellConv struct {
	rpcproto.NullCodec
	t                   *testing.T
	open                map[int]bool // the slots of the calls encoded and not yet ended
	decoded, unanswered int
}

func (c *tellConv) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {
	if c.open[slot] {
		c.t.Errorf("slot %d encoded again before its call ended", slot)
	}
	c.open[slot] = true
}

func (c *tellConv) end(slot int, how string) {
	if !c.open[slot] {
		c.t.Errorf("%s on slot %d: no call of it is open", how, slot)
	}
	delete(c.open, slot)
}

func (c *tellConv) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	c.end(slot, "DecodeResults")
	c.decoded++
	return nil, nil
}

func (c *tellConv) Unanswered(proc, slot int) {
	c.end(slot, "Unanswered")
	c.unanswered++
}

func (c *tellConv) NewConn() rpcproto.Conversation { return c }
func (c *tellConv) Service() rpcproto.Service      { return nil }
func (c *tellConv) Start(rpcproto.ConnInfo)        {}
func (c *tellConv) Next(bool) (int, int, bool)     { return 0, 0, false }
func (c *tellConv) Slots() int                     { return 0 }
func (c *tellConv) Lost() bool                     { return false }

// TestSlotContract: a Conversation hears how each call ended: results decoded, an RPC the
// server rejected (its program unknown there) or a connection that broke are Unanswered.
func TestSlotContract(t *testing.T) {
	for _, tc := range []struct {
		name                string
		prog                *rpcproto.Program
		decoded, unanswered int
	}{
		{"answered", rpcproto.NullProgram(benchprog.Program, benchprog.Version), 3, 0},
		{"rejected", rpcproto.NullProgram(0x2000_0099, 1), 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := &tellConv{NullCodec: rpcproto.NullCodec{P: tc.prog}, t: t, open: map[int]bool{}}
			rc := testCfg(4096)
			rc.Codec = conv
			p := newPair(t, rc, testCfg(4096))
			rs, _ := p.run([]Call{{Proc: 0}, {Proc: 0}, {Proc: 0}}, nil)
			for _, r := range rs {
				if tc.unanswered > 0 && !errors.Is(r.Err, ErrRPCRejected) || tc.unanswered == 0 && r.Err != nil {
					t.Errorf("result %v", r.Err)
				}
			}
			if conv.decoded != tc.decoded || conv.unanswered != tc.unanswered || len(conv.open) != 0 {
				t.Fatalf("decoded %d, unanswered %d, still open %v; want %d, %d", conv.decoded, conv.unanswered, conv.open, tc.decoded, tc.unanswered)
			}
		})
	}
	t.Run("broken", func(t *testing.T) {
		conv := &tellConv{NullCodec: rpcproto.NullCodec{P: rpcproto.NullProgram(benchprog.Program, benchprog.Version)}, t: t, open: map[int]bool{}}
		rc := testCfg(4096)
		rc.Codec = conv
		p := newPair(t, rc, testCfg(4096))
		p.call(p.req, Call{Proc: 0}) // the first reply grants the credits
		for range 3 {
			if err := p.req.Submit(Call{Proc: 0}); err != nil {
				t.Fatal(err)
			}
		}
		p.rsp.Close()
		var done [8]Result
		n := 0
		p.until("the calls failed by the break", func() bool {
			k, _ := p.req.Progress(done[:])
			n += k
			return n >= 3
		})
		if conv.decoded+conv.unanswered != 4 || len(conv.open) != 0 {
			t.Fatalf("decoded %d, unanswered %d, still open %v; want the 3 calls cut by the break told", conv.decoded, conv.unanswered, conv.open)
		}
	})
}
