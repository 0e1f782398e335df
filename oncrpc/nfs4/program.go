package nfs4

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// Indexes of the procedures in Prog's table, the numbers workloads and the engine use: those
// of package nfsbase (the listing READDIR), then NFSv4.1's own; the Setup procedures follow
// the workload-visible ones.
const (
	PNull, PGetattr, PLookup, PRead = nfsbase.PNull, nfsbase.PGetattr, nfsbase.PLookup, nfsbase.PRead
	PWrite, PWriteSync, PCommit     = nfsbase.PWrite, nfsbase.PWriteSync, nfsbase.PCommit
	PReaddir                        = nfsbase.PDir
)

const (
	POpenClose = nfsbase.PDir + 1 + iota
	// PRecall is a delegation recall as a workload names it ("recall"): a conversation of two
	// clients made of the Setup procedures below (Codec.Measure makes it), never sent as
	// one call.
	PRecall
	// PSession is every call of a connection's Conversation: its step decides the COMPOUND.
	PSession
	// PDelegOpen opens the recall file (SetRecallFile) for READ asking for a read delegation.
	PDelegOpen
	// PDelegConflict opens the recall file for WRITE, which conflicts with another client's
	// read delegation: the server answers NFS4ERR_DELAY until the delegation is returned.
	PDelegConflict
	// PDelegReturn returns the delegation PDelegOpen got.
	PDelegReturn
	// PDelegClose closes the open of the last PDelegOpen or PDelegConflict.
	PDelegClose
)

// Prog is NFSv4.1 as a workload names it: nfsbase's procedures (their payloads and chunks as
// the Linux client moves them) and presets, each a COMPOUND starting with SEQUENCE but NULL,
// then its own. "open-close" is OPEN and CLOSE of the read file in one COMPOUND.
var Prog = nfsbase.Program("nfs4", Program, Version, "readdir", [...]uint32{ProcNull, ProcCompound, ProcCompound,
	ProcCompound, ProcCompound, ProcCompound, ProcCompound, ProcCompound}, nfsbase.Presets("readdir", "open-close", "open-close"),
	// In the order of their indexes, POpenClose to PDelegClose.
	rpcproto.Procedure{Name: "open-close", Number: ProcCompound},
	rpcproto.Procedure{Name: "recall", Number: ProcCompound, Alone: true},
	rpcproto.Procedure{Name: "session", Number: ProcCompound, Setup: true},
	rpcproto.Procedure{Name: "deleg-open", Number: ProcCompound, Setup: true},
	rpcproto.Procedure{Name: "deleg-conflict", Number: ProcCompound, Setup: true},
	rpcproto.Procedure{Name: "delegreturn", Number: ProcCompound, Setup: true},
	rpcproto.Procedure{Name: "deleg-close", Number: ProcCompound, Setup: true})

// Config is what every connection of a run shares.
type Config struct {
	// File is what read, getattr, lookup and open-close name, Scratch what write and commit
	// name (overwritten): names in the export's root. With verify, File's content must be
	// the benchmark pattern keyed by benchprog.FileSeed at every file offset.
	File, Scratch string
	// Export is the export's path in the server's NFSv4 namespace ("/srv/nfs"), looked up
	// component by component from the root (PUTROOTFH); "" or "/" is the root itself (an
	// export with fsid=0 on Linux).
	Export string
	// LargestRead is the largest read of the run: File must hold at least that many bytes.
	// Negative: the mix is NULL alone, and no connection looks any file up.
	LargestRead int
	// Owner prefixes the client owner (EXCHANGE_ID's co_ownerid): each connection appends
	// "/" and its number, so that every connection is a client of its own.
	Owner string
	// Verify says the run verifies payloads: setting up, a connection checks that File
	// begins with the pattern (when the mix reads).
	Verify bool
	// Cred is the calls' credential; an AUTH_SYS one is also the callbacks' (cb_sec_parms),
	// as the Linux client sets it.
	Cred oncrpc.OpaqueAuth
	// CBProgram is the callback program number, DefaultCBProgram if 0.
	CBProgram uint32
}

