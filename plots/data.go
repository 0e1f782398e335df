package plots

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// ErrNoData is wrapped by the error of a chart that has nothing to draw: no point carries the
// figure it plots (for example no point has enough samples for the percentile asked for).
var ErrNoData = errors.New("nothing to plot")

// ref is one point of one run: what every chart draws from.
type ref struct {
	run   int // index into the runs given
	group int // the first run of the same setup (Setup): repeats of one measurement share lines
	r     *results.Run
	i     int // index into r.Points
	p     *results.Point
	all   []*results.Run // the runs given, which names runs (runName)
}

// name identifies the point in an error message: "run 2 point 5 (ECHO 4096/4096 B inline 4096)".
func (f ref) name() string {
	p := f.p.Params
	return fmt.Sprintf("run %d point %d (%s %s inline %d)", f.run+1, f.i+1,
		p.Procedure, p.PayloadLabel(), p.InlineThreshold)
}

// collect lists the points of runs in order. Every run must exist and hold a point: a run
// without points is almost always the wrong file (a failed run that measured nothing), and a
// chart silently missing it would mislead.
func collect(runs []*results.Run) ([]ref, error) {
	if len(runs) == 0 {
		return nil, errors.New("plots: no runs given")
	}
	var refs []ref
	for k, r := range runs {
		if r == nil {
			return nil, fmt.Errorf("plots: run %d is nil", k+1)
		}
	}
	for k, r := range runs {
		g := firstOfSetup(k, runs)
		if len(r.Points) == 0 {
			msg := ""
			if r.Status.Message != "" {
				msg = " (" + string(r.Status.State) + ": " + r.Status.Message + ")"
			}
			return nil, fmt.Errorf("plots: run %d (%s, started %s) has no points%s",
				k+1, orDash(r.Environment.Provider), r.Start.UTC().Format("2006-01-02 15:04:05Z"), msg)
		}
		for i := range r.Points {
			refs = append(refs, ref{run: k, group: g, r: r, i: i, p: &r.Points[i], all: runs})
		}
	}
	return refs, nil
}

// Setup is what must be equal for two runs to be repeats of one measurement, whose points
// the charts pool like the rounds of one run: provider, device, host and the whole
// configuration (workload, transport, seed).
func Setup(r *results.Run) string {
	dev := ""
	if r.Environment.Device != nil {
		dev = r.Environment.Device.Name
	}
	return r.Environment.Provider + "\x00" + dev + "\x00" + r.Environment.Hostname + "\x00" + string(r.Config)
}

// firstOfSetup is the index of the first of runs with the setup of runs[k].
func firstOfSetup(k int, runs []*results.Run) int {
	s := Setup(runs[k])
	for j := range k {
		if Setup(runs[j]) == s {
			return j
		}
	}
	return k
}

// Shape of a point's sizes: which payload is swept. The x axis of the size charts is the larger
// payload; the shape and the smaller size go into the series, so that an ECHO sweep and a SOURCE
// sweep never join into one line.
const (
	shapeEqual = iota // call and reply payloads equal (ECHO)
	shapeReply        // the reply is the larger (SOURCE)
	shapeCall         // the call is the larger (SINK)
)

// size is the point's x on the size charts.
func size(p results.Params) int { return max(p.CallBytes, p.ReplyBytes) }

// noSize reports whether p's payload has no single size: a mix of several entries, or one
// procedure whose size varied per RPC.
func noSize(p results.Params) bool {
	return size(p) == 0 && (p.IsMix() || p.CallSizes != "" || p.ReplySizes != "")
}

// sizeName names what a point without a single size measured: the mix's name, or its
// procedure and the sizes drawn ("ECHO 64,4k").
func sizeName(p results.Params) string {
	if p.IsMix() {
		return strings.TrimPrefix(p.Procedure, "MIX:")
	}
	return p.Procedure + " " + cmp.Or(p.ReplySizes, p.CallSizes)
}

func shape(p results.Params) (kind, other int) {
	switch {
	case p.CallBytes == p.ReplyBytes:
		return shapeEqual, 0
	case p.ReplyBytes > p.CallBytes:
		return shapeReply, p.CallBytes
	default:
		return shapeCall, p.ReplyBytes
	}
}

// seriesKey is everything that identifies a point except its size: the points of one line on
// the size charts.
type seriesKey struct {
	run       int // the run's group (ref.group); -1 when all runs share the lines
	procedure string
	sizes     string // the sizes drawn per RPC (results.Params.CallSizes, ReplySizes), if any
	class     string
	shape     int
	other     int
	threshold int
	depth     int
	conns     int
	rate      float64
}

