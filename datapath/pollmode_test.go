package datapath

import (
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
		{"hybrid", Poll{Mode: PollHybrid}, "hybrid:50µs"},
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
