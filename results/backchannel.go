package results

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// writeBackchannel prints, under the table, a point's callbacks (a row per callback
// procedure and class) and its delegation recalls (a row per latency); nothing for a point without
// them.
func writeBackchannel(w io.Writer, p *Point) error {
	if len(p.Callbacks) > 0 {
		fmt.Fprintf(w, "callbacks of %s: the peer's calls over its connections (RFC 8167), µs from a call's arrival to the completion of the reply's Send (calls answered with a failure: errors, untimed):\n", pointLabel(p))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  proc\tclass\tcalls\tp50 µs\tp99 µs\tmax µs\terrors\t")
		for i := range p.Callbacks {
			c := &p.Callbacks[i]
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%d\t\n", c.Procedure, c.Class, c.RTT.Count+c.Errors, micros(c.RTT.P50), micros(c.RTT.P99), micros(c.RTT.Max), c.Errors)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	rc := p.Recalls
	if rc == nil {
		return nil
	}
	fmt.Fprintf(w, "delegation recalls of %s: %d recalled and returned, %d not granted, %d retries (NFS4ERR_DELAY), µs:\n",
		pointLabel(p), rc.Count, rc.NotGranted, rc.Retries)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  latency\tcount\tp50 µs\tp90 µs\tp99 µs\tmax µs\t")
	for _, l := range rc.Latencies() {
		s := &l.Latency.RTT
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t\n", l.Name, s.Count, micros(s.P50), micros(s.P90), micros(s.P99), micros(s.Max))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  recall: conflicting OPEN sent to CB_RECALL's arrival; delegreturn: DELEGRETURN's round trip; conflict: conflicting OPEN first sent to its success.")
	return nil
}

// backchannelMissing says whether p's callbacks or recalls show a percentile as Missing.
func backchannelMissing(p *Point) bool {
	for i := range p.Callbacks {
		if s := &p.Callbacks[i].RTT; s.Count > 0 && (s.P50 == nil || s.P99 == nil) {
			return true
		}
	}
	if rc := p.Recalls; rc != nil && rc.Count > 0 {
		for _, l := range rc.Latencies() {
			if s := &l.Latency.RTT; s.P50 == nil || s.P90 == nil || s.P99 == nil {
				return true
			}
		}
	}
	return false
}

// NamedLatency is one of a Recalls' latencies with its field name.
type NamedLatency struct {
	Name    string
	Latency *Latency
}

// Latencies are rc's latencies in field order: recall, delegreturn, conflict.
func (rc *Recalls) Latencies() []NamedLatency {
	return []NamedLatency{{"recall", &rc.Recall}, {"delegreturn", &rc.DelegReturn}, {"conflict", &rc.Conflict}}
}
