package nfs4

import (
	"encoding/binary"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
)

func TestZeroAllocs(t *testing.T) {
	buf := make([]byte, 8192)
	payload := make([]byte, 4096)
	fh := make(FH, 32)
	name := []byte("file")
	owner := []byte("open-owner")
	readRes := testutil.Unhex(t, "00000000 00000000 00000004"+" 00000035 "+seqResHex+" 00000016 00000000"+
		" 00000019 00000000 00000001 00001000")
	readRes = append(readRes, payload...)
	readRes = append(readRes, testutil.Unhex(t, "00000009 00000000 "+fattrHex)...)
	reduced := testutil.Unhex(t, "00000000 00000000 00000003"+" 00000035 "+seqResHex+" 00000016 00000000"+
		" 00000019 00000000 00000001 00001000")
	rdir := testutil.Unhex(t, readdirHex)
	gaRes := testutil.Unhex(t, "00000000 "+fattrHex)
	open := testutil.Unhex(t, openReadDelegHex)
	cb := testutil.Unhex(t, "00000000 00000001 00000000 00000003"+
		" 0000000b "+sessHex+" 00000001 00000000 00000000 00000000 00000000"+
		" 00000004 "+stateHex+" 00000000 00000004 aabbccdd 00000003")
	var (
		c   Compound
		r   CompoundRes
		seq SequenceRes
		rd  ReadRes
		ga  GetattrRes
		dr  ReaddirRes
		op  OpenRes
		e   Entry
		cbc CBCompound
		cbo CBOp
		cbr CBReply
	)
	cs := CreateSessionArgs{ClientID: 1, Flags: CreateSessionFlagConnBackChan, SecFlavor: oncrpc.FlavorSys,
		SysCred: oncrpc.SysCred{MachineName: []byte("vm"), NGids: 1}, Fore: ChannelAttrs{HasRdmaIRD: true}}
	a := testing.AllocsPerRun(200, func() {
		c.Start(buf, nil)
		c.Sequence(&SequenceArgs{SessionID: sess, SequenceID: 1})
		c.PutFH(fh)
		c.Open(&OpenArgs{ShareAccess: ShareAccessRead, Owner: owner, Name: name})
		c.Read(&ReadArgs{Stateid: state, Count: 4096})
		c.Write(&WriteArgs{Stateid: state, Data: payload})
		c.WriteReduced(&WriteArgs{Stateid: state, Data: payload})
		c.Getattr(StatAttrs)
		c.Readdir(&ReaddirArgs{Attrs: StatAttrs})
		c.Close(&state)
		c.ExchangeID(&ExchangeIDArgs{OwnerID: owner})
		c.CreateSession(&cs)
		c.Lookup(name)
		if _, err := c.Finish(); err != nil {
			panic(err)
		}
		if err := r.Decode(readRes); err != nil {
			panic(err)
		}
		if r.Sequence(&seq) != nil || r.Read(&rd) == nil { // PUTFH comes before READ
			panic("resop not checked")
		}
		if err := r.DecodeReduced(reduced, payload); err != nil {
			panic(err)
		}
		if r.Sequence(&seq) != nil {
			panic("sequence")
		}
		if _, err := r.Op(OpPutFH); err != nil {
			panic(err)
		}
		if err := r.Read(&rd); err != nil {
			panic(err)
		}
		if _, err := r.Done(); err != nil {
			panic(err)
		}
		if _, err := ga.Decode(gaRes); err != nil {
			panic(err)
		}
		if _, err := ga.Decode(gaRes[:40]); err == nil {
			panic("truncated GETATTR4res accepted")
		}
		if _, err := dr.Decode(rdir); err != nil {
			panic(err)
		}
		for it := dr.Entries; it.Next(&e); {
		}
		if _, err := op.Decode(open); err != nil {
			panic(err)
		}
		if err := cbc.Decode(cb); err != nil {
			panic(err)
		}
		cbr.Start(buf, cbc.Tag)
		for cbc.Next(&cbo) {
			switch cbo.Op {
			case CBOpSequence:
				cbr.Sequence(OK, &CBSequenceRes{SessionID: cbo.Sequence.SessionID})
			case CBOpRecall:
				cbr.Recall(OK)
			default:
				cbr.Unsupported(&cbo)
			}
		}
		if _, err := cbr.Finish(OK); err != nil {
			panic(err)
		}
	})
	if a != 0 {
		t.Errorf("%v allocs per run", a)
	}
}

