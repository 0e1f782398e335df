package datapath

import (
	"math"
	"runtime"
	"testing"
	"time"
)

func TestSelfThreadUsageCountsBusyTime(t *testing.T) {
	done := make(chan ThreadUsage, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		before, err := SelfThreadUsage()
		if err != nil {
			t.Error(err)
			done <- ThreadUsage{}
			return
		}
		// Spin until the thread has run 30 ms (CPU time, not wall time: a loaded machine
		// only makes this take longer).
		for {
			now, err := SelfThreadUsage()
			if err != nil {
				t.Error(err)
				break
			}
			if d := now.Sub(before); d.CPU >= 30*time.Millisecond {
				done <- d
				return
			}
		}
		done <- ThreadUsage{}
	}()
	d := <-done
	if d.CPU < 30*time.Millisecond {
		t.Fatalf("a spinning thread's usage delta is %+v, want at least 30 ms of CPU", d)
	}
}

func TestParseStall(t *testing.T) {
	good := "some avg10=12.50 avg60=3.01 avg300=0.80 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if v, err := parseStall([]byte(good)); err != nil || v != 123456 {
		t.Fatalf("parseStall = %v, %v; want 123456", v, err)
	}
	for _, bad := range []string{"", "full total=1\n", "some avg10=1.00\n", "some total=x\n", "some total=-1\n", "some total=\n"} {
		if v, err := parseStall([]byte(bad)); err == nil {
			t.Errorf("parseStall(%q) = %v, nil; want an error", bad, v)
		}
	}
}

func TestParseStat(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	good := "cpu  100 5 20 800 50 3 2 10 40 0\ncpu0 50 2 10 400 25 1 1 5 20 0\n"
	h, err := parseStat([]byte(good))
	if err != nil || h.BusyTicks != 140 || h.TotalTicks != 990 {
		t.Fatalf("parseStat = %+v, %v; want busy 140 (guest inside user), total 990", h, err)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4\n", "cpu 1 2 3\n", "cpu 1 x 3 4 5\n", "intr 1 2 3 4 5\ncpu 1 2 3 4 5\n"} {
		if h, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) = %+v, nil; want an error", bad, h)
		}
	}
}

func TestHostCPUSince(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := HostCPU{BusyTicks: 1000, TotalTicks: 5000, StallUs: 1e6, HasStall: true, SelfNs: 0, Wall: t0}
	// One second on 2 CPUs: 200 ticks, 150 of them busy; this process used 1 s of CPU
	// (100 ticks), so others took 50 ticks: 25% of the host. Some task waited 300 ms: 30%.
	b := HostCPU{BusyTicks: 1150, TotalTicks: 5200, StallUs: 1.3e6, HasStall: true, SelfNs: 1e9, Wall: t0.Add(time.Second)}
	p, pok, other, ook := b.Since(a)
	if !pok || !ook || math.Abs(p-30) > 1e-9 || math.Abs(other-25) > 1e-9 {
		t.Fatalf("Since = %v %v %v %v; want pressure 30, other 25", p, pok, other, ook)
	}
	// Self time counted beyond the ticks (rounding) is no negative share; no stall data, no pressure.
	b.SelfNs, b.HasStall = 5e9, false
	if p, pok, other, ook := b.Since(a); pok || p != 0 || !ook || other != 0 {
		t.Fatalf("Since = %v %v %v %v; want no pressure, other 0", p, pok, other, ook)
	}
	// 40 ms on 2 CPUs is 8 ticks: one tick more or less is 12%, so no share is told.
	short := HostCPU{BusyTicks: 1006, TotalTicks: 5008, SelfNs: 30e6, Wall: t0.Add(40 * time.Millisecond)}
	if _, _, other, ook := short.Since(a); ook {
		t.Fatalf("Since over 8 ticks = other %v, told; want it untold", other)
	}
}

func TestReadHostCPU(t *testing.T) {
	a, err := ReadHostCPU()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
	}
	b, err := ReadHostCPU()
	if err != nil {
		t.Fatal(err)
	}
	if b.TotalTicks < a.TotalTicks || b.BusyTicks < a.BusyTicks || b.SelfNs <= a.SelfNs || !b.Wall.After(a.Wall) {
		t.Fatalf("two readings 50 ms of spinning apart: %+v then %+v", a, b)
	}
	if _, _, other, _ := b.Since(a); other < 0 || other > 100 {
		t.Fatalf("other processes' share %v%%", other)
	}
}

func TestThreadUsageSub(t *testing.T) {
	a := ThreadUsage{CPU: 5 * time.Second, Involuntary: 10, Voluntary: 3}
	b := ThreadUsage{CPU: 2 * time.Second, Involuntary: 4, Voluntary: 1}
	if got := a.Sub(b); got != (ThreadUsage{CPU: 3 * time.Second, Involuntary: 6, Voluntary: 2}) {
		t.Fatalf("Sub = %+v", got)
	}
}
