package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/plots"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// Missing is how the report shows a value that is not available: a percentile the sample
// count cannot support, a field the results file leaves empty.
const Missing = "–"

// page is what both templates render. Every string in it is plain text, escaped by the
// template that writes it; only chart.SVG and chart.URI are markup, and they pass safeSVG.
type page struct {
	Title     string
	Generated string
	Summary   string
	Overview  table
	// Thresholds ranks the inline thresholds of points measured at several (empty
	// otherwise); ThresholdsNote says how to read it.
	Thresholds     table
	ThresholdsNote string
	Charts         []*chart
	ChartsNote     string // how the charts treat rounds and the heatmaps' scale
	Notes          []string
	Runs           []*runView
}

type chart struct {
	ID, Title, PNGFile string
	PNGLink            string            // PNGFile as a relative URL, for the Markdown
	SVG                htmltemplate.HTML // inline SVG, or empty when URI is used
	URI                htmltemplate.URL  // PNG data URI when Config.PNG
	png                []byte
}

type runView struct {
	ID, Name   string
	Source     string
	State      string // complete, interrupted, failed
	Class      string // State's CSS class: complete, interrupted, failed or unknown
	Message    string
	Env        []kv
	Device     []kv
	Ports      table
	Summary    table
	Ops        table
	Neg        table
	Errors     table
	FanIn      []fanInView
	Callbacks  table // the peer's calls over the backchannel, a row per point and procedure
	Recalls    table // the delegation-recall measurement, a row per point and latency
	Config     string
	Incomplete bool
	NoPoints   bool
}

type kv struct{ Key, Value string }

// fanInView is a fan-in point's client ranks: its name, its fairness line and a row per rank.
type fanInView struct {
	Title, Fairness string
	Ranks           table
}

// table is a table of plain-text cells. Num marks the right-aligned (numeric) columns.
type table struct {
	Head []string
	Num  []bool
	Rows []row
}

// row is one table row. Class is a CSS class ("all" for a point's total over its classes,
// "cut" for a point cut short, "used" for the port the run used); Odd stripes the row, by row
// or, in the summary, by point, so that a point's rows read as one.
type row struct {
	Cells []string
	Class string
	Odd   bool
}

func (t *table) add(class string, cells ...string) {
	t.Rows = append(t.Rows, row{Cells: cells, Class: class, Odd: len(t.Rows)%2 == 1})
}