// DefaultCBProgram is the callback program number when Config.CBProgram is 0 (the Linux
// client's NFS4_CALLBACK).
const DefaultCBProgram uint32 = 0x40000000

// WriteSpan bounds the scratch file: a WRITE goes to one of the slots of its size in the
// first WriteSpan bytes (to offset 0 when it is larger).
const WriteSpan = nfsbase.WriteSpan

// start is the origin of Now's clock.
var start = time.Now()

// Now is the clock of Recall's arrival times: monotonic nanoseconds since the package was
// initialized, comparable with time.Since of any time.Time of the same process.
func Now() int64 { return int64(time.Since(start)) }

// Codec is the requester's NFSv4.1 on one connection: its Conversation sets a client ID and
// a session up (and its files' handles and stateids) and tears them down, its measured
// procedures are COMPOUNDs starting with SEQUENCE on the requester's slot, and its Service
// answers the server's callbacks. Counting every status other than NFS4_OK as a failure
// named by procedure and status, it allocates nothing per RPC. A Codec's methods run on its
// connection's goroutine, except Recall and Delegated, which any goroutine may call.
type Codec struct {
	cfg   *config
	conns *atomic.Int64 // the run's connection numbers
	conn  int64
	info  rpcproto.ConnInfo
	cb    callbacks

	step   step
	done   uint32 // bits of the steps that succeeded (1<<step)
	encErr error  // a call that did not encode (a name too long)

	clientID uint64
	exchSeq  uint32 // the next CREATE_SESSION's csa_sequence
	session  SessionID
	slots    int       // the fore channel's grant: ca_maxrequests, at most the credits
	table    slotTable // the fore channel's slots
	backChan bool
	// lost: the server answered BADSESSION or DEADSESSION; Next sets a session up again.
	lost bool
	// recovering: Next is setting a lost session up again; sessions and clients count the
	// sessions and client IDs made again so.
	recovering       bool
	sessions, newIDs int
	// pathDown: a SEQUENCE result carried SEQ4_STATUS_CB_PATH_DOWN.
	pathDown bool

	root, file, scratch fhBuf
	fileSize            uint64
	readState           Stateid
	writeState          Stateid

	recallName []byte
	delegFH    fhBuf
	delegOpen  Stateid
	delegState Stateid
	ownerID    []byte
	ocOwner    [8]byte // open-close's open-owner: "oc" and the slot, so slots never share an open
	stepBuf    []byte  // where Sizes measures a step's COMPOUND

	mu        sync.Mutex
	delegated bool
	recall    Stateid
	recallAt  int64
	recalled  bool
}

// config is a Config with the names as bytes, made once per run.
type config struct {
	Config
	file, scratch []byte
	export        [][]byte // Export's components
	cred          oncrpc.SysCred
	credSys       bool
}

type fhBuf struct {
	b [MaxFH]byte
	n int
}

func (f *fhBuf) fh() FH { return f.b[:f.n] }

func (f *fhBuf) set(fh FH) { f.n = copy(f.b[:], fh) }

var (
	_ rpcproto.Conversation = (*Codec)(nil)
	_ rpcproto.Service      = (*callbacks)(nil)
)

// New returns the run's template: connection number 0, whose NewConn gives the others.
func New(cfg Config) *Codec {
	if cfg.CBProgram == 0 {
		cfg.CBProgram = DefaultCBProgram
	}
	c := &config{Config: cfg, file: []byte(cfg.File), scratch: []byte(cfg.Scratch)}
	for _, name := range strings.Split(cfg.Export, "/") {
		if name != "" {
			c.export = append(c.export, []byte(name))
		}
	}
	if cfg.Cred.Flavor == oncrpc.FlavorSys && oncrpc.DecodeSysCred(cfg.Cred.Body, &c.cred) == nil {
		c.credSys = true
	}
	return newConn(c, new(atomic.Int64), 0)
}

