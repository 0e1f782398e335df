package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/nfs4"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcrdma/wire"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// The NFSv4.1 session off the happy path, against a scripted server in another process: the
// test binary runs itself as the server (TestMain with scriptEnv set) over the soft
// provider's TCP wire. The server speaks RPC-over-RDMA and as much NFSv4.1 as the client's
// setup, GETATTR and READ need (RFC 8881's XDR written out here, apart from package nfs4's
// codecs), keeps its slots as knfsd does (a retry of a slot's last sequenceid that is not
// the cached request: NFS4ERR_SEQ_FALSE_RETRY), and plays the fault its script names. It
// prints what the client answered to its callbacks on its standard output.

// scriptEnv carries the script (JSON) to the server process.
const scriptEnv = "RPCRDMA_TEST_NFS4_SCRIPT"

// script is one server's behaviour; measured calls are the COMPOUNDs of GETATTR and READ
// after setup, counted from 1.
type script struct {
	Grant          int  `json:"grant"`           // ca_maxrequests granted (0: 64)
	NoBackChannel  bool `json:"no_back_channel"` // CREATE_SESSION's result without CONN_BACK_CHAN
	PathDown       bool `json:"path_down"`       // SEQ4_STATUS_CB_PATH_DOWN in every SEQUENCE result
	ChunkErrorAt   int  `json:"chunk_error_at"`  // that call executed, then answered RDMA_ERROR ERR_CHUNK
	LoseAt         int  `json:"lose_at"`         // after that call the session is gone (BADSESSION)
	ForgetClient   bool `json:"forget_client"`   // ... and the client ID (STALE_CLIENTID)
	RefuseRecovery bool `json:"refuse_recovery"` // CREATE_SESSION after the loss: NFS4ERR_SERVERFAULT
	RecallAt       int  `json:"recall_at"`       // after that call, a CB_RECALL of a delegation never granted
	ReplayRecall   bool `json:"replay_recall"`   // ... sent again on the same slot and sequenceid
	CacheThis      bool `json:"cache_this"`      // ... asking for its reply to be cached
}

// Sizes of the scripted server's buffers.
const (
	scriptBuf   = 8192 // a receive or send buffer: above every inline message of the tests
	scriptRecvs = 64
	scriptSends = 64
	scriptData  = 1 << 20 // READ data, RDMA Written from here
	scriptLimit = 2 * time.Minute
)

// xdrIn reads XDR; a read past the end sets bad.
type xdrIn struct {
	b   []byte
	bad bool
}