// build makes the page of runs. It returns a nil page with the error when the input cannot be
// reported at all; otherwise the page, the charts, and the errors of charts left out.
func build(runs []*results.Run, cfg Config) (*page, []*chart, error) {
	if len(runs) == 0 {
		return nil, nil, ErrNoRuns
	}
	for k, r := range runs {
		if r == nil {
			return nil, nil, fmt.Errorf("report: run %d is nil", k+1)
		}
	}
	if len(cfg.Sources) != 0 && len(cfg.Sources) != len(runs) {
		return nil, nil, fmt.Errorf("report: %d sources given for %d runs", len(cfg.Sources), len(runs))
	}
	pg := &page{Title: cfg.Title}
	if pg.Title == "" {
		pg.Title = DefaultTitle
	}
	if !cfg.Generated.IsZero() {
		pg.Generated = cfg.Generated.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	npoints, nfailed := 0, 0
	pg.Overview = table{
		Head: []string{"run", "source", "provider", "device", "host", "start", "duration", "points", "rounds", "status"},
		Num:  []bool{false, false, false, false, false, false, true, true, true, false},
	}
	for k, r := range runs {
		src := ""
		if len(cfg.Sources) > 0 {
			src = cfg.Sources[k]
		}
		rv := runOf(k, r, src)
		pg.Runs = append(pg.Runs, rv)
		npoints += len(r.Points)
		if r.Status.State != results.StateComplete {
			nfailed++
		}
		st := rv.State
		if r.Status.Message != "" {
			st += ": " + r.Status.Message
		}
		dev := Missing
		if d := r.Environment.Device; d != nil {
			dev = or(d.Name)
		}
		pg.Overview.add(rv.Class, rv.Name, or(src), or(r.Environment.Provider), dev, or(r.Environment.Hostname),
			stamp(r.Start), span(r.Start, r.End), strconv.Itoa(len(r.Points)), roundsText(r), st)
	}
	thresholdsTable(pg, runs)
	if q := results.Quality(runs); q != "" {
		pg.Notes = append(pg.Notes, q)
	}
	pg.Summary = fmt.Sprintf("%d run(s), %d point(s)", len(runs), npoints)
	if nfailed > 0 {
		pg.Summary += fmt.Sprintf("; %d run(s) did not complete", nfailed)
	}

	for k, r := range runs {
		for _, c := range results.Capped(r) {
			pg.Notes = append(pg.Notes, fmt.Sprintf("run %d: the peer capped the inline threshold: %d offered, %d in effect; those points are filed under %d", k+1, c.Offered, c.Effective, c.Effective))
		}
	}
	pg.Notes = append(pg.Notes, repeatNotes(runs)...)
	if cfg.NoCharts {
		return pg, nil, nil
	}
	// plots refuses a run without points; chart the others and say which were left out.
	var charted []*results.Run
	var left, mapping []string
	for k, r := range runs {
		if len(r.Points) == 0 {
			left = append(left, strconv.Itoa(k+1))
			continue
		}
		charted = append(charted, r)
		mapping = append(mapping, "chart run "+strconv.Itoa(len(charted))+" is run "+strconv.Itoa(k+1))
	}
	if len(left) > 0 {
		note := "run(s) " + strings.Join(left, ", ") + " have no points and are not charted"
		if len(charted) > 1 {
			note += "; the charts number the others among themselves: " + strings.Join(mapping, ", ")
		}
		pg.Notes = append(pg.Notes, note)
	}
	if len(charted) == 0 {
		pg.Notes = append(pg.Notes, "no chart: no run has points")
		return pg, nil, nil
	}
	cs, err := plots.Charts(charted)
	var errs []error
	if err != nil {
		if errors.Is(err, plots.ErrNoData) && len(cs) == 0 {
			pg.Notes = append(pg.Notes, "no chart applies to these runs")
		} else {
			errs = append(errs, err)
			pg.Notes = append(pg.Notes, "charts left out: "+err.Error())
		}
	}
	for _, c := range cs {
		v, err := encode(c, cfg.PNG)
		if err != nil {
			errs = append(errs, err)
			pg.Notes = append(pg.Notes, "chart "+c.Name+" left out: "+err.Error())
			continue
		}
		pg.Charts = append(pg.Charts, v)
	}
	pg.ChartsNote = "Heatmaps colour each cell by its median RTT's ratio to the best threshold at that size, on a fixed scale from 1× to 4×; ≈ marks cells within noise of the best."
	if slices.ContainsFunc(runs, func(r *results.Run) bool { return roundsText(r) != "1" }) || len(repeatNotes(runs)) > 0 {
		pg.ChartsNote = "A point measured in several rounds (the Runs table gives how many) is drawn as the median of its rounds, with their min-max range as a band and whiskers. " + pg.ChartsNote
	}
	// A chart split in parts (a spectrum with many lines) repeats its title: number the parts
	// so that the contents tell them apart.
	seen := map[string]int{}
	for _, c := range pg.Charts {
		seen[c.Title]++
	}
	part := map[string]int{}
	for _, c := range pg.Charts {
		if n := seen[c.Title]; n > 1 {
			part[c.Title]++
			c.Title += " (part " + strconv.Itoa(part[c.Title]) + " of " + strconv.Itoa(n) + ")"
		}
	}
	return pg, pg.Charts, errors.Join(errs...)
}

// encode draws c as PNG (always: the Markdown links it) and as SVG for the page.
func encode(c *plots.Chart, usePNG bool) (*chart, error) {
	v := &chart{ID: "chart-" + c.Name, Title: c.Name, PNGFile: c.Name + ".png", PNGLink: url.PathEscape(c.Name + ".png")}
	if c.Plot != nil && c.Plot.Title.Text != "" {
		v.Title = c.Plot.Title.Text
	}
	var b bytes.Buffer
	if err := c.Encode(&b, "png"); err != nil {
		return nil, err
	}
	v.png = bytes.Clone(b.Bytes())
	if usePNG {
		v.URI = htmltemplate.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(v.png))
		return v, nil
	}
	b.Reset()
	if err := c.Encode(&b, "svg"); err != nil {
		return nil, err
	}
	s, err := safeSVG(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("report: chart %s: %w", c.Name, err)
	}
	v.SVG = htmltemplate.HTML(s)
	return v, nil
}