func newConn(cfg *config, conns *atomic.Int64, n int64) *Codec {
	c := &Codec{cfg: cfg, conns: conns, conn: n, stepBuf: make([]byte, stepBufSize)}
	c.cb.c = c
	owner := cfg.Owner
	if owner == "" {
		owner = "rpcrdma-bench"
	}
	c.ownerID = []byte(owner + "/" + strconv.FormatInt(n, 10))
	c.Start(rpcproto.ConnInfo{})
	return c
}

// NewConn returns the codec of one more connection: the same Config, a client of its own.
func (c *Codec) NewConn() rpcproto.Conversation {
	return newConn(c.cfg, c.conns, c.conns.Add(1))
}

// Program returns Prog.
func (*Codec) Program() *rpcproto.Program { return Prog }

// Result sizes: the largest each result can be (RFC 8881 XDR), counting its opnum and status.
// Owners and groups are bounded as the Linux client bounds them (IDMAP_NAMESZ).
const (
	ownerMax   = 128
	resHdr     = 12                    // status, empty tag, count
	seqRes     = 8 + SessionIDLen + 20 // SEQUENCE4resok
	statusRes  = 8                     // PUTFH, LOOKUP, ...
	getfhRes   = 8 + 4 + MaxFH
	fattrMax   = 16 + 4 + 104 + 2*(4+ownerMax) // the attributes of StatAttrs
	getattrRes = 8 + fattrMax
	// writeTail is the GETATTR of writeAttrs that follows WRITE's data in its COMPOUND.
	writeTail   = 4 + 4 + 4*2
	delegMax    = 4 + 16 + 4 + 12 + 12 + 4 + ownerMax // a WRITE delegation
	openRes     = 8 + 16 + 20 + 4 + 16 + delegMax
	closeRes    = 8 + 16
	readPrefix  = 8 + 4 + 4 // status, eof, data's length
	writeRes    = 8 + 4 + 4 + VerfSize
	commitRes   = 8 + VerfSize
	exchangeRes = 8 + 28 + 2*(4+MaxOpaque) + 4 + 2*(4+MaxOpaque) + 12
	sessionRes  = 8 + SessionIDLen + 8 + 2*32
	seqHdr      = resHdr + seqRes // every result of a session starts so
	argHdr      = 12              // empty tag, minorversion, count
	seqArg      = 4 + 32
	stepBufSize = 4096
)

// writeAttrs are what the Linux client asks after a WRITE to keep its cache consistent
// (cache_consistency_bitmask): change, size, time_metadata and time_modify.
var writeAttrs = NewBitmap(AttrChange, AttrSize, AttrTimeMetadata, AttrTimeModify)

// readdirAttrs are the attributes READDIR asks for each entry.
var readdirAttrs = StatAttrs

// closeCurrent is the current stateid (RFC 8881 section 16.2.3.1.2): CLOSE of what OPEN just
// opened in the same COMPOUND.
var closeCurrent = Stateid{Seqid: 1}

func putfhArg(f *fhBuf) int { return 4 + opaqueSize(f.n) }

func openArg(owner, name int) int { return 4 + 20 + opaqueSize(owner) + 8 + opaqueSize(name) }

