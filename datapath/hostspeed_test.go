package datapath

import (
	"math"
	"testing"
)

func TestProbeHostReadsEveryAllowedCPU(t *testing.T) {
	hs := ProbeHost()
	want := 1
	if cpus, err := AllowedCPUs(); err == nil {
		want = min(len(cpus), probeMaxCPUs)
	}
	if hs.CPUs != want {
		t.Errorf("probed %d CPUs, want %d", hs.CPUs, want)
	}
	figures := map[string]float64{"ComputeNs": hs.ComputeNs, "CopyNsPerKiB": hs.CopyNsPerKiB}
	if want > 1 {
		figures["PingPongNs"] = hs.PingPongNs
	} else if hs.PingPongNs != 0 {
		t.Errorf("PingPongNs %v with one CPU", hs.PingPongNs)
	}
	for name, v := range figures {
		if !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("%s = %v, want a positive time", name, v)
		}
	}
}

func TestChainDependsOnEveryStep(t *testing.T) {
	// The probe's loop must not be foldable: different lengths give different values.
	if Chain(1) == Chain(2) || Chain(probeChain) == Chain(probeChain-1) {
		t.Fatal("chain gives the same value for different lengths")
	}
}

func TestPingPongOnAnOfflineCPU(t *testing.T) {
	// A CPU no thread may run on gives no figure, and leaves no thread spinning.
	if got := pingPong(1 << 20); got != 0 {
		t.Errorf("pingPong(1<<20) = %v, want 0", got)
	}
}