func runOf(k int, r *results.Run, src string) *runView {
	rv := &runView{
		ID: "run-" + strconv.Itoa(k+1), Name: "run " + strconv.Itoa(k+1), Source: src,
		State: string(r.Status.State), Class: string(r.Status.State), Message: r.Status.Message,
		NoPoints: len(r.Points) == 0,
	}
	switch r.Status.State {
	case results.StateComplete, results.StateInterrupted, results.StateFailed:
	default:
		rv.State, rv.Class = "unknown state "+strconv.Quote(string(r.Status.State)), "unknown"
	}
	e := &r.Environment
	rv.Env = []kv{
		{"tool", or(r.Tool)},
		{"start", stamp(r.Start)},
		{"end", stamp(r.End)},
		{"host", or(e.Hostname)},
		{"OS / arch", or(strings.Trim(e.OS+" / "+e.Arch, " /"))},
		{"kernel", or(strings.TrimSpace(e.Kernel + " " + e.KernelVersion))},
		{"CPU", or(e.CPUModel) + " × " + strconv.Itoa(e.NumCPU)},
		{"Go", or(e.GoVersion) + ", GOMAXPROCS " + strconv.Itoa(e.GOMAXPROCS)},
		{"provider", or(e.Provider)},
		{"port", num(e.Port)},
	}
	if d := e.Device; d != nil {
		vendor := Missing
		if d.VendorID != 0 || d.VendorPartID != 0 {
			vendor = fmt.Sprintf("0x%04x:0x%04x", d.VendorID, d.VendorPartID)
		}
		rv.Device = []kv{
			{"name", or(d.Name)},
			{"provider", or(d.Provider)},
			{"node type", or(d.NodeType)},
			{"firmware", or(d.FirmwareVersion)},
			{"node GUID", or(d.NodeGUID)},
			{"vendor:part", vendor},
			{"max_inline_data", strconv.Itoa(d.MaxInlineData) + " B"},
			{"max_sge", num(d.MaxSGE)},
			{"max_qp_wr", num(d.MaxQPWR)},
			{"max_cqe", num(d.MaxCQE)},
			{"max_qp_rd_atom", num(d.MaxQPRdAtom)},
			{"max_mr_size", mrSize(d.MaxMRSize)},
			{"max_mw", num(d.MaxMW)},
		}
		rv.Ports = table{Head: []string{"port", "state", "active MTU", "link layer", "GIDs"}, Num: []bool{true, false, true, false, false}}
		for _, p := range d.Ports {
			n := strconv.Itoa(p.Num)
			cls := ""
			if p.Num == e.Port {
				n += " (used)"
				cls = "used"
			}
			var gids []string
			for _, g := range p.GIDs {
				s := strconv.Itoa(g.Index) + ": " + g.GID
				if g.Type != "" {
					s += " " + g.Type
				}
				if g.NetDev != "" {
					s += " " + g.NetDev
				}
				gids = append(gids, s)
			}
			rv.Ports.add(cls, n, or(p.State), num(p.ActiveMTU), or(p.LinkLayer), or(strings.Join(gids, "; ")))
		}
	}
	rv.Summary, rv.Incomplete = summaryTable(r)
	rv.Ops = opsTable(r)
	rv.Neg = negTable(r)
	rv.Errors = errorsTable(r)
	rv.FanIn = fanInViews(r)
	rv.Callbacks, rv.Recalls = backchannelTables(r)
	rv.Config = configText(r.Config)
	return rv
}

