package fanin

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// helloWait bounds the wait for a connection's hello; maxPending bounds the connections
// waiting to say it, so that strays cannot hold the coordinator's memory or descriptors.
const (
	helloWait  = 10 * time.Second
	maxPending = 256
)

// missedBeats is how many heartbeats a side may miss before the other gives it up.
const missedBeats = 5

// coordinator is rank 0's side of the run: it admits the ranks that hold the job's secret,
// starts every point when all client ranks are ready, collects their results and watches
// them (their connections, heartbeats and each point's deadline); the first failure (a rank
// that could not connect, ended in an error, died or hangs) stops every rank.
type coordinator struct {
	l      net.Listener
	layout Layout
	secret []byte
	// beat is the heartbeat's period; grace what a point may take past its warm-up,
	// duration and drain before its deadline.
	beat, grace time.Duration
	events      chan event
	pending     chan struct{}
	ranks       map[int]*rankState
	failed      []failure
	refused     []results.Refusal
	nrefused    int
	gaveUp      bool
	stopped     bool
	stopWhy     string
	starts      map[int]int64 // point → its start (startAt)
	log         io.Writer
	// changed is called with the state after every result or failure (rank 0 keeps its
	// results file current with it, so that a kill loses nothing already received).
	changed func(*collected)
}

type rankState struct {
	host  string
	c     *conn
	votes map[int]bool // points voted for
	asked map[int]bool // votes not answered yet
	// lens are the lengths it voted its points with (warm-up, duration and drain), drain
	// the longest drain it voted.
	lens   map[int]int64
	drain  time.Duration
	result *rankResult
	// gone: its connection ended, or the coordinator gave it up.
	gone bool
	// seen is when it last sent anything; due when it must have voted or reported by
	// (zero: no deadline), dueWhy what it failed to do then.
	seen, due time.Time
	dueWhy    string
}

type failure struct {
	rank       int
	host, what string
}

func (f failure) String() string { return fmt.Sprintf("rank %d (host %s): %s", f.rank, f.host, f.what) }

type event struct {
	rank  int
	m     msg
	c     *conn // the connection it came on
	hello bool
	err   error // the connection ended
	// refused: the connection was turned away before its hello was accepted.
	refused *results.Refusal
}

// collected is what the coordinator has: every rank's host and result, the failures in the
// order they happened, and the connections it refused.
type collected struct {
	hosts    map[int]string
	results  map[int]*rankResult
	failed   []failure
	refused  []results.Refusal
	nrefused int
	// gaveUp: a rank failed alive (stopped, hung): it still holds the launcher's job.
	gaveUp bool
}

// listenCoordinator listens on host (an address of rank 0 the other ranks reach, port 0
// picks one).
func listenCoordinator(layout Layout, host string, secret []byte, beat, grace time.Duration, log io.Writer) (*coordinator, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("coordinator: listen on %s: %w", host, err)
	}
	return &coordinator{l: l, layout: layout, secret: secret, beat: beat, grace: grace, log: log,
		events: make(chan event, 16), pending: make(chan struct{}, maxPending),
		ranks: map[int]*rankState{}, starts: map[int]int64{}}, nil
}

// addr is the coordinator's address as the other ranks reach it.
func (co *coordinator) addr() string { return co.l.Addr().String() }

// accept reads each connection's hello, checks it, and then reads its messages, as events.
func (co *coordinator) accept(done <-chan struct{}) {
	for {
		nc, err := co.l.Accept()
		if err != nil {
			return
		}
		go co.admit(nc, done)
	}
}

func (co *coordinator) admit(nc net.Conn, done <-chan struct{}) {
	emit := func(ev event) bool {
		select {
		case co.events <- ev:
			return true
		case <-done:
			nc.Close()
			return false
		}
	}
	refuse := func(why string) {
		// Recorded before the sender sees the close: what it does next comes after.
		emit(event{refused: &results.Refusal{From: nc.RemoteAddr().String(), Cause: why, At: time.Now().UTC()}})
		nc.Close()
	}
	select {
	case co.pending <- struct{}{}:
	default:
		refuse(fmt.Sprintf("%d connections were already waiting to say hello", maxPending))
		return
	}
	c := newConn(nc)
	nc.SetReadDeadline(time.Now().Add(helloWait))
	m, err := c.recv(maxHello)
	nc.SetReadDeadline(time.Time{})
	<-co.pending
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("closed before it said hello")
		}
		refuse(fmt.Sprintf("no hello: %v", err))
		return
	}
	if why := co.check(m); why != "" {
		refuse(why)
		return
	}
	rank := m.Rank
	if !emit(event{rank: rank, m: m, c: c, hello: true}) {
		return
	}
	for {
		m, err := c.recv(maxMsg)
		if err != nil {
			emit(event{rank: rank, c: c, err: err})
			return
		}
		if !emit(event{rank: rank, m: m, c: c}) {
			return
		}
	}
}

