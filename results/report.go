package results

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Key names a point by its params, in the key=value/... form benchstat reads as sub-benchmark
// configuration: "proc=ECHO/call=4096/reply=4096/thr=4096/depth=1/conns=1/class=auto", with
// "/rate=N" appended for open-loop points. Payloads that vary read as CallLabel and ReplyLabel
// say ("call=64,4k", "call=mixed"). Equal Params give equal keys.
func (p Params) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "proc=%s/call=%s/reply=%s/thr=%d/depth=%d/conns=%d/class=%s",
		p.Procedure, p.CallLabel(), p.ReplyLabel(), p.InlineThreshold, p.Depth, p.Connections, p.Class)
	if p.RateRPS != 0 {
		b.WriteString("/rate=" + strconv.FormatFloat(p.RateRPS, 'g', -1, 64))
	}
	return b.String()
}

// Mixed is how labels show the payload of a mix of several entries, whose sizes vary by entry
// (the mix's name lists them).
const Mixed = "mixed"

// IsMix reports whether the point is a mix of several entries (Procedure "MIX:NAME").
func (p Params) IsMix() bool { return strings.HasPrefix(p.Procedure, "MIX") }

// CallLabel names the call payload the point measured: its size in bytes ("4096"), the sizes
// drawn when they varied ("64,4k"), or Mixed for a mix of several entries. Never "0" for a
// payload that was not empty.
func (p Params) CallLabel() string { return sizeLabel(p, p.CallBytes, p.CallSizes) }

// ReplyLabel is CallLabel for the reply.
func (p Params) ReplyLabel() string { return sizeLabel(p, p.ReplyBytes, p.ReplySizes) }

func sizeLabel(p Params, n int, sizes string) string {
	switch {
	case sizes != "":
		return sizes
	case n == 0 && p.IsMix() && p.CallBytes == 0 && p.ReplyBytes == 0:
		return Mixed
	}
	return strconv.Itoa(n)
}

// PayloadLabel names both payloads for a sentence: "64/64 B", "64,4k/64,4k B", "mixed sizes".
func (p Params) PayloadLabel() string {
	c, r := p.CallLabel(), p.ReplyLabel()
	if c == Mixed && r == Mixed {
		return "mixed sizes"
	}
	return c + "/" + r + " B"
}

// Missing is how text outputs show a value that is not available (an unsupported percentile).
const Missing = "-"

// micros formats nanoseconds as microseconds with 2 decimals, or Missing.
func micros(v *int64) string {
	if v == nil {
		return Missing
	}
	return strconv.FormatFloat(float64(*v)/1e3, 'f', 2, 64)
}

