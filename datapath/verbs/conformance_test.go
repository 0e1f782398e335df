//go:build verbs && cgo

package verbs

import (
	"os"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/datapathtest"
)

func TestMain(m *testing.M) {
	datapathtest.ServePeer(envByName)
	os.Exit(m.Run())
}

// envByName names the conformance environments: both ends on one device talking to itself
// at its own address (what a soft-RoCE guest offers), in one process or in two.
func envByName(name string) (datapathtest.Env, bool) {
	env := datapathtest.Env{Provider: New(Config{}), ListenAddr: ":0", OneDevice: true}
	switch name {
	case "verbs":
	case "verbs-peer":
		env.PeerName = name
	default:
		return env, false
	}
	return env, true
}

func needDevice(t *testing.T) {
	t.Helper()
	devs, err := New(Config{}).Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) == 0 {
		skipNoDevice(t)
	}
}

func TestConformance(t *testing.T) {
	needDevice(t)
	env, _ := envByName("verbs")
	datapathtest.Run(t, env)
}

func TestConformanceTwoProcesses(t *testing.T) {
	needDevice(t)
	env, _ := envByName("verbs-peer")
	datapathtest.Run(t, env)
}