// check is why hello m is refused, "" if it is not: it must carry the job's secret (compared
// in constant time) and name a rank of the job in the role the layout gives it.
func (co *coordinator) check(m msg) string {
	switch {
	case m.Kind != msgHello:
		return fmt.Sprintf("its first message is %q, not a hello", m.Kind)
	case subtle.ConstantTimeCompare([]byte(m.Secret), co.secret) != 1:
		return fmt.Sprintf("a hello for rank %d without the job's secret", m.Rank)
	case m.Rank < 0 || m.Rank >= co.layout.Size():
		return fmt.Sprintf("a hello for rank %d, not a rank of the job (0 to %d)", m.Rank, co.layout.Size()-1)
	case Role(m.Role) != co.layout.Role(m.Rank):
		return fmt.Sprintf("a hello for rank %d as a %s, which is a %s rank", m.Rank, m.Role, co.layout.Role(m.Rank))
	}
	return ""
}

// run coordinates until every client rank reported or was lost, and returns what was
// collected. Once ctx is done it waits grace more for the ranks' last results; setup bounds
// the wait for every rank's hello.
func (co *coordinator) run(ctx context.Context, grace, setup time.Duration) *collected {
	done := make(chan struct{})
	defer close(done)
	go co.accept(done)
	defer co.l.Close()
	setupT := time.NewTimer(setup)
	defer setupT.Stop()
	beat := time.NewTicker(co.beat)
	defer beat.Stop()
	var graceC <-chan time.Time
	ctxDone := ctx.Done()
	for !co.finished() {
		select {
		case ev := <-co.events:
			co.handle(ev)
		case <-beat.C:
			co.heartbeat()
		case <-setupT.C:
			for r := range co.layout.Size() {
				if co.ranks[r] == nil {
					co.fail(r, "", fmt.Sprintf("did not reach the coordinator within %v", setup))
				}
			}
		case <-ctxDone:
			ctxDone, graceC = nil, time.After(grace)
			co.stopAll("rank 0 was stopped", -1)
		case <-graceC:
			for _, r := range co.layout.Clients() {
				if s := co.ranks[r]; s == nil || (s.result == nil && !s.gone) {
					co.fail(r, co.host(r), "no results before rank 0 stopped waiting")
				}
			}
			co.changed(co.collected())
			return co.collected()
		}
	}
	for _, r := range co.layout.Servers() {
		if s := co.ranks[r]; s != nil && !s.gone {
			s.c.send(msg{Kind: msgStop})
		}
	}
	// The server ranks report what serving cost them as they stop.
	wait := time.After(grace)
	for !co.serversReported() {
		select {
		case ev := <-co.events:
			co.handle(ev)
		case <-beat.C:
			co.heartbeat()
		case <-wait:
			return co.collected()
		}
	}
	return co.collected()
}

// heartbeat tells every rank that rank 0 is alive and gives up the ranks that sent nothing
// for missedBeats beats or missed their deadline.
func (co *coordinator) heartbeat() {
	now := time.Now()
	for r := range co.layout.Size() {
		s := co.ranks[r]
		if s == nil || s.gone {
			continue
		}
		s.c.send(msg{Kind: msgBeat})
		if s.result != nil {
			continue
		}
		if silent := now.Sub(s.seen); silent > missedBeats*co.beat {
			co.giveUp(r, fmt.Sprintf("sent nothing for %v (heartbeat every %v): the process is stopped or hangs", silent.Round(time.Millisecond), co.beat))
		} else if !s.due.IsZero() && now.After(s.due) {
			co.giveUp(r, s.dueWhy)
		}
	}
}

// giveUp fails rank r, alive but not doing its part: it is told to stop (should it wake)
// and no longer waited for.
func (co *coordinator) giveUp(r int, why string) {
	s := co.ranks[r]
	s.c.send(msg{Kind: msgStop, Err: "rank 0 gave this rank up: " + why})
	s.gone = true
	s.c.c.Close()
	co.gaveUp = true
	co.fail(r, s.host, why)
}

func (co *coordinator) serversReported() bool {
	for _, r := range co.layout.Servers() {
		if s := co.ranks[r]; s != nil && s.result == nil && !s.gone {
			return false
		}
	}
	return true
}

