package nfs4

import (
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/testutil"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/xdrtest"
)

// seed adds the result vectors of v's type as seeds, and some malformed neighbours.
func seed(f *testing.F, v decodable, extra ...string) {
	xdrtest.Seed(f, resVectors, resVector.pair, v, extra...)
}

// fuzzDecode runs xdrtest.FuzzDecode with the first result vector of T's type to dirty the
// value.
func fuzzDecode[T any, P interface {
	*T
	decodable
}](t *testing.T, in []byte) (P, bool) {
	return xdrtest.FuzzVector[T, P](t, resVectors, resVector.pair, in)
}

func FuzzDecodeSequenceRes(f *testing.F) {
	seed(f, &SequenceRes{})
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecode[SequenceRes](t, in) })
}

func FuzzDecodeExchangeIDRes(f *testing.F) {
	seed(f, &ExchangeIDRes{}, "00000000 00000000 00000001 00000002 00000000 00000002 00000001 00000000 00000000 00000000 00000001 00000002 00000003 00000004 00000001 00000001 61000000")
	f.Fuzz(func(t *testing.T, in []byte) {
		if r, ok := fuzzDecode[ExchangeIDRes](t, in); ok && (len(r.ServerMajorID) > MaxOpaque || r.StateProtect > SP4SSV) {
			t.Fatalf("%+v", r)
		}
	})
}

func FuzzDecodeCreateSessionRes(f *testing.F) {
	seed(f, &CreateSessionRes{})
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecode[CreateSessionRes](t, in) })
}

func FuzzDecodeGetFHRes(f *testing.F) {
	seed(f, &GetFHRes{}, "00000000 00000081")
	f.Fuzz(func(t *testing.T, in []byte) {
		if r, ok := fuzzDecode[GetFHRes](t, in); ok && len(r.FH) > MaxFH {
			t.Fatalf("fh of %d bytes", len(r.FH))
		}
	})
}

func FuzzDecodeGetattrRes(f *testing.F) {
	seed(f, &GetattrRes{}, "00000000 00000001 00001000 00000000", "00000000 00000002 00000000 00000030 00000008 00000000 00000000")
	f.Fuzz(func(t *testing.T, in []byte) {
		if r, ok := fuzzDecode[GetattrRes](t, in); ok {
			for i, w := range r.Attr.Mask {
				if w&^knownAttrs[i] != 0 {
					t.Fatalf("mask %x", r.Attr.Mask)
				}
			}
		}
	})
}

func FuzzDecodeOpenRes(f *testing.F) {
	seed(f, &OpenRes{})
	f.Fuzz(func(t *testing.T, in []byte) {
		if r, ok := fuzzDecode[OpenRes](t, in); ok && r.DelegType > DelegNoneExt {
			t.Fatalf("delegation type %d", r.DelegType)
		}
	})
}

func FuzzDecodeCloseRes(f *testing.F) {
	seed(f, &CloseRes{})
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecode[CloseRes](t, in) })
}

// FuzzDecodeReadRes also checks the reduced form: the body before the data with the data as
// chunk decodes to the same result.
func FuzzDecodeReadRes(f *testing.F) {
	seed(f, &ReadRes{}, "00000000 00000000 00000004 01020304")
	f.Fuzz(func(t *testing.T, in []byte) {
		r, ok := fuzzDecode[ReadRes](t, in)
		if !ok || r.Status != OK {
			return
		}
		var d ReadRes
		k, err := d.DecodeReduced(in[:12], in[12:12+len(r.Data)])
		if err != nil || k != 12 || !reflect.DeepEqual(&d, r) {
			t.Fatalf("DecodeReduced %d %v\n%+v\n%+v", k, err, d, r)
		}
	})
}

func FuzzDecodeWriteRes(f *testing.F) {
	seed(f, &WriteRes{})
	f.Fuzz(func(t *testing.T, in []byte) {
		if r, ok := fuzzDecode[WriteRes](t, in); ok && r.Committed > FileSync {
			t.Fatalf("committed %d", r.Committed)
		}
	})
}

func FuzzDecodeCommitRes(f *testing.F) {
	seed(f, &CommitRes{})
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecode[CommitRes](t, in) })
}

