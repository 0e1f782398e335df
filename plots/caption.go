package plots

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// maxCaptionRuns is how many runs a caption describes one by one.
const maxCaptionRuns = 4

// caption describes what a chart's points measured: where they ran, what the connections
// negotiated, the workload parameters the lines share, and notes.
func caption(refs []ref, notes ...string) []string {
	var lines []string
	var runs []ref // the first point of each run, in run order
	for _, f := range refs {
		if !slices.ContainsFunc(runs, func(g ref) bool { return g.run == f.run }) {
			runs = append(runs, f)
		}
	}
	slices.SortFunc(runs, func(a, b ref) int { return a.run - b.run })
	for i, f := range runs {
		if i == maxCaptionRuns {
			lines = append(lines, fmt.Sprintf("… and %d more runs", len(runs)-i))
			break
		}
		s := environment(f.r)
		if len(runs) > 1 {
			s = runName(f.run, f.all) + ": " + s
		}
		lines = append(lines, s)
	}
	if s := negotiated(refs); s != "" {
		lines = append(lines, s)
	}
	if s := workload(refs); s != "" {
		lines = append(lines, s)
	}
	if s := status(refs, runs); s != "" {
		lines = append(lines, s)
	}
	if s := quality(refs); s != "" {
		lines = append(lines, s)
	}
	return append(lines, notes...)
}

// quality is the data-quality note (results.Quality) of the points drawn when one of them was
// disturbed, so that a chart shown alone says what the HTML page says beside it.
func quality(refs []ref) string {
	r := &results.Run{}
	seen := map[*results.Point]bool{}
	disturbed := false
	for _, f := range refs {
		if !seen[f.p] {
			seen[f.p] = true
			r.Points = append(r.Points, *f.p)
			disturbed = disturbed || len(f.p.Disturbed) > 0
		}
	}
	if !disturbed {
		return ""
	}
	return results.Quality([]*results.Run{r})
}

func environment(r *results.Run) string {
	e := r.Environment
	parts := []string{"provider " + orDash(e.Provider)}
	if d := e.Device; d != nil {
		s := "device " + orDash(d.Name)
		var attrs []string
		if d.FirmwareVersion != "" {
			attrs = append(attrs, "fw "+d.FirmwareVersion)
		}
		for _, pi := range d.Ports {
			if pi.Num != e.Port {
				continue
			}
			if pi.LinkLayer != "" {
				attrs = append(attrs, pi.LinkLayer)
			}
			if pi.ActiveMTU > 0 {
				attrs = append(attrs, "MTU "+strconv.Itoa(pi.ActiveMTU))
			}
		}
		if len(attrs) > 0 {
			s += " (" + strings.Join(attrs, ", ") + ")"
		}
		parts = append(parts, s)
	} else {
		parts = append(parts, "no device")
	}
	host := orDash(e.Hostname)
	var hattrs []string
	if e.OS != "" {
		hattrs = append(hattrs, strings.TrimSpace(e.OS+" "+e.Kernel))
	}
	if e.NumCPU > 0 {
		hattrs = append(hattrs, strconv.Itoa(e.NumCPU)+" CPUs")
	}
	if len(hattrs) > 0 {
		host += " (" + strings.Join(hattrs, ", ") + ")"
	}
	parts = append(parts, "host "+host)
	if !r.Start.IsZero() {
		parts = append(parts, r.Start.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if r.Tool != "" {
		parts = append(parts, r.Tool)
	}
	return strings.Join(parts, " · ")
}

// distinct keeps the first occurrence of each value, in order.
type distinct []string

func (d *distinct) add(s string) {
	if !slices.Contains(*d, s) {
		*d = append(*d, s)
	}
}

func (d distinct) String() string { return strings.Join(d, ", ") }

func negotiated(refs []ref) string {
	var inline, credits, inv, role distinct
	none := 0
	for _, f := range refs {
		n := f.p.Negotiated
		if n == nil {
			none++
			continue
		}
		inline.add(bytesLabel(n.InlineSendBytes) + "/" + bytesLabel(n.InlineRecvBytes))
		credits.add(strconv.Itoa(n.CreditsGranted) + " of " + strconv.Itoa(n.CreditsRequested))
		if n.RemoteInvalidation {
			inv.add("on")
		} else {
			inv.add("off")
		}
		role.add(n.Role)
	}
	var parts []string
	if len(inline) > 0 {
		parts = append(parts,
			"negotiated ("+role.String()+" view): inline send/recv "+inline.String(),
			"credits granted "+credits.String()+" requested",
			"remote invalidation "+inv.String())
	}
	if none > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d points without a connection", none, len(refs)))
	}
	return strings.Join(parts, " · ")
}

func workload(refs []ref) string {
	var proc, class, depth, conns, rate distinct
	for _, f := range refs {
		p := f.p.Params
		proc.add(p.Procedure)
		class.add("class " + p.Class)
		depth.add(strconv.Itoa(p.Depth))
		conns.add(strconv.Itoa(p.Connections))
		rate.add(rateLabel(p.RateRPS))
	}
	if len(refs) == 0 {
		return ""
	}
	return "workload: " + strings.Join([]string{proc.String(), class.String(),
		"depth " + depth.String(), conns.String() + " conn", rate.String()}, " · ")
}

func status(refs []ref, runs []ref) string {
	var parts []string
	for _, f := range runs {
		if st := f.r.Status; st.State != results.StateComplete {
			s := runName(f.run, f.all) + " " + string(st.State)
			if st.Message != "" {
				s += ": " + st.Message
			}
			parts = append(parts, s)
		}
	}
	cut := 0
	for _, f := range refs {
		if !f.p.Complete {
			cut++
		}
	}
	if cut > 0 {
		parts = append(parts, fmt.Sprintf("%d point(s) cut short", cut))
	}
	return strings.Join(parts, " · ")
}
