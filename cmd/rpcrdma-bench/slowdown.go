package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// softSlowdown is --soft-delay and --soft-bandwidth: the soft provider's calibrated slowdown
// (soft.Config.CompletionDelay and Bandwidth), a test instrument that makes a known effect so
// that a regression gate's power can be measured against it. A results file's config keeps
// it as "soft_slowdown".
type softSlowdown struct {
	CompletionDelay workloads.Duration `json:"completion_delay,omitempty"`
	// BandwidthBps is the link's rate in bits per second (0: no cap).
	BandwidthBps float64 `json:"bandwidth_bps,omitempty"`
}

func (s *softSlowdown) on() bool { return s.CompletionDelay > 0 || s.BandwidthBps > 0 }

func addSlowdownFlags(fs *pflag.FlagSet, s *softSlowdown) {
	fs.Var(delayFlag(&s.CompletionDelay), "soft-delay", "test instrument (soft provider): hold every completion back this long, a known slowdown for measuring a regression gate (default none)")
	fs.Var(bandwidthFlag(&s.BandwidthBps), "soft-bandwidth", "test instrument (soft provider): pass every byte posted through one link of this rate, e.g. 1Gbit, 500Mbit or bits/s (default none)")
}

// provider is p with the slowdown, when it is on; only the soft provider has one.
func (s *softSlowdown) provider(p datapath.Provider) (datapath.Provider, error) {
	if !s.on() {
		return p, nil
	}
	if p.Name() != soft.Name {
		return nil, usageErrorf("--soft-delay and --soft-bandwidth slow the soft provider only (provider %s)", p.Name())
	}
	return soft.New(soft.Config{CompletionDelay: time.Duration(s.CompletionDelay), Bandwidth: s.BandwidthBps}), nil
}

func delayFlag(v *workloads.Duration) flagValue[workloads.Duration] {
	return flagValue[workloads.Duration]{v, "duration", func(x string) (workloads.Duration, error) {
		v, err := time.ParseDuration(x)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("want a duration such as 20us, not negative")
		}
		return workloads.Duration(v), nil
	}, func(d workloads.Duration) string {
		if d == 0 {
			return ""
		}
		return time.Duration(d).String()
	}}
}

func bandwidthFlag(v *float64) flagValue[float64] {
	return flagValue[float64]{v, "rate", soft.ParseBandwidth, func(b float64) string {
		if b == 0 {
			return ""
		}
		return strconv.FormatFloat(b, 'g', -1, 64)
	}}
}