// FuzzDecodeReaddirRes also walks the entries: exactly Len of them, each within the limits.
func FuzzDecodeReaddirRes(f *testing.F) {
	seed(f, &ReaddirRes{}, "00000000 00000000 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000001")
	f.Fuzz(func(t *testing.T, in []byte) {
		r, ok := fuzzDecode[ReaddirRes](t, in)
		if !ok {
			return
		}
		it := r.Entries
		var e Entry
		n := 0
		for it.Next(&e) {
			if len(e.Name) > MaxName {
				t.Fatalf("entry %d: %+v", n, e)
			}
			n++
		}
		if n != r.Entries.Len() {
			t.Fatalf("%d entries, Len %d", n, r.Entries.Len())
		}
	})
}

// FuzzDecodeCompoundRes decodes a COMPOUND4res taking each result as the operation its resop
// names, whole and with the first READ's data as a chunk: never a panic, errors are
// *oncrpc.XDRError, a failed result is the last one, and Done's offset lies within the input.
func FuzzDecodeCompoundRes(f *testing.F) {
	f.Add(testutil.Unhex(f, "00000000 00000003 74616700 00000004 00000035 "+seqResHex+
		" 00000016 00000000 00000019 00000000 00000000 00000005 68656c6c 6f000000 00000009 00000000 "+fattrHex))
	f.Add(testutil.Unhex(f, "00000046 00000000 00000002 00000035 "+seqResHex+" 00000016 00000046"))
	f.Add(testutil.Unhex(f, "00000000 00000000 00000003 0000002a 00000000 11223344 55667788 00000001 00010001 00000000 00000000 00000000 00000004 766d3031 00000004 766d3031 00000000"+
		" 0000002b 00000000 "+sessHex+" 00000001 00000002 00000000 00100400 00100400 00001da0 00000008 00000040 00000000 00000000 00001000 00001000 00000000 00000002 00000001 00000001 00000000"+
		" 0000003a 00000000"))
	f.Add(testutil.Unhex(f, "00000000 00000000 00000002 00000012 "+openReadDelegHex+" 0000001a "+readdirHex))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, reduced := range []bool{false, true} {
			var r CompoundRes
			var err error
			if reduced {
				err = r.DecodeReduced(in, in[len(in)/2:])
			} else {
				err = r.Decode(in)
			}
			if err != nil {
				xdrtest.IsXDRError(t, err)
				continue
			}
			for i := 0; i < r.N; i++ {
				if r.d.Err != nil || len(in)-r.d.Off < 4 {
					break
				}
				st, err := decodeNext(&r, binary.BigEndian.Uint32(in[r.d.Off:]))
				if err != nil {
					xdrtest.IsXDRError(t, err)
					break
				}
				if st != OK && i != r.N-1 {
					t.Fatalf("result %d failed with %v and was not the last of %d", i, st, r.N)
				}
			}
			if n, err := r.Done(); err != nil {
				xdrtest.IsXDRError(t, err)
			} else if n > len(in) || n%4 != 0 {
				t.Fatalf("Done %d of %d", n, len(in))
			}
		}
	})
}

// decodeNext decodes the next result as op's.
func decodeNext(r *CompoundRes, op uint32) (Status, error) {
	var err error
	var s Status
	switch op {
	case OpSequence:
		var v SequenceRes
		err, s = r.Sequence(&v), v.Status
	case OpExchangeID:
		var v ExchangeIDRes
		err, s = r.ExchangeID(&v), v.Status
	case OpCreateSession:
		var v CreateSessionRes
		err, s = r.CreateSession(&v), v.Status
	case OpGetFH:
		var v GetFHRes
		err, s = r.GetFH(&v), v.Status
	case OpGetattr:
		var v GetattrRes
		err, s = r.Getattr(&v), v.Status
	case OpOpen:
		var v OpenRes
		err, s = r.Open(&v), v.Status
	case OpClose:
		var v CloseRes
		err, s = r.Close(&v), v.Status
	case OpRead:
		var v ReadRes
		err, s = r.Read(&v), v.Status
	case OpWrite:
		var v WriteRes
		err, s = r.Write(&v), v.Status
	case OpCommit:
		var v CommitRes
		err, s = r.Commit(&v), v.Status
	case OpReaddir:
		var v ReaddirRes
		err, s = r.Readdir(&v), v.Status
	default:
		s, err = r.Op(op)
	}
	return s, err
}