func BenchmarkCodec(b *testing.B) {
	buf := make([]byte, 256)
	reply := testutil.Unhex(b, "00000000 00000000 00000003"+" 00000035 "+seqResHex+" 00000016 00000000"+
		" 00000019 00000000 00000000 00100000")
	chunk := make([]byte, 1<<20)
	fh := make(FH, 32)
	b.Run("ReadCompound+ReducedReply", func(b *testing.B) {
		var (
			c   Compound
			r   CompoundRes
			seq SequenceRes
			rd  ReadRes
		)
		b.ReportAllocs()
		for b.Loop() {
			c.Start(buf, nil)
			c.Sequence(&SequenceArgs{SessionID: sess, SequenceID: 1})
			c.PutFH(fh)
			c.Read(&ReadArgs{Stateid: state, Count: 1 << 20})
			if _, err := c.Finish(); err != nil {
				b.Fatal(err)
			}
			if err := r.DecodeReduced(reply, chunk); err != nil {
				b.Fatal(err)
			}
			_ = r.Sequence(&seq)
			_, _ = r.Op(OpPutFH)
			_ = r.Read(&rd)
			if _, err := r.Done(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WriteCompoundReduced", func(b *testing.B) {
		var c Compound
		b.ReportAllocs()
		for b.Loop() {
			c.Start(buf, nil)
			c.Sequence(&SequenceArgs{SessionID: sess, SequenceID: 1})
			c.PutFH(fh)
			c.WriteReduced(&WriteArgs{Stateid: state, Data: chunk})
			c.Getattr(StatAttrs)
			if _, err := c.Finish(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The measured procedures' EncodeArgs, Sizes and DecodeResults, and the callback service's
// Serve, allocate nothing.
func TestProgramZeroAllocs(t *testing.T) {
	s, c := setUp(t)
	const slot = 1
	type call struct {
		proc, size int
		b, reply   []byte
	}
	var calls []call
	for _, p := range [][2]int{{PNull, 0}, {PGetattr, 0}, {PLookup, 0}, {PRead, 4096}, {PWrite, 4096}, {PWriteSync, 4096},
		{PCommit, 0}, {PReaddir, 8192}, {POpenClose, 0}} {
		args, _, _ := c.Sizes(p[0], p[1])
		b := make([]byte, args)
		if p[0] == PNull {
			calls = append(calls, call{p[0], p[1], b, nil})
			continue
		}
		c.EncodeArgs(b, p[0], p[1], slot, 0, true)
		reply := s.answer(b)
		if _, err := c.DecodeResults(p[0], slot, reply, nil, p[1], 0, true); err != nil {
			t.Fatalf("%s: %v", Prog.Procs[p[0]].Name, err)
		}
		calls = append(calls, call{p[0], p[1], b, reply})
	}
	svc := c.Service()
	holdRecalled(c)
	cb := testutil.Unhex(t, cbHdr+"00000002"+cbSeq(sessHex, "00000001", "00000000")+cbRecall)
	res := make([]byte, 512)
	a := testing.AllocsPerRun(100, func() {
		for _, cl := range calls {
			c.Sizes(cl.proc, cl.size)
			c.EncodeArgs(cl.b, cl.proc, cl.size, slot, 0, true)
			if cl.reply != nil {
				binary.BigEndian.PutUint32(cl.reply[12+8+16:], c.table.slots[c.table.holder(slot)].sent) // the sequenceid the call sent
			}
			if _, err := c.DecodeResults(cl.proc, slot, cl.reply, nil, cl.size, 0, true); err != nil {
				panic(err)
			}
		}
		binary.BigEndian.PutUint32(cb[16+4+16:], c.cb.slots[0].seq+1)
		if n, err := svc.Serve(CBProcCompound, cb, res); n == 0 || err != nil {
			panic(err)
		}
		if _, _, ok := c.Recall(); !ok {
			panic("no recall")
		}
	})
	if a != 0 {
		t.Errorf("%v allocs per run", a)
	}
}
