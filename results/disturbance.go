package results

import (
	"fmt"
	"slices"
	"strings"
)

// Thresholds of Disturbances. A busy poller that had a CPU to itself runs for the whole
// interval; one that shares its CPU with another runnable thread loses about half of it and
// is preempted every few milliseconds (hundreds of times a second). On a 2-core machine a
// busy poller beside the Go runtime and an in-process responder measured 98-99 % and 70-150
// involuntary switches a second: that costs tail latency, not the median, and is not
// flagged.
const (
	// MinBusyShare is the share of the interval a busy poller must have run.
	MinBusyShare = 0.9
	// MaxInvoluntaryPerSec is the rate of involuntary context switches a busy poller may
	// take (interrupts and kernel threads take a few).
	MaxInvoluntaryPerSec = 500.0
	// MaxOtherCPU is the share of the host CPU time (percent) other processes may use
	// during a point: beyond it, a neighbour competed for the CPUs. Host CPU pressure is
	// no such sign: it counts the tool's own threads waiting for each other.
	MaxOtherCPU = 10.0
)

// Disturbances says why a point's latencies may be the scheduler's rather than the
// transport's: busy pollers that outnumbered the CPUs they could run on (spinning counts the
// in-process responder's poller, extraSpinning), a busy poller that got clearly less than a
// whole CPU or was switched out often, other processes that used more than MaxOtherCPU of
// the host (otherCPU, percent, nil when unknown). A hybrid poller that never
// blocked (no voluntary switch) spun all along and is judged as busy. Nil when nothing
// suggests a disturbance.
func Disturbances(pollers []PollerUsage, extraSpinning, cpus int, otherCPU *float64) []string {
	var out []string
	spinning := extraSpinning
	for _, p := range pollers {
		if spins(p) {
			spinning++
		}
	}
	if cpus > 0 && spinning > cpus {
		out = append(out, fmt.Sprintf("%d spinning pollers for %d CPUs: pollers outnumber the CPUs they may run on", spinning, cpus))
	}
	for _, p := range pollers {
		if !spins(p) || p.WallNs <= 0 {
			continue
		}
		share := float64(p.CPUNs) / float64(p.WallNs)
		rate := float64(p.Involuntary) / (float64(p.WallNs) / 1e9)
		if share < MinBusyShare || rate > MaxInvoluntaryPerSec {
			where := "unpinned"
			if p.CPU >= 0 {
				where = fmt.Sprintf("on CPU %d", p.CPU)
			}
			out = append(out, fmt.Sprintf("busy poller %d (%s) ran %.0f%% of the interval and was switched out %d times (%.0f/s)",
				p.Poller, where, 100*share, p.Involuntary, rate))
		}
	}
	if otherCPU != nil && *otherCPU > MaxOtherCPU {
		out = append(out, fmt.Sprintf("other processes used %.0f%% of the host CPU time", *otherCPU))
	}
	return out
}

func spins(p PollerUsage) bool {
	return p.Poll == "busy" || strings.HasPrefix(p.Poll, "hybrid") && p.Voluntary == 0
}

// Quality is a data-quality note on runs for reports and comparisons: how many of their
// points were disturbed (see Disturbed) and why, in how many the configuration's own threads
// competed for CPUs, and the most of the host's CPU time other processes took; "" when no
// point says anything about it.
func Quality(runs []*Run) string {
	var total, disturbed, competed int
	var maxOther float64
	other := false
	why := map[string]int{}
	var env, self []string
	for _, r := range runs {
		for i := range r.Points {
			p := &r.Points[i]
			total++
			if p.HostOtherCPU != nil {
				other = true
				maxOther = max(maxOther, *p.HostOtherCPU)
			}
			if Disturbed(p) {
				disturbed++
			}
			kinds, byConfig := map[string]bool{}, false
			for _, d := range p.Disturbed {
				kinds[disturbanceKind(d)] = configurational(d)
				byConfig = byConfig || configurational(d)
			}
			if byConfig {
				competed++
			}
			for k, c := range kinds {
				if why[k] == 0 {
					if c {
						self = append(self, k)
					} else {
						env = append(env, k)
					}
				}
				why[k]++
			}
		}
	}
	if disturbed == 0 && competed == 0 && !other {
		return ""
	}
	list := func(kinds []string) string {
		slices.Sort(kinds)
		var parts []string
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%s (%d)", k, why[k]))
		}
		return strings.Join(parts, ", ")
	}
	s := fmt.Sprintf("data quality: %d of %d point(s) disturbed", disturbed, total)
	if disturbed > 0 {
		s += ": " + list(env)
	}
	if competed > 0 {
		s += fmt.Sprintf("; in %d point(s) the configuration's own threads competed for CPUs: %s", competed, list(self))
	}
	if other {
		s += fmt.Sprintf("; other processes used up to %.0f%% of the host CPU time", maxOther)
	}
	if disturbed > 0 || competed > 0 {
		s += "; the scheduler, not the transport, may have set their numbers"
	}
	return s
}

// configurational reports whether a Disturbances reason belongs to the configuration under
// test (its pollers and the CPUs they share) rather than to its surroundings.
func configurational(reason string) bool {
	return strings.Contains(reason, "spinning pollers") || strings.Contains(reason, "busy poller")
}

// disturbanceKind groups a Disturbances reason by its cause, without its numbers.
func disturbanceKind(reason string) string {
	switch {
	case strings.Contains(reason, "host CPU pressure"): // files before schema version 5
		return "host CPU pressure above 20%"
	case strings.Contains(reason, "other processes used"):
		return fmt.Sprintf("other processes used more than %.0f%% of the CPUs", MaxOtherCPU)
	case strings.Contains(reason, "spinning pollers"):
		return "spinning pollers outnumber the CPUs"
	case strings.Contains(reason, "busy poller"):
		return "a busy poller lost its CPU"
	case strings.Contains(reason, "garbage collection"):
		return "garbage collection"
	}
	return reason
}