// summaryTable has a row per point and message class, as results.WriteText: a point whose
// RPCs all fell in one class gets one row named after it, a point with several gets a row per
// class and an "all" row carrying the throughput.
func summaryTable(r *results.Run) (table, bool) {
	open := false
	for _, p := range r.Points {
		if p.Params.RateRPS != 0 {
			open = true
		}
	}
	rounds := slices.ContainsFunc(r.Points, func(p results.Point) bool { return p.Round > 0 })
	t := table{Head: []string{"#", "proc", "call B", "reply B", "inline B", "depth", "conns"}}
	if rounds {
		t.Head = slices.Insert(t.Head, 1, "round")
	}
	if open {
		t.Head = append(t.Head, "rate RPC/s")
	}
	t.Head = append(t.Head, "class", "count", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "RPC/s", "Gb/s", "errors")
	t.Num = make([]bool, len(t.Head))
	for i, h := range t.Head {
		t.Num[i] = h != "proc" && h != "class"
	}
	cut := false
	for i, p := range r.Points {
		n := strconv.Itoa(i + 1)
		cls := ""
		if !p.Complete {
			n += "*"
			cls = "cut"
			cut = true
		}
		pre := []string{n, p.Params.Procedure, p.Params.CallLabel(), p.Params.ReplyLabel(),
			strconv.Itoa(p.Params.InlineThreshold), strconv.Itoa(p.Params.Depth), strconv.Itoa(p.Params.Connections)}
		if rounds {
			pre = slices.Insert(pre, 1, num(p.Round))
		}
		if open {
			pre = append(pre, rate(p.Params.RateRPS))
		}
		var nerr uint64
		for _, e := range p.Errors {
			nerr += e.Count
		}
		first := true
		line := func(cls, class string, s *results.Summary, tput bool) {
			lead := pre
			if !first {
				// The point's parameters once, on its first row: the rows after it are its
				// classes and its total.
				lead = make([]string, len(pre))
				lead[0] = pre[0]
			}
			first = false
			cells := append(append([]string(nil), lead...), class, strconv.FormatUint(s.Count, 10),
				micros(s.P50), micros(s.P90), micros(s.P99), micros(s.P999), micros(s.Max))
			if tput {
				cells = append(cells, strconv.FormatFloat(p.Throughput.RPCPerSec, 'f', 0, 64),
					strconv.FormatFloat(p.Throughput.PayloadGbps, 'f', 3, 64), strconv.FormatUint(nerr, 10))
			} else {
				cells = append(cells, "", "", "")
			}
			t.Rows = append(t.Rows, row{Cells: cells, Class: cls, Odd: i%2 == 1})
		}
		var used []*results.ClassStats
		for j := range p.Classes {
			if p.Classes[j].RTT.Count > 0 {
				used = append(used, &p.Classes[j])
			}
		}
		switch len(used) {
		case 0:
			line(cls, Missing, &p.RTT, true)
		case 1:
			line(cls, used[0].Class, &p.RTT, true)
		default:
			for _, c := range used {
				line(cls, c.Class, &c.RTT, false)
			}
			line(strings.TrimSpace(cls+" all"), "all", &p.RTT, true)
		}
	}
	return t, cut
}