func (d *xdrIn) take(n int) []byte {
	if d.bad || n < 0 || n > len(d.b) {
		d.bad = true
		return make([]byte, max(n, 0))
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}
func (d *xdrIn) u32() uint32 { return binary.BigEndian.Uint32(d.take(4)) }
func (d *xdrIn) u64() uint64 { return binary.BigEndian.Uint64(d.take(8)) }
func (d *xdrIn) opaque() []byte {
	n := int(d.u32())
	if n > 4096 {
		d.bad = true
		return nil
	}
	return d.take((n + 3) &^ 3)[:n]
}
func (d *xdrIn) bitmap() {
	for range min(d.u32(), 8) {
		d.u32()
	}
}

// xdrOut writes XDR.
type xdrOut struct{ b []byte }

func (w *xdrOut) u32(v uint32) *xdrOut { w.b = binary.BigEndian.AppendUint32(w.b, v); return w }
func (w *xdrOut) u64(v uint64) *xdrOut { w.b = binary.BigEndian.AppendUint64(w.b, v); return w }
func (w *xdrOut) raw(p []byte) *xdrOut { w.b = append(w.b, p...); return w }
func (w *xdrOut) opaque(p []byte) *xdrOut {
	w.u32(uint32(len(p)))
	w.b = append(w.b, p...)
	w.b = append(w.b, make([]byte, (4-len(p)%4)%4)...)
	return w
}

// scriptServer is the server's state: one connection, one client at a time.
type scriptServer struct {
	sc   script
	conn datapath.Conn
	cq   datapath.CQ
	mr   datapath.MR
	mem  []byte

	sendNext, sending int

	clientID  uint64
	known     bool   // the client ID is the server's
	csSeq     uint32 // the client's last CREATE_SESSION sequence
	session   [16]byte
	live      bool // the session is the server's
	gen       uint32
	slots     []uint32
	measured  int
	lost      bool // the script took the session: the next CREATE_SESSION is a recovery
	cbSeq     uint32
	cbSent    [][]byte // callbacks sent, by XID offset, for the replay
	cbReplies [][]byte
}

// serveScript runs the scripted server of spec (a JSON script); it returns the exit status.
func serveScript(spec string) int {
	var s scriptServer
	if err := json.Unmarshal([]byte(spec), &s.sc); err != nil {
		fmt.Println("FATAL script:", err)
		return 2
	}
	if s.sc.Grant == 0 {
		s.sc.Grant = 64
	}
	if err := s.serve(); err != nil {
		fmt.Println("FATAL", err)
		return 1
	}
	fmt.Println("END")
	return 0
}

func (s *scriptServer) serve() error {
	dev, err := soft.New(soft.Config{}).Open("")
	if err != nil {
		return err
	}
	defer dev.Close()
	l, err := dev.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Println("ADDR", l.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), scriptLimit)
	defer cancel()
	req, err := l.Accept(ctx)
	if err != nil {
		return err
	}
	if s.cq, err = dev.NewCQ(4 * (scriptRecvs + scriptSends)); err != nil {
		return err
	}
	defer s.cq.Close()
	s.mem = make([]byte, (scriptRecvs+scriptSends)*scriptBuf+scriptData)
	if s.mr, err = dev.Register(s.mem, datapath.AccessLocalWrite); err != nil {
		return err
	}
	defer s.mr.Close()
	var pd [wire.PrivateDataSize]byte
	if _, err := (wire.PrivateData{SendSize: 4096, RecvSize: scriptBuf}).Encode(pd[:]); err != nil {
		return err
	}
	s.conn, err = req.Accept(datapath.QPConfig{SendCQ: s.cq, RecvCQ: s.cq, MaxSendWR: 4 * scriptSends, MaxRecvWR: scriptRecvs,
		Prepare: func(c datapath.Conn) error {
			for i := range scriptRecvs {
				if err := s.postRecv(c, i); err != nil {
					return err
				}
			}
			return nil
		}}, pd[:])
	if err != nil {
		return err
	}
	defer s.conn.Close()
	wcs := make([]datapath.Completion, 32)
	deadline := time.Now().Add(scriptLimit)
	for time.Now().Before(deadline) {
		n, err := s.cq.Poll(wcs)
		if err != nil {
			return err
		}
		if n == 0 {
			if s.conn.Err() != nil {
				return nil // the client closed the connection
			}
			_ = s.cq.Wait(50 * time.Millisecond)
			continue
		}
		for _, wc := range wcs[:n] {
			if wc.Status != datapath.StatusSuccess {
				return nil // flushed: the client closed the connection
			}
			if wc.Op != datapath.OpRecv {
				if wc.ID >= scriptRecvs {
					s.sending--
				}
				continue
			}
			off := int(wc.ID) * scriptBuf
			msg := append([]byte(nil), s.mem[off:off+int(wc.ByteLen)]...)
			if err := s.postRecv(s.conn, int(wc.ID)); err != nil {
				return err
			}
			if err := s.onMessage(msg); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("still connected after %v", scriptLimit)
}

func (s *scriptServer) postRecv(c datapath.Conn, i int) error {
	_, err := c.PostRecv([]datapath.RecvWR{{ID: uint64(i), SGL: []datapath.SGE{{Addr: s.mr.Addr() + uint64(i*scriptBuf), Length: scriptBuf, LKey: s.mr.LKey()}}}})
	return err
}

// send posts msg in the next send buffer, waiting for one to be free.
func (s *scriptServer) send(msg []byte) error {
	for s.sending >= scriptSends {
		var wc [1]datapath.Completion
		n, err := s.cq.Poll(wc[:])
		if err != nil || n == 1 && wc[0].Status != datapath.StatusSuccess {
			return fmt.Errorf("send buffers: %v %+v", err, wc[0])
		}
		if n == 1 && wc[0].Op != datapath.OpRecv {
			s.sending--
		}
	}
	k := scriptRecvs + s.sendNext
	s.sendNext = (s.sendNext + 1) % scriptSends
	off := k * scriptBuf
	copy(s.mem[off:], msg)
	s.sending++
	_, err := s.conn.PostSend([]datapath.SendWR{{ID: uint64(k), Op: datapath.OpSend, Flags: datapath.FlagSignaled,
		SGL: []datapath.SGE{{Addr: s.mr.Addr() + uint64(off), Length: uint32(len(msg)), LKey: s.mr.LKey()}}}})
	return err
}

// onMessage handles one received message: a call, or the reply to a callback.
func (s *scriptServer) onMessage(b []byte) error {
	var h wire.Header
	msg, err := h.Decode(b, nil)
	if err != nil || h.Proc != wire.ProcMsg || len(msg) < 8 {
		return nil // RDMA_DONE and the like
	}
	if binary.BigEndian.Uint32(msg[4:]) == 1 {
		return s.onCallbackReply(msg)
	}
	var c oncrpc.Call
	off, err := c.Decode(msg)
	if err != nil {
		return fmt.Errorf("call: %v", err)
	}
	var body []byte
	wrote := uint32(0)
	chunkError := false
	if c.Proc != 0 {
		body, wrote, chunkError = s.compound(msg[off:], &h)
	}
	credit := uint32(32)
	if chunkError {
		var e [64]byte
		n, err := wire.EncodeError(e[:], h.XID, credit, wire.ErrCodeChunk)
		if err != nil {
			return err
		}
		if err := s.send(e[:n]); err != nil {
			return err
		}
	} else {
		var rh wire.Header
		rh.XID, rh.Vers, rh.Credit, rh.Proc = h.XID, wire.Version, credit, wire.ProcMsg
		if wrote > 0 {
			segs := append([]wire.Segment(nil), h.WriteChunk(0)...)
			left := wrote
			for i := range segs {
				segs[i].Length = min(segs[i].Length, left)
				left -= segs[i].Length
			}
			rh.AddWriteChunk(segs...)
		}
		hb := make([]byte, 1024)
		n, err := rh.Encode(hb)
		if err != nil {
			return err
		}
		var w xdrOut
		w.raw(hb[:n]).u32(c.XID).u32(1).u32(0).u32(0).u32(0).u32(0).raw(body)
		if err := s.send(w.b); err != nil {
			return err
		}
	}
	return s.after()
}

// after plays what the script does once a measured call was answered.
func (s *scriptServer) after() error {
	if s.measured == 0 {
		return nil
	}
	switch {
	case s.measured == s.sc.LoseAt && !s.lost:
		s.lost, s.live = true, false
		s.known = s.known && !s.sc.ForgetClient
		fmt.Println("LOST session")
	case s.measured == s.sc.RecallAt && s.cbSeq == 0:
		s.cbSeq = 1
		return s.recall()
	}
	return nil
}

// recall sends CB_COMPOUND: CB_SEQUENCE on back channel slot 0 and CB_RECALL of a
// delegation this server never granted, on a file it never named.
func (s *scriptServer) recall() error {
	var w xdrOut
	w.opaque(nil).u32(1).u32(0).u32(2)
	cache := uint32(0)
	if s.sc.CacheThis {
		cache = 1
	}
	w.u32(nfs4.CBOpSequence).raw(s.session[:]).u32(s.cbSeq).u32(0).u32(0).u32(cache).u32(0)
	w.u32(nfs4.CBOpRecall).u32(1).raw([]byte("nosuchdeleg!")).u32(0).opaque([]byte("F:nosuchfile"))
	s.cbSent = append(s.cbSent, w.b)
	return s.sendCallback(len(s.cbSent) - 1)
}

func (s *scriptServer) sendCallback(i int) error {
	var rh wire.Header
	xid := 0x7e000000 + uint32(i)
	rh.XID, rh.Vers, rh.Credit, rh.Proc = xid, wire.Version, 1, wire.ProcMsg
	hb := make([]byte, 64)
	n, err := rh.Encode(hb)
	if err != nil {
		return err
	}
	var w xdrOut
	w.raw(hb[:n]).u32(xid).u32(0).u32(2).u32(nfs4.DefaultCBProgram).u32(1).u32(nfs4.CBProcCompound).u32(0).u32(0).u32(0).u32(0)
	w.raw(s.cbSent[i])
	return s.send(w.b)
}

// onCallbackReply prints the client's answer to a callback: the COMPOUND's status and each
// operation's, and for the replay whether the reply was the first's byte for byte.
func (s *scriptServer) onCallbackReply(msg []byte) error {
	d := &xdrIn{b: msg}
	xid := d.u32()
	d.u32()
	if d.u32() != 0 { // MSG_ACCEPTED
		fmt.Println("CB rejected")
		return nil
	}
	d.u32()
	d.opaque()
	if st := d.u32(); st != 0 {
		fmt.Println("CB accept status", st)
		return nil
	}
	body := append([]byte(nil), d.b...)
	i := int(xid - 0x7e000000)
	s.cbReplies = append(s.cbReplies, body)
	status := d.u32()
	d.opaque()
	var ops []string
	for range min(d.u32(), 8) {
		op, st := d.u32(), d.u32()
		ops = append(ops, fmt.Sprintf("%d:%d", op, st))
		if op == nfs4.CBOpSequence && st == 0 {
			d.take(32)
		}
	}
	label := "first"
	if i > 0 {
		label = fmt.Sprintf("replay same=%v", bytes.Equal(body, s.cbReplies[0]))
	}
	fmt.Printf("CB %s status=%d ops=%s\n", label, status, strings.Join(ops, ","))
	if i == 0 && s.sc.ReplayRecall {
		s.cbSent = append(s.cbSent, s.cbSent[0])
		return s.sendCallback(1)
	}
	return nil
}

// compound executes one COMPOUND and returns its results, how many bytes of READ data went
// into the call's Write chunk, and whether the script answers it ERR_CHUNK instead.
func (s *scriptServer) compound(args []byte, h *wire.Header) (res []byte, wrote uint32, chunkError bool) {
	d := &xdrIn{b: args}
	d.opaque()
	d.u32()
	n := d.u32()
	var w xdrOut
	status := uint32(0)
	count := uint32(0)
	var ops []uint32
	fh := ""
	for i := uint32(0); i < n && status == 0 && !d.bad; i++ {
		op := d.u32()
		ops = append(ops, op)
		count++
		w.u32(op)
		switch op {
		case nfs4.OpSequence:
			var sid [16]byte
			copy(sid[:], d.take(16))
			seq, slot := d.u32(), d.u32()
			d.u32()
			d.u32()
			switch {
			case !s.live || sid != s.session:
				status = uint32(nfs4.ErrBadSession)
			case slot >= uint32(len(s.slots)):
				status = uint32(nfs4.ErrBadSlot)
				fmt.Println("BADSLOT", slot)
			case seq == s.slots[slot]:
				status = uint32(nfs4.ErrSeqFalseRetry) // not the request the slot executed last
			case seq != s.slots[slot]+1:
				status = uint32(nfs4.ErrSeqMisordered)
			}
			w.u32(status)
			if status == 0 {
				s.slots[slot] = seq
				flags := uint32(0)
				if s.sc.PathDown {
					flags = nfs4.SeqStatusCBPathDown
				}
				top := uint32(len(s.slots) - 1)
				w.raw(sid[:]).u32(seq).u32(slot).u32(top).u32(top).u32(flags)
			}
		case nfs4.OpExchangeID:
			d.take(8)
			d.opaque()
			d.u32()
			d.u32()
			for range min(d.u32(), 1) {
				d.opaque()
				d.opaque()
				d.take(12)
			}
			if !s.known {
				s.clientID++
				s.known, s.csSeq = true, 0
			}
			w.u32(0).u64(s.clientID).u32(1).u32(nfs4.ExchgIDFlagUseNonPNFS).u32(0).u64(0).
				opaque([]byte("srv")).opaque([]byte("srv")).u32(0)
		case nfs4.OpCreateSession:
			client, seq := d.u64(), d.u32()
			d.u32()
			var attrs [2][6]uint32
			for k := range attrs {
				for j := range attrs[k] {
					attrs[k][j] = d.u32()
				}
				for range min(d.u32(), 1) {
					d.u32()
				}
			}
			d.u32()
			for range min(d.u32(), 2) {
				if d.u32() == 1 { // AUTH_SYS
					d.u32()
					d.opaque()
					d.u32()
					d.u32()
					for range min(d.u32(), 16) {
						d.u32()
					}
				}
			}
			switch {
			case !s.known || client != s.clientID:
				status = uint32(nfs4.ErrStaleClientID)
			case seq != s.csSeq+1:
				// knfsd answers a repeated sequence from its CREATE_SESSION cache (the
				// old session): here, any other than the next is misordered.
				status = uint32(nfs4.ErrSeqMisordered)
			case s.lost && s.sc.RefuseRecovery:
				status = uint32(nfs4.ErrServerFault)
			}
			w.u32(status)
			if status != 0 {
				break
			}
			s.gen++
			s.csSeq = seq
			s.session = [16]byte{'s', 'c', 'r', 'i', 'p', 't'}
			binary.BigEndian.PutUint32(s.session[12:], s.gen)
			s.live = true
			s.slots = make([]uint32, s.sc.Grant)
			flags := nfs4.CreateSessionFlagConnBackChan
			if s.sc.NoBackChannel {
				flags = 0
			}
			w.raw(s.session[:]).u32(seq).u32(flags)
			w.u32(0).u32(attrs[0][1]).u32(attrs[0][2]).u32(512).u32(8).u32(uint32(s.sc.Grant)).u32(0)
			w.u32(0).u32(attrs[1][1]).u32(attrs[1][2]).u32(0).u32(2).u32(1).u32(0)
			if s.lost {
				fmt.Println("RECOVERED session", s.gen)
			}
		case nfs4.OpReclaimComplete:
			d.u32()
			w.u32(0)
		case nfs4.OpPutRootFH:
			fh = "ROOT"
			w.u32(0)
		case nfs4.OpPutFH:
			fh = string(d.opaque())
			w.u32(0)
		case nfs4.OpLookup:
			fh = "F:" + string(d.opaque())
			w.u32(0)
		case nfs4.OpGetFH:
			w.u32(0).opaque([]byte(fh))
		case nfs4.OpGetattr:
			d.bitmap()
			// type NF4REG and size 1 MiB: bitmap word 0 with bits 1 and 4.
			w.u32(0).u32(1).u32(1<<1 | 1<<4).u32(12).u32(1).u64(scriptData)
		case nfs4.OpOpen:
			d.u32()
			d.u32()
			d.u32()
			d.u64()
			d.opaque()
			if d.u32() == 1 { // OPEN4_CREATE
				d.u32()
				d.bitmap()
				d.opaque()
			}
			d.u32()
			d.opaque()
			w.u32(0).u32(1).raw(append([]byte("open"), make([]byte, 8)...)).u32(0).u64(0).u64(0).u32(0).u32(0).u32(0)
		case nfs4.OpClose:
			d.u32()
			d.take(16)
			w.u32(0).u32(2).raw(append([]byte("open"), make([]byte, 8)...))
		case nfs4.OpRead:
			d.take(16)
			d.u64()
			n := d.u32()
			n = min(n, scriptData)
			w.u32(0).u32(0).u32(n)
			if len(h.WriteCounts) > 0 {
				if err := s.writeChunk(h.WriteChunk(0), n); err != nil {
					fmt.Println("WRITE", err)
				}
				wrote = n
			} else {
				w.raw(make([]byte, (n+3)&^3))
			}
		case nfs4.OpDestroySession:
			d.take(16)
			s.live = false
			w.u32(0)
		case nfs4.OpDestroyClientID:
			d.u64()
			s.known = false
			w.u32(0)
		default:
			status = uint32(nfs4.ErrNotSupp)
			w.u32(status)
		}
	}
	if len(ops) >= 3 && ops[0] == nfs4.OpSequence && ops[1] == nfs4.OpPutFH && (ops[2] == nfs4.OpGetattr || ops[2] == nfs4.OpRead) && status == 0 {
		s.measured++
		chunkError = s.measured == s.sc.ChunkErrorAt
	}
	var out xdrOut
	out.u32(status).opaque(nil).u32(count).raw(w.b)
	return out.b, wrote, chunkError
}

// writeChunk RDMA Writes n bytes of READ data into the call's Write chunk segs.
func (s *scriptServer) writeChunk(segs []wire.Segment, n uint32) error {
	src := s.mr.Addr() + uint64((scriptRecvs+scriptSends)*scriptBuf)
	for _, seg := range segs {
		k := min(seg.Length, n)
		if k == 0 {
			break
		}
		if _, err := s.conn.PostSend([]datapath.SendWR{{ID: 1 << 40, Op: datapath.OpWrite, SGL: []datapath.SGE{{Addr: src, Length: k, LKey: s.mr.LKey()}},
			RemoteAddr: seg.Offset, RKey: seg.Handle}}); err != nil {
			return err
		}
		n -= k
		src += uint64(k)
	}
	return nil
}

// scripted is a server process playing sc: its address, and its output lines once it ended.
type scripted struct {
	addr  string
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func startScript(t *testing.T, sc script) *scripted {
	t.Helper()
	spec, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), scriptEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &scripted{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "ADDR "); ok {
				addr <- a
				continue
			}
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	select {
	case p.addr = <-addr:
	case <-p.done:
		t.Fatal("the scripted server ended before listening")
	case <-time.After(30 * time.Second):
		t.Fatal("the scripted server did not listen within 30 s")
	}
	return p
}

// output waits (bounded) for the server to end after the client closed, and returns its lines.
func (p *scripted) output(t *testing.T) []string {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Error("the scripted server did not end within 30 s of the client")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// scriptResult is what a scriptRun measured: its point (nil when no results file was
// written) and that file, the run's error, and what it logged.
type scriptResult struct {
	pt   *results.Point
	file string
	err  error
	log  string
}

// scriptRun is one point of mix at depth against p's server, over the soft provider's TCP
// wire in mem's memory mode, through the engine.
func scriptRun(t *testing.T, p *scripted, mix string, count, depth int, mem rpcrdma.MemoryMode) scriptResult {
	t.Helper()
	m, err := workloads.ParseMix(mix, nfs4.Prog)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workloads.Config{Prog: nfs4.Prog, Mix: m, Count: int64(count), Warmup: workloads.NoWarmup, Depth: depth}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	pts := []workloads.Point{{Threshold: 4096, Depth: depth, Workload: w}}
	codec := nfs4.New(nfs4.Config{File: "f", Scratch: "s", LargestRead: workloads.LargestRead(pts), Owner: "script"})
	var log bytes.Buffer
	var logMu sync.Mutex
	lw := writerFunc(func(b []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return log.Write(b) })
	conn, err := Engine(EngineConfig{Provider: soft.New(soft.Config{}), Addr: p.addr, Codec: codec, Log: lw,
		Transport: Transport{Memory: mem}}, pts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run.json")
	o, runErr := session.Run(context.Background(), session.Config{Command: "test", Points: pts, RunConfig: map[string]string{}, Provider: "soft",
		Connector: conn, Out: out, Log: lw})
	conn.Close()
	logMu.Lock()
	logged := log.String()
	logMu.Unlock()
	if runErr == nil && o.Run.Status.State != results.StateComplete {
		runErr = fmt.Errorf("run %s: %s", o.Run.Status.State, o.Run.Status.Message)
	}
	r, err := results.ReadFile(out)
	if err != nil || len(r.Points) == 0 {
		return scriptResult{err: runErr, log: logged}
	}
	return scriptResult{pt: &r.Points[0], file: out, err: runErr, log: logged}
}

// recoveries is the points[0].recoveries of the results file f, read apart from package
// results' types (nil when absent).
func recoveries(t *testing.T, f string) *struct{ Sessions, ClientIDs int } {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Points []struct {
			Recoveries *struct {
				Sessions  int `json:"sessions"`
				ClientIDs int `json:"client_ids"`
			} `json:"recoveries"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &run); err != nil || len(run.Points) == 0 {
		t.Fatalf("%s: %v", f, err)
	}
	if r := run.Points[0].Recoveries; r != nil {
		return &struct{ Sessions, ClientIDs int }{r.Sessions, r.ClientIDs}
	}
	return nil
}

// failedRPCs reports whether err is a run's failure for RPCs that failed, and no other.
func failedRPCs(err error) bool { return err != nil && strings.Contains(err.Error(), "RPCs failed (") }

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

var _ io.Writer = writerFunc(nil)

// errorsOf sums a point's failed RPCs.
func errorsOf(p *results.Point) uint64 {
	n := uint64(0)
	for _, e := range p.Errors {
		n += e.Count
	}
	return n
}

// W1: a call the server executed whose RPC then failed below the codec (RDMA_ERROR
// ERR_CHUNK) costs that call alone: its slot moves on as if the server had run it.
func TestScriptedCallExecutedThenFailed(t *testing.T) {
	p := startScript(t, script{ChunkErrorAt: 20})
	r := scriptRun(t, p, "getattr", 400, 4, rpcrdma.MemoryPreregistered)
	pt := r.pt
	if pt == nil || r.err != nil && !failedRPCs(r.err) {
		t.Fatalf("run: %v\n%s", r.err, r.log)
	}
	if n := errorsOf(pt); n != 1 || pt.Throughput.RPCs+n != 400 {
		t.Fatalf("%d RPCs, %d failed (%+v), want 1 failed: the ERR_CHUNK alone", pt.Throughput.RPCs, n, pt.Errors)
	}
	p.output(t)
}

// W2: a server granting 2 slots to a client at depth 16: SEQUENCE never names a slot beyond
// them, however the transport reuses its own (READs in Write chunks, so that in
// MemoryWindows mode a slot waits for its invalidation before the transport frees it).
func TestScriptedTwoSlotsAtDepth16(t *testing.T) {
	for _, mem := range []rpcrdma.MemoryMode{rpcrdma.MemoryPreregistered, rpcrdma.MemoryWindows} {
		t.Run(mem.String(), func(t *testing.T) {
			p := startScript(t, script{Grant: 2})
			r := scriptRun(t, p, "read/8k", 2000, 16, mem)
			pt := r.pt
			if r.err != nil {
				t.Fatalf("run: %v\n%s", r.err, r.log)
			}
			lines := p.output(t)
			if n := errorsOf(pt); n != 0 || pt.Throughput.RPCs != 2000 {
				t.Fatalf("%d RPCs, %d failed (%+v); server: %q", pt.Throughput.RPCs, n, pt.Errors, lines)
			}
			if !strings.Contains(r.log, "granted 2 session slots for a depth of 16") {
				t.Errorf("no warning of the 2 slots: %q", r.log)
			}
		})
	}
}

// D3 and D5: a CB_RECALL naming a delegation the client does not hold is answered
// NFS4ERR_BADHANDLE (10001), as Linux's client answers it; the same CB_COMPOUND replayed on
// its slot and sequenceid executes nothing again: NFS4ERR_RETRY_UNCACHED_REP (10068) after
// CB_SEQUENCE, or with csa_cachethis the first reply byte for byte.
func TestScriptedRecallOfUnknownDelegation(t *testing.T) {
	for _, cache := range []bool{false, true} {
		t.Run(fmt.Sprintf("cachethis=%v", cache), func(t *testing.T) {
			p := startScript(t, script{RecallAt: 10, ReplayRecall: true, CacheThis: cache})
			if r := scriptRun(t, p, "getattr", 300, 1, rpcrdma.MemoryPreregistered); r.err != nil {
				t.Fatalf("run: %v\n%s", r.err, r.log)
			}
			lines := strings.Join(p.output(t), "\n")
			first := "CB first status=10001 ops=11:0,4:10001"
			replay := "CB replay same=false status=10068 ops=11:0,4:10068"
			if cache {
				replay = "CB replay same=true status=10001 ops=11:0,4:10001"
			}
			if !strings.Contains(lines, first) || !strings.Contains(lines, replay) {
				t.Fatalf("the client answered\n%s\nwant %q and %q", lines, first, replay)
			}
		})
	}
}

// D5: the session destroyed under the client (and the client ID with it) is made again on the
// same connection, counted; the run finishes. A recovery the server refuses ends the point
// with an error naming it.
func TestScriptedSessionLost(t *testing.T) {
	for _, forget := range []bool{false, true} {
		t.Run(fmt.Sprintf("client forgotten=%v", forget), func(t *testing.T) {
			p := startScript(t, script{LoseAt: 50, ForgetClient: forget})
			r := scriptRun(t, p, "getattr", 400, 4, rpcrdma.MemoryPreregistered)
			pt := r.pt
			if pt == nil || r.err != nil && !failedRPCs(r.err) {
				t.Fatalf("run: %v\n%s", r.err, r.log)
			}
			lines := p.output(t)
			want := struct{ Sessions, ClientIDs int }{Sessions: 1}
			if forget {
				want.ClientIDs = 1
			}
			rec := recoveries(t, r.file)
			if rec == nil || *rec != want || pt.Throughput.RPCs+errorsOf(pt) != 400 || errorsOf(pt) > 4 {
				t.Fatalf("recoveries %+v, want %+v; %d RPCs, %d failed (%+v); server %q", rec, want,
					pt.Throughput.RPCs, errorsOf(pt), pt.Errors, lines)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		p := startScript(t, script{LoseAt: 50, RefuseRecovery: true})
		err := scriptRun(t, p, "getattr", 400, 4, rpcrdma.MemoryPreregistered).err
		if err == nil || !strings.Contains(err.Error(), "recovering the lost nfs4 session") || !strings.Contains(err.Error(), "NFS4ERR_SERVERFAULT") {
			t.Fatalf("run: %v, want the failed recovery named", err)
		}
	})
}

// D4: a session without a back channel refuses --mix recall with a clear error, and a
// server reporting the back channel down (SEQ4_STATUS_CB_PATH_DOWN) is told.
func TestScriptedBackChannelMissing(t *testing.T) {
	p := startScript(t, script{NoBackChannel: true})
	start := time.Now()
	err := scriptRun(t, p, "recall", 1, 1, rpcrdma.MemoryPreregistered).err
	if err == nil || !strings.Contains(err.Error(), "bound no back channel") {
		t.Fatalf("recall without a back channel: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	}
	p = startScript(t, script{PathDown: true})
	r := scriptRun(t, p, "getattr", 50, 1, rpcrdma.MemoryPreregistered)
	if r.err != nil || !strings.Contains(r.log, "back channel down (SEQ4_STATUS_CB_PATH_DOWN)") {
		t.Fatalf("run: %v; logged %q, want the back channel reported down", r.err, r.log)
	}
}
