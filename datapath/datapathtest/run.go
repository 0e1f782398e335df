package datapathtest

import (
	"testing"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Run runs every conformance case against env, each as a subtest. With env.PeerName set
// the passive halves run in another process, and a last case kills that process.
func Run(t *testing.T, env Env) {
	if env.Provider == nil || env.ListenAddr == "" {
		t.Fatal("datapathtest.Env needs a Provider and a ListenAddr")
	}
	if env.PeerName != "" {
		runRemote(t, env)
		return
	}
	adev, err := env.Provider.Open(env.Device)
	if err != nil {
		t.Fatalf("Open(%q): %v", env.Device, err)
	}
	pdev := adev
	if !env.OneDevice {
		if pdev, err = env.Provider.Open(env.Device); err != nil {
			adev.Close()
			t.Fatalf("Open(%q): %v", env.Device, err)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runLocal(t, &env, tc, adev, pdev) })
	}
	// Every case released what it created: closing the devices proves it.
	if pdev != adev {
		if err := pdev.Close(); err != nil {
			t.Errorf("closing the passive device: %v", err)
		}
	}
	if err := adev.Close(); err != nil {
		t.Errorf("closing the device: %v", err)
	}
}

func runLocal(t *testing.T, env *Env, tc tcase, adev, pdev datapath.Device) {
	ln, err := pdev.Listen(env.ListenAddr)
	if err != nil {
		t.Fatalf("Listen(%q): %v", env.ListenAddr, err)
	}
	defer ln.Close()
	deadline := time.Now().Add(env.timeout())
	a2p, p2a := make(chan []byte, 4), make(chan []byte, 4)
	aDone, pDone := make(chan struct{}), make(chan struct{})
	active := &half{name: "active", dev: adev, addr: ln.Addr(), deadline: deadline,
		xch: &chanX{out: a2p, in: p2a, other: pDone}}
	passive := &half{name: "passive", dev: pdev, ln: ln, deadline: deadline,
		xch: &chanX{out: p2a, in: a2p, other: aDone}}
	var perr error
	go func() {
		defer close(pDone)
		perr = passive.run(tc.passive)
	}()
	aerr := active.run(tc.active)
	close(aDone)
	<-pDone
	report(t, aerr, perr, active.skipMsg+passive.skipMsg)
}

func report(t *testing.T, aerr, perr error, skip string) {
	t.Helper()
	if aerr != nil {
		t.Errorf("active half: %v", aerr)
	}
	if perr != nil {
		t.Errorf("passive half: %v", perr)
	}
	if skip != "" && !t.Failed() {
		t.Skip(skip)
	}
}

// chanX is the side channel in process. Each half has at most two messages in flight
// towards the other (its last one and, after the other consumed it, the next), so small
// buffers never block a sender.
type chanX struct {
	out   chan<- []byte
	in    <-chan []byte
	other <-chan struct{} // closed when the other half returned
}

func (x *chanX) exchange(b []byte, deadline time.Time) ([]byte, error) {
	x.out <- b
	return await(x.in, x.other, deadline)
}

// await waits for the other half's next message until the deadline. A message sent just
// before the other half returned still counts: only an empty in after other closed is
// errOtherEnded.
func await(in <-chan []byte, other <-chan struct{}, deadline time.Time) ([]byte, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case got := <-in:
		return got, nil
	case <-other:
		select {
		case got := <-in:
			return got, nil
		default:
			return nil, errOtherEnded
		}
	case <-timer.C:
		return nil, errTimeout
	}
}