// opsTable has, per point, a row for the side that wrote the file and one for its peer: in
// RPC-over-RDMA the responder performs the RDMA Reads and Writes of the requester's chunks,
// so one side's counts alone show a long ECHO moving no data by RDMA. A peer that was not
// counted (another process) says so rather than showing zeros.
func opsTable(r *results.Run) table {
	t := table{Head: []string{"#", "side", "Send", "Send w/ Inv", "RDMA Write", "RDMA Read", "Recv", "Local Inv", "Bind MW"}}
	t.Num = []bool{true, false, true, true, true, true, true, true, true}
	for i, p := range r.Points {
		role, peer := "this side", "peer"
		if p.Negotiated != nil && p.Negotiated.Role != "" {
			role = p.Negotiated.Role
			switch role {
			case "requester":
				peer = "responder"
			case "responder":
				peer = "requester"
			}
		}
		o := p.Ops
		t.add("", strconv.Itoa(i+1), role, opc(o.Send), opc(o.SendInv), opc(o.Write), opc(o.Read), opc(o.Recv), opc(o.LocalInv), opc(o.BindMW))
		if q := p.PeerOps; q != nil {
			if p.PeerOpsInferred {
				peer += " (inferred from the chunks it used)"
			}
			t.add("", strconv.Itoa(i+1), peer, opc(q.Send), opc(q.SendInv), opc(q.Write), opc(q.Read), opc(q.Recv), opc(q.LocalInv), opc(q.BindMW))
			continue
		}
		n := Missing
		t.add("", strconv.Itoa(i+1), peer+": not counted (another process)", n, n, n, n, n, n, n)
	}
	return t
}

func opc(c results.OpCount) string {
	if c.Count == 0 && c.Bytes == 0 {
		return "0"
	}
	return strconv.FormatUint(c.Count, 10) + " (" + bytesText(c.Bytes) + ")"
}

// negTable has a row per distinct set of negotiated parameters, naming the points that ran
// with it: a sweep usually renegotiates the same few values at every point.
func negTable(r *results.Run) table {
	t := table{
		Head: []string{"points", "role", "local private data", "peer private data", "inline send B", "inline recv B",
			"credits requested", "credits granted", "remote invalidation"},
		Num: []bool{false, false, false, false, true, true, true, true, false},
	}
	var groups []*results.Negotiated
	var members [][]int
	for i := range r.Points {
		n := r.Points[i].Negotiated
		found := false
		for g := range groups {
			if reflect.DeepEqual(groups[g], n) {
				members[g] = append(members[g], i+1)
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, n)
			members = append(members, []int{i + 1})
		}
	}
	for g, n := range groups {
		pts := ranges(members[g])
		if n == nil {
			t.add("", pts, Missing, "none: no connection", Missing, Missing, Missing, Missing, Missing, Missing)
			continue
		}
		peer := "none sent: RFC 8797 §5.2 defaults (1024 B each way)"
		if n.Peer != nil {
			peer = privData(*n.Peer)
		}
		t.add("", pts, or(n.Role), privData(n.Local), peer, strconv.Itoa(n.InlineSendBytes), strconv.Itoa(n.InlineRecvBytes),
			strconv.Itoa(n.CreditsRequested), strconv.Itoa(n.CreditsGranted), onOff(n.RemoteInvalidation))
	}
	return t
}

func privData(p results.PrivateData) string {
	s := "not RPC-over-RDMA v1"
	if p.Valid {
		s = fmt.Sprintf("v%d, send %d B, recv %d B, R=%s", p.Version, p.SendBytes, p.RecvBytes, bit(p.RemoteInvalidate))
	}
	if p.Hex != "" {
		s += " [" + p.Hex + "]"
	}
	return s
}

