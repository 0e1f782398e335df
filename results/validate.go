package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/rpcproto"
)

// FieldError is a value that breaks the schema: Field is its path ("points[2].rtt.p999_ns").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks the values of r against the schema: known status and class names, the
// percentile rule (a percentile is present exactly when its sample count supports it), a
// monotone percentile spectrum within min..max, decodable histograms whose counts match, and
// non-negative durations and rates. The first problem found is returned as a *FieldError.
func (r *Run) Validate() error {
	if r.SchemaVersion < 1 || r.SchemaVersion > SchemaVersion {
		return fieldErr("schema_version", "%d, want 1 to %d", r.SchemaVersion, SchemaVersion)
	}
	if c := bytes.TrimSpace(r.Config); len(c) > 0 && c[0] != '{' && !bytes.Equal(c, []byte("null")) {
		return fieldErr("config", "must be a JSON object or null")
	}
	if err := checkSpan("", r.Start, r.End); err != nil {
		return err
	}
	switch r.Status.State {
	case StateComplete, StateInterrupted:
	case StateFailed:
		if r.Status.Message == "" {
			return fieldErr("status.message", "a failed run must say why")
		}
	default:
		return fieldErr("status.state", "%q is not complete, interrupted or failed", r.Status.State)
	}
	for i := range r.Points {
		if r.SchemaVersion < 2 {
			pt := &r.Points[i]
			for _, f := range []struct {
				name string
				set  bool
			}{
				{"peer_ops", pt.PeerOps != nil}, {"peer_ops_inferred", pt.PeerOpsInferred}, {"pollers", pt.Pollers != nil}, {"host_cpu_pressure", pt.HostCPUPressure != nil},
				{"disturbed", pt.Disturbed != nil}, {"negotiated.registered_bytes_per_connection", pt.Negotiated != nil && pt.Negotiated.RegisteredBytesPerConnection != 0},
			} {
				if f.set {
					return fieldErr(fmt.Sprintf("points[%d].%s", i, f.name), "not in schema_version %d (added in 2)", r.SchemaVersion)
				}
			}
		}
		if r.SchemaVersion < 3 && r.Points[i].GC != nil {
			return fieldErr(fmt.Sprintf("points[%d].gc", i), "not in schema_version %d (added in 3)", r.SchemaVersion)
		}
		if pt := &r.Points[i]; r.SchemaVersion < 5 {
			for _, f := range []struct {
				name string
				set  bool
			}{{"round", pt.Round != 0}, {"params.offered_inline_threshold_bytes", pt.Params.OfferedInlineThreshold != 0}, {"host_other_cpu", pt.HostOtherCPU != nil}} {
				if f.set {
					return fieldErr(fmt.Sprintf("points[%d].%s", i, f.name), "not in schema_version %d (added in 5)", r.SchemaVersion)
				}
			}
		}
		if r.SchemaVersion < 9 && r.Points[i].Host != nil {
			return fieldErr(fmt.Sprintf("points[%d].host", i), "not in schema_version %d (added in 9)", r.SchemaVersion)
		}
		if r.SchemaVersion < 6 && r.Points[i].FanIn != nil {
			return fieldErr(fmt.Sprintf("points[%d].fanin", i), "not in schema_version %d (added in 6)", r.SchemaVersion)
		}
		if fi := r.Points[i].FanIn; r.SchemaVersion < 8 && fi != nil && (fi.SkewErrorNs != 0 || fi.Refused != nil || fi.RefusedCount != 0) {
			return fieldErr(fmt.Sprintf("points[%d].fanin", i), "skew_error_ns, refused or refused_count: not in schema_version %d (added in 8)", r.SchemaVersion)
		}
		if pt := &r.Points[i]; r.SchemaVersion < 7 {
			set := pt.Callbacks != nil || pt.Recalls != nil
			name := "callbacks"
			if pt.Callbacks == nil {
				name = "recalls"
			}
			for j := range pt.Procedures {
				if !set && pt.Procedures[j].Histogram != "" {
					set, name = true, fmt.Sprintf("procedures[%d].rtt_histogram", j)
				}
			}
			if set {
				return fieldErr(fmt.Sprintf("points[%d].%s", i, name), "not in schema_version %d (added in 7)", r.SchemaVersion)
			}
		}
		if pt := &r.Points[i]; r.SchemaVersion < 8 {
			name := ""
			switch {
			case pt.Recoveries != nil:
				name = "recoveries"
			case pt.Process != 0:
				name = "process"
			case pt.Params.CallSizes != "":
				name = "params.call_sizes"
			case pt.Params.ReplySizes != "":
				name = "params.reply_sizes"
			case pt.FanIn != nil && slices.ContainsFunc(pt.FanIn.ServerRanks, func(s ServerRank) bool { return s.Addr != "" }):
				name = "fanin.server_ranks[].addr"
			}
			if name != "" {
				return fieldErr(fmt.Sprintf("points[%d].%s", i, name), "not in schema_version %d (added in 8)", r.SchemaVersion)
			}
		}
		for j, u := range r.Points[i].Pollers {
			if r.SchemaVersion < 4 && u.Turnaround != nil {
				return fieldErr(fmt.Sprintf("points[%d].pollers[%d].turnaround", i, j), "not in schema_version %d (added in 4)", r.SchemaVersion)
			}
		}
		if err := r.Points[i].validate(fmt.Sprintf("points[%d].", i)); err != nil {
			return err
		}
	}
	return nil
}

