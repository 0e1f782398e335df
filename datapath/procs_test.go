package datapath

import (
	"runtime"
	"testing"
)

func TestProcs(t *testing.T) {
	busy, event, hybrid := Poll{Mode: PollBusy}, Poll{Mode: PollEvent}, Poll{Mode: PollHybrid}
	for _, c := range []struct {
		name  string
		polls []Poll
		want  int
	}{
		{"none", nil, 1},
		{"one event server", []Poll{event}, 1},
		{"four event servers", []Poll{event, event, event, event}, 4},
		{"one busy client", []Poll{busy}, 2},
		{"busy client and its hybrid responder", []Poll{busy, hybrid}, 3},
		{"two busy and one event", []Poll{busy, busy, event}, 3},
		{"hybrid server", []Poll{hybrid, hybrid}, 3},
	} {
		if got := Procs(c.polls); got != c.want {
			t.Errorf("%s: Procs = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestSizeRuntime(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(was)
	t.Setenv("GOMAXPROCS", "")
	if got := SizeRuntime([]Poll{{Mode: PollBusy}, {Mode: PollBusy}}); got != 3 || runtime.GOMAXPROCS(0) != 3 {
		t.Errorf("SizeRuntime = %d, GOMAXPROCS %d; want 3", got, runtime.GOMAXPROCS(0))
	}
	// The user's setting wins.
	t.Setenv("GOMAXPROCS", "5")
	runtime.GOMAXPROCS(5)
	if got := SizeRuntime([]Poll{{Mode: PollEvent}}); got != 5 || runtime.GOMAXPROCS(0) != 5 {
		t.Errorf("with GOMAXPROCS=5 in the environment: SizeRuntime = %d, GOMAXPROCS %d; want 5", got, runtime.GOMAXPROCS(0))
	}
}

func TestEnsureProcs(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(was)
	t.Setenv("GOMAXPROCS", "")
	two := []Poll{{Mode: PollBusy}, {Mode: PollHybrid}}
	// Spinning pollers that would take every P get one more beside them.
	runtime.GOMAXPROCS(2)
	if got := EnsureProcs(two); got != 3 || runtime.GOMAXPROCS(0) != 3 {
		t.Errorf("2 Ps, a busy and a hybrid poller: EnsureProcs = %d, GOMAXPROCS %d; want 3", got, runtime.GOMAXPROCS(0))
	}
	// Never fewer than there are: the default of a larger machine stays.
	runtime.GOMAXPROCS(8)
	if got := EnsureProcs(two); got != 8 || runtime.GOMAXPROCS(0) != 8 {
		t.Errorf("8 Ps: EnsureProcs = %d, GOMAXPROCS %d; want 8", got, runtime.GOMAXPROCS(0))
	}
	// Event pollers wait in system calls and spin nowhere: one P each is enough.
	runtime.GOMAXPROCS(1)
	if got := EnsureProcs([]Poll{{Mode: PollEvent}}); got != 1 {
		t.Errorf("1 P, an event poller: EnsureProcs = %d; want 1", got)
	}
	// The user's setting wins.
	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	if got := EnsureProcs(two); got != 2 || runtime.GOMAXPROCS(0) != 2 {
		t.Errorf("with GOMAXPROCS=2 in the environment: EnsureProcs = %d, GOMAXPROCS %d; want 2", got, runtime.GOMAXPROCS(0))
	}
}