// fanInViews has, per fan-in point, how fair and how in step its client ranks ran and a row
// per rank (* marks a rank's point cut short).
func fanInViews(r *results.Run) []fanInView {
	var out []fanInView
	for i := range r.Points {
		p := &r.Points[i]
		f := p.FanIn
		if f == nil {
			continue
		}
		q := &p.Params
		v := fanInView{Title: fmt.Sprintf("point %d (%s %s, inline %d, depth %d × %d connections)", i+1, q.Procedure,
			q.PayloadLabel(), q.InlineThreshold, q.Depth, q.Connections)}
		spread := func(s *[2]int64) string {
			if s == nil {
				return Missing
			}
			return micros(&s[0]) + "–" + micros(&s[1]) + " µs"
		}
		failed := "none"
		if len(f.Failed) > 0 {
			var fs []string
			for _, x := range f.Failed {
				fs = append(fs, fmt.Sprintf("rank %d (host %s): %s", x.Rank, x.Host, x.Cause))
			}
			failed = strings.Join(fs, "; ")
		}
		v.Fairness = fmt.Sprintf("%d client rank(s); Jain's index %.4f, slowest rank %d (%.0f RPC/s); p50 %s, p99 %s across ranks; skew %s µs, overlap %.1f%%; failed ranks: %s",
			len(f.Ranks), f.Jain, f.SlowestRank, f.Slowest(), spread(f.P50Spread), spread(f.P99Spread), micros(&f.SkewNs), 100*f.Overlap, failed)
		v.Ranks = table{Head: []string{"rank", "host", "server", "conns", "count", "p50 µs", "p99 µs", "max µs", "RPC/s", "errors", "clock offset µs"},
			Num: []bool{true, false, false, true, true, true, true, true, true, true, true}}
		for _, rp := range f.Ranks {
			rq := &rp.Point
			var nerr uint64
			for _, e := range rq.Errors {
				nerr += e.Count
			}
			n, cls := strconv.Itoa(rp.Rank), ""
			if !rq.Complete {
				n, cls = n+"*", "cut"
			}
			v.Ranks.add(cls, n, or(rp.Host), or(rp.Server), strconv.Itoa(rq.Params.Connections), strconv.FormatUint(rq.RTT.Count, 10),
				micros(rq.RTT.P50), micros(rq.RTT.P99), micros(rq.RTT.Max), strconv.FormatFloat(rq.Throughput.RPCPerSec, 'f', 0, 64),
				strconv.FormatUint(nerr, 10), micros(&rp.ClockOffsetNs)+" ± "+micros(&rp.ClockErrorNs))
		}
		out = append(out, v)
	}
	return out
}

// backchannelTables have the points' callbacks, a row per callback procedure and class (calls: all,
// errors: those answered with a failure, untimed), and their delegation recalls, a row per
// latency with the point's not-granted and retry counts on its first; empty when no point
// has any.
func backchannelTables(r *results.Run) (cbs, recalls table) {
	cbs = table{Head: []string{"#", "proc", "class", "calls", "p50 µs", "p99 µs", "max µs", "errors"},
		Num: []bool{true, false, false, true, true, true, true, true}}
	recalls = table{Head: []string{"#", "latency", "count", "p50 µs", "p90 µs", "p99 µs", "max µs", "not granted", "retries"},
		Num: []bool{true, false, true, true, true, true, true, true, true}}
	for i := range r.Points {
		p := &r.Points[i]
		n := strconv.Itoa(i + 1)
		for j := range p.Callbacks {
			c := &p.Callbacks[j]
			cbs.Rows = append(cbs.Rows, row{Cells: []string{n, or(c.Procedure), or(c.Class), strconv.FormatUint(c.RTT.Count+c.Errors, 10),
				micros(c.RTT.P50), micros(c.RTT.P99), micros(c.RTT.Max), strconv.FormatUint(c.Errors, 10)}, Odd: i%2 == 1})
		}
		rc := p.Recalls
		if rc == nil {
			continue
		}
		for j, l := range rc.Latencies() {
			s := &l.Latency.RTT
			cells := []string{n, l.Name, strconv.FormatUint(s.Count, 10), micros(s.P50), micros(s.P90), micros(s.P99), micros(s.Max), "", ""}
			if j == 0 {
				cells[7], cells[8] = strconv.FormatUint(rc.NotGranted, 10), strconv.FormatUint(rc.Retries, 10)
			}
			recalls.Rows = append(recalls.Rows, row{Cells: cells, Odd: i%2 == 1})
		}
	}
	return cbs, recalls
}