func checkSpan(prefix string, start, end time.Time) error {
	if end.Before(start) {
		return fieldErr(prefix+"end", "%s is before start %s", end.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
	}
	return nil
}

func (p *Point) validate(f string) error {
	if err := p.Params.validate(f + "params."); err != nil {
		return err
	}
	if p.Round < 0 {
		return fieldErr(f+"round", "negative (%d)", p.Round)
	}
	if p.Process < 0 {
		return fieldErr(f+"process", "negative (%d)", p.Process)
	}
	for i, u := range p.Pollers {
		if u.WallNs < 0 || u.CPUNs < 0 || u.CPU < -1 || u.Poll == "" {
			return fieldErr(fmt.Sprintf("%spollers[%d]", f, i), "negative time, CPU below -1 or no poll mode: %+v", u)
		}
		if t := u.Turnaround; t != nil && (t.MeanNs < 0 || t.PostMeanNs < 0 || t.P50Ns < 0 || t.P50Ns > t.P90Ns || t.P90Ns > t.P99Ns) {
			return fieldErr(fmt.Sprintf("%spollers[%d].turnaround", f, i), "negative or out-of-order times: %+v", *t)
		}
	}
	if p.FanIn != nil {
		if err := p.FanIn.validate(f + "fanin."); err != nil {
			return err
		}
	}
	if p.GC != nil && p.GC.LimitBytes < 0 {
		return fieldErr(f+"gc.limit_bytes", "%d is negative", p.GC.LimitBytes)
	}
	if v := p.HostCPUPressure; v != nil && (*v < 0 || *v > 100) {
		return fieldErr(f+"host_cpu_pressure", "%v is not a percentage", *v)
	}
	if h := p.Host; h != nil && !(h.ComputeNs > 0 && h.CopyNsPerKiB > 0 && h.PingPongNs >= 0 && h.CPUs > 0) {
		return fieldErr(f+"host", "want positive times and CPUs: %+v", *h)
	}
	if v := p.HostOtherCPU; v != nil && (*v < 0 || *v > 100) {
		return fieldErr(f+"host_other_cpu", "%v is not a percentage", *v)
	}
	if p.Negotiated != nil && p.Negotiated.RegisteredBytesPerConnection < 0 {
		return fieldErr(f+"negotiated.registered_bytes_per_connection", "negative")
	}
	if err := checkSpan(f, p.Start, p.End); err != nil {
		return err
	}
	if p.DurationNs < 0 {
		return fieldErr(f+"duration_ns", "negative (%d)", p.DurationNs)
	}
	if p.Negotiated != nil {
		if r := p.Negotiated.Role; r != "requester" && r != "responder" {
			return fieldErr(f+"negotiated.role", "%q is not requester or responder", r)
		}
	}
	if err := checkSummary(f+"rtt.", &p.RTT, f+"rtt_histogram", p.Histogram); err != nil {
		return err
	}
	seen := map[string]bool{}
	var sum uint64
	for i := range p.Classes {
		c := &p.Classes[i]
		cf := fmt.Sprintf("%sclasses[%d].", f, i)
		if k, err := rpcproto.ParseKind(c.Class); err != nil || k == rpcproto.Auto {
			return fieldErr(cf+"class", "%q is not short, chunked or long", c.Class)
		}
		if seen[c.Class] {
			return fieldErr(cf+"class", "%q listed twice", c.Class)
		}
		seen[c.Class] = true
		if err := checkSummary(cf+"rtt.", &c.RTT, cf+"rtt_histogram", c.Histogram); err != nil {
			return err
		}
		sum += c.RTT.Count
	}
	if len(p.Classes) > 0 && sum != p.RTT.Count {
		return fieldErr(f+"classes", "RTT counts add up to %d, rtt.count is %d", sum, p.RTT.Count)
	}
	procs := map[string]bool{}
	sum = 0
	for i := range p.Procedures {
		ps := &p.Procedures[i]
		pf := fmt.Sprintf("%sprocedures[%d].", f, i)
		if ps.Procedure == "" || procs[ps.Procedure] {
			return fieldErr(pf+"procedure", "%q empty or listed twice", ps.Procedure)
		}
		procs[ps.Procedure] = true
		if ps.Class != "" {
			return fieldErr(pf+"class", "%q: a procedure's row spans its classes (only callbacks rows have one)", ps.Class)
		}
		hf := pf + "rtt_histogram"
		if ps.Histogram == "" {
			hf = ""
		}
		if err := checkSummary(pf+"rtt.", &ps.RTT, hf, ps.Histogram); err != nil {
			return err
		}
		sum += ps.RTT.Count
	}
	if len(p.Procedures) > 0 && sum != p.RTT.Count {
		return fieldErr(f+"procedures", "RTT counts add up to %d, rtt.count is %d", sum, p.RTT.Count)
	}
	if err := validateCallbacks(f, p.Callbacks); err != nil {
		return err
	}
	if p.Recalls != nil {
		if err := p.Recalls.validate(f + "recalls."); err != nil {
			return err
		}
	}
	for i, e := range p.Errors {
		if e.Kind == "" {
			return fieldErr(fmt.Sprintf("%serrors[%d].kind", f, i), "empty")
		}
		if len(e.Messages) > MaxErrorMessages {
			return fieldErr(fmt.Sprintf("%serrors[%d].first_messages", f, i), "%d messages, at most %d", len(e.Messages), MaxErrorMessages)
		}
	}
	t := &p.Throughput
	for _, x := range []struct {
		name string
		v    float64
	}{{"rpc_per_s", t.RPCPerSec}, {"payload_gbps", t.PayloadGbps}} {
		if x.v < 0 || math.IsNaN(x.v) || math.IsInf(x.v, 0) {
			return fieldErr(f+"throughput."+x.name, "%v is not a rate", x.v)
		}
	}
	if p.CPU.UserNs < 0 || p.CPU.SysNs < 0 {
		return fieldErr(f+"cpu", "negative CPU time")
	}
	for i, iv := range p.Intervals {
		fi := fmt.Sprintf("%sintervals[%d].", f, i)
		if iv.OffsetNs < 0 || iv.DurationNs < 0 {
			return fieldErr(fi+"offset_ns", "negative offset or duration")
		}
		if i > 0 && iv.OffsetNs < p.Intervals[i-1].OffsetNs {
			return fieldErr(fi+"offset_ns", "intervals out of time order")
		}
		if iv.Histogram != "" {
			if _, err := DecodeHistogram(iv.Histogram); err != nil {
				return fieldErr(fi+"rtt_histogram", "%v", err)
			}
		}
	}
	return nil
}

// validateCallbacks checks a point's callbacks rows: named once each, holding a call, their
// summaries consistent with their histograms.
func validateCallbacks(f string, cbs []ProcStats) error {
	seen := map[[2]string]bool{}
	for i := range cbs {
		c := &cbs[i]
		cf := fmt.Sprintf("%scallbacks[%d].", f, i)
		switch c.Class {
		case "", "short", "chunked", "long":
		default:
			return fieldErr(cf+"class", "%q: want short, chunked or long", c.Class)
		}
		if k := [2]string{c.Procedure, c.Class}; c.Procedure == "" || seen[k] {
			return fieldErr(cf+"procedure", "%q empty or listed twice in class %q", c.Procedure, c.Class)
		}
		seen[[2]string{c.Procedure, c.Class}] = true
		if c.RTT.Count == 0 && c.Errors == 0 {
			return fieldErr(cf+"rtt.count", "0 and no errors: a row is only for a procedure the peer called")
		}
		hf := cf + "rtt_histogram"
		if c.Histogram == "" {
			hf = ""
		}
		if err := checkSummary(cf+"rtt.", &c.RTT, hf, c.Histogram); err != nil {
			return err
		}
	}
	return nil
}

// validate checks a recall measurement: something measured, each latency one sample per
// recall, summaries consistent with their histograms.
func (rc *Recalls) validate(f string) error {
	if rc.Count == 0 && rc.NotGranted == 0 {
		return fieldErr(f+"count", "0 with not_granted 0: present only when a recall was measured or a delegation refused")
	}
	if rc.Count == 0 && rc.Retries > 0 {
		return fieldErr(f+"retries", "%d with count 0: retries are counted by the recalls they delayed", rc.Retries)
	}
	for _, l := range rc.Latencies() {
		lf := f + l.Name + "."
		if l.Latency.RTT.Count != rc.Count {
			return fieldErr(lf+"rtt.count", "%d, count is %d: one sample per recall", l.Latency.RTT.Count, rc.Count)
		}
		if err := checkSummary(lf+"rtt.", &l.Latency.RTT, lf+"rtt_histogram", l.Latency.Histogram); err != nil {
			return err
		}
	}
	return nil
}

func (p *Params) validate(f string) error {
	if p.Class != "auto" {
		if _, err := rpcproto.ParseKind(p.Class); err != nil {
			return fieldErr(f+"class", "%q is not auto, short, chunked or long", p.Class)
		}
	}
	for _, x := range []struct {
		name string
		v    int
	}{{"call_bytes", p.CallBytes}, {"reply_bytes", p.ReplyBytes}, {"inline_threshold_bytes", p.InlineThreshold}, {"depth", p.Depth}, {"connections", p.Connections}} {
		if x.v < 0 {
			return fieldErr(f+x.name, "negative (%d)", x.v)
		}
	}
	if p.OfferedInlineThreshold != 0 && p.OfferedInlineThreshold <= p.InlineThreshold {
		return fieldErr(f+"offered_inline_threshold_bytes", "%d is not above inline_threshold_bytes %d (present only when the peer capped the offer)", p.OfferedInlineThreshold, p.InlineThreshold)
	}
	if p.RateRPS < 0 || math.IsNaN(p.RateRPS) || math.IsInf(p.RateRPS, 0) {
		return fieldErr(f+"rate_rps", "%v is not a rate", p.RateRPS)
	}
	if strings.ContainsAny(p.Procedure, " \t\n/,=") {
		return fieldErr(f+"procedure", "%q contains a space, '/', ',' or '='", p.Procedure)
	}
	return nil
}

// checkSummary checks s against itself, the percentile rule and its histogram.
func checkSummary(f string, s *Summary, hf, hist string) error {
	if s.Count == 0 {
		for name, v := range map[string]*int64{"min_ns": s.Min, "max_ns": s.Max, "mean_ns": s.Mean, "stdev_ns": s.Stdev} {
			if v != nil {
				return fieldErr(f+name, "present with count 0")
			}
		}
	} else {
		for name, v := range map[string]*int64{"min_ns": s.Min, "max_ns": s.Max, "mean_ns": s.Mean} {
			if v == nil {
				return fieldErr(f+name, "null with count %d", s.Count)
			}
		}
		if (s.Stdev == nil) != (s.Count < 2) {
			return fieldErr(f+"stdev_ns", "must be present exactly when count >= 2")
		}
		if *s.Min < 0 || *s.Min > *s.Max {
			return fieldErr(f+"min_ns", "%d is not within 0..max_ns (%d)", *s.Min, *s.Max)
		}
		if *s.Mean < *s.Min || *s.Mean > *s.Max {
			return fieldErr(f+"mean_ns", "%d is not within min_ns..max_ns", *s.Mean)
		}
		if s.Stdev != nil && *s.Stdev < 0 {
			return fieldErr(f+"stdev_ns", "negative")
		}
	}
	var prev int64
	for i, p := range percentiles {
		v := *s.percentile(i)
		name := f + percentileField(p)
		if Supports(s.Count, p) != (v != nil) {
			if v != nil {
				return fieldErr(name, "present but count %d cannot support it (needs %d samples beyond it)", s.Count, MinTailSamples)
			}
			return fieldErr(name, "null but count %d supports it", s.Count)
		}
		if v == nil {
			continue
		}
		// Percentiles are bucket values (up to 0.1% above the true sample), so they may exceed
		// the exact max slightly but never the max's bucket.
		if *v < prev || *v < *s.Min || float64(*v) > float64(*s.Max)*1.001+1 {
			return fieldErr(name, "%d breaks min_ns <= p50 <= ... <= p99.99 <= max_ns", *v)
		}
		prev = *v
	}
	if hf == "" {
		return nil // a summary without a histogram of its own (procedures[])
	}
	h, err := DecodeHistogram(hist)
	if err != nil {
		return fieldErr(hf, "%v", err)
	}
	if uint64(h.TotalCount()) != s.Count {
		return fieldErr(hf, "holds %d samples, count is %d", h.TotalCount(), s.Count)
	}
	return nil
}

func percentileField(p float64) string {
	return "p" + strings.ReplaceAll(fmt.Sprint(p), ".", "") + "_ns"
}

// unknownField finds the path of the first object key in b that typ has no field for, to
// name it in the error that json.Decoder.DisallowUnknownFields gives without a path.
func unknownField(b []byte, typ reflect.Type) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return findUnknown(v, typ, "")
}

var (
	rawType  = reflect.TypeFor[json.RawMessage]()
	timeType = reflect.TypeFor[time.Time]()
)

func findUnknown(v any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawType || t == timeType {
		return ""
	}
	switch x := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return ""
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" {
				name = sf.Name
			}
			if name != "-" {
				fields[name] = sf.Type
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				// encoding/json matches keys case-insensitively too.
				for n, t2 := range fields {
					if strings.EqualFold(n, k) {
						ft, ok = t2, true
					}
				}
			}
			if !ok {
				return path + k
			}
			if u := findUnknown(x[k], ft, path+k+"."); u != "" {
				return u
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return ""
		}
		p := strings.TrimSuffix(path, ".")
		for i, e := range x {
			if u := findUnknown(e, t.Elem(), fmt.Sprintf("%s[%d].", p, i)); u != "" {
				return u
			}
		}
	}
	return ""
}
