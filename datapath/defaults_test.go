package datapath

import "testing"

// A responder beside spinning measuring pollers spins only while there are completions,
// for the provider's spin; beside blocking ones it waits as they do.
func TestDefaultsLocalPoll(t *testing.T) {
	d := Defaults{LocalSpin: DefaultHybridSpin}
	if got := d.LocalPoll(Poll{Mode: PollBusy}); got != (Poll{Mode: PollHybrid, Spin: DefaultHybridSpin}) {
		t.Errorf("beside busy: %v", got)
	}
	ev := Poll{Mode: PollEvent}
	if got := d.LocalPoll(ev); got != ev {
		t.Errorf("beside event: %v", got)
	}
	if got := (Defaults{}).LocalPoll(Poll{Mode: PollBusy}); got != (Poll{Mode: PollHybrid}) {
		t.Errorf("no spin given: %v, want an adaptive hybrid", got)
	}
}