// WriteText writes a human-readable report of runs: a header per run, then an aligned table
// with a row per point and message class (and an "all" row when a point used several
// classes), then a legend. Latencies are full round-trip times (call sent to reply received)
// in microseconds; "-" marks a percentile the sample count cannot support; "*" marks an
// incomplete point. A mix's point is named MIX:NAME and has no single call or reply size.
func WriteText(w io.Writer, runs ...*Run) error {
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		e := &r.Environment
		dev := "-"
		if e.Device != nil {
			dev = e.Device.Name
			if e.Device.FirmwareVersion != "" {
				dev += " fw " + e.Device.FirmwareVersion
			}
		}
		fmt.Fprintf(w, "run %s .. %s  %s\n", r.Start.Format("2006-01-02 15:04:05Z07:00"), r.End.Format("15:04:05"), r.Status.State)
		if r.Status.Message != "" {
			fmt.Fprintf(w, "  %s\n", r.Status.Message)
		}
		fmt.Fprintf(w, "host %s  kernel %s  cpu %s  %s GOMAXPROCS=%d  provider %s  device %s port %d\n\n",
			e.Hostname, e.Kernel, e.CPUModel, e.GoVersion, e.GOMAXPROCS, e.Provider, dev, e.Port)

		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		// The columns up to count are one word each: scripts find columns by header words.
		head := "proc\tcall\treply\tthr\tdepth\tconns\tclass\tcount\tRTT p50 µs\tp90 µs\tp99 µs\tp99.9 µs\tmax µs\tRPC/s\tpayload Gb/s\terrors\t"
		rounds := slices.ContainsFunc(r.Points, func(p Point) bool { return p.Round > 0 })
		if rounds {
			head += "round\t"
		}
		fmt.Fprintln(tw, head)
		incomplete, missing := false, false
		order, last := displayOrder(r.Points)
		for k, pi := range order {
			p := r.Points[pi]
			name := p.Params.Procedure
			if !p.Complete {
				name += "*"
				incomplete = true
			}
			call, reply := p.Params.CallLabel(), p.Params.ReplyLabel()
			pre := fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%d\t", name, call, reply,
				p.Params.InlineThreshold, p.Params.Depth, p.Params.Connections)
			var nerr uint64
			for _, e := range p.Errors {
				nerr += e.Count
			}
			post := ""
			if rounds {
				post = strconv.Itoa(p.Round) + "\t"
			}
			errs := strconv.FormatUint(nerr, 10)
			missing = missing || backchannelMissing(&p)
			row := func(class string, s *Summary, rate string) {
				missing = missing || s.Count > 0 && (s.P50 == nil || s.P90 == nil || s.P99 == nil || s.P999 == nil)
				fmt.Fprintf(tw, "%s%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", pre, class, s.Count,
					micros(s.P50), micros(s.P90), micros(s.P99), micros(s.P999), micros(s.Max), rate, errs, post)
			}
			rate := fmt.Sprintf("%.0f\t%.3f", p.Throughput.RPCPerSec, p.Throughput.PayloadGbps)
			// Classes that only carried calls or replies of RPCs attributed elsewhere have
			// no RTTs of their own: no row.
			var used []*ClassStats
			for i := range p.Classes {
				if p.Classes[i].RTT.Count > 0 {
					used = append(used, &p.Classes[i])
				}
			}
			switch len(used) {
			case 0:
				row("-", &p.RTT, rate)
			case 1:
				row(used[0].Class, &p.RTT, rate)
			default:
				for _, c := range used {
					// Payload and errors are counted per point, not per class: no Gb/s or
					// errors here, only on the point's "all" row.
					errs = "-"
					row(c.Class, &c.RTT, fmt.Sprintf("%.0f\t", classRate(&p, c)))
				}
				errs = strconv.FormatUint(nerr, 10)
				row("all", &p.RTT, rate)
			}
			// A mix's procedures, each on a row of its own: its RTTs, its rate and its
			// errors, under its own name.
			for i := range p.Procedures {
				ps := &p.Procedures[i]
				missing = missing || ps.RTT.Count > 0 && (ps.RTT.P50 == nil || ps.RTT.P99 == nil)
				prate := 0.0
				if p.DurationNs > 0 {
					prate = float64(ps.RTT.Count) / (float64(p.DurationNs) / 1e9)
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%d\tall\t%d\t%s\t%s\t%s\t%s\t%s\t%.0f\t\t%d\t%s\n", strings.ToUpper(ps.Procedure), call, reply,
					p.Params.InlineThreshold, p.Params.Depth, p.Params.Connections, ps.RTT.Count,
					micros(ps.RTT.P50), micros(ps.RTT.P90), micros(ps.RTT.P99), micros(ps.RTT.P999), micros(ps.RTT.Max), prate, ps.Errors, post)
			}
			if rounds && last[k] > 1 {
				med := medianRow(r.Points, order[k+1-last[k]:k+1])
				fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", pre, "all", "-",
					med[0], med[1], med[2], med[3], med[4], med[5], med[6], "-", "median\t")
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "call, reply: payload bytes; thr: inline threshold in effect, bytes; count: RPCs measured.")
		if slices.ContainsFunc(r.Points, func(p Point) bool { return p.Params.CallSizes != "" || p.Params.ReplySizes != "" }) {
			fmt.Fprintln(w, "a list of sizes (64,4k) or a distribution (uniform:1k-64k): the payload drawn per RPC.")
		}
		if slices.ContainsFunc(r.Points, func(p Point) bool { return p.Params.CallLabel() == Mixed }) {
			fmt.Fprintln(w, "mixed: a mix's payloads, whose sizes its name lists by entry; its procedures follow it on rows of their own.")
		}
		for _, c := range Capped(r) {
			fmt.Fprintf(w, "note: the peer capped the inline threshold: %d offered, %d in effect; those points are filed under %d.\n", c.Offered, c.Effective, c.Effective)
		}
		fmt.Fprintln(w, "RTT: full round trip, call sent to reply received. payload Gb/s: call + reply payload of the point, headers excluded.")
		if rounds {
			fmt.Fprintln(w, "round: the round of the repeated measurement (--repeat) the point ran in; the rounds interleave the points (the results file keeps the order they ran in).")
			fmt.Fprintln(w, "median: each column's median over the point's complete rounds.")
		}
		if missing {
			fmt.Fprintln(w, "-: too few RTTs for this percentile (it needs at least 10 beyond it); never estimated.")
		}
		if incomplete {
			fmt.Fprintln(w, "*: incomplete: the run stopped during this point.")
		}
		turnHead := false
		for _, p := range r.Points {
			for _, u := range p.Pollers {
				t := u.Turnaround
				if t == nil {
					continue
				}
				if !turnHead {
					fmt.Fprintln(w, "turnaround: this side's own time from a completion to the posts it caused (the probe's two clock reads included), per poller, µs:")
					turnHead = true
				}
				fmt.Fprintf(w, "  %s: poller %d: %s\n", pointLabel(&p), u.Poller, t)
			}
		}
		for i := range r.Points {
			if err := writeFanIn(w, &r.Points[i]); err != nil {
				return err
			}
		}
		for i := range r.Points {
			if err := writeBackchannel(w, &r.Points[i]); err != nil {
				return err
			}
		}
		writeQuality(w, r)
	}
	return nil
}

