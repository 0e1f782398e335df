package datapath

import (
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

func TestParsePressure(t *testing.T) {
	good := "some avg10=12.50 avg60=3.01 avg300=0.80 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if p, err := parsePressure([]byte(good)); err != nil || p != 12.5 {
		t.Fatalf("parsePressure = %v, %v; want 12.5", p, err)
	}
	for _, bad := range []string{"", "full avg10=1.00\n", "some avg60=1.00\n", "some avg10=x\n", "some avg10=-1\n", "some avg10=101\n", "some avg10=\n"} {
		if p, err := parsePressure([]byte(bad)); err == nil {
			t.Errorf("parsePressure(%q) = %v, nil; want an error", bad, p)
		}
	}
}

func TestThreadUsageSub(t *testing.T) {
	a := ThreadUsage{CPU: 5 * time.Second, Involuntary: 10, Voluntary: 3}
	b := ThreadUsage{CPU: 2 * time.Second, Involuntary: 4, Voluntary: 1}
	if got := a.Sub(b); got != (ThreadUsage{CPU: 3 * time.Second, Involuntary: 6, Voluntary: 2}) {
		t.Fatalf("Sub = %+v", got)
	}
}