func keyOf(f ref, multiRun bool) seriesKey {
	p := f.p.Params
	kind, other := shape(p)
	k := seriesKey{run: -1, procedure: p.Procedure, sizes: cmp.Or(p.ReplySizes, p.CallSizes), class: p.Class, shape: kind, other: other,
		threshold: p.InlineThreshold, depth: p.Depth, conns: p.Connections, rate: p.RateRPS}
	if multiRun {
		k.run = f.group
	}
	return k
}

func compareKeys(a, b seriesKey) int {
	return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.procedure, b.procedure), cmp.Compare(a.sizes, b.sizes),
		cmp.Compare(a.class, b.class), cmp.Compare(a.shape, b.shape), cmp.Compare(a.other, b.other),
		cmp.Compare(a.depth, b.depth), cmp.Compare(a.conns, b.conns), cmp.Compare(a.rate, b.rate),
		cmp.Compare(a.threshold, b.threshold))
}

// series is one line of a size chart.
type series struct {
	key   seriesKey
	label string
	refs  []ref // sorted by size
}

// group splits refs into series, sorted and labelled so that each label names only what
// differs between the series (the inline threshold always).
func group(refs []ref, runs []*results.Run) []series {
	ss, v := split(refs, false, func(f ref) int { return size(f.p.Params) })
	for i := range ss {
		ss[i].label = v.label(ss[i].key, runs, ss[i].refs)
	}
	return ss
}

// split groups refs by their series key (without the threshold when noThreshold), sorts the
// series and, in each, the refs by x; it returns what varies between the series' keys.
func split(refs []ref, noThreshold bool, x func(ref) int) ([]series, vary) {
	multi := distinctRuns(refs) > 1
	idx := map[seriesKey]int{}
	var ss []series
	for _, f := range refs {
		k := keyOf(f, multi)
		if noThreshold {
			k.threshold = 0
		}
		i, ok := idx[k]
		if !ok {
			i = len(ss)
			idx[k] = i
			ss = append(ss, series{key: k})
		}
		ss[i].refs = append(ss[i].refs, f)
	}
	slices.SortFunc(ss, func(a, b series) int { return compareKeys(a.key, b.key) })
	keys := make([]seriesKey, len(ss))
	for i := range ss {
		keys[i] = ss[i].key
		slices.SortStableFunc(ss[i].refs, func(a, b ref) int { return cmp.Compare(x(a), x(b)) })
	}
	return ss, varying(keys)
}

// distinctRuns counts the groups of runs among refs: repeats of one setup count once.
func distinctRuns(refs []ref) int {
	seen := map[int]bool{}
	for _, f := range refs {
		seen[f.group] = true
	}
	return len(seen)
}

// vary says which key fields differ across a set of series.
type vary struct{ run, procedure, sizes, class, shape, depth, conns, rate, threshold bool }

func varying(keys []seriesKey) vary {
	var v vary
	for _, k := range keys[min(1, len(keys)):] {
		k0 := keys[0]
		v.run = v.run || k.run != k0.run
		v.procedure = v.procedure || k.procedure != k0.procedure
		v.sizes = v.sizes || k.sizes != k0.sizes
		v.class = v.class || k.class != k0.class
		v.shape = v.shape || k.shape != k0.shape || k.other != k0.other
		v.depth = v.depth || k.depth != k0.depth
		v.conns = v.conns || k.conns != k0.conns
		v.rate = v.rate || k.rate != k0.rate
		v.threshold = v.threshold || k.threshold != k0.threshold
	}
	return v
}

// parts names what differs, the run first and the threshold not at all.
func (v vary) parts(k seriesKey, runs []*results.Run) []string {
	var parts []string
	if v.run && k.run >= 0 {
		parts = append(parts, groupLabel(k.run, runs))
	}
	if v.procedure {
		parts = append(parts, k.procedure)
	}
	if v.sizes && k.sizes != "" {
		parts = append(parts, "sizes "+k.sizes)
	}
	if v.class {
		parts = append(parts, k.class)
	}
	if v.shape {
		switch k.shape {
		case shapeEqual:
			parts = append(parts, "call=reply")
		case shapeReply:
			parts = append(parts, "call "+bytesLabel(k.other))
		default:
			parts = append(parts, "reply "+bytesLabel(k.other))
		}
	}
	if v.depth {
		parts = append(parts, "depth "+strconv.Itoa(k.depth))
	}
	if v.conns {
		parts = append(parts, strconv.Itoa(k.conns)+" conn")
	}
	if v.rate {
		parts = append(parts, rateLabel(k.rate))
	}
	return parts
}

// label names a line of a size chart: what differs, then always the inline threshold.
func (v vary) label(k seriesKey, runs []*results.Run, refs []ref) string {
	parts := v.parts(k, runs)
	parts = append(parts, "inline "+bytesLabel(k.threshold)+effective(k.threshold, refs)+offered(refs))
	return strings.Join(parts, " · ")
}

