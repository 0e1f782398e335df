package nfs4

// slotTable is the session's fore channel as this client uses it (RFC 8881 section 2.10.6):
// a slot per request the server granted (ca_maxrequests, at most the credits), each with the
// sequenceid of its last request. A call takes the lowest free slot when it is encoded
// and gives it back when its reply is in (DecodeResults) or when it ended without one
// (Unanswered): the transport's slot index only finds the call's session slot again, so
// that SEQUENCE never names a slot the server did not grant, however the transport reuses
// its own. It allocates nothing after reset.
type slotTable struct {
	slots []sessionSlot
	// highest is the server's last sr_highest_slotid plus one, target its last
	// sr_target_highest_slotid plus one (the slots it would have the client use), retired
	// the lowest slot it answered NFS4ERR_BADSLOT (or the grant): Slots reports the least.
	highest, target, retired int
	// of maps the transport's slot index to the session slot its call holds, -1 for none.
	of []int16
}

// sessionSlot is one slot of the fore channel.
type sessionSlot struct {
	// last is the sequenceid the next request follows; acked the last the server is known
	// to hold (a SEQUENCE answered on it, or a retry it recognised).
	last, acked uint32
	// sent is the sequenceid of the request in flight on it; busy while there is one.
	sent uint32
	busy bool
}

// reset makes a table of n slots, all at sequenceid 0 (a new session: RFC 8881 section
// 18.36.4, the first request of each slot has sequenceid 1), for transport slots 0 to req-1.
func (t *slotTable) reset(n, req int) {
	if cap(t.slots) < n {
		t.slots = make([]sessionSlot, n)
	}
	t.slots = t.slots[:n]
	clear(t.slots)
	t.highest, t.retired, t.target = n, n, n
	if len(t.of) < req {
		t.of = make([]int16, req)
	}
	for i := range t.of {
		t.of[i] = -1
	}
}

// take gives the call on transport slot req the lowest free session slot and returns it
// with the call's sequenceid and sa_highest_slotid, the highest slot with a request
// outstanding, this one included (RFC 8881 section 18.46.3). ok is false when every usable
// slot is busy, which the slot contract (rpcproto.Conversation) rules out.
func (t *slotTable) take(req int) (slot int, seqid, highest uint32, ok bool) {
	if req >= len(t.of) {
		// A transport slot beyond those reset planned for: grown once, off the hot path.
		n := len(t.of)
		t.of = append(t.of, make([]int16, req+1-n)...)
		for i := n; i < len(t.of); i++ {
			t.of[i] = -1
		}
	}
	if k := t.of[req]; k >= 0 {
		// The transport reused its slot without telling how the call on it ended: take it
		// as unanswered rather than lose the session slot.
		t.end(req, outcomeUnanswered)
	}
	// The lowest free slot: below the server's bounds whenever one is free there, beyond
	// them (within the grant, which bounds the engine's calls) only when none is.
	slot = -1
	for i := range t.slots {
		if !t.slots[i].busy {
			slot = i
			break
		}
	}
	if slot < 0 {
		return 0, 0, 0, false
	}
	s := &t.slots[slot]
	s.busy, s.sent = true, s.last+1
	t.of[req] = int16(slot)
	hi := slot
	for i := len(t.slots) - 1; i > slot; i-- {
		if t.slots[i].busy {
			hi = i
			break
		}
	}
	return slot, s.sent, uint32(hi), true
}

// holder returns the session slot the call on transport slot req holds, -1 for none.
func (t *slotTable) holder(req int) int {
	if req < 0 || req >= len(t.of) {
		return -1
	}
	return int(t.of[req])
}

// outcome is how a request on a slot ended, as far as its sequenceid goes.
type outcome uint8

const (
	// outcomeDone: SEQUENCE succeeded (whatever the operations after it did), or the
	// server recognised the sequenceid as one it had executed (NFS4ERR_RETRY_UNCACHED_REP,
	// NFS4ERR_SEQ_FALSE_RETRY).
	outcomeDone outcome = iota
	// outcomeUnanswered: no result came that SEQUENCE's could be read from (the RPC failed
	// below the codec, the results did not decode, the connection broke). The server may
	// have executed it: the slot moves on, unconfirmed, as Linux's client moves it.
	outcomeUnanswered
	// outcomeMisordered: NFS4ERR_SEQ_MISORDERED. If the slot had moved on past a request the
	// server was not known to hold, that request never ran: the slot steps back one.
	outcomeMisordered
	// outcomeRefused: SEQUENCE failed otherwise, NFS4ERR_DELAY included (the server is
	// still executing an earlier request with this sequenceid: the next call sends it
	// again, as Linux's client does), or the COMPOUND was refused whole: the server's slot
	// did not move.
	outcomeRefused
)

// end applies the rules of RFC 8881 section 2.10.6.1 to the slot the call on transport
// slot req holds and frees it; it returns that slot (-1 if the call held none).
func (t *slotTable) end(req int, o outcome) int {
	k := t.holder(req)
	if k < 0 {
		return -1
	}
	t.of[req] = -1
	s := &t.slots[k]
	s.busy = false
	switch o {
	case outcomeDone:
		s.last, s.acked = s.sent, s.sent
	case outcomeUnanswered:
		s.last = s.sent
	case outcomeMisordered:
		if s.sent-s.acked > 1 {
			s.last = s.sent - 2
		}
	}
	return k
}

// retire stops calls from taking slot k and those above it: the server answered
// NFS4ERR_BADSLOT for it (it shrank its table).
func (t *slotTable) retire(k int) { t.retired = max(1, min(t.retired, k)) }

// bound applies a SEQUENCE result's sr_highest_slotid and sr_target_highest_slotid.
func (t *slotTable) bound(highest, target uint32) {
	top := uint32(len(t.slots) - 1)
	t.highest = int(min(highest, top)) + 1
	t.target = int(min(target, top)) + 1
}
