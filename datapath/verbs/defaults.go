package verbs

import "github.com/rpcrdma-bench/rpcrdma-bench/datapath"

// Defaults: the device makes the completions, so the measuring pollers spin (a spin puts no
// wake-up on the measured path), and a server waits hybrid, answering a closed loop without
// a wake-up yet freeing its CPU when idle (rxe: p50 as busy, event 5 times slower). RDMA-CM
// binds to an address of the device's netdev, not to loopback: a responder in this process
// listens there.
func (p *Provider) Defaults() datapath.Defaults {
	return datapath.Defaults{
		MeasuringPoll: datapath.Poll{Mode: datapath.PollBusy},
		ServerPoll:    datapath.Poll{Mode: datapath.PollHybrid},
	}
}