func (co *coordinator) host(r int) string {
	if s := co.ranks[r]; s != nil {
		return s.host
	}
	return "?"
}

// finished: every client rank has reported or is lost, or failed before it said hello.
func (co *coordinator) finished() bool {
	for _, r := range co.layout.Clients() {
		s := co.ranks[r]
		if s == nil {
			if !slices.ContainsFunc(co.failed, func(f failure) bool { return f.rank == r }) {
				return false
			}
			continue
		}
		if s.result == nil && !s.gone {
			return false
		}
	}
	return true
}

// refuse records a connection turned away.
func (co *coordinator) refuse(rf results.Refusal) {
	co.nrefused++
	if len(co.refused) < results.MaxRefusals {
		fmt.Fprintf(co.log, "rpcrdma-bench fanin: refused a connection from %s: %s\n", rf.From, rf.Cause)
		if len(co.refused) == results.MaxRefusals-1 {
			fmt.Fprintf(co.log, "rpcrdma-bench fanin: further refusals are counted only (fanin.refused_count)\n")
		}
		co.refused = append(co.refused, rf)
		// A flood of strays must not rewrite the file for each: the count follows later.
		co.changed(co.collected())
	}
}

func (co *coordinator) handle(ev event) {
	if ev.refused != nil {
		co.refuse(*ev.refused)
		return
	}
	s := co.ranks[ev.rank]
	if ev.hello {
		if s != nil {
			// The rank that joined first keeps its place.
			ev.c.c.Close()
			co.refuse(results.Refusal{From: ev.c.c.RemoteAddr().String(), At: time.Now().UTC(),
				Cause: fmt.Sprintf("a second hello for rank %d, which joined from %s", ev.rank, s.c.c.RemoteAddr())})
			return
		}
		now := time.Now()
		s = &rankState{host: ev.m.Host, c: ev.c, votes: map[int]bool{}, asked: map[int]bool{}, lens: map[int]int64{}, seen: now}
		co.ranks[ev.rank] = s
		if co.layout.Role(ev.rank) == RoleClient {
			co.setDue(s, now.Add(co.grace+openWait+time.Minute), "never voted for its first point")
		}
		if co.stopped {
			s.c.send(msg{Kind: msgStop, Err: co.stopWhy})
		}
		return
	}
	if s == nil || s.c != ev.c || s.gone {
		return // not the connection the rank joined on, or given up
	}
	s.seen = time.Now()
	if ev.err != nil {
		s.gone = true
		if s.result == nil && co.layout.Role(ev.rank) == RoleClient {
			co.fail(ev.rank, s.host, fmt.Sprintf("its connection to rank 0 ended before it reported (the process died?): %v", ev.err))
		} else if s.result == nil && !co.finished() {
			co.fail(ev.rank, s.host, fmt.Sprintf("the server rank's connection to rank 0 ended while clients were measuring (the process died?): %v", ev.err))
		}
		co.decide()
		return
	}
	switch ev.m.Kind {
	case msgClock:
		s.c.send(msg{Kind: msgClock, T0: ev.m.T0, T1: time.Now().UnixNano()})
		return
	case msgBeat:
		return
	case msgVote:
		if ev.m.Err != "" {
			co.fail(ev.rank, s.host, ev.m.Err)
		}
		s.votes[ev.m.Point], s.asked[ev.m.Point], s.lens[ev.m.Point] = true, true, ev.m.Len
		s.drain = max(s.drain, time.Duration(ev.m.Drain))
		s.due = time.Time{}
		co.awaitVotes(ev.m.Point)
	case msgResult:
		s.result = ev.m.Result
		if s.result == nil {
			s.result = &rankResult{Err: "reported no results"}
		}
		if s.result.Err != "" {
			co.fail(ev.rank, s.host, s.result.Err)
		}
		co.changed(co.collected())
		// The rank may go now: rank 0 has its results (and, above, on disk).
		s.c.send(msg{Kind: msgResult})
	}
	co.decide()
}

// setDue gives s a deadline, unless it has an earlier one.
func (co *coordinator) setDue(s *rankState, at time.Time, why string) {
	if s.due.IsZero() || at.Before(s.due) {
		s.due, s.dueWhy = at, why
	}
}

// awaitVotes bounds the wait for the other client ranks' votes for point k, once one voted:
// each has openWait (its pollers' bound) and the grace.
func (co *coordinator) awaitVotes(k int) {
	at := time.Now().Add(openWait + co.grace)
	for _, r := range co.layout.Clients() {
		if s := co.ranks[r]; s != nil && !s.gone && s.result == nil && !s.votes[k] {
			co.setDue(s, at, fmt.Sprintf("did not vote for point %d within %v of the first rank's vote", k+1, openWait+co.grace))
		}
	}
}

