package nfs4

import (
	"encoding/binary"
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/benchprog"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// step is where a connection's Conversation stands: the call PSession makes next.
type step uint8

const (
	stExchangeID step = iota
	stCreateSession
	stReclaimComplete
	stRootFH
	stFile
	stScratch
	stOpenRead
	stOpenWrite
	stCheckFile // with Verify: File holds the pattern
	stReady     // set up: the measured calls run
	stCloseRead
	stCloseWrite
	stDestroySession
	stDestroyClientID
	stDone
)

// Setup calls' constants, as the Linux client sends them for NFSv4.1 without pNFS (its
// wire, but for the owner and the implementation id).
var (
	exchangeFlags = ExchgIDFlagSuppMovedRefer | ExchgIDFlagBindPrincState
	implID        = ImplID{Domain: []byte("github.com"), Name: []byte("rpcrdma-bench")}
	// bootVerifier is co_verifier: a new one tells the server that the client restarted.
	bootVerifier = func() (v Verifier) {
		binary.BigEndian.PutUint64(v[:], uint64(start.UnixNano()))
		return v
	}()
	typeSize = NewBitmap(AttrType, AttrSize)
)

// Channel attributes of CREATE_SESSION.
const (
	// compoundRoom is the room a COMPOUND takes besides its payload, in the fore channel's
	// largest request and response.
	compoundRoom = 1024
	minChannel   = 8192
	// foreCached is the response the server may cache per slot; calls never ask it to
	// (cachethis false), so a small one keeps the server's memory per slot small.
	foreCached = 512
	foreOps    = 8
	backOps    = 2 // CB_SEQUENCE and CB_RECALL, as the Linux client asks
	// rdmaHeader is the RPC-over-RDMA header of an inline message without chunks
	// (RFC 8166 section 4.2): callbacks arrive inline, after it.
	rdmaHeader = 28
	// defaultInline is RFC 8166's inline threshold when the connection did not say.
	defaultInline = 1024
	// backPage caps the back channel's sizes, as Linux's client caps them (PAGE_SIZE).
	backPage = 4096
)

// sessionFlags are CREATE_SESSION's csa_flags, Linux's client's: a persistent reply cache
// asked for (no call sets sa_cachethis, so a server granting it keeps nothing more), and
// the connection bound as the back channel too. Neither side of the fore channel names an
// RDMA read depth (ca_rdma_ird empty), as Linux's client sends them: RPC-over-RDMA
// negotiates its own (RFC 8166's connection parameters), and knfsd ignores it.
const sessionFlags = CreateSessionFlagPersist | CreateSessionFlagConnBackChan

// Start stores what the connection negotiated; its slot tables have Credits and
// ReverseCredits slots.
func (c *Codec) Start(info rpcproto.ConnInfo) {
	c.info = info
	c.table.reset(max(info.Credits, 1), max(info.Credits, 1))
	c.cb.reset(max(info.ReverseCredits, 1), c.backReply())
}

// Service returns the connection's callback service.
func (c *Codec) Service() rpcproto.Service { return &c.cb }

// Slots is min(credits, the server's ca_maxrequests) once the session exists, bounded since
// by the server's last sr_target_highest_slotid and sr_highest_slotid (as Linux's client
// bounds its slots by the target) and by a slot it answered NFS4ERR_BADSLOT; 0 before.
func (c *Codec) Slots() int {
	if c.slots == 0 {
		return 0
	}
	return max(1, min(c.slots, c.table.highest, c.table.target, c.table.retired))
}

// BackChannel reports whether the server bound the session's back channel to the connection
// (CREATE_SESSION4_FLAG_CONN_BACK_CHAN in its result).
func (c *Codec) BackChannel() bool { return c.backChan }

// Session returns the session's id and the client ID, zero before they exist.
func (c *Codec) Session() (SessionID, uint64) { return c.session, c.clientID }

// Next implements rpcproto.Conversation: PSession while steps remain. Setting up, it skips
// the steps on files when the mix names none (LargestRead < 0); closing, it undoes only what
// was done.
func (c *Codec) Next(closing bool) (proc, size int, ok bool) {
	if !closing && c.lost {
		// A new session for the same client (RFC 8881 section 2.10.13); its state (the
		// opens) belongs to the client and stays.
		c.lost, c.recovering = false, true
		c.step = stCreateSession
		c.done &^= 1 << stCreateSession
	}
	if !closing {
		if c.step == stRootFH && c.cfg.LargestRead < 0 || c.step == stCheckFile && (!c.cfg.Verify || c.cfg.LargestRead == 0) {
			c.step = stReady
		}
		if c.step >= stReady {
			return 0, 0, false
		}
		return PSession, 0, true
	}
	if c.step < stCloseRead {
		c.step = stCloseRead
	}
	for c.step < stDone && !c.needed(c.step) {
		c.step++
	}
	if c.step == stDone {
		return 0, 0, false
	}
	return PSession, 0, true
}

// needed reports whether a closing step has something to undo.
func (c *Codec) needed(s step) bool {
	switch s {
	case stCloseRead:
		return c.did(stOpenRead)
	case stCloseWrite:
		return c.did(stOpenWrite)
	case stDestroySession:
		return c.did(stCreateSession)
	case stDestroyClientID:
		return c.did(stExchangeID)
	}
	return false
}

func (c *Codec) did(s step) bool { return c.done&(1<<s) != 0 }

// stepName names the current step in errors.
func (c *Codec) stepName() string {
	switch c.step {
	case stExchangeID:
		return "EXCHANGE_ID"
	case stCreateSession:
		return "CREATE_SESSION"
	case stReclaimComplete:
		return "RECLAIM_COMPLETE"
	case stRootFH:
		if c.cfg.Export != "" && c.cfg.Export != "/" {
			return "LOOKUP of the export " + c.cfg.Export
		}
		return "PUTROOTFH"
	case stFile:
		return "LOOKUP " + c.cfg.File
	case stScratch:
		return "LOOKUP " + c.cfg.Scratch
	case stOpenRead:
		return "OPEN " + c.cfg.File
	case stOpenWrite:
		return "OPEN " + c.cfg.Scratch
	case stCheckFile:
		return "READ " + c.cfg.File
	case stCloseRead:
		return "CLOSE " + c.cfg.File
	case stCloseWrite:
		return "CLOSE " + c.cfg.Scratch
	case stDestroySession:
		return "DESTROY_SESSION"
	case stDestroyClientID:
		return "DESTROY_CLIENTID"
	}
	return "no step"
}

func (c *Codec) createSessionArgs() *CreateSessionArgs {
	fore := uint32(max(c.info.MaxPayload+compoundRoom, minChannel))
	back := uint32(c.backReply())
	a := &CreateSessionArgs{
		ClientID: c.clientID,
		Sequence: c.exchSeq,
		Flags:    sessionFlags,
		Fore: ChannelAttrs{MaxRequestSize: fore, MaxResponseSize: fore, MaxResponseSizeCached: foreCached,
			MaxOperations: foreOps, MaxRequests: uint32(max(c.info.Credits, 1))},
		Back: ChannelAttrs{MaxRequestSize: back, MaxResponseSize: back,
			MaxOperations: backOps, MaxRequests: uint32(max(c.info.ReverseCredits, 1))},
		CBProgram: c.cfg.CBProgram,
	}
	if c.cfg.credSys {
		a.SecFlavor, a.SysCred = c.cfg.Cred.Flavor, c.cfg.cred
	}
	return a
}

// backReply is the back channel's largest call and reply, both: as Linux's client sizes
// them (xprt_rdma_bc_maxpayload), the smaller inline threshold capped at a page, less the
// RPC-over-RDMA header, since callbacks and their replies travel inline.
func (c *Codec) backReply() int {
	recv, send := c.info.RecvSize, c.info.SendSize
	if recv <= rdmaHeader {
		recv = defaultInline
	}
	if send <= rdmaHeader {
		send = defaultInline
	}
	return min(recv, send, backPage) - rdmaHeader
}

// encodeStep encodes the current step's COMPOUND into b.
func (c *Codec) encodeStep(b []byte, slot int) (int, error) {
	var cp Compound
	switch c.step {
	case stExchangeID:
		cp.Start(b, nil)
		cp.ExchangeID(&ExchangeIDArgs{Verifier: bootVerifier, OwnerID: c.ownerID, Flags: exchangeFlags, Impl: implID})
	case stCreateSession:
		cp.Start(b, nil)
		cp.CreateSession(c.createSessionArgs())
	case stDestroySession:
		// Alone, as the Linux client sends it: a SEQUENCE of the session would have to
		// precede it in the same COMPOUND (RFC 8881 section 18.37.3).
		cp.Start(b, nil)
		cp.DestroySession(&c.session)
	case stDestroyClientID:
		cp.Start(b, nil)
		cp.DestroyClientID(c.clientID)
	default:
		c.sequence(&cp, b, slot)
		switch c.step {
		case stReclaimComplete:
			cp.ReclaimComplete(false)
		case stRootFH:
			c.putExport(&cp)
			cp.GetFH()
		case stFile, stScratch:
			name := c.cfg.file
			if c.step == stScratch {
				name = c.cfg.scratch
			}
			c.putExport(&cp)
			cp.Lookup(name)
			cp.GetFH()
			cp.Getattr(typeSize)
		case stOpenRead:
			cp.PutFH(c.root.fh())
			cp.Open(&OpenArgs{ShareAccess: ShareAccessRead | ShareAccessWantNoDeleg, ClientID: c.clientID,
				Owner: setupOwner, Name: c.cfg.file})
		case stOpenWrite:
			cp.PutFH(c.root.fh())
			cp.Open(&OpenArgs{ShareAccess: ShareAccessWrite | ShareAccessWantNoDeleg, ClientID: c.clientID,
				Owner: setupOwner, Name: c.cfg.scratch})
		case stCheckFile:
			cp.PutFH(c.file.fh())
			cp.Read(&ReadArgs{Stateid: c.readState, Count: uint32(c.checkLen())})
		case stCloseRead:
			cp.PutFH(c.file.fh())
			cp.Close(&c.readState)
		case stCloseWrite:
			cp.PutFH(c.scratch.fh())
			cp.Close(&c.writeState)
		}
	}
	return cp.Finish()
}

// stepSizes is Sizes of PSession: the current step's COMPOUND, measured by encoding it.
func (c *Codec) stepSizes() (args, prefix, results int) {
	n, err := c.encodeStep(c.stepBuf, -1)
	if err != nil {
		c.encErr = fmt.Errorf("NFSv4.1 %s: %w", c.stepName(), err)
		n = 0
	}
	switch c.step {
	case stExchangeID:
		results = resHdr + exchangeRes
	case stCreateSession:
		results = resHdr + sessionRes
	case stDestroySession, stDestroyClientID:
		results = resHdr + statusRes
	case stReclaimComplete:
		results = seqHdr + statusRes
	case stRootFH:
		results = seqHdr + (1+len(c.cfg.export))*statusRes + getfhRes
	case stFile, stScratch:
		results = seqHdr + (2+len(c.cfg.export))*statusRes + getfhRes + getattrRes
	case stOpenRead, stOpenWrite:
		results = seqHdr + statusRes + openRes
	case stCheckFile:
		results = seqHdr + statusRes + readPrefix + pad4(c.checkLen())
	case stCloseRead, stCloseWrite:
		results = seqHdr + statusRes + closeRes
	}
	return n, n, results
}

// sessionEncode is EncodeArgs of PSession.
func (c *Codec) sessionEncode(b []byte, slot int) {
	n, err := c.encodeStep(b, slot)
	switch {
	case err != nil:
		c.encErr = fmt.Errorf("NFSv4.1 %s: %w", c.stepName(), err)
	case n != len(b):
		c.encErr = errArgsSize
	}
}

// decodeStep checks the current step's results and stores what later calls need. It moves
// to the next step unless the call failed; NFS4ERR_DELAY and NFS4ERR_GRACE fail it with an
// error whose Later is true, so that the same step is tried again.
func (c *Codec) decodeStep(r *CompoundRes, slot int) error {
	st, err := c.stepResults(r, slot)
	name := c.stepName()
	if err != nil {
		return fmt.Errorf("NFSv4.1 %s: %w", name, err)
	}
	if st == ErrStaleClientID && c.step == stCreateSession && c.recovering {
		// The server forgot the client too (its lease expired, or an administrator
		// expired it): a new client ID, and everything set up again on it.
		c.newIDs++
		c.step, c.done = stExchangeID, 0
		return nil
	}
	if st != OK {
		return newStatusError(st, "NFSv4.1 "+name+": "+st.String())
	}
	if _, err := r.Done(); err != nil {
		return fmt.Errorf("NFSv4.1 %s: %w", name, err)
	}
	c.done |= 1 << c.step
	c.step++
	if c.step == stReclaimComplete && c.recovering {
		c.sessions++
		c.recovering = false
		if c.did(stReclaimComplete) {
			c.step = stReady // the client's state is the server's still
		}
	}
	return nil
}

// stepResults decodes the current step's results: a decode or check error, or the first
// status other than NFS4_OK.
func (c *Codec) stepResults(r *CompoundRes, slot int) (Status, error) {
	switch c.step {
	case stExchangeID:
		var x ExchangeIDRes
		if err := r.ExchangeID(&x); err != nil || x.Status != OK {
			return x.Status, err
		}
		c.clientID, c.exchSeq = x.ClientID, x.SequenceID
		return OK, nil
	case stCreateSession:
		var s CreateSessionRes
		if err := r.CreateSession(&s); err != nil || s.Status != OK {
			return s.Status, err
		}
		if s.Fore.MaxRequests == 0 {
			return OK, errNoSlots
		}
		c.session = s.SessionID
		// The next CREATE_SESSION of this client (a recovery) has the next csa_sequence:
		// the same one would be a retry, answered with this session (RFC 8881 section
		// 18.36.4).
		c.exchSeq++
		c.slots = int(s.Fore.MaxRequests)
		if c.info.Credits > 0 {
			c.slots = min(c.slots, c.info.Credits)
		}
		c.backChan = s.Flags&CreateSessionFlagConnBackChan != 0
		c.pathDown = false
		c.table.reset(c.slots, max(c.info.Credits, 1))
		c.cb.reset(max(c.info.ReverseCredits, 1), c.backReply())
		return OK, nil
	case stDestroySession:
		return r.Op(OpDestroySession)
	case stDestroyClientID:
		return r.Op(OpDestroyClientID)
	}
	if st, err := c.seqResult(r, slot); err != nil || st != OK {
		return st, err
	}
	switch c.step {
	case stReclaimComplete:
		st, err := r.Op(OpReclaimComplete)
		if st == ErrCompleteAlready {
			st = OK
		}
		return st, err
	case stRootFH:
		if st, err := c.exportResults(r); err != nil || st != OK {
			return st, err
		}
		var fh GetFHRes
		if err := r.GetFH(&fh); err != nil || fh.Status != OK {
			return fh.Status, err
		}
		c.root.set(fh.FH)
	case stFile, stScratch:
		return c.lookupResults(r)
	case stOpenRead, stOpenWrite:
		if st, err := r.Op(OpPutFH); err != nil || st != OK {
			return st, err
		}
		var o OpenRes
		if err := r.Open(&o); err != nil || o.Status != OK {
			return o.Status, err
		}
		if c.step == stOpenRead {
			c.readState = o.Stateid
		} else {
			c.writeState = o.Stateid
		}
	case stCheckFile:
		if st, err := r.Op(OpPutFH); err != nil || st != OK {
			return st, err
		}
		var rd ReadRes
		if err := r.Read(&rd); err != nil || rd.Status != OK {
			return rd.Status, err
		}
		if len(rd.Data) != c.checkLen() || benchprog.Verify(rd.Data, benchprog.FileSeed, 0) >= 0 {
			return OK, fmt.Errorf("%s does not hold the benchmark pattern (benchprog.FileSeed) that verified reads check against", c.cfg.File)
		}
	case stCloseRead, stCloseWrite:
		if st, err := r.Op(OpPutFH); err != nil || st != OK {
			return st, err
		}
		var cl CloseRes
		return cl.Status, r.Close(&cl)
	}
	return OK, nil
}

// checkLen is how much of File the setup reads to check its pattern.
func (c *Codec) checkLen() int { return min(checkRead, max(c.cfg.LargestRead, 0)) }

// checkRead bounds the setup's READ of File: a reply well inside any inline threshold.
const checkRead = 512

// lookupResults decodes PUTROOTFH, LOOKUP, GETFH and GETATTR of the read or the scratch file.
func (c *Codec) lookupResults(r *CompoundRes) (Status, error) {
	if st, err := c.exportResults(r); err != nil || st != OK {
		return st, err
	}
	if st, err := r.Op(OpLookup); err != nil || st != OK {
		return st, err
	}
	var fh GetFHRes
	if err := r.GetFH(&fh); err != nil || fh.Status != OK {
		return fh.Status, err
	}
	var ga GetattrRes
	if err := r.Getattr(&ga); err != nil || ga.Status != OK {
		return ga.Status, err
	}
	name := c.cfg.File
	if c.step == stScratch {
		name = c.cfg.Scratch
	}
	if !ga.Attr.Mask.Has(AttrType) || !ga.Attr.Mask.Has(AttrSize) {
		return OK, fmt.Errorf("%s: GETATTR without its type and size", name)
	}
	if err := nfsbase.CheckRegular(name, ga.Attr.Type == TypeReg, fmt.Sprintf("nfs_ftype4 %d", ga.Attr.Type)); err != nil {
		return OK, err
	}
	if c.step == stScratch {
		c.scratch.set(fh.FH)
		return OK, nil
	}
	if err := nfsbase.CheckSize(name, ga.Attr.Size, c.cfg.LargestRead); err != nil {
		return OK, err
	}
	c.file.set(fh.FH)
	c.fileSize = ga.Attr.Size
	return OK, nil
}

// seqResult decodes the SEQUENCE result starting r, checks it against the call on the
// transport's slot req and frees the call's session slot by RFC 8881 section 2.10.6's rules
// (slotTable.end): a decode or check error, or SEQUENCE's status (or the COMPOUND's,
// refused whole). BADSESSION and DEADSESSION lose the session (Lost).
func (c *Codec) seqResult(r *CompoundRes, req int) (Status, error) {
	if r.N == 0 && r.Status != OK {
		c.table.end(req, outcomeRefused) // refused whole (NFS4ERR_MINOR_VERS_MISMATCH)
		return r.Status, nil
	}
	var s SequenceRes
	if err := r.Sequence(&s); err != nil {
		c.table.end(req, outcomeUnanswered)
		return OK, err
	}
	k := c.table.holder(req)
	switch s.Status {
	case OK:
		if k < 0 || s.SessionID != c.session || s.SlotID != uint32(k) || s.SequenceID != c.table.slots[k].sent {
			c.table.end(req, outcomeUnanswered)
			return OK, errSeqMismatch
		}
		c.table.end(req, outcomeDone)
		c.table.bound(s.HighestSlotID, s.TargetHighestSlotID)
		if s.StatusFlags&SeqStatusCBPathDown != 0 {
			c.pathDown = true
		}
		return OK, nil
	case ErrRetryUncachedRep, ErrSeqFalseRetry:
		c.table.end(req, outcomeDone)
	case ErrSeqMisordered:
		c.table.end(req, outcomeMisordered)
	case ErrBadSlot:
		c.table.end(req, outcomeRefused)
		if k > 0 {
			c.table.retire(k)
		} else {
			c.lose()
		}
	case ErrBadSession, ErrDeadSession:
		c.table.end(req, outcomeRefused)
		c.lose()
	default:
		c.table.end(req, outcomeRefused)
	}
	return s.Status, nil
}

// lose marks the session lost once the connection is set up: Next then makes a new one.
// Setting up, the failure ends the setup instead.
func (c *Codec) lose() {
	if c.step == stReady {
		c.lost = true
	}
}

var errNoSlots = rpcproto.NewResultError("nfs4_no_slots", "NFSv4.1 CREATE_SESSION: the server granted no slots")

// putExport makes the export's root the current filehandle: PUTROOTFH, then a LOOKUP per
// component of Config.Export.
func (c *Codec) putExport(cp *Compound) {
	cp.PutRootFH()
	for _, name := range c.cfg.export {
		cp.Lookup(name)
	}
}

// exportResults decodes putExport's results.
func (c *Codec) exportResults(r *CompoundRes) (Status, error) {
	if st, err := r.Op(OpPutRootFH); err != nil || st != OK {
		return st, err
	}
	for range c.cfg.export {
		if st, err := r.Op(OpLookup); err != nil || st != OK {
			return st, err
		}
	}
	return OK, nil
}
