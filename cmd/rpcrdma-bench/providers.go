package main

import (
	"fmt"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/verbs"
)

// builtin lists the providers compiled into this binary, in the order the CLI lists them,
// the default first: soft, pure Go and needing no RDMA hardware, then verbs. Verbs is listed
// also when built without its library (without -tags verbs or cgo): then its Devices and
// Open return an error wrapping datapath.ErrNotSupported that says how to build it in.
var builtin = []datapath.Provider{soft.New(soft.Config{}), verbs.New(verbs.Config{})}

// providers returns the compiled-in providers.
func providers() []datapath.Provider { return builtin }

// checkTurnarounds refuses --turnarounds on a provider without the probe.
func checkTurnarounds(on bool, provider string) error {
	if on && provider != "verbs" {
		if provider == "" {
			provider = builtin[0].Name()
		}
		return usageErrorf("--turnarounds needs --provider verbs: the probe is in its completion queues' C code (provider %s has none)", provider)
	}
	return nil
}

// withTurnarounds is p with the turnaround probe switched on (checkTurnarounds passed).
func withTurnarounds(p datapath.Provider) datapath.Provider {
	if _, ok := p.(*verbs.Provider); ok {
		return verbs.New(verbs.Config{Turnarounds: true})
	}
	return p
}

// sizeRuntime sizes the Go runtime for the pollers polls of provider: soft's get exactly the
// Ps they need (datapath.SizeRuntime); elsewhere the runtime's default stays, with a P more
// when spinning pollers would take every one (datapath.EnsureProcs).
func sizeRuntime(provider string, polls []datapath.Poll) {
	if provider == soft.Name {
		datapath.SizeRuntime(polls)
	} else {
		datapath.EnsureProcs(polls)
	}
}

// lookupProvider finds a provider by its CLI name ("" is the default, the first).
func lookupProvider(name string) (datapath.Provider, error) {
	ps := providers()
	if name == "" {
		if len(ps) == 0 {
			return nil, fmt.Errorf("no provider compiled in")
		}
		return ps[0], nil
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		if p.Name() == name {
			return p, nil
		}
		names[i] = p.Name()
	}
	if len(names) == 0 {
		names = []string{"none"}
	}
	return nil, usageErrorf("unknown provider %q (have %s)", name, strings.Join(names, ", "))
}