// displayOrder is the order the table shows points in: a repeated measurement's rounds of one
// point together, by round, the points in the order they first ran; last[k] counts the rounds
// shown so far of order[k]'s point when it is the point's last, else 0.
func displayOrder(ps []Point) (order, last []int) {
	first := map[string]int{}
	for i, p := range ps {
		if _, ok := first[p.Params.Key()]; !ok {
			first[p.Params.Key()] = i
		}
	}
	order = make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := first[ps[a].Params.Key()] - first[ps[b].Params.Key()]; c != 0 {
			return c
		}
		return ps[a].Round - ps[b].Round
	})
	last = make([]int, len(ps))
	n := 0
	for k, i := range order {
		n++
		if k+1 == len(order) || ps[order[k+1]].Params.Key() != ps[i].Params.Key() {
			last[k], n = n, 0
		}
	}
	return order, last
}

// medianRow is the median over the complete points idx of ps of the table's p50, p90, p99,
// p99.9, max (µs), RPC/s and payload Gb/s; Missing where no round has the value.
func medianRow(ps []Point, idx []int) [7]string {
	var cols [7][]float64
	for _, i := range idx {
		p := &ps[i]
		if !p.Complete {
			continue
		}
		for c, v := range []*int64{p.RTT.P50, p.RTT.P90, p.RTT.P99, p.RTT.P999, p.RTT.Max} {
			if v != nil {
				cols[c] = append(cols[c], float64(*v))
			}
		}
		cols[5] = append(cols[5], p.Throughput.RPCPerSec)
		cols[6] = append(cols[6], p.Throughput.PayloadGbps)
	}
	var out [7]string
	for c, v := range cols {
		switch {
		case len(v) == 0:
			out[c] = Missing
		case c < 5:
			out[c] = strconv.FormatFloat(median(v)/1e3, 'f', 2, 64)
		case c == 5:
			out[c] = strconv.FormatFloat(median(v), 'f', 0, 64)
		default:
			out[c] = strconv.FormatFloat(median(v), 'f', 3, 64)
		}
	}
	return out
}

// maxNamed is how many disturbed points writeQuality names before counting the rest.
const maxNamed = 3

// writeQuality ends a run's table with its data-quality note (Quality) and, once, the points
// disturbed: a repeated gate run's dozens of disturbed points make one line, not one each.
func writeQuality(w io.Writer, r *Run) {
	q := Quality([]*Run{r})
	if q == "" {
		return
	}
	fmt.Fprintln(w, q)
	var named []string
	n := 0
	for i := range r.Points {
		p := &r.Points[i]
		if len(p.Disturbed) == 0 {
			continue
		}
		n++
		if len(named) < maxNamed {
			l := pointLabel(p)
			if p.Round > 0 {
				l += fmt.Sprintf(", round %d", p.Round)
			}
			named = append(named, l+" ("+strings.Join(p.Disturbed, "; ")+")")
		}
	}
	if n == 0 {
		return
	}
	more := ""
	if n > len(named) {
		more = fmt.Sprintf("; and %d more (each point's reasons are in the results file, disturbed)", n-len(named))
	}
	fmt.Fprintf(w, "warning: disturbed: %s%s\n", strings.Join(named, "; "), more)
}

