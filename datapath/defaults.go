package datapath

import "time"

// Defaults is how a provider is best driven where the user does not say. They follow from
// who makes its completions: a device, beside which a poller may spin without slowing it,
// or goroutines of this process, whose CPU a spinning poller takes.
type Defaults struct {
	// MeasuringPoll is how the measuring side's pollers (run, client, sweep) wait.
	MeasuringPoll Poll
	// ServerPoll is how a responder serving other processes waits.
	ServerPoll Poll
	// LocalSpin is the spin of a responder in the measuring process while the measuring
	// side spins (it then waits hybrid); 0 adapts it (Poll.Spin).
	LocalSpin time.Duration
	// ExactProcs gives the Go runtime exactly the Ps the pollers need (SizeRuntime), where
	// this process makes the completions and an idle P would only let a spinner take them;
	// otherwise the runtime's default stays, with a P more when spinning pollers would take
	// every one (EnsureProcs).
	ExactProcs bool
	// LocalAddr is where a responder in this process listens for a requester in it; ""
	// means an address of the device's own network interface.
	LocalAddr string
}

// SizeRuntime sizes the Go runtime for the pollers polls, as d.ExactProcs says.
func (d Defaults) SizeRuntime(polls []Poll) {
	if d.ExactProcs {
		SizeRuntime(polls)
	} else {
		EnsureProcs(polls)
	}
}

// LocalPoll is how a responder in the measuring process waits when the measuring side's
// pollers wait as measuring: as they do, but spinning only while there are completions
// (hybrid) where they are busy, since a closed loop keeps it spinning and it frees the CPU
// between points.
func (d Defaults) LocalPoll(measuring Poll) Poll {
	if measuring.Mode != PollBusy {
		return measuring
	}
	return Poll{Mode: PollHybrid, Spin: d.LocalSpin}
}
