package nfs4

import (
	"encoding/binary"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
)

// The fake server parses calls and builds replies by RFC 8881's XDR, written out here
// independently of the package's encoder and decoder.

// xr reads XDR; a read past the end fails the test.
type xr struct {
	t   testing.TB
	b   []byte
	off int
}

func (d *xr) take(n int) []byte {
	d.t.Helper()
	if d.off+n > len(d.b) {
		d.t.Fatalf("call truncated at %d (+%d) of %d", d.off, n, len(d.b))
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *xr) u32() uint32 { return binary.BigEndian.Uint32(d.take(4)) }
func (d *xr) u64() uint64 { return binary.BigEndian.Uint64(d.take(8)) }
func (d *xr) opaque() []byte {
	n := int(d.u32())
	p := d.take((n + 3) &^ 3)
	return p[:n]
}
func (d *xr) bitmap() []uint32 {
	m := make([]uint32, d.u32())
	for i := range m {
		m[i] = d.u32()
	}
	return m
}
func (d *xr) stateid() (s Stateid) {
	s.Seqid = d.u32()
	copy(s.Other[:], d.take(12))
	return s
}

// attrs6 are the six counted words of channel_attrs4, then its rdma_ird array.
type attrs6 struct {
	w   [6]uint32
	ird []uint32
}

func (d *xr) attrs() (a attrs6) {
	for i := range a.w {
		a.w[i] = d.u32()
	}
	for range d.u32() {
		a.ird = append(a.ird, d.u32())
	}
	return a
}

// fcall is one COMPOUND as the fake server parsed it.
type fcall struct {
	ops                []uint32
	sess               SessionID
	seqid, slot, high  uint32
	names              []string
	share              []uint32
	owners             []string
	stateids           []Stateid // CLOSE's, READ's, WRITE's, DELEGRETURN's
	fhs                []string  // PUTFH's
	exchOwner          string
	exchFlags          uint32
	csFlags, csProg    uint32
	csSeq              uint32
	csClient           uint64
	fore, back         attrs6
	secFlavor          uint32
	destroySess        SessionID
	destroyClient      uint64
	readCount          uint32
	readOff, writeOff  uint64
	writeStable        uint32
	writeData          []byte
	readdirMax, dirCnt uint32
}

func parseCall(t testing.TB, b []byte) fcall {
	t.Helper()
	d := &xr{t: t, b: b}
	var c fcall
	if tag := d.opaque(); len(tag) != 0 {
		t.Fatalf("tag %q", tag)
	}
	if v := d.u32(); v != 1 {
		t.Fatalf("minorversion %d", v)
	}
	n := d.u32()
	for range n {
		op := d.u32()
		c.ops = append(c.ops, op)
		switch op {
		case OpSequence:
			copy(c.sess[:], d.take(16))
			c.seqid, c.slot, c.high = d.u32(), d.u32(), d.u32()
			if d.u32() != 0 {
				t.Fatal("cachethis TRUE")
			}
		case OpPutRootFH, OpGetFH:
		case OpPutFH:
			c.fhs = append(c.fhs, string(d.opaque()))
		case OpLookup:
			c.names = append(c.names, string(d.opaque()))
		case OpGetattr:
			d.bitmap()
		case OpOpen:
			if d.u32() != 0 {
				t.Fatal("OPEN seqid not 0")
			}
			c.share = append(c.share, d.u32())
			if d.u32() != 0 {
				t.Fatal("OPEN share_deny not NONE")
			}
			d.u64()
			c.owners = append(c.owners, string(d.opaque()))
			if how := d.u32(); how != 0 {
				t.Fatalf("openhow %d, want OPEN4_NOCREATE", how)
			}
			if claim := d.u32(); claim != 0 {
				t.Fatalf("claim %d, want CLAIM_NULL", claim)
			}
			c.names = append(c.names, string(d.opaque()))
		case OpClose:
			if d.u32() != 0 {
				t.Fatal("CLOSE seqid not 0")
			}
			c.stateids = append(c.stateids, d.stateid())
		case OpDelegReturn:
			c.stateids = append(c.stateids, d.stateid())
		case OpRead:
			c.stateids = append(c.stateids, d.stateid())
			c.readOff, c.readCount = d.u64(), d.u32()
		case OpWrite:
			c.stateids = append(c.stateids, d.stateid())
			c.writeOff, c.writeStable = d.u64(), d.u32()
			c.writeData = d.opaque()
		case OpCommit:
			d.take(12)
		case OpReaddir:
			d.take(16)
			c.dirCnt, c.readdirMax = d.u32(), d.u32()
			d.bitmap()
		case OpExchangeID:
			d.take(8)
			c.exchOwner = string(d.opaque())
			c.exchFlags = d.u32()
			if sp := d.u32(); sp != 0 {
				t.Fatalf("state protection %d", sp)
			}
			if d.u32() == 1 {
				d.opaque()
				d.opaque()
				d.take(12)
			}
		case OpCreateSession:
			c.csClient, c.csSeq, c.csFlags = d.u64(), d.u32(), d.u32()
			c.fore, c.back = d.attrs(), d.attrs()
			c.csProg = d.u32()
			if n := d.u32(); n != 1 {
				t.Fatalf("%d cb_sec_parms", n)
			}
			c.secFlavor = d.u32()
			if c.secFlavor == 1 {
				d.u32()
				d.opaque()
				d.take(8)
				d.take(4 * int(d.u32()))
			}
		case OpReclaimComplete:
			if d.u32() != 0 {
				t.Fatal("RECLAIM_COMPLETE one_fs TRUE")
			}
		case OpDestroySession:
			copy(c.destroySess[:], d.take(16))
		case OpDestroyClientID:
			c.destroyClient = d.u64()
		default:
			t.Fatalf("op %d", op)
		}
	}
	if d.off != len(b) {
		t.Fatalf("%d bytes after the COMPOUND", len(b)-d.off)
	}
	return c
}

// xw writes XDR.
type xw struct{ b []byte }

func (w *xw) u32(v uint32) *xw { w.b = binary.BigEndian.AppendUint32(w.b, v); return w }
func (w *xw) u64(v uint64) *xw { w.b = binary.BigEndian.AppendUint64(w.b, v); return w }
func (w *xw) raw(p []byte) *xw { w.b = append(w.b, p...); return w }
func (w *xw) opaque(p []byte) *xw {
	w.u32(uint32(len(p)))
	w.b = append(w.b, p...)
	for len(w.b)%4 != 0 {
		w.b = append(w.b, 0)
	}
	return w
}
func (w *xw) stateid(s Stateid) *xw { return w.u32(s.Seqid).raw(s.Other[:]) }

// fakeServer answers the COMPOUNDs of one client as knfsd would, keeping its session's slot
// table; fail makes the next results of an operation fail with a status.
type fakeServer struct {
	t       testing.TB
	sess    SessionID
	client  uint64
	maxReqs uint32
	slots   map[uint32]uint32
	fail    map[uint32][]Status // by op: statuses to answer, one per call
	calls   []fcall
	size    uint64 // the read file's size
	deleg   bool   // grant read delegations when asked
	other   bool   // the read file does not hold the pattern
}

func newFakeServer(t testing.TB) *fakeServer {
	return &fakeServer{t: t, sess: sess, client: 0x1122334455667788, maxReqs: 8,
		slots: map[uint32]uint32{}, fail: map[uint32][]Status{}, size: 1 << 20}
}

var fhs = map[string]string{"": "ROOT", "f": "FILE", "s": "SCRATCH", "r": "RECALL"}

func openState(name string) Stateid {
	s := Stateid{Seqid: 1}
	copy(s.Other[:], "open-"+name)
	return s
}

var delegState = Stateid{Seqid: 1, Other: [12]byte{'d', 'e', 'l', 'e', 'g'}}

// answer parses call and returns its reply body.
func (s *fakeServer) answer(call []byte) []byte {
	c := parseCall(s.t, call)
	s.calls = append(s.calls, c)
	var res xw
	var n uint32
	status := OK
	lookedUp, lookups := "", 0
	for _, op := range c.ops {
		n++
		res.u32(op)
		if f := s.fail[op]; len(f) > 0 {
			s.fail[op] = f[1:]
			status = f[0]
			res.u32(uint32(status))
			break
		}
		switch op {
		case OpSequence:
			if c.sess != s.sess {
				status = ErrBadSession
			} else if c.seqid != s.slots[c.slot]+1 {
				status = ErrSeqMisordered
			}
			res.u32(uint32(status))
			if status == OK {
				s.slots[c.slot] = c.seqid
				res.raw(s.sess[:]).u32(c.seqid).u32(c.slot).u32(s.maxReqs - 1).u32(s.maxReqs - 1).u32(0)
			}
		case OpExchangeID:
			res.u32(0).u64(s.client).u32(1).u32(ExchgIDFlagUseNonPNFS).u32(0).u64(0).
				opaque([]byte("srv")).opaque([]byte("srv")).u32(0)
		case OpCreateSession:
			s.slots = map[uint32]uint32{} // a new session's slots start over
			res.u32(0).raw(s.sess[:]).u32(1).u32(CreateSessionFlagConnBackChan).
				u32(0).u32(c.fore.w[1]).u32(c.fore.w[2]).u32(512).u32(8).u32(s.maxReqs).u32(0).
				u32(0).u32(c.back.w[1]).u32(c.back.w[2]).u32(0).u32(2).u32(c.back.w[5]).u32(0)
		case OpGetFH:
			res.u32(0).opaque([]byte(fhs[lookedUp]))
		case OpLookup:
			// An export's components lead to the root the files are named in.
			if lookedUp = c.names[lookups]; fhs[lookedUp] == "" {
				lookedUp = ""
			}
			lookups++
			res.u32(0)
		case OpGetattr:
			// type REG, size.
			res.u32(0).u32(1).u32(1<<AttrType | 1<<AttrSize).u32(12).u32(1).u64(s.size)
		case OpOpen:
			lookedUp = c.names[len(c.names)-1]
			res.u32(0).stateid(openState(lookedUp)).u32(1).u64(1).u64(2).u32(4).u32(0)
			if s.deleg && c.share[len(c.share)-1]&ShareAccessWantReadDel != 0 {
				res.u32(DelegRead).stateid(delegState).u32(0).u32(0).u32(0).u32(0).u32(0)
			} else {
				res.u32(DelegNoneExt).u32(0) // WND4_NOT_WANTED
			}
		case OpClose:
			res.u32(0).stateid(Stateid{Seqid: 2})
		case OpRead:
			data := make([]byte, c.readCount)
			benchprog.Fill(data, benchprog.FileSeed, c.readOff)
			if s.other {
				data[len(data)-1] ^= 1
			}
			res.u32(0).u32(0).opaque(data)
		case OpWrite:
			res.u32(0).u32(uint32(len(c.writeData))).u32(c.writeStable).u64(0x0102030405060708)
		case OpCommit:
			res.u32(0).u64(0x0102030405060708)
		case OpReaddir:
			res.u32(0).u64(0).u32(0).u32(1) // no entries, eof
		default: // PUTFH, PUTROOTFH, RECLAIM_COMPLETE, DELEGRETURN, DESTROY_*
			res.u32(0)
		}
		if status != OK {
			break
		}
	}
	var hdr xw
	hdr.u32(uint32(status)).u32(0).u32(n)
	return append(hdr.b, res.b...)
}

// call makes one call of proc on slot through the codec and the fake server.
func (s *fakeServer) call(c *Codec, proc, size, slot int) ([]byte, error) {
	args, prefix, results := c.Sizes(proc, size)
	if prefix > args || results <= 0 {
		s.t.Fatalf("proc %d: Sizes %d %d %d", proc, args, prefix, results)
	}
	b := make([]byte, args)
	c.EncodeArgs(b, proc, size, slot, 0, false)
	if c.encErr != nil {
		s.t.Fatalf("proc %d: %v", proc, c.encErr)
	}
	reply := s.answer(b)
	if len(reply) > results {
		s.t.Fatalf("proc %d: a reply of %d bytes, more than Sizes' %d", proc, len(reply), results)
	}
	return c.DecodeResults(proc, slot, reply, nil, size, 0, false)
}