func errorsTable(r *results.Run) table {
	t := table{Head: []string{"#", "kind", "count", "first messages"}, Num: []bool{true, false, true, false}}
	for i, p := range r.Points {
		for _, e := range p.Errors {
			t.add("", strconv.Itoa(i+1), or(e.Kind), strconv.FormatUint(e.Count, 10), or(strings.Join(e.Messages, " | ")))
		}
	}
	return t
}

// configText indents the run's configuration for reading; a config that is not valid JSON is
// shown as it is.
func configText(c json.RawMessage) string {
	if len(bytes.TrimSpace(c)) == 0 || string(bytes.TrimSpace(c)) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, c, "", "  "); err != nil {
		return string(c)
	}
	return b.String()
}

// ranges writes sorted point numbers compactly: "1–3, 5".
func ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(ns[i])+"–"+strconv.Itoa(ns[j]))
		} else {
			parts = append(parts, strconv.Itoa(ns[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func mrSize(n uint64) string {
	if n == 0 {
		return Missing
	}
	return strconv.FormatUint(n, 10) + " B (" + bytesText(n) + ")"
}

func micros(v *int64) string {
	if v == nil {
		return Missing
	}
	return strconv.FormatFloat(float64(*v)/1e3, 'f', 2, 64)
}

func bytesText(n uint64) string {
	const u = "KMGTPE"
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(u)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + u[i:i+1] + "iB"
}

func rate(r float64) string {
	if r == 0 {
		return "closed"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return Missing
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func span(a, b time.Time) string {
	if a.IsZero() || b.IsZero() {
		return Missing
	}
	return b.Sub(a).Round(time.Millisecond).String()
}

func or(s string) string {
	if s == "" {
		return Missing
	}
	return s
}

func num(n int) string {
	if n == 0 {
		return Missing
	}
	return strconv.Itoa(n)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// thresholdsTable answers the question a threshold sweep is run for — which inline threshold
// is best for each size or mix — when some point was measured at more than one threshold.
func thresholdsTable(pg *page, runs []*results.Run) {
	cs := results.BestThresholds(runs, 0)
	multi := false
	for _, c := range cs {
		multi = multi || c.Compared > 1
	}
	if !multi {
		return
	}
	pg.Thresholds = table{Head: results.ThresholdHeader, Num: []bool{false, false, true, true, true, true, true, false}}
	for i := range cs {
		pg.Thresholds.add("", cs[i].Row()...)
	}
	pg.ThresholdsNote = results.ThresholdsMethod(cs)
}

// roundsText says how many rounds each point of r has: "1", "4", or "3–5" when a repeated run
// was cut short (its points are keyed by their params, the threshold in effect included).
func roundsText(r *results.Run) string {
	n := map[string]int{}
	for _, p := range r.Points {
		n[p.Params.Key()]++
	}
	lo, hi := 0, 0
	for _, k := range n {
		if lo == 0 || k < lo {
			lo = k
		}
		hi = max(hi, k)
	}
	switch {
	case hi == 0:
		return Missing
	case lo == hi:
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + "–" + strconv.Itoa(hi)
}

// repeatNotes say which runs repeat one setup (plots.Setup), whose points the charts pool
// with the rounds.
func repeatNotes(runs []*results.Run) []string {
	var notes []string
	seen := map[string]bool{}
	for k, r := range runs {
		if len(r.Points) == 0 || seen[plots.Setup(r)] {
			continue
		}
		seen[plots.Setup(r)] = true
		in := []string{strconv.Itoa(k + 1)}
		for j := k + 1; j < len(runs); j++ {
			if len(runs[j].Points) > 0 && plots.Setup(runs[j]) == plots.Setup(r) {
				in = append(in, strconv.Itoa(j+1))
			}
		}
		if len(in) > 1 {
			notes = append(notes, "runs "+strings.Join(in, ", ")+" repeat one setup (provider, device, host, configuration): "+
				"the charts take their points as rounds of one (median, with the min-max range)")
		}
	}
	return notes
}
