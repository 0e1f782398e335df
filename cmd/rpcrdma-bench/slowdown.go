package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath/soft"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// addSlowdownFlags declares --soft-delay, --soft-bandwidth and --soft-post-cost, the soft
// provider's calibrated slowdown.
func addSlowdownFlags(fs *pflag.FlagSet, s *cli.SoftSlowdown) {
	fs.Var(delayFlag(&s.CompletionDelay), "soft-delay", "test instrument (soft provider): hold every completion back this long, a known slowdown for measuring a regression gate (default none)")
	fs.Var(delayFlag(&s.PostCost), "soft-post-cost", "test instrument (soft provider): every work request posted to a send queue costs its poster this long (a spin), a slowdown in proportion to it (default none)")
	fs.Var(bandwidthFlag(&s.BandwidthBps), "soft-bandwidth", "test instrument (soft provider): pass every byte posted through one link of this rate, e.g. 1Gbit, 500Mbit or bits/s (default none)")
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
