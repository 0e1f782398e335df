//go:build !(verbs && cgo)

package verbs

import (
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Provider is the verbs provider. In this build (without the "verbs" tag or without cgo) it
// only reports how to get the real one.
type Provider struct{ cfg Config }

var _ datapath.Provider = (*Provider)(nil)

// New returns the provider.
func New(cfg Config) *Provider { return &Provider{cfg: cfg} }

// Name is "verbs".
func (p *Provider) Name() string { return "verbs" }

// Devices fails: this build has no verbs support.
func (p *Provider) Devices() ([]datapath.DeviceInfo, error) { return nil, errNotBuilt }

// Open fails: this build has no verbs support.
func (p *Provider) Open(string) (datapath.Device, error) { return nil, errNotBuilt }

var errNotBuilt = &datapath.OpError{Op: "verbs", Err: notBuilt{}}

type notBuilt struct{}

func (notBuilt) Error() string {
	return "not supported: this binary was built without the verbs provider; build it with " +
		"CGO_ENABLED=1 go build -tags verbs (needs libibverbs-dev and librdmacm-dev)"
}

func (notBuilt) Unwrap() error { return datapath.ErrNotSupported }
