package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
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

// openProvider is the provider named ("" the default), with the soft provider's slowdown
// and the turnaround probe when asked for (cli.CheckTurnarounds passed).
func openProvider(name string, slow cli.SoftSlowdown, turnarounds bool) (datapath.Provider, error) {
	p, err := lookupProvider(name)
	if err != nil {
		return nil, err
	}
	if slow.On() {
		if p.Name() != soft.Name {
			return nil, cli.Usagef("--soft-delay, --soft-post-cost and --soft-bandwidth slow the soft provider only (provider %s)", p.Name())
		}
		p = soft.New(soft.Config{CompletionDelay: time.Duration(slow.CompletionDelay), Bandwidth: slow.BandwidthBps, PostCost: time.Duration(slow.PostCost)})
	}
	if turnarounds {
		if _, ok := p.(*verbs.Provider); ok {
			p = verbs.New(verbs.Config{Turnarounds: true})
		}
	}
	return p, nil
}

// providerDefaults are the named provider's defaults; an unknown name gets the default
// provider's, and its error comes when the provider is opened.
func providerDefaults(name string) datapath.Defaults {
	p, err := lookupProvider(name)
	if err != nil {
		p = builtin[0]
	}
	return p.Defaults()
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
	return nil, cli.Usagef("unknown provider %q (have %s)", name, strings.Join(names, ", "))
}