// effective notes the negotiated send threshold when it is not the one offered (the peer
// offered less) and the same for every point of the series.
func effective(offered int, refs []ref) string {
	eff := -1
	for _, f := range refs {
		n := f.p.Negotiated
		if n == nil {
			continue
		}
		if eff >= 0 && n.InlineSendBytes != eff {
			return ""
		}
		eff = n.InlineSendBytes
	}
	if eff < 0 || eff == offered {
		return ""
	}
	return " (eff. " + bytesLabel(eff) + ")"
}

// offered notes the threshold offered when a peer capped it to the series' (the same offer
// for every point of the series).
func offered(refs []ref) string {
	o := 0
	for i, f := range refs {
		if i > 0 && f.p.Params.OfferedInlineThreshold != o {
			return ""
		}
		o = f.p.Params.OfferedInlineThreshold
	}
	if o == 0 {
		return ""
	}
	return " (offered " + bytesLabel(o) + ")"
}

// runName names run k among runs: its file's name without the directory and ".json" when
// the runs were read from files with distinct names, else "run K".
func runName(k int, runs []*results.Run) string {
	name := func(r *results.Run) string {
		if r == nil || r.Source == "" {
			return ""
		}
		return strings.TrimSuffix(filepath.Base(r.Source), ".json")
	}
	n := name(runs[k])
	for j, r := range runs {
		if n == "" || (j != k && name(r) == n) {
			return "run " + strconv.Itoa(k+1)
		}
	}
	return n
}

// fileName is s made safe and short for a chart's file name: letters, digits, '.', '_' and
// '-' kept, anything else a '-'.
func fileName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(strings.Join(strings.FieldsFunc(string(b), func(r rune) bool { return r == '-' }), "-"), "-")
}

// runLabel names run k among several: its name (runName), provider and device.
func runLabel(k int, runs []*results.Run) string {
	s := runName(k, runs)
	if k < len(runs) && runs[k] != nil {
		e := runs[k].Environment
		if e.Provider != "" {
			s += " " + e.Provider
		}
		if e.Device != nil && e.Device.Name != "" {
			s += "/" + e.Device.Name
		}
	}
	return s
}

// groupLabel names the runs of the setup of run k among several: "runs 1, 3 soft/soft0" when
// they repeat one measurement, else as runLabel.
func groupLabel(k int, runs []*results.Run) string {
	var in []string
	for j := range runs {
		if runs[j] != nil && firstOfSetup(j, runs) == k {
			in = append(in, strconv.Itoa(j+1))
		}
	}
	s := runLabel(k, runs)
	if len(in) > 1 {
		s = "runs " + strings.Join(in, ", ") + strings.TrimPrefix(s, runName(k, runs))
	}
	return s
}

// pointLabel names one point among all: its size, then what else differs between them.
func pointLabel(f ref, all []ref, runs []*results.Run) string {
	multi := distinctRuns(all) > 1
	keys := make([]seriesKey, len(all))
	for i, g := range all {
		keys[i] = keyOf(g, multi)
	}
	v := varying(keys)
	k := keyOf(f, multi)
	parts := v.parts(k, runs)
	at := 0
	if v.run {
		at = 1
	}
	switch {
	case !noSize(f.p.Params):
		parts = slices.Insert(parts, at, bytesLabel(size(f.p.Params))+" B")
	case !f.p.Params.IsMix():
		parts = slices.Insert(parts, at, cmp.Or(f.p.Params.ReplySizes, f.p.Params.CallSizes)+" B")
	case !v.procedure:
		// A mix has no one size: its name says what it is (unless the parts name it).
		parts = slices.Insert(parts, at, f.p.Params.Procedure)
	}
	if v.threshold {
		parts = append(parts, "inline "+bytesLabel(k.threshold))
	}
	return strings.Join(parts, " · ")
}

// bytesLabel writes a byte count the way sweeps are written: 64, 1K, 4K, 64K, 1M (binary
// multiples), or the plain number when it is not a whole multiple.
func bytesLabel(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "G"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "M"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "K"
	}
	return strconv.Itoa(n)
}

func rateLabel(r float64) string {
	if r == 0 {
		return "closed loop"
	}
	return siLabel(r) + " RPC/s"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// siLabel formats v with an SI prefix and up to 3 significant digits: 950, 1.5k, 2M.
func siLabel(v float64) string {
	av := math.Abs(v)
	switch {
	case av >= 999.5e6:
		return trimFloat(v/1e9) + "G"
	case av >= 999.5e3:
		return trimFloat(v/1e6) + "M"
	case av >= 999.5:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

// trimFloat writes v rounded to 3 significant digits, in plain notation without trailing
// zeros: 12.3, 0.05, 1500.
func trimFloat(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	e := int(math.Floor(math.Log10(math.Abs(v))))
	s := strconv.FormatFloat(v, 'f', max(0, 2-e), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