// Cap is an inline threshold offered and the smaller one a peer left in effect.
type Cap struct{ Offered, Effective int }

// Capped lists the distinct thresholds a peer capped in r's points, in the order first seen.
func Capped(r *Run) []Cap {
	var cs []Cap
	for _, p := range r.Points {
		c := Cap{p.Params.OfferedInlineThreshold, p.Params.InlineThreshold}
		if c.Offered != 0 && !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// pointLabel names a point in a warning: procedure, payload, threshold, depth and
// connections.
func pointLabel(p *Point) string {
	q := &p.Params
	return fmt.Sprintf("%s %s, threshold %d, depth %d × %d connection(s)", q.Procedure, q.PayloadLabel(), q.InlineThreshold, q.Depth, q.Connections)
}

// csvHeader is the header row of WriteCSV.
var csvHeader = []string{
	"source", "run_start", "command", "provider", "device",
	"procedure", "class", "call_bytes", "reply_bytes", "inline_threshold_bytes", "depth", "connections", "rate_rps",
	"complete", "classes_used", "rtt_class", "calls", "replies", "count", "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
	"mean_ns", "stdev_ns", "duration_ns", "rpcs", "payload_bytes", "rpc_per_s", "payload_gbps", "errors",
	"user_ns", "sys_ns", "inline_send_bytes", "inline_recv_bytes", "credits_granted", "remote_invalidation",
	"round", "rank", "host", "call_sizes", "reply_sizes", "mix_procedure",
}

func csvInt(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

// Command is the subcommand that wrote r ("run", "client", "sweep"), read from its config;
// "" if the config does not say.
func (r *Run) Command() string {
	var c struct {
		Command string `json:"command"`
	}
	if len(r.Config) == 0 || json.Unmarshal(r.Config, &c) != nil {
		return ""
	}
	return c.Command
}

// PointDuration is the measured time per point the run was asked for (--duration: "5s"), read
// from its config (a run's workload or a sweep's base workload); "" if the config does not say.
func (r *Run) PointDuration() string {
	var c struct {
		Workload struct {
			Duration string `json:"duration"`
		} `json:"workload"`
		Sweep struct {
			Base struct {
				Duration string `json:"duration"`
			} `json:"base"`
		} `json:"sweep"`
	}
	if len(r.Config) == 0 || json.Unmarshal(r.Config, &c) != nil {
		return ""
	}
	if c.Workload.Duration != "" {
		return c.Workload.Duration
	}
	return c.Sweep.Base.Duration
}

// WriteCSV writes runs with no source names (see WriteCSVSources).
func WriteCSV(w io.Writer, runs ...*Run) error { return WriteCSVSources(w, nil, runs...) }

// WriteCSVSources writes one header row, then per point of every run one row per message
// class that has round trips of its own (rtt_class short, chunked or long) and the point's
// total (rtt_class all), and for a fan-in's point a row per client rank after it (rtt_class
// rank: the rank's own point, rank and host filled in; empty in the other rows), RFC 4180. Columns are named as the JSON fields, with the same units;
// an unavailable value is an empty field; round is 0 outside a repeated measurement. The first columns say where a row came from —
// sources[i] names the file runs[i] was read from (empty if sources is short), then the run's
// start, command, provider and device — so that CSVs of several runs merged into one can be
// told apart. A class row's payload columns are empty: payload is counted per point.
func WriteCSVSources(w io.Writer, sources []string, runs ...*Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for ri, r := range runs {
		src := ""
		if ri < len(sources) {
			src = sources[ri]
		}
		dev := ""
		if r.Environment.Device != nil {
			dev = r.Environment.Device.Name
		}
		origin := []string{src, r.Start.Format(time.RFC3339Nano), r.Command(), r.Environment.Provider, dev}
		for _, p := range r.Points {
			if err := csvPoint(cw, origin, &p, "", ""); err != nil {
				return err
			}
			if p.FanIn == nil {
				continue
			}
			for i := range p.FanIn.Ranks {
				rp := &p.FanIn.Ranks[i]
				if err := csvPoint(cw, origin, &rp.Point, strconv.Itoa(rp.Rank), rp.Host); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvPoint writes point p's rows: a row per class with round trips and its total ("all"), or,
// for a fan-in's rank (rank not ""), the rank's total alone ("rank") with its rank and host.
func csvPoint(cw *csv.Writer, origin []string, p *Point, rank, host string) error {
	u := strconv.FormatUint
	var classes []string
	var calls, replies uint64
	for _, c := range p.Classes {
		classes = append(classes, c.Class)
		calls += c.Calls
		replies += c.Replies
	}
	var nerr uint64
	for _, e := range p.Errors {
		nerr += e.Count
	}
	neg := []string{"", "", "", ""}
	if n := p.Negotiated; n != nil {
		neg = []string{strconv.Itoa(n.InlineSendBytes), strconv.Itoa(n.InlineRecvBytes),
			strconv.Itoa(n.CreditsGranted), strconv.FormatBool(n.RemoteInvalidation)}
	}
	bytesCol := func(n int, label string) string {
		if label != strconv.Itoa(n) {
			return "" // varied per RPC: named in call_sizes, reply_sizes
		}
		return label
	}
	sizeCol := func(n int, label string) string {
		if label == strconv.Itoa(n) {
			return ""
		}
		return label
	}
	cl, rl := p.Params.CallLabel(), p.Params.ReplyLabel()
	params := []string{
		p.Params.Procedure, p.Params.Class, bytesCol(p.Params.CallBytes, cl), bytesCol(p.Params.ReplyBytes, rl),
		strconv.Itoa(p.Params.InlineThreshold), strconv.Itoa(p.Params.Depth), strconv.Itoa(p.Params.Connections),
		strconv.FormatFloat(p.Params.RateRPS, 'g', -1, 64),
		strconv.FormatBool(p.Complete), strings.Join(classes, "+"),
	}
	sizes := []string{sizeCol(p.Params.CallBytes, cl), sizeCol(p.Params.ReplyBytes, rl)}
	row := func(class string, calls, replies uint64, s *Summary, rpcs, bytes, rps, gbps, errs, proc string) error {
		row := append(append([]string{}, origin...), params...)
		row = append(row, class, u(calls, 10), u(replies, 10), u(s.Count, 10),
			csvInt(s.Min), csvInt(s.P50), csvInt(s.P90), csvInt(s.P99), csvInt(s.P999), csvInt(s.P9999), csvInt(s.Max),
			csvInt(s.Mean), csvInt(s.Stdev), strconv.FormatInt(p.DurationNs, 10), rpcs, bytes, rps, gbps, errs,
			strconv.FormatInt(p.CPU.UserNs, 10), strconv.FormatInt(p.CPU.SysNs, 10))
		row = append(append(row, neg...), strconv.Itoa(p.Round), rank, host)
		return cw.Write(append(append(row, sizes...), proc))
	}
	total := "all"
	if rank != "" {
		total = "rank"
	} else {
		for i := range p.Classes {
			c := &p.Classes[i]
			if c.RTT.Count == 0 {
				continue
			}
			if err := row(c.Class, c.Calls, c.Replies, &c.RTT, u(c.RTT.Count, 10), "",
				strconv.FormatFloat(classRate(p, c), 'f', 3, 64), "", "", ""); err != nil {
				return err
			}
		}
	}
	if err := row(total, calls, replies, &p.RTT, u(p.Throughput.RPCs, 10), u(p.Throughput.PayloadBytes, 10),
		strconv.FormatFloat(p.Throughput.RPCPerSec, 'f', 3, 64), strconv.FormatFloat(p.Throughput.PayloadGbps, 'f', 6, 64),
		u(nerr, 10), ""); err != nil {
		return err
	}
	if rank != "" {
		return nil
	}
	// A mix's procedures, as the text table has them: calls and replies are counted per
	// class, not per procedure, so those columns hold its completed RPCs.
	for i := range p.Procedures {
		ps := &p.Procedures[i]
		rate := 0.0
		if p.DurationNs > 0 {
			rate = float64(ps.RTT.Count) / (float64(p.DurationNs) / 1e9)
		}
		if err := row("procedure", ps.RTT.Count, ps.RTT.Count, &ps.RTT, u(ps.RTT.Count, 10), "",
			strconv.FormatFloat(rate, 'f', 3, 64), "", u(ps.Errors, 10), ps.Procedure); err != nil {
			return err
		}
	}
	return nil
}

// classRate is the RPCs per second of point p's class c: its round trips over the point's
// measured time.
func classRate(p *Point, c *ClassStats) float64 {
	if p.DurationNs <= 0 {
		return 0
	}
	return float64(c.RTT.Count) / (float64(p.DurationNs) / 1e9)
}