// FuzzDecodeCBCompound walks a CB_COMPOUND and answers it: never a panic, errors are
// *oncrpc.XDRError, and the reply has a result per operation walked.
func FuzzDecodeCBCompound(f *testing.F) {
	f.Add(testutil.Unhex(f, "00000000 00000001 00000000 00000002 0000000b "+sessHex+" 00000001 00000000 00000000 00000000"+
		" 00000001 "+sessHex+" 00000001 00000007 00000003 00000004 00000001 a0a1a2a3 a4a5a6a7 a8a9aaab 00000000 00000004 aabbccdd"))
	f.Add(testutil.Unhex(f, "00000000 00000001 00000000 00000002 0000000b "+sessHex+" 00000001 00000000 00000000 00000000 00000000 00000003"))
	f.Add(testutil.Unhex(f, "00000000 00000000 00000000 00000001 00000063"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var c CBCompound
		if err := c.Decode(in); err != nil {
			xdrtest.IsXDRError(t, err)
			return
		}
		buf := make([]byte, 8+pad4(len(c.Tag))+4+40*c.N)
		var r CBReply
		r.Start(buf, c.Tag)
		var o CBOp
		n := 0
		for c.Next(&o) {
			switch o.Op {
			case CBOpSequence:
				r.Sequence(OK, &CBSequenceRes{SessionID: o.Sequence.SessionID})
			case CBOpRecall:
				if len(o.Recall.FH) > MaxFH {
					t.Fatalf("fh of %d bytes", len(o.Recall.FH))
				}
				r.Recall(OK)
			default:
				r.Unsupported(&o)
			}
			n++
		}
		if err := c.Err(); err != nil {
			xdrtest.IsXDRError(t, err)
			return
		}
		m, err := r.Finish(OK)
		if err != nil || m > len(buf) {
			t.Fatalf("reply %d %v", m, err)
		}
		if got := int(binary.BigEndian.Uint32(buf[8+pad4(len(c.Tag)):])); got != n {
			t.Fatalf("%d results for %d operations", got, n)
		}
	})
}

// Serve answers or refuses any CB_COMPOUND without panicking, and never claims more reply
// than its buffer.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		cbHdr + "00000002" + cbSeq(sessHex, "00000001", "00000000") + cbRecall,
		cbHdr + "00000002" + cbSeq(sessHex, "00000001", "00000000") + " 00000003 ffffffff",
		cbHdr + "00000001" + cbRecall,
		"00000000 00000000 00000000 00000001" + cbSeq(sessHex, "00000001", "00000000"),
	} {
		f.Add(testutil.Unhex(f, s))
	}
	c := newTestConn(f, 0)
	c.session = sess
	svc := c.Service()
	res := make([]byte, 256)
	f.Fuzz(func(t *testing.T, args []byte) {
		n, err := svc.Serve(CBProcCompound, args, res)
		if n < 0 || n > len(res) || n == 0 && err == nil {
			t.Fatalf("Serve: %d %v", n, err)
		}
	})
}

// DecodeResults of every procedure, and of every step of the conversation, takes any reply
// without panicking.
func FuzzDecodeResults(f *testing.F) {
	s := newFakeServer(f)
	c := newTestConn(f, 4096)
	for range 20 { // set up, keeping every reply as a seed
		if _, _, ok := c.Next(false); !ok {
			break
		}
		args, _, _ := c.Sizes(PSession, 0)
		b := make([]byte, args)
		c.EncodeArgs(b, PSession, 0, 0, 0, false)
		reply := s.answer(b)
		f.Add(reply, uint8(PSession), uint8(c.step))
		if _, err := c.DecodeResults(PSession, 0, reply, nil, 0, 0, false); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []int{PGetattr, PLookup, PRead, PWrite, PCommit, PReaddir, POpenClose} {
		args, _, _ := c.Sizes(p, 8)
		b := make([]byte, args)
		c.EncodeArgs(b, p, 8, 0, 0, false)
		f.Add(s.answer(b), uint8(p), uint8(stReady))
	}
	f.Fuzz(func(t *testing.T, reply []byte, proc, st uint8) {
		c.step = step(st % uint8(stDone+1))
		p := int(proc) % len(Prog.Procs)
		c.table.reset(len(c.table.slots), len(c.table.of))
		for _, chunk := range [][]byte{nil, make([]byte, 8)} {
			if data, err := c.DecodeResults(p, 0, reply, chunk, 8, 0, true); err == nil && len(data) > 8 {
				t.Fatalf("%d bytes of data", len(data))
			}
		}
	})
}
