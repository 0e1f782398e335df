package fanin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// coordinator is rank 0's side of the run: it starts every point when all client ranks are
// ready, collects their results and watches their connections; the first failure (a rank
// that could not connect, ended in an error or died) stops every rank.
type coordinator struct {
	l       net.Listener
	layout  Layout
	events  chan event
	ranks   map[int]*rankState
	failed  []failure
	stopped bool
	starts  map[int]int64 // point → its start (startAt)
	// changed is called with the state after every result or failure (rank 0 keeps its
	// results file current with it, so that a kill loses nothing already received).
	changed func(*collected)
}

type rankState struct {
	host   string
	c      *conn
	votes  map[int]bool // points voted for
	asked  map[int]bool // votes not answered yet
	result *rankResult
	gone   bool
}

type failure struct {
	rank       int
	host, what string
}

func (f failure) String() string { return fmt.Sprintf("rank %d (host %s): %s", f.rank, f.host, f.what) }

type event struct {
	rank int
	m    msg
	c    *conn // hello: the rank's connection
	err  error // the connection ended
}

// collected is what the coordinator has: every rank's host and result, and the failures in
// the order they happened.
type collected struct {
	hosts   map[int]string
	results map[int]*rankResult
	failed  []failure
}

func listenCoordinator(layout Layout) (*coordinator, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return nil, fmt.Errorf("coordinator: listen: %w", err)
	}
	return &coordinator{l: l, layout: layout, events: make(chan event, 16), ranks: map[int]*rankState{}, starts: map[int]int64{}}, nil
}

// addr is the coordinator's address as the other ranks reach it: host with the port listened on.
func (co *coordinator) addr(host string) string {
	return net.JoinHostPort(host, fmt.Sprint(co.l.Addr().(*net.TCPAddr).Port))
}

// accept reads each connection's hello and then its messages, as events.
func (co *coordinator) accept(done <-chan struct{}) {
	for {
		nc, err := co.l.Accept()
		if err != nil {
			return
		}
		go func() {
			c := newConn(nc)
			nc.SetReadDeadline(time.Now().Add(30 * time.Second))
			m, err := c.recv()
			nc.SetReadDeadline(time.Time{})
			if err != nil || m.Kind != msgHello || m.Rank < 0 || m.Rank >= co.layout.Size() {
				nc.Close()
				return
			}
			rank := m.Rank
			select {
			case co.events <- event{rank: rank, m: m, c: c}:
			case <-done:
				nc.Close()
				return
			}
			for {
				m, err := c.recv()
				if err != nil {
					select {
					case co.events <- event{rank: rank, err: err}:
					case <-done:
					}
					return
				}
				select {
				case co.events <- event{rank: rank, m: m}:
				case <-done:
					return
				}
			}
		}()
	}
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
	var graceC <-chan time.Time
	ctxDone := ctx.Done()
	for !co.finished() {
		select {
		case ev := <-co.events:
			co.handle(ev)
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
		case <-wait:
			return co.collected()
		}
	}
	return co.collected()
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

func (co *coordinator) handle(ev event) {
	s := co.ranks[ev.rank]
	switch {
	case ev.c != nil:
		if s != nil {
			ev.c.c.Close() // a second hello for one rank
			return
		}
		s = &rankState{host: ev.m.Host, c: ev.c, votes: map[int]bool{}, asked: map[int]bool{}}
		co.ranks[ev.rank] = s
		if co.stopped {
			s.c.send(msg{Kind: msgStop, Err: co.failed[0].String()})
		}
		return
	case s == nil:
		return
	case ev.err != nil:
		s.gone = true
		if s.result == nil && co.layout.Role(ev.rank) == RoleClient {
			co.fail(ev.rank, s.host, fmt.Sprintf("its connection to rank 0 ended before it reported (the process died?): %v", ev.err))
		} else if s.result == nil && !co.finished() {
			co.fail(ev.rank, s.host, fmt.Sprintf("the server rank's connection to rank 0 ended while clients were measuring (the process died?): %v", ev.err))
		}
	}
	switch ev.m.Kind {
	case msgClock:
		s.c.send(msg{Kind: msgClock, T0: ev.m.T0, T1: time.Now().UnixNano()})
		return
	case msgVote:
		if ev.m.Err != "" {
			co.fail(ev.rank, s.host, ev.m.Err)
		}
		s.votes[ev.m.Point], s.asked[ev.m.Point] = true, true
	case msgResult:
		s.result = ev.m.Result
		if s.result == nil {
			s.result = &rankResult{Err: "reported no results"}
		}
		if s.result.Err != "" {
			co.fail(ev.rank, s.host, s.result.Err)
		}
		co.changed(co.collected())
	}
	co.decide()
}

// decide answers the votes that can be answered: all of them with the first failure once
// there is one, else a point's once every client rank that can still vote has voted for it.
func (co *coordinator) decide() {
	for _, r := range co.layout.Clients() {
		s := co.ranks[r]
		if s == nil {
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
				m.T1 = co.startAt(k)
			}
			s.c.send(m)
		}
	}
}

