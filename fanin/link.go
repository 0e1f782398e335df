package fanin

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// link is a rank's connection to the coordinator.
type link struct {
	c *conn
	// wall is this rank's wall clock (time.Now; tests step it): only clock readings come
	// from it, every wait is on the monotonic clock.
	wall     func() time.Time
	verdicts chan msg
	clocks   chan msg
	acks     chan struct{}
	// lost is closed when the coordinator is lost (lostErr says how), stopped when it says
	// to stop or is lost (stopWhy says why).
	lost, stopped chan struct{}
	lostErr       error
	stopOnce      sync.Once
	stopWhy       string
	done          chan struct{}
	closeOnce     sync.Once
}

// dialCoordinator connects rank to the coordinator at addr with the job's secret, and
// beats every beat until closed; onStop is called (once at most, from another goroutine)
// when the coordinator says to stop (hurry: skip the drain) or is lost: its connection
// ended, or it sent nothing for missedBeats beats.
func dialCoordinator(addr, secret string, rank int, host string, role Role, beat time.Duration, onStop func(why string, hurry bool)) (*link, error) {
	nc, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connect to the coordinator (rank 0) at %s: %w", addr, err)
	}
	l := &link{c: newConn(nc), wall: time.Now, verdicts: make(chan msg, 1), clocks: make(chan msg, 1), acks: make(chan struct{}, 1),
		lost: make(chan struct{}), stopped: make(chan struct{}), done: make(chan struct{})}
	if err := l.c.send(msg{Kind: msgHello, Rank: rank, Host: host, Role: string(role), Secret: secret}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("coordinator (rank 0) at %s: %w", addr, err)
	}
	stop := func(why string, hurry bool) {
		l.stopOnce.Do(func() {
			l.stopWhy = why
			close(l.stopped)
			onStop(why, hurry)
		})
	}
	go func() {
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.c.send(msg{Kind: msgBeat})
			case <-l.done:
				return
			}
		}
	}()
	go func() {
		for {
			nc.SetReadDeadline(time.Now().Add(missedBeats * beat))
			m, err := l.c.recv(maxMsg)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					err = fmt.Errorf("it sent nothing for %v (heartbeat every %v): stopped or hung", missedBeats*beat, beat)
				}
				l.lostErr = fmt.Errorf("connection to the coordinator (rank 0) lost: %w", err)
				close(l.lost)
				stop(l.lostErr.Error(), true)
				return
			}
			switch m.Kind {
			case msgVerdict:
				l.verdicts <- m
			case msgClock:
				l.clocks <- m
			case msgResult:
				l.acks <- struct{}{}
			case msgStop:
				stop(m.Err, m.Hurry)
			}
		}
	}()
	return l, nil
}

// errStopped is what a wait interrupted by a stop returns, wrapped with the stop's cause.
var errStopped = errors.New("stopped")

// vote says whether this rank is ready for point k (cause nil), which lasts length (drain
// in it; 0: unknown), and waits for the verdict: nil and when to start the point (rank 0's
// wall clock, Unix nanoseconds) and how far ahead of its verdict it starts at most, else
// why not. A stop ends the wait.
func (l *link) vote(k int, cause error, length, drain time.Duration) (int64, time.Duration, error) {
	m := msg{Kind: msgVote, Point: k, Len: int64(length), Drain: int64(drain)}
	if cause != nil {
		m.Err = cause.Error()
	}
	if err := l.c.send(m); err != nil {
		return 0, 0, err
	}
	select {
	case v := <-l.verdicts:
		if v.Err != "" {
			return 0, 0, errors.New(v.Err)
		}
		return v.T1, time.Duration(v.Len), nil
	case <-l.stopped:
		return 0, 0, fmt.Errorf("%w: %s", errStopped, l.stopWhy)
	}
}

// startWait waits until at, rank 0's wall clock (Unix ns), as clk converts it to this
// rank's, and at most lead past clk's error: a clock stepped since clk was estimated cannot
// stretch the wait. The wait is on the monotonic clock, and a stop ends it.
func (l *link) startWait(at int64, lead time.Duration, clk clock) error {
	d := time.Duration(at - clk.Offset - l.wall().UnixNano())
	d = min(max(d, 0), lead+time.Duration(clk.Error))
	if d == 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-l.stopped:
		return fmt.Errorf("%w: %s", errStopped, l.stopWhy)
	}
}

// clockExchanges is how many exchanges the first estimate of a rank's clock makes; the
// quickest one counts. Each point's estimate makes one more.
const clockExchanges = 8

// clockOffset estimates rank 0's wall clock minus this rank's over n exchanges as NTP does:
// rank 0's reading is taken to lie halfway through the exchange, so the exchange with the
// shortest round trip bounds the error best, by half its round trip.
func (l *link) clockOffset(n int) (clock, error) {
	best := clock{Error: -1}
	for range n {
		t0 := l.wall()
		m0 := time.Now()
		if err := l.c.send(msg{Kind: msgClock, T0: t0.UnixNano()}); err != nil {
			return clock{}, err
		}
		var m msg
		select {
		case m = <-l.clocks:
		case <-l.lost:
			return clock{}, l.lostErr
		}
		rtt := int64(time.Since(m0)) // monotonic: a step during the exchange does not count
		if best.Error < 0 || rtt/2 < best.Error {
			best = clock{Offset: m.T1 - (t0.UnixNano() + rtt/2), Error: rtt / 2}
		}
	}
	return best, nil
}

// driftPPM bounds how fast two hosts' clocks drift apart, in parts per million: a crystal's
// tolerance is some tens (NTP grows its error bound by 15 a second); a larger drift, or a
// step, makes the next estimate disagree with the aged one, which is then dropped.
const driftPPM = 100

// refine combines an estimate prev made age ago with a new one, next: prev's bound widened
// by the drift over age; if their intervals meet, their intersection (the tighter bound);
// if not, a clock was stepped between them and next alone holds.
func refine(prev clock, age time.Duration, next clock) clock {
	prev.Error += int64(age) / 1e6 * driftPPM
	lo, hi := max(prev.Offset-prev.Error, next.Offset-next.Error), min(prev.Offset+prev.Error, next.Offset+next.Error)
	if lo > hi {
		return next
	}
	return clock{Offset: lo + (hi-lo)/2, Error: (hi - lo + 1) / 2}
}

// report sends the rank's results and waits, at most wait, for rank 0 to say it has them:
// false when it did not (rank 0 is lost).
func (l *link) report(res *rankResult, wait time.Duration) bool {
	if err := l.c.send(msg{Kind: msgResult, Result: res}); err != nil {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-l.acks:
		return true
	case <-l.lost:
	case <-t.C:
	}
	return false
}

func (l *link) close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.c.c.Close()
}