// Sizes implements rpcproto.Codec.
func (c *Codec) Sizes(proc, size int) (args, prefix, results int) {
	base := argHdr + seqArg
	switch proc {
	case PGetattr:
		args = base + putfhArg(&c.file) + 4 + StatAttrs.size()
		return args, args, seqHdr + statusRes + getattrRes
	case PLookup:
		args = base + putfhArg(&c.root) + 4 + opaqueSize(len(c.cfg.file)) + 4 + 4 + StatAttrs.size()
		return args, args, seqHdr + 2*statusRes + getfhRes + getattrRes
	case PRead:
		args = base + putfhArg(&c.file) + 4 + 28
		return args, args, seqHdr + statusRes + readPrefix + pad4(size)
	case PWrite, PWriteSync:
		prefix = base + putfhArg(&c.scratch) + 4 + 32
		return prefix + pad4(size) + writeTail, prefix, seqHdr + statusRes + writeRes + getattrRes
	case PCommit:
		args = base + putfhArg(&c.scratch) + 4 + 12
		return args, args, seqHdr + statusRes + commitRes
	case PReaddir:
		args = base + putfhArg(&c.root) + 4 + 24 + readdirAttrs.size()
		// maxcount bounds READDIR4resok whole (RFC 8881 section 18.23.3).
		return args, args, seqHdr + statusRes + 8 + size
	case POpenClose:
		args = base + putfhArg(&c.root) + openArg(len(c.ocOwner), len(c.cfg.file)) + 4 + 20
		return args, args, seqHdr + statusRes + openRes + closeRes
	case PSession:
		return c.stepSizes()
	case PDelegOpen, PDelegConflict:
		args = base + putfhArg(&c.root) + openArg(len(delegOwner), len(c.recallName)) + 4
		return args, args, seqHdr + statusRes + openRes + getfhRes
	case PDelegReturn:
		args = base + putfhArg(&c.delegFH) + 4 + 16
		return args, args, seqHdr + 2*statusRes
	case PDelegClose:
		args = base + putfhArg(&c.delegFH) + 4 + 20
		return args, args, seqHdr + statusRes + closeRes
	}
	return 0, 0, 0
}

// delegOwner is the open-owner of the delegation procedures' OPENs, setupOwner that of the
// Conversation's.
var (
	delegOwner = []byte("deleg")
	setupOwner = []byte("setup")
)

// sequence starts a COMPOUND of the session in b with SEQUENCE on the session slot the call
// on the transport's slot req takes; req < 0 only measures (Sizes): slot 0, nothing taken.
func (c *Codec) sequence(cp *Compound, b []byte, req int) {
	cp.Start(b, nil)
	a := SequenceArgs{SessionID: c.session, SequenceID: 1}
	if req >= 0 {
		slot, seqid, highest, ok := c.table.take(req)
		if !ok {
			c.encErr = errNoSlot
		}
		a.SlotID, a.SequenceID, a.HighestSlotID = uint32(slot), seqid, highest
	}
	cp.Sequence(&a)
}

