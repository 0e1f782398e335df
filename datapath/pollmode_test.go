package datapath

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestParsePoll(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Poll
		str  string
	}{
		{"busy", Poll{Mode: PollBusy}, "busy"},
		{"event", Poll{Mode: PollEvent}, "event"},
		{"hybrid", Poll{Mode: PollHybrid}, "hybrid"},
		{"hybrid:50us", Poll{Mode: PollHybrid, Spin: 50 * time.Microsecond}, "hybrid:50µs"},
		{"hybrid:200us", Poll{Mode: PollHybrid, Spin: 200 * time.Microsecond}, "hybrid:200µs"},
		{"hybrid:1ms", Poll{Mode: PollHybrid, Spin: time.Millisecond}, "hybrid:1ms"},
	} {
		got, err := ParsePoll(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParsePoll(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if got.String() != tc.str {
			t.Errorf("ParsePoll(%q).String() = %q, want %q", tc.in, got.String(), tc.str)
		}
		var back Poll
		if err := back.UnmarshalText([]byte(got.String())); err != nil || back.Normalized() != got.Normalized() {
			t.Errorf("%q does not round-trip: %+v, %v", got.String(), back, err)
		}
	}
	for _, bad := range []string{"", "spin", "busy:1ms", "event:5us", "hybrid:", "hybrid:-1us", "hybrid:0s", "hybrid:fast", "Hybrid"} {
		if _, err := ParsePoll(bad); err == nil {
			t.Errorf("ParsePoll(%q) accepted", bad)
		}
	}
}

func TestIdler(t *testing.T) {
	now := int64(0)
	clock := func() int64 { return now }

	busy := NewIdler(Poll{Mode: PollBusy}, clock)
	event := NewIdler(Poll{Mode: PollEvent}, clock)
	for range 1000 {
		now += 1000
		if busy.ShouldWait() {
			t.Fatal("a busy idler asked to wait")
		}
		if !event.ShouldWait() {
			t.Fatal("an event idler did not ask to wait at an empty poll")
		}
	}

	// Hybrid, 100 µs spin; each empty poll takes 100 ns of fake time.
	h := NewIdler(Poll{Mode: PollHybrid, Spin: 100 * time.Microsecond}, clock)
	polls := 0
	for !h.ShouldWait() {
		now += 100
		polls++
		if polls > 10000 {
			t.Fatal("hybrid idler never asked to wait")
		}
	}
	spun := time.Duration(polls) * 100 * time.Nanosecond
	if spun < 100*time.Microsecond || spun > 100*time.Microsecond+idleCheckEvery*100*time.Nanosecond {
		t.Fatalf("hybrid idler waited after spinning %v, want 100µs (+ at most one check interval)", spun)
	}
	// Still idle: wait at every further empty poll.
	for range 5 {
		if !h.ShouldWait() {
			t.Fatal("hybrid idler stopped waiting while still idle")
		}
	}
	// Work resets the spin.
	h.Active()
	if h.ShouldWait() {
		t.Fatal("hybrid idler waited right after work")
	}
}

func TestPollerHybridWaitsOnlyWhenIdle(t *testing.T) {
	// A hybrid poller with a long spin never waits while completions keep coming; with a
	// short one it waits once its CQ stays empty.
	cq := newFakeCQ()
	h := &recorder{want: 300}
	p := NewPoller(PollerConfig{Poll: Poll{Mode: PollHybrid, Spin: time.Hour}, EventTimeout: time.Millisecond})
	p.Start(cq, h)
	for i := 0; i < 300; i += 10 {
		cq.Push(completions(i, 10)...)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Waits != 0 {
		t.Fatalf("hybrid poller with a one-hour spin waited %d times", s.Waits)
	}

	p = NewPoller(PollerConfig{Poll: Poll{Mode: PollHybrid, Spin: time.Microsecond}, EventTimeout: time.Millisecond})
	p.Start(emptyCQ{}, &recorder{})
	for p.Stats().Waits == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Waits == 0 || s.Waits >= s.EmptyPolls {
		t.Fatalf("idle hybrid poller: %+v; want waits after a spin of empty polls", s)
	}
}

// TestIdlerAdaptsSpin drives a hybrid Idler as a closed loop does: streaks of empty polls
// (1 µs of fake time each) that end in work after a fixed gap.
func TestIdlerAdaptsSpin(t *testing.T) {
	now := int64(0)
	clock := func() int64 { return now }
	const us = int64(time.Microsecond)
	h := NewIdler(Poll{Mode: PollHybrid}, clock) // adaptive, from DefaultHybridSpin = 50 µs

	// roundTrip idles for gap (waiting, once the Idler says so, until the work comes) and
	// reports whether it waited.
	roundTrip := func(gap int64) (waited bool) {
		end := now + gap
		for now < end {
			if h.ShouldWait() {
				waited = true
				now = end // blocked in CQ.Wait until the completion came
				break
			}
			now += us
		}
		h.Active()
		now += 2 * us // handling the work
		return waited
	}

	// Completions 150 µs apart, three times the configured spin: the first round trips
	// sleep, then the spin grows past the gap and the loop stops sleeping.
	var waits []int
	for i := range 100 {
		if roundTrip(150 * us) {
			waits = append(waits, i)
		}
	}
	if len(waits) == 0 || len(waits) > 5 || waits[len(waits)-1] >= 10 {
		t.Fatalf("150 µs gaps with a 50 µs spin: waited at round trips %v; want the first few only", waits)
	}
	if s := h.Spin(); s < 150*time.Microsecond || s > time.Millisecond {
		t.Fatalf("adapted spin %v, want between the gap (150µs) and the cap (1ms)", s)
	}

	// Idle for good: it still stops spinning, after at most the cap.
	start := now
	for !h.ShouldWait() {
		now += us
		if now-start > 2*int64(time.Millisecond) {
			t.Fatal("an idle hybrid idler spun past its cap")
		}
	}
	if spun := now - start; spun > spinCapFactor*50*us+idleCheckEvery*us {
		t.Fatalf("idle streak spun %v, want at most the cap", time.Duration(spun))
	}
	adapted := h.Spin()
	now += 10 * int64(time.Second) // a long idle period
	h.Active()
	now += 2 * us
	if s := h.Spin(); s != adapted {
		t.Fatalf("an idle period changed the spin from %v to %v", adapted, s)
	}

	// Then work comes quickly again: the spin returns to the configured one.
	for range 50 {
		if roundTrip(5 * us) {
			t.Fatal("waited on a 5 µs gap")
		}
	}
	if s := h.Spin(); s != 50*time.Microsecond {
		t.Fatalf("spin after quick round trips %v, want the configured 50µs", s)
	}
	start = now
	for !h.ShouldWait() {
		now += us
	}
	if spun := now - start; spun < 50*us || spun > 50*us+idleCheckEvery*us {
		t.Fatalf("spun %v before waiting, want the configured 50µs (+ one check interval)", time.Duration(spun))
	}

	// Sparse work (10 ms apart, ten times the cap) is idle periods, not traffic: the
	// poller sleeps between them and the spin stays the configured one.
	for i := range 20 {
		if !roundTrip(10 * int64(time.Millisecond)) {
			t.Fatalf("round trip %d, 10 ms apart: never waited", i)
		}
	}
	if s := h.Spin(); s != 50*time.Microsecond {
		t.Fatalf("spin after sparse work %v, want the configured 50µs", s)
	}

	// A fixed spin stays fixed: the same 150 µs gaps sleep every time.
	h = NewIdler(Poll{Mode: PollHybrid, Spin: 50 * time.Microsecond}, clock)
	for i := range 20 {
		if !roundTrip(150 * us) {
			t.Fatalf("fixed 50 µs spin, round trip %d of 150 µs: did not wait", i)
		}
	}
	if s := h.Spin(); s != 50*time.Microsecond {
		t.Fatalf("fixed spin became %v", s)
	}

	// Busy and event policies report no spin.
	for _, p := range []Poll{{Mode: PollBusy}, {Mode: PollEvent}} {
		if w := NewIdler(p, clock); w.Spin() != 0 {
			t.Errorf("%v idler: Spin %v, want 0", p, w.Spin())
		}
	}
}

// Every mode passes through the scheduler at an empty poll about every YieldEvery, and never
// while its clock stands still. Over quick polls it reads the clock once per idleCheckEvery
// of them; over slow ones (a poll spinning in C, a thread kept off its CPU) its checks come
// after fewer polls, so that no pass is more than yieldSlack late, and they go back to
// idleCheckEvery when the polls are quick again.
func TestIdlerYields(t *testing.T) {
	for _, p := range []Poll{{Mode: PollBusy}, {Mode: PollHybrid}, {Mode: PollEvent}} {
		now, reads := int64(1), 0
		var passes []int64
		w := NewIdler(p, func() int64 { reads++; return now })
		w.yield = func() { passes = append(passes, now) }
		// run makes empty polls of step each for total and returns the clock reads and the
		// longest time between two passes through the scheduler.
		run := func(step, total time.Duration) (int, time.Duration) {
			reads, passes = 0, passes[:0]
			for range total / step {
				now += int64(step)
				w.ShouldWait()
			}
			var longest time.Duration
			for i := 1; i < len(passes); i++ {
				longest = max(longest, time.Duration(passes[i]-passes[i-1]))
			}
			if len(passes) < int(total/(YieldEvery+yieldSlack+step))-1 {
				t.Errorf("%v, polls of %v: %d passes in %v", p, step, len(passes), total)
			}
			return reads, longest
		}
		// Quick polls (a check per 6.4 µs), polls whose 64 would take 640 µs, polls each
		// longer than the slack, quick polls again.
		for _, step := range []time.Duration{100 * time.Nanosecond, 10 * time.Microsecond, 700 * time.Microsecond, 100 * time.Nanosecond} {
			const total = 100 * time.Millisecond
			run(step, 50*time.Millisecond) // the first check after a change comes late
			reads, longest := run(step, total)
			if limit := YieldEvery + max(yieldSlack, step); longest > limit {
				t.Errorf("%v, polls of %v: passes up to %v apart, want at most %v", p, step, longest, limit)
			}
			if p.Mode != PollBusy {
				continue // hybrid streaks read the clock for their spin too
			}
			polls := int(total / step)
			if step*idleCheckEvery < yieldSlack/2 {
				if reads != polls/idleCheckEvery {
					t.Errorf("busy, polls of %v: %d clock reads for %d polls, want one per %d", step, reads, polls, idleCheckEvery)
				}
			} else if least, most := min(polls, int(total/yieldSlack)), min(polls, int(total/(yieldSlack/4))); reads < least || reads > most {
				// A check at least every yieldSlack, at most every quarter of it.
				t.Errorf("busy, polls of %v: %d clock reads in %v, want %d to %d", step, reads, total, least, most)
			}
		}
		w.Active()
		passes = passes[:0]
		for range 10 * idleCheckEvery {
			w.ShouldWait()
		}
		if len(passes) != 0 {
			t.Errorf("%v: %d passes with the clock standing still", p, len(passes))
		}
	}
	var zero Idler
	for range 2 * idleCheckEvery {
		if zero.ShouldWait() {
			t.Fatal("the zero Idler asked to wait")
		}
	}
}

// A busy Poller over an empty CQ passes through the scheduler by itself.
func TestPollerYields(t *testing.T) {
	p := NewPoller(PollerConfig{})
	var yields atomic.Int32
	p.idle.yield = func() { yields.Add(1) }
	p.Start(emptyCQ{}, &recorder{})
	deadline := time.Now().Add(20 * time.Second)
	for yields.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := yields.Load(); n < 3 {
		t.Fatalf("a busy poller passed through the scheduler %d times in %v of empty polls", n, 20*time.Second)
	}
}
