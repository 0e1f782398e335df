package soft_test

import (
	"os"
	"testing"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/datapathtest"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
)

func envByName(name string) (datapathtest.Env, bool) {
	p := soft.New(soft.Config{RNRTimeout: 20e6})
	switch name {
	case "inproc":
		return datapathtest.Env{Provider: p, ListenAddr: "inproc:"}, true
	case "inproc-one-device":
		return datapathtest.Env{Provider: p, ListenAddr: "inproc:", OneDevice: true}, true
	case "tcp":
		return datapathtest.Env{Provider: p, ListenAddr: "127.0.0.1:0"}, true
	case "tcp-one-device":
		return datapathtest.Env{Provider: p, ListenAddr: "127.0.0.1:0", OneDevice: true}, true
	case "tcp-processes":
		return datapathtest.Env{Provider: p, ListenAddr: "127.0.0.1:0", PeerName: "tcp"}, true
	}
	return datapathtest.Env{}, false
}

func TestMain(m *testing.M) {
	datapathtest.ServePeer(envByName)
	os.Exit(m.Run())
}

func run(t *testing.T, name string) {
	env, _ := envByName(name)
	datapathtest.Run(t, env)
}

func TestConformanceInproc(t *testing.T)          { run(t, "inproc") }
func TestConformanceInprocOneDevice(t *testing.T) { run(t, "inproc-one-device") }
func TestConformanceTCP(t *testing.T)             { run(t, "tcp") }
func TestConformanceTCPOneDevice(t *testing.T)    { run(t, "tcp-one-device") }
func TestConformanceTCPTwoProcesses(t *testing.T) { run(t, "tcp-processes") }
