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
	// MaxHostPressure is the host CPU pressure (percent) beyond which tasks waited for a CPU
	// often enough to say so.
	MaxHostPressure = 20.0
)

// Disturbances says why a point's latencies may be the scheduler's rather than the
// transport's: busy pollers that outnumbered the CPUs they could run on (spinning counts the
// in-process responder's poller, extraSpinning), a busy poller that got clearly less than a
// whole CPU or was switched out often, high host CPU pressure. A hybrid poller that never
// blocked (no voluntary switch) spun all along and is judged as busy. Nil when nothing
// suggests a disturbance.
func Disturbances(pollers []PollerUsage, extraSpinning, cpus int, pressure *float64) []string {
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
	if pressure != nil && *pressure > MaxHostPressure {
		out = append(out, fmt.Sprintf("host CPU pressure %.0f%%: tasks waited for a CPU", *pressure))
	}
	return out
}

func spins(p PollerUsage) bool {
	return p.Poll == "busy" || strings.HasPrefix(p.Poll, "hybrid") && p.Voluntary == 0
}

// Quality is a data-quality note on runs for reports and comparisons: how many of their
// points were disturbed (see Disturbed), why, and the highest host CPU pressure recorded;
// "" when no point says anything about it.
func Quality(runs []*Run) string {
	var total, disturbed int
	var maxPressure float64
	pressure := false
	why := map[string]int{}
	var order []string
	for _, r := range runs {
		for i := range r.Points {
			p := &r.Points[i]
			total++
			if p.HostCPUPressure != nil {
				pressure = true
				maxPressure = max(maxPressure, *p.HostCPUPressure)
			}
			if !Disturbed(p) {
				continue
			}
			disturbed++
			kinds := map[string]bool{}
			for _, d := range p.Disturbed {
				kinds[disturbanceKind(d)] = true
			}
			if len(p.Disturbed) == 0 {
				kinds[disturbanceKind("host CPU pressure")] = true
			}
			for k := range kinds {
				if why[k] == 0 {
					order = append(order, k)
				}
				why[k]++
			}
		}
	}
	if disturbed == 0 && !pressure {
		return ""
	}
	s := fmt.Sprintf("data quality: %d of %d point(s) disturbed", disturbed, total)
	if disturbed > 0 {
		slices.Sort(order)
		var parts []string
		for _, k := range order {
			parts = append(parts, fmt.Sprintf("%s (%d)", k, why[k]))
		}
		s += ": " + strings.Join(parts, ", ")
	}
	if pressure {
		s += fmt.Sprintf("; host CPU pressure up to %.0f%%", maxPressure)
	}
	if disturbed > 0 {
		s += "; the scheduler, not the transport, may have set their numbers"
	}
	return s
}

// disturbanceKind groups a Disturbances reason by its cause, without its numbers.
func disturbanceKind(reason string) string {
	switch {
	case strings.Contains(reason, "host CPU pressure"):
		return fmt.Sprintf("host CPU pressure above %.0f%%", MaxHostPressure)
	case strings.Contains(reason, "spinning pollers"):
		return "spinning pollers outnumber the CPUs"
	case strings.Contains(reason, "busy poller"):
		return "a busy poller lost its CPU"
	case strings.Contains(reason, "garbage collection"):
		return "garbage collection"
	}
	return reason
}