// decide answers the votes that can be answered: all of them with the first failure once
// there is one, else a point's once every client rank that can still vote has voted for it.
func (co *coordinator) decide() {
	for _, r := range co.layout.Clients() {
		s := co.ranks[r]
		if s == nil || s.gone {
			continue
		}
		for k := range s.asked {
			why, ok := co.verdict(k)
			if !ok {
				continue
			}
			delete(s.asked, k)
			m := msg{Kind: msgVerdict, Point: k, Err: why}
			if why == "" {
				m.T1, m.Len = co.startAt(k), int64(co.lead())
				// The point must end by its length past its start, and the grace (a point
				// bounded by a count has no length: the heartbeat alone watches it).
				if n := time.Duration(co.pointLen(k)); n > 0 {
					at := time.Now().Add(time.Duration(m.T1-time.Now().UnixNano()) + n + co.grace)
					co.setDue(s, at, fmt.Sprintf("point %d did not end within its deadline (its warm-up, duration and drain, %v, and %v of grace)", k+1, n, co.grace))
				}
			}
			s.c.send(m)
		}
	}
}

// pointLen is the longest length the client ranks voted for point k with.
func (co *coordinator) pointLen(k int) int64 {
	var n int64
	for _, s := range co.ranks {
		n = max(n, s.lens[k])
	}
	return n
}

// startLead is how far ahead of its verdicts a point starts, per client rank: the verdicts
// go out one after the other, and each rank waits for the same instant.
const startLead = time.Millisecond

func (co *coordinator) lead() time.Duration {
	return time.Duration(len(co.layout.Clients())+2) * startLead
}

// startAt is when point k starts, in rank 0's wall clock (Unix nanoseconds): fixed when its
// first verdict goes out.
func (co *coordinator) startAt(k int) int64 {
	if at, ok := co.starts[k]; ok {
		return at
	}
	at := time.Now().Add(co.lead()).UnixNano()
	co.starts[k] = at
	return at
}

func (co *coordinator) verdict(k int) (string, bool) {
	if len(co.failed) > 0 {
		return "the run failed: " + co.failed[0].String(), true
	}
	for _, r := range co.layout.Clients() {
		s := co.ranks[r]
		switch {
		case s == nil:
			return "", false
		case s.result != nil || s.gone:
			return fmt.Sprintf("rank %d (host %s) ended before point %d", r, s.host, k+1), true
		case !s.votes[k]:
			return "", false
		}
	}
	return "", true
}

func (co *coordinator) fail(r int, host, what string) {
	co.failed = append(co.failed, failure{rank: r, host: host, what: what})
	co.stopAll("the run failed: "+co.failed[0].String(), r)
	co.changed(co.collected())
}

// stopAll tells every client rank but the failed one to stop measuring, once; the clients
// of a failed server rank skip their drain (its replies will not come). Every client rank
// must report within the grace past the point's drain.
func (co *coordinator) stopAll(why string, failed int) {
	if co.stopped {
		return
	}
	co.stopped, co.stopWhy = true, why
	hurry := failed >= 0 && co.layout.Role(failed) == RoleServer
	drain := workloads.MinDrain
	for _, s := range co.ranks {
		drain = max(drain, s.drain)
	}
	at := time.Now().Add(co.grace + drain)
	for _, r := range co.layout.Clients() {
		if s := co.ranks[r]; s != nil && !s.gone && s.result == nil && r != failed {
			s.c.send(msg{Kind: msgStop, Err: why, Hurry: hurry && co.layout.ServerOf(r) == failed})
			co.setDue(s, at, fmt.Sprintf("did not report within %v of being told to stop (its drain and the grace)", co.grace+drain))
		}
	}
}

func (co *coordinator) collected() *collected {
	c := &collected{hosts: map[int]string{}, results: map[int]*rankResult{}, failed: slices.Clone(co.failed),
		refused: slices.Clone(co.refused), nrefused: co.nrefused, gaveUp: co.gaveUp}
	for r, s := range co.ranks {
		c.hosts[r] = s.host
		if s.result != nil {
			c.results[r] = s.result
		}
	}
	return c
}

// failures is the failures as one message, "" for none.
func (c *collected) failures() string {
	s := make([]string, len(c.failed))
	for i, f := range c.failed {
		s[i] = f.String()
	}
	return strings.Join(s, "; ")
}