// EncodeArgs implements rpcproto.Codec.
func (c *Codec) EncodeArgs(b []byte, proc, size, slot int, seed uint64, verify bool) {
	if proc == PNull {
		return
	}
	if proc == PSession {
		c.sessionEncode(b, slot)
		return
	}
	var cp Compound
	c.sequence(&cp, b, slot)
	switch proc {
	case PGetattr:
		cp.PutFH(c.file.fh())
		cp.Getattr(StatAttrs)
	case PLookup:
		cp.PutFH(c.root.fh())
		cp.Lookup(c.cfg.file)
		cp.GetFH()
		cp.Getattr(StatAttrs)
	case PRead:
		cp.PutFH(c.file.fh())
		cp.Read(&ReadArgs{Stateid: c.readState, Offset: c.readOffset(size, seed), Count: uint32(size)})
	case PWrite, PWriteSync:
		stable := Unstable
		if proc == PWriteSync {
			stable = FileSync
		}
		// The COMPOUND is encoded reduced, GETATTR right after WRITE's length word, then
		// moved past the payload and its pad: the requester sends the whole stream inline, or
		// the GETATTR right after the prefix with the payload in a Read chunk.
		at := len(b) - writeTail - pad4(size)
		var keep [writeTail]byte // the payload's first bytes, where GETATTR is encoded first
		k := copy(keep[:], b[at:at+size])
		cp.PutFH(c.scratch.fh())
		cp.WriteReduced(&WriteArgs{Stateid: c.writeState, Offset: nfsbase.WriteOffset(size, seed), Stable: stable, Data: b[at : at+size]})
		cp.Getattr(writeAttrs)
		n, err := cp.Finish()
		if err != nil {
			c.encErr = err
			return
		}
		copy(b[at+pad4(size):], b[at:n])
		copy(b[at:], keep[:k])
		if verify {
			benchprog.Fill(b[at:at+size], seed, 0)
		}
		clear(b[at+size : at+pad4(size)])
		return
	case PCommit:
		cp.PutFH(c.scratch.fh())
		cp.Commit(0, 0)
	case PReaddir:
		cp.PutFH(c.root.fh())
		cp.Readdir(&ReaddirArgs{DirCount: uint32(size), MaxCount: uint32(size), Attrs: readdirAttrs})
	case POpenClose:
		c.ocOwner = [8]byte{'o', 'c', byte('0' + slot/100000%10), byte('0' + slot/10000%10),
			byte('0' + slot/1000%10), byte('0' + slot/100%10), byte('0' + slot/10%10), byte('0' + slot%10)}
		cp.PutFH(c.root.fh())
		cp.Open(&OpenArgs{ShareAccess: ShareAccessRead | ShareAccessWantNoDeleg, ClientID: c.clientID,
			Owner: c.ocOwner[:], Name: c.cfg.file})
		cp.Close(&closeCurrent)
	case PDelegOpen, PDelegConflict:
		access := ShareAccessRead | ShareAccessWantReadDel
		if proc == PDelegConflict {
			access = ShareAccessWrite | ShareAccessWantNoDeleg
		}
		cp.PutFH(c.root.fh())
		cp.Open(&OpenArgs{ShareAccess: access, ClientID: c.clientID, Owner: delegOwner, Name: c.recallName})
		cp.GetFH()
	case PDelegReturn:
		cp.PutFH(c.delegFH.fh())
		cp.DelegReturn(&c.delegState)
	case PDelegClose:
		cp.PutFH(c.delegFH.fh())
		cp.Close(&c.delegOpen)
	}
	if n, err := cp.Finish(); err != nil {
		c.encErr = err
	} else if n != len(b) {
		c.encErr = errArgsSize
	}
}

// readOffset is where READ of size bytes reads for a call's seed (nfsbase.ReadOffset).
func (c *Codec) readOffset(size int, seed uint64) uint64 {
	return nfsbase.ReadOffset(c.fileSize, size, seed)
}