// startLead is how far ahead of its verdicts a point starts, per client rank: the verdicts
// go out one after the other, and each rank waits for the same instant.
const startLead = time.Millisecond

// startAt is when point k starts, in rank 0's wall clock (Unix nanoseconds): fixed when its
// first verdict goes out.
func (co *coordinator) startAt(k int) int64 {
	if at, ok := co.starts[k]; ok {
		return at
	}
	at := time.Now().Add(time.Duration(len(co.layout.Clients())+2) * startLead).UnixNano()
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

// stopAll tells every client rank but the failed one to stop measuring, once.
func (co *coordinator) stopAll(why string, failed int) {
	if co.stopped {
		return
	}
	co.stopped = true
	for _, r := range co.layout.Clients() {
		if s := co.ranks[r]; s != nil && !s.gone && s.result == nil && r != failed {
			s.c.send(msg{Kind: msgStop, Err: why})
		}
	}
}

func (co *coordinator) collected() *collected {
	c := &collected{hosts: map[int]string{}, results: map[int]*rankResult{}, failed: slices.Clone(co.failed)}
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

// link is a rank's connection to the coordinator.
type link struct {
	c        *conn
	verdicts chan msg
	clocks   chan msg
	lost     chan struct{}
	lostErr  error
}

// dialCoordinator connects rank to the coordinator at addr; onStop is called (once at most,
// from another goroutine) when the coordinator says to stop or is lost.
func dialCoordinator(addr string, rank int, host string, role Role, onStop func(why string)) (*link, error) {
	nc, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connect to the coordinator (rank 0) at %s: %w", addr, err)
	}
	l := &link{c: newConn(nc), verdicts: make(chan msg, 1), clocks: make(chan msg, 1), lost: make(chan struct{})}
	if err := l.c.send(msg{Kind: msgHello, Rank: rank, Host: host, Role: string(role)}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("coordinator (rank 0) at %s: %w", addr, err)
	}
	go func() {
		stopped := false
		stop := func(why string) {
			if !stopped {
				stopped = true
				onStop(why)
			}
		}
		for {
			m, err := l.c.recv()
			if err != nil {
				l.lostErr = fmt.Errorf("connection to the coordinator (rank 0) lost: %w", err)
				close(l.lost)
				stop(l.lostErr.Error())
				return
			}
			switch m.Kind {
			case msgVerdict:
				l.verdicts <- m
			case msgClock:
				l.clocks <- m
			case msgStop:
				stop(m.Err)
			}
		}
	}()
	return l, nil
}

// vote says whether this rank is ready for point k (cause nil) and waits for the verdict:
// nil and when to start the point (rank 0's wall clock, Unix nanoseconds), else why not.
func (l *link) vote(k int, cause error) (int64, error) {
	m := msg{Kind: msgVote, Point: k}
	if cause != nil {
		m.Err = cause.Error()
	}
	if err := l.c.send(m); err != nil {
		return 0, err
	}
	select {
	case v := <-l.verdicts:
		if v.Err != "" {
			return 0, errors.New(v.Err)
		}
		return v.T1, nil
	case <-l.lost:
		return 0, l.lostErr
	}
}

// clockExchanges is how many exchanges clockOffset makes; the quickest one counts.
const clockExchanges = 8

// clockOffset estimates rank 0's wall clock minus this rank's as NTP does: rank 0's reading
// is taken to lie halfway through the exchange, so the exchange with the shortest round trip
// bounds the error best, by half its round trip (the second result).
func (l *link) clockOffset() (offset, bound int64, err error) {
	bound = -1
	for range clockExchanges {
		t0 := time.Now()
		if err := l.c.send(msg{Kind: msgClock, T0: t0.UnixNano()}); err != nil {
			return 0, 0, err
		}
		var m msg
		select {
		case m = <-l.clocks:
		case <-l.lost:
			return 0, 0, l.lostErr
		}
		rtt := int64(time.Since(t0))
		if bound < 0 || rtt/2 < bound {
			offset, bound = m.T1-(t0.UnixNano()+rtt/2), rtt/2
		}
	}
	return offset, bound, nil
}

func (l *link) report(res *rankResult) error { return l.c.send(msg{Kind: msgResult, Result: res}) }

func (l *link) close() error { return l.c.c.Close() }
