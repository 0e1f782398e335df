package rpcrdma

import (
	"encoding/binary"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// rawSend sends b as one RDMA Send from c, bypassing the engine.
func rawSend(tb testing.TB, c *Conn, b []byte) {
	buf := c.sendPool.Get()
	n := copy(buf.Bytes(), b)
	wr := datapath.SendWR{ID: wrID(kindErrSend, buf.Index()), Op: datapath.OpSend, Flags: datapath.FlagSignaled,
		SGL: []datapath.SGE{buf.SGE(n)}}
	if _, err := c.qp.PostSend([]datapath.SendWR{wr}); err != nil {
		tb.Fatal(err)
	}
}

func fuzzCfg() Config {
	return Config{SendSize: 1024, RecvSize: 1024, Credits: 2, ReverseCredits: 1, MaxPayload: 4096,
		Verify: true, ResponderRead: true}
}

// seedMessages are well-formed and nearly well-formed transport messages for both fuzz
// targets, with XID 0x00010000: the first call of a requester whose XID whitening is off.
func seedMessages() [][]byte {
	be := binary.BigEndian
	hdr := func(proc uint32, rest ...uint32) []byte {
		b := be.AppendUint32(nil, 0x00010000)
		b = be.AppendUint32(b, 1)
		b = be.AppendUint32(b, 4)
		b = be.AppendUint32(b, proc)
		for _, w := range rest {
			b = be.AppendUint32(b, w)
		}
		return b
	}
	call := func(proc uint32, args ...uint32) []uint32 {
		return append([]uint32{0x00010000, 0, 2, benchprog.Program, 1, proc, 0, 0, 0, 0}, args...)
	}
	reply := []uint32{0x00010000, 1, 0, 0, 0, 0}
	return [][]byte{
		hdr(0, append([]uint32{0, 0, 0}, call(0)...)...),                                          // NULL call
		hdr(0, append([]uint32{0, 0, 0}, call(1, 3, 0x61626300)...)...),                           // ECHO call
		hdr(0, append([]uint32{1, 56, 0x1234, 8, 0, 0x1000, 0, 0, 0}, call(2, 0, 0, 1, 8)...)...), // SINK, Read chunk
		hdr(1, 1, 0, 0x1234, 64, 0, 0x1000, 0, 0, 0),                                              // pos0 call
		hdr(0, append([]uint32{0, 0, 0}, reply...)...),                                            // NULL reply
		hdr(0, append([]uint32{0, 1, 1, 0x1234, 8, 0, 0x1000, 0, 0}, reply...)...),                // reply with Write list
		hdr(1, 0, 0, 1, 1, 0x1234, 24, 0, 0x1000),                                                 // reply in Reply chunk
		hdr(3),          // RDMA_DONE
		hdr(4, 2),       // ERR_CHUNK
		hdr(4, 1, 1, 1), // ERR_VERS
		{0, 1, 0, 0, 0, 0, 0, 2},
	}
}

// FuzzResponderRecv feeds arbitrary messages to a responder: it must answer, drop, or break
// the connection (a READ from a bogus key breaks it, as on hardware), never panic.
func FuzzResponderRecv(f *testing.F) {
	for _, m := range seedMessages() {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) > 1024 {
			return
		}
		p := newPair(t, fuzzCfg(), fuzzCfg())
		p.call(p.req, Call{Proc: benchprog.ProcNull})
		rawSend(t, p.req, msg)
		var done [8]Result
		for range 8 {
			p.rsp.Progress(done[:])
			p.req.Progress(done[:])
		}
	})
}

// FuzzRequesterRecv feeds arbitrary messages to a requester with one call outstanding (XID
// 0x00010000): a reply, an error, a reverse call or garbage; it must never panic, and the
// call must end at most once.
func FuzzRequesterRecv(f *testing.F) {
	for _, m := range seedMessages() {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) > 1024 {
			return
		}
		p := newPair(t, fuzzCfg(), fuzzCfg())
		p.call(p.req, Call{Proc: benchprog.ProcNull}) // opens the reverse direction
		p.req.Progress(nil)                           // releases slot 0 for the call below
		p.req.cl.base = 0
		p.req.cl.slots[0].gen = 0
		if err := p.req.Submit(Call{Proc: benchprog.ProcSource, Size: 100, Class: rpcproto.ClassWriteChunk}); err != nil {
			t.Fatal(err)
		}
		if s := p.req.cl.lookup(0x00010000); s == nil {
			t.Fatal("the outstanding call does not have XID 0x00010000")
		}
		rawSend(t, p.rsp, msg)
		var done [8]Result
		results := 0
		for range 8 {
			n, _ := p.req.Progress(done[:])
			results += n
		}
		if results > 1 {
			t.Fatalf("%d results for one call", results)
		}
	})
}