// DecodeResults implements rpcproto.Codec.
func (c *Codec) DecodeResults(proc, slot int, body, chunk []byte, size int, seed uint64, verify bool) ([]byte, error) {
	if proc == PNull {
		return nil, nil
	}
	if c.encErr != nil {
		err := c.encErr
		c.encErr = nil
		c.table.end(slot, outcomeUnanswered)
		return nil, err
	}
	var r CompoundRes
	var err error
	if chunk != nil {
		err = r.DecodeReduced(body, chunk)
	} else {
		err = r.Decode(body)
	}
	if err != nil {
		c.table.end(slot, outcomeUnanswered)
		return nil, err
	}
	if proc == PSession {
		return nil, c.decodeStep(&r, slot)
	}
	if st, err := c.seqResult(&r, slot); err != nil || st != OK {
		return nil, status(proc, st, err)
	}
	var data []byte
	switch proc {
	case PGetattr:
		if err := c.op(&r, proc, OpPutFH); err != nil {
			return nil, err
		}
		var ga GetattrRes
		if err := status(proc, ga.Status, r.Getattr(&ga)); err != nil {
			return nil, err
		}
	case PLookup:
		if err := c.ops(&r, proc, OpPutFH, OpLookup); err != nil {
			return nil, err
		}
		var fh GetFHRes
		if err := status(proc, fh.Status, r.GetFH(&fh)); err != nil {
			return nil, err
		}
		var ga GetattrRes
		if err := status(proc, ga.Status, r.Getattr(&ga)); err != nil {
			return nil, err
		}
	case PRead:
		if err := c.op(&r, proc, OpPutFH); err != nil {
			return nil, err
		}
		var rd ReadRes
		if err := status(proc, rd.Status, r.Read(&rd)); err != nil {
			return nil, err
		}
		if len(rd.Data) != size {
			return nil, errShortRead
		}
		if verify && benchprog.Verify(rd.Data, benchprog.FileSeed, c.readOffset(size, seed)) >= 0 {
			return nil, rpcproto.ErrVerify
		}
		data = rd.Data
	case PWrite, PWriteSync:
		if err := c.op(&r, proc, OpPutFH); err != nil {
			return nil, err
		}
		var w WriteRes
		if err := status(proc, w.Status, r.Write(&w)); err != nil {
			return nil, err
		}
		if int(w.Count) != size {
			return nil, errShortWrite
		}
		if proc == PWriteSync && w.Committed != FileSync {
			return nil, errNotFileSync
		}
		var ga GetattrRes
		if err := status(proc, ga.Status, r.Getattr(&ga)); err != nil {
			return nil, err
		}
	case PCommit:
		if err := c.op(&r, proc, OpPutFH); err != nil {
			return nil, err
		}
		var cm CommitRes
		if err := status(proc, cm.Status, r.Commit(&cm)); err != nil {
			return nil, err
		}
	case PReaddir:
		if err := c.op(&r, proc, OpPutFH); err != nil {
			return nil, err
		}
		var rd ReaddirRes
		if err := status(proc, rd.Status, r.Readdir(&rd)); err != nil {
			return nil, err
		}
	case POpenClose:
		if err := c.op(&r, proc, OpPutFH); err != nil {
			return nil, err
		}
		var o OpenRes
		if err := status(proc, o.Status, r.Open(&o)); err != nil {
			return nil, err
		}
		var cl CloseRes
		if err := status(proc, cl.Status, r.Close(&cl)); err != nil {
			return nil, err
		}
	case PDelegOpen, PDelegConflict:
		if err := c.op(&r, proc, OpPutFH); err != nil {
			return nil, err
		}
		var o OpenRes
		if err := status(proc, o.Status, r.Open(&o)); err != nil {
			return nil, err
		}
		var fh GetFHRes
		if err := status(proc, fh.Status, r.GetFH(&fh)); err != nil {
			return nil, err
		}
		c.delegOpen = o.Stateid
		c.delegFH.set(fh.FH)
		if proc == PDelegOpen {
			c.mu.Lock()
			c.delegated = o.DelegType == DelegRead || o.DelegType == DelegWrite
			c.delegState = o.DelegStateid
			c.mu.Unlock()
		}
	case PDelegReturn:
		if err := c.ops(&r, proc, OpPutFH, OpDelegReturn); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.delegated = false
		c.mu.Unlock()
	case PDelegClose:
		if err := c.op(&r, proc, OpPutFH); err != nil {
			return nil, err
		}
		var cl CloseRes
		if err := status(proc, cl.Status, r.Close(&cl)); err != nil {
			return nil, err
		}
	default:
		return nil, ErrProc
	}
	if _, err := r.Done(); err != nil {
		return nil, err
	}
	return data, nil
}

// op decodes the result of an operation whose result is its status alone.
func (c *Codec) op(r *CompoundRes, proc int, op uint32) error {
	st, err := r.Op(op)
	return status(proc, st, err)
}

func (c *Codec) ops(r *CompoundRes, proc int, op1, op2 uint32) error {
	if err := c.op(r, proc, op1); err != nil {
		return err
	}
	return c.op(r, proc, op2)
}

// status is the error of a result: its decode error, else its status as a failure.
func status(proc int, st Status, err error) error {
	if err != nil {
		return err
	}
	if st != OK {
		return statusError(proc, st)
	}
	return nil
}

// TargetHighestSlot is the server's target_highest_slotid of the last SEQUENCE result: the
// highest slot it would have the client use.
func (c *Codec) TargetHighestSlot() uint32 { return uint32(max(c.table.target, 1) - 1) }

// Unanswered implements rpcproto.Conversation: the call on the transport's slot ended
// without results; its session slot moves on, as if the server had executed it (RFC 8881
// section 2.10.6.1; a wrong guess costs the next call on that slot NFS4ERR_SEQ_MISORDERED,
// after which the slot steps back).
func (c *Codec) Unanswered(proc, slot int) { c.table.end(slot, outcomeUnanswered) }

// Lost implements rpcproto.Conversation: the server answered BADSESSION or DEADSESSION.
func (c *Codec) Lost() bool { return c.lost }

// Recoveries counts the sessions this connection set up again after the server lost one,
// and of those the ones that needed a new client ID (NFS4ERR_STALE_CLIENTID).
func (c *Codec) Recoveries() (sessions, clients int) { return c.sessions, c.newIDs }

// CallbackPathDown reports whether a SEQUENCE result said the back channel is down
// (SEQ4_STATUS_CB_PATH_DOWN): the server cannot make callbacks.
func (c *Codec) CallbackPathDown() bool { return c.pathDown }

// SetRecallFile names the file, in the export's root, that the delegation procedures open.
func (c *Codec) SetRecallFile(name string) { c.recallName = []byte(name) }

// Delegated reports whether the last PDelegOpen got a delegation not returned since.
func (c *Codec) Delegated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delegated
}

// Recall returns the delegation of the last CB_RECALL not yet taken and when it arrived (Now's
// clock, taken as Serve began), and forgets it; ok is false if none came.
func (c *Codec) Recall() (st Stateid, arrived int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, arrived, ok = c.recall, c.recallAt, c.recalled
	c.recalled = false
	return st, arrived, ok
}

var (
	errShortRead   = rpcproto.NewResultError("nfs4_short_read", "NFSv4.1 READ: fewer bytes than asked for (past the end of the file, or more than the server reads at once)")
	errShortWrite  = rpcproto.NewResultError("nfs4_short_write", "NFSv4.1 WRITE: the server wrote fewer bytes than sent")
	errNotFileSync = rpcproto.NewResultError("nfs4_write_not_file_sync", "NFSv4.1 WRITE: a FILE_SYNC write came back committed less stably")
	errSeqMismatch = rpcproto.NewResultError("nfs4_sequence_mismatch", "NFSv4.1 SEQUENCE: the result names another session, slot or sequenceid than the call")
	errArgsSize    = rpcproto.NewResultError("nfs4_args_size", "NFSv4.1: the arguments did not fill the size Sizes gave")
	errNoSlot      = rpcproto.NewResultError("nfs4_no_slot", "NFSv4.1 SEQUENCE: every session slot busy (more calls outstanding than the session's slots)")
	errStatusOther = rpcproto.NewResultError("nfs4err_other", "NFSv4.1: a status this client does not name")
)

// statusErrs are the failures of each procedure by status, made once: failing allocates
// nothing. NFS4ERR_DELAY and NFS4ERR_GRACE ask for the call again later.
var statusErrs = nfsbase.NewFailures(Prog, statusNames, "NFSv4.1", later, errStatusOther)

// later reports whether st asks for the call again later.
func later(st Status) bool { return st == ErrDelay || st == ErrGrace }

func newStatusError(st Status, msg string) *rpcproto.ResultError {
	return nfsbase.Failure(st, msg, later)
}

func statusError(proc int, st Status) error { return statusErrs.Of(proc, uint32(st)) }
