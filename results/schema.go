package results

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// SchemaVersion is the version of the results file format this package writes and the newest
// it reads. It changes whenever a field changes meaning, is removed, or a new field is added
// (the reader rejects unknown fields, so an older reader must refuse a newer file clearly
// rather than drop what it does not know).
//
// Version 2 added Point.PeerOps, Point.Pollers, Point.HostCPUPressure, Point.Disturbed,
// Negotiated.RegisteredBytesPerConnection, Interval.Classes and
// Point.PeerOpsInferred; version 3 added Point.GC; version 4 Pollers[].Turnaround; version 5
// added Point.Round, Params.OfferedInlineThreshold and Point.HostOtherCPU, and measures
// Point.HostCPUPressure over the point instead of the 10 s before its end; version 6 added
// Point.FanIn; version 7 added Point.Callbacks (with ProcStats.Histogram) and Point.Recalls;
// version 8 added FanIn.SkewErrorNs, FanIn.Refused, FanIn.RefusedCount, FanIn.ServerRanks[].Addr,
// Point.Recoveries, Point.Process, Params.CallSizes and Params.ReplySizes, and takes FanIn.Overlap with the
// clocks' error bounds; version 9 added Point.Host.
const SchemaVersion = 9

// Run is one results file: everything one invocation of the benchmark measured. A sweep is one
// Run with many Points. See SCHEMA.md for every field's meaning and unit.
type Run struct {
	// SchemaVersion is always SchemaVersion when written by this package.
	SchemaVersion int `json:"schema_version"`
	// Tool names the program and version that wrote the file ("rpcrdma-bench v0.1.0 (abc123)").
	Tool string `json:"tool"`
	// Start and End bound the whole run (UTC, RFC 3339 with nanoseconds).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Config is the runner's full configuration as JSON, opaque to this package: enough to
	// repeat the run. It must be a JSON object or null.
	Config json.RawMessage `json:"config"`
	// Environment describes where the run happened.
	Environment Environment `json:"environment"`
	// Points are the measured points in the order they ran. An interrupted or failed run holds
	// the points it finished and, marked incomplete, the one it was in.
	Points []Point `json:"points"`
	// Status says whether the run finished.
	Status Status `json:"status"`
	// Source is the file the run was read from (ReadFile), so that charts and reports can
	// name it; not part of the file.
	Source string `json:"-"`
}

// Environment describes the machine, software and RDMA device of a run.
type Environment struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`   // runtime.GOOS
	Arch     string `json:"arch"` // runtime.GOARCH
	// Kernel is the kernel release and KernelVersion its build string (uname -r, uname -v);
	// empty where the OS has no uname.
	Kernel        string `json:"kernel"`
	KernelVersion string `json:"kernel_version"`
	CPUModel      string `json:"cpu_model"`
	NumCPU        int    `json:"num_cpu"`
	GoVersion     string `json:"go_version"`
	GOMAXPROCS    int    `json:"gomaxprocs"`
	// Provider is the datapath provider ("soft", "verbs").
	Provider string `json:"provider"`
	// Device is the opened device's attributes, firmware included; null if none was opened.
	Device *datapath.DeviceInfo `json:"device"`
	// Port is the device port used (1-based; 0 if not applicable).
	Port int `json:"port"`
}

// State is how a run or a point ended.
type State string

const (
	// StateComplete: everything asked for was measured.
	StateComplete State = "complete"
	// StateInterrupted: stopped early on request (signal, deadline); what was measured is kept.
	StateInterrupted State = "interrupted"
	// StateFailed: stopped by an error; Status.Message says which.
	StateFailed State = "failed"
)

// Status is how a run ended.
type Status struct {
	State State `json:"state"`
	// Message is the error or the reason for an interruption; empty when complete.
	Message string `json:"message,omitempty"`
}

// Point is one measured point of a run: one combination of workload parameters.
type Point struct {
	// Params identify the point; Compare matches points across runs by them.
	Params Params `json:"params"`
	// Complete is false for a point cut short by an interruption or failure: its numbers
	// cover only the time it ran.
	Complete bool `json:"complete"`
	// Negotiated are the connection parameters the point ran with; null if no connection
	// was established.
	Negotiated *Negotiated `json:"negotiated"`
	// Start and End bound the measurement; DurationNs is the time between them as measured
	// by the monotonic clock, the divisor of every rate.
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	DurationNs int64     `json:"duration_ns"`
	// RTT summarises the round-trip times of all RPCs of the point (the full round trip,
	// call sent to reply received, never half of it).
	RTT Summary `json:"rtt"`
	// Histogram is RTT's HDR histogram: see EncodeHistogram for the format.
	Histogram string `json:"rtt_histogram"`
	// Classes break the RPCs down by message class; a class never used is omitted.
	Classes []ClassStats `json:"classes"`
	// Procedures break the RPCs of a mix of several procedures down by procedure, in the
	// program's table order; absent for a point of one procedure.
	Procedures []ProcStats `json:"procedures,omitempty"`
	// Callbacks are the calls the peer made to this requester over the point's connections
	// (RFC 8167 reverse direction: NFSv4.1's CB_NULL, CB_COMPOUND), a row per callback
	// procedure called, in its program's table order. They are not forward RPCs: RTT,
	// Classes, Procedures, Errors and Throughput leave them out. Absent when none came.
	Callbacks []ProcStats `json:"callbacks,omitempty"`
	// Recalls is the delegation-recall measurement; absent when none was made.
	Recalls *Recalls `json:"recalls,omitempty"`
	// Recoveries counts the NFSv4.1 sessions the point's connections set up again after the
	// server lost them; absent when none was.
	Recoveries *Recoveries `json:"recoveries,omitempty"`
	// Ops counts the RDMA operations this side posted and received.
	Ops Ops `json:"ops"`
	// PeerOps counts those of the other side of the point's connections, when it was
	// counted (a responder in the same process); null otherwise. In RPC-over-RDMA the
	// responder performs the RDMA Reads and Writes of the requester's chunks, so without
	// it a chunked or long point shows no RDMA Read or Write at all.
	PeerOps *Ops `json:"peer_ops,omitempty"`
	// PeerOpsInferred is true when PeerOps were inferred by the requester (a responder in
	// another process): its Sends and Receives from this side's Receives and Sends, its RDMA
	// Reads and Writes from the segments of this side's chunks it pulled and filled; its
	// windows and local invalidations are not visible and count zero.
	PeerOpsInferred bool `json:"peer_ops_inferred,omitempty"`
	// Errors counts failures by kind; empty when there were none.
	Errors []ErrorStats `json:"errors"`
	// Throughput is what the point moved per second.
	Throughput Throughput `json:"throughput"`
	// CPU is the process CPU time consumed during the point.
	CPU CPU `json:"cpu"`
	// Intervals is the optional throughput time series, in time order; empty if not sampled.
	Intervals []Interval `json:"intervals"`
	// Pollers are the measuring pollers' threads over the measured interval; absent where
	// not read (not Linux).
	Pollers []PollerUsage `json:"pollers,omitempty"`
	// HostCPUPressure is the share of the point (warm-up included) in which some runnable
	// task on the host waited for a CPU (Linux PSI "some", percent; before schema version 5,
	// "some avg10" at the point's end); absent where the kernel has none. It counts this
	// process's own threads waiting for each other.
	HostCPUPressure *float64 `json:"host_cpu_pressure,omitempty"`
	// HostOtherCPU is the share of the host CPU time that other processes used during the
	// point (warm-up included), percent; absent where not read (not Linux, older files).
	HostOtherCPU *float64 `json:"host_other_cpu,omitempty"`
	// Host is how fast the host ran plain code just before the point (HostSpeed); absent
	// in files from before schema version 9.
	Host *HostSpeed `json:"host,omitempty"`
	// Disturbed says why the scheduler, not the transport, may have set this point's
	// latencies (see Disturbances); absent when nothing suggests it.
	Disturbed []string `json:"disturbed,omitempty"`
	// GC is what Go's garbage collector did while the point ran; absent in files from
	// before schema version 3.
	GC *GCStats `json:"gc,omitempty"`
	// Round is the round of a repeated measurement (--repeat) the point ran in, from 1;
	// absent (0) for a measurement of one round.
	Round int `json:"round,omitempty"`
	// Process numbers the process of the tool that measured the point, from 1, when a
	// repeated measurement ran its rounds in fresh processes (--rounds-per-process); absent
	// (0) when every point of the file ran in one process (files before schema version 8).
	Process int `json:"process,omitempty"`
	// FanIn is the ranks of a point many client ranks measured together, whose merge this
	// point is; absent for a point of one process.
	FanIn *FanIn `json:"fanin,omitempty"`
}

// HostSpeed is the host-speed probe's reading (datapath.ProbeHost) on the slowest CPU the
// process may use: a fixed computation and a memory copy, code the change under test does not
// touch. Compare judges no regression across a host that slowed by more than HostTolerance.
type HostSpeed struct {
	// ComputeNs is one step of a dependent integer chain, ns; CopyNsPerKiB a 256 KiB memory
	// copy, ns per KiB; PingPongNs a cache line's round trip between two CPUs, ns, absent
	// with one CPU (lower is faster).
	ComputeNs    float64 `json:"compute_ns"`
	CopyNsPerKiB float64 `json:"copy_ns_per_kib"`
	PingPongNs   float64 `json:"pingpong_ns,omitempty"`
	// CPUs counts the CPUs probed.
	CPUs int `json:"cpus"`
}

// HostSpeedOf is a probe's reading as results files keep it.
func HostSpeedOf(h datapath.HostSpeed) *HostSpeed {
	return &HostSpeed{ComputeNs: h.ComputeNs, CopyNsPerKiB: h.CopyNsPerKiB, PingPongNs: h.PingPongNs, CPUs: h.CPUs}
}

// GCStats is the garbage collector's part in a point: whether it was off while the point
// ran, and the cycles that ran anyway (each one a pause and work on the measuring threads'
// CPUs).
type GCStats struct {
	// Off: the collector was off (GOGC=off) with LimitBytes as the memory limit that would
	// start it again; false when the GOGC environment variable set the policy.
	Off bool `json:"off"`
	// LimitBytes is the Go memory limit in effect (absent: none).
	LimitBytes int64 `json:"limit_bytes,omitempty"`
	// Cycles counts the collections completed while the point ran.
	Cycles uint32 `json:"cycles"`
}

// PollerUsage is what the kernel accounted to one measuring poller's thread over the measured
// interval.
type PollerUsage struct {
	Poller int `json:"poller"`
	// CPU is the CPU the thread was pinned to, -1 when unpinned.
	CPU int `json:"cpu"`
	// Poll is how the poller waited: "busy", "event", "hybrid" (adaptive spin) or "hybrid:SPIN" (fixed).
	Poll string `json:"poll"`
	// WallNs is the measured interval; CPUNs the thread's user + system time in it.
	WallNs int64 `json:"wall_ns"`
	CPUNs  int64 `json:"cpu_ns"`
	// Involuntary counts the times the scheduler switched the thread out; Voluntary the
	// times it blocked (an event or hybrid poller waiting).
	Involuntary uint64 `json:"involuntary_switches"`
	Voluntary   uint64 `json:"voluntary_switches"`
	// Turnaround is the poller's turnaround probe over the same interval, when it was on
	// (--turnarounds, verbs).
	Turnaround *Turnaround `json:"turnaround,omitempty"`
}

// Turnaround summarizes a turnaround probe (datapath.Turnaround): how long one side took from
// a completion to the posts it caused, in its own code, the cgo return and call included.
// For a depth-1 closed loop it is this side's share of each round trip that is neither the
// device's nor the peer's. Quantiles are the upper edges of 100 ns buckets; 25.6 µs stands
// for anything longer than 25.5 µs (the open bucket).
type Turnaround struct {
	Count  uint64 `json:"count"`
	MeanNs int64  `json:"mean_ns"`
	P50Ns  int64  `json:"p50_ns"`
	P90Ns  int64  `json:"p90_ns"`
	P99Ns  int64  `json:"p99_ns"`
	// PostMeanNs is the mean time the posts that ended them took (ibv_post_recv and
	// ibv_post_send, the doorbell included).
	PostMeanNs int64 `json:"post_mean_ns"`
}

// TurnaroundOf summarizes a probe's reading as results files keep it.
func TurnaroundOf(t *datapath.Turnaround) *Turnaround {
	s := &Turnaround{Count: t.Count, MeanNs: int64(t.Mean()),
		P50Ns: int64(t.Quantile(0.5)), P90Ns: int64(t.Quantile(0.9)), P99Ns: int64(t.Quantile(0.99))}
	if t.Count > 0 {
		s.PostMeanNs = int64(t.Post) / int64(t.Count)
	}
	return s
}

// String is the summary as the text report prints it, in µs; a quantile in the
// histogram's open bucket prints as at least its lower edge.
func (t *Turnaround) String() string {
	q := func(ns int64) string {
		if top := int64(datapath.TurnaroundBuckets-1) * int64(datapath.TurnaroundBucket); ns > top {
			return fmt.Sprintf(">%.1f", float64(top)/1e3)
		}
		return fmt.Sprintf("%.1f", float64(ns)/1e3)
	}
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  mean %.2f  posts %.2f  (%d)", q(t.P50Ns), q(t.P90Ns), q(t.P99Ns),
		float64(t.MeanNs)/1e3, float64(t.PostMeanNs)/1e3, t.Count)
}

// Params are a point's workload parameters. Two points are the same point (in Compare and in
// reports) exactly when their Params are equal.
type Params struct {
	// Procedure is the benchmark RPC procedure: "NULL", "ECHO", "SINK" or "SOURCE".
	Procedure string `json:"procedure"`
	// Class is the message class the workload forced ("short", "chunked", "long") or "auto"
	// when the requester chose by the thresholds (RFC 8166 section 3.5).
	Class string `json:"class"`
	// CallBytes and ReplyBytes are the RPC payload sizes: the procedure's argument and
	// result data, excluding RPC and transport headers.
	CallBytes  int `json:"call_bytes"`
	ReplyBytes int `json:"reply_bytes"`
	// CallSizes and ReplySizes name the payload sizes drawn when a single procedure's
	// payload varies per RPC (run --sizes 64,4k: "64,4k"; "uniform:1k-64k";
	// "lognormal:8k:1:0-1m"), in the direction that carries it; CallBytes and ReplyBytes are
	// 0 then. Absent for a fixed size and for a mix of several entries, whose name
	// (MIX:...) lists its sizes. See Params.CallLabel.
	CallSizes  string `json:"call_sizes,omitempty"`
	ReplySizes string `json:"reply_sizes,omitempty"`
	// InlineThreshold is the inline threshold the point ran with: what this side offered
	// in its private data (RFC 8797), or the smaller size the peer's private data left
	// (see OfferedInlineThreshold); the per-direction sizes are in Negotiated.
	InlineThreshold int `json:"inline_threshold_bytes"`
	// OfferedInlineThreshold is the threshold this side offered when the peer capped it
	// (InlineThreshold is then the negotiated one); absent when the offer applied.
	// Compare does not match points by it.
	OfferedInlineThreshold int `json:"offered_inline_threshold_bytes,omitempty"`
	// Depth is the number of RPCs kept outstanding per connection (closed loop).
	Depth int `json:"depth"`
	// Connections is the number of connections driven at once.
	Connections int `json:"connections"`
	// RateRPS is the target aggregate call rate of an open-loop workload; 0 for closed loop.
	RateRPS float64 `json:"rate_rps"`
}

// Negotiated are the parameters a connection settled on. Every value is as seen by the side
// that wrote the file.
type Negotiated struct {
	// Role is "requester" or "responder".
	Role string `json:"role"`
	// Local is the private data this side sent; Peer what it received (null if the peer sent
	// none: RFC 8797 section 5.2 defaults then apply).
	Local PrivateData  `json:"local_private_data"`
	Peer  *PrivateData `json:"peer_private_data"`
	// InlineSendBytes is the largest message this side sends inline (min of its own send
	// size and the peer's receive size); InlineRecvBytes the largest it can receive.
	InlineSendBytes int `json:"inline_send_bytes"`
	InlineRecvBytes int `json:"inline_recv_bytes"`
	// CreditsRequested is what the requester asked for in rdma_credit; CreditsGranted what
	// the responder granted (the requester's maximum outstanding RPCs).
	CreditsRequested int `json:"credits_requested"`
	CreditsGranted   int `json:"credits_granted"`
	// RemoteInvalidation is true when both sides set the R bit (RFC 8797 section 4.1), so
	// the responder may reply with Send With Invalidate.
	RemoteInvalidation bool `json:"remote_invalidation"`
	// RegisteredBytesPerConnection is the memory registered for one connection of this
	// side (the formula is in rpcrdma/TRANSPORT.md); 0 when not known.
	RegisteredBytesPerConnection int `json:"registered_bytes_per_connection,omitempty"`
}

// PrivateData is one side's RDMA-CM private data, raw and decoded.
type PrivateData struct {
	// Hex is the bytes exactly as sent or received (RDMA-CM may pad them), lowercase hex.
	Hex string `json:"hex"`
	// Valid is true when the bytes carry RPC-over-RDMA version 1 private data (RFC 8797
	// section 4: format identifier 0xf6ab0e18); the fields below are meaningful only then.
	Valid bool `json:"valid"`
	// Version is the message format version.
	Version int `json:"version"`
	// RemoteInvalidate is the R bit.
	RemoteInvalidate bool `json:"remote_invalidate"`
	// SendBytes and RecvBytes are the decoded Send Size and Receive Size in bytes
	// ((encoded+1)*1024, RFC 8797 section 4.2).
	SendBytes int `json:"send_bytes"`
	RecvBytes int `json:"recv_bytes"`
}

// Summary summarises a set of round-trip times. All values are nanoseconds. A field is null
// when it is not available: every field when Count is 0, Stdev when Count < 2, and a
// percentile when Count cannot support it (see Supports).
type Summary struct {
	// Count is the number of samples.
	Count uint64 `json:"count"`
	// Min and Max are exact.
	Min *int64 `json:"min_ns"`
	Max *int64 `json:"max_ns"`
	// Mean and Stdev (sample standard deviation, n-1) are computed exactly from integer sums
	// of the samples, not from the histogram, and rounded to the nearest nanosecond.
	Mean  *int64 `json:"mean_ns"`
	Stdev *int64 `json:"stdev_ns"`
	// Percentiles come from the HDR histogram: the value at the percentile, accurate to 3
	// significant digits (the highest value equivalent to the sample's bucket).
	P50   *int64 `json:"p50_ns"`
	P90   *int64 `json:"p90_ns"`
	P99   *int64 `json:"p99_ns"`
	P999  *int64 `json:"p999_ns"`
	P9999 *int64 `json:"p9999_ns"`
}

// ClassStats are the RPCs of one message class.
type ClassStats struct {
	// Class is "short", "chunked" or "long".
	Class string `json:"class"`
	// Calls and Replies count the calls and the replies sent in this class. An RPC's call and
	// reply can be of different classes (a short call, a long reply).
	Calls   uint64 `json:"calls"`
	Replies uint64 `json:"replies"`
	// RTT summarises the RPCs attributed to this class: an RPC belongs to the heavier of its
	// call's and reply's classes (long > chunked > short), the one that dominates its cost.
	RTT Summary `json:"rtt"`
	// Histogram is RTT's HDR histogram.
	Histogram string `json:"rtt_histogram"`
}

// ProcStats are the RPCs of one procedure: of a mix (Point.Procedures) or of the calls the
// peer made back (Point.Callbacks).
type ProcStats struct {
	// Procedure is the procedure's name in its program's table ("read", "echo", "CB_NULL").
	Procedure string `json:"procedure"`
	// Class, in Callbacks rows, is the message class the calls came in ("short", "chunked",
	// "long"): a procedure has a row per class it came in.
	Class string `json:"class,omitempty"`
	// RTT summarises its successful RPCs (RTT.Count of them). For a callback it is the time
	// from the call's arrival to the completion of the Send of this side's reply.
	RTT Summary `json:"rtt"`
	// Histogram is RTT's HDR histogram, so that rows of several points merge exactly: present
	// in Callbacks rows and Procedures rows (a Procedures row of a file written before
	// version 8 may lack it).
	Histogram string `json:"rtt_histogram,omitempty"`
	// Errors counts its failed RPCs: for Procedures, their kinds are in the point's Errors;
	// for Callbacks, the calls answered with a failure, counted here only.
	Errors uint64 `json:"errors"`
}

// Recoveries counts what a point's connections set up again on the same connection after the
// server lost their NFSv4.1 session (NFS4ERR_BADSESSION, NFS4ERR_DEADSESSION).
type Recoveries struct {
	// Sessions is the sessions made again; ClientIDs, of those, the ones that needed a new
	// client ID first (the server had forgotten the client too: NFS4ERR_STALE_CLIENTID).
	Sessions  int `json:"sessions"`
	ClientIDs int `json:"client_ids"`
}

// Recalls is the delegation-recall measurement of a point: this side holds a read delegation,
// a conflicting OPEN (another session, or a local writer on the server) makes the server
// recall it with CB_RECALL over the backchannel, and this side returns it with DELEGRETURN.
type Recalls struct {
	// Count is the delegations recalled and returned: the samples of each latency below.
	Count uint64 `json:"count"`
	// NotGranted counts the OPENs that asked for a read delegation and got none (nothing to
	// recall: no sample).
	NotGranted uint64 `json:"not_granted"`
	// Retries counts the conflicting OPENs answered NFS4ERR_DELAY while the recall ran.
	Retries uint64 `json:"retries"`
	// Recall is the time from sending the conflicting OPEN to the arrival of CB_RECALL.
	Recall Latency `json:"recall"`
	// DelegReturn is the round trip of this side's DELEGRETURN.
	DelegReturn Latency `json:"delegreturn"`
	// Conflict is the time from first sending the conflicting OPEN to its success, its
	// NFS4ERR_DELAY retries included.
	Conflict Latency `json:"conflict"`
}

// Latency is a set of latencies that is not a point's forward RPCs: its summary and HDR
// histogram (Count samples of Recalls each).
type Latency struct {
	RTT       Summary `json:"rtt"`
	Histogram string  `json:"rtt_histogram"`
}

// Ops counts RDMA operations by opcode, as this side posted them (Send, SendInv, Write, Read,
// LocalInv, BindMW) and completed them (Recv).
type Ops struct {
	Send     OpCount `json:"send"`
	SendInv  OpCount `json:"send_with_inv"`
	Write    OpCount `json:"rdma_write"`
	Read     OpCount `json:"rdma_read"`
	Recv     OpCount `json:"recv"`
	LocalInv OpCount `json:"local_inv"`
	BindMW   OpCount `json:"bind_mw"`
}

// OpCount is a number of operations and the payload bytes they moved.
type OpCount struct {
	Count uint64 `json:"count"`
	Bytes uint64 `json:"bytes"`
}

// ErrorStats counts the errors of one kind.
type ErrorStats struct {
	// Kind is a short stable name ("timeout", "remote_access", "checksum", ...).
	Kind  string `json:"kind"`
	Count uint64 `json:"count"`
	// Messages are the first MaxErrorMessages error texts of this kind, in order.
	Messages []string `json:"first_messages"`
}

// Throughput is a point's completed work per second of DurationNs.
type Throughput struct {
	// RPCs is the number of RPCs completed successfully.
	RPCs uint64 `json:"rpcs"`
	// PayloadBytes is the call plus reply payload of those RPCs (no headers).
	PayloadBytes uint64 `json:"payload_bytes"`
	// RPCPerSec is RPCs per second; PayloadGbps is payload gigabits (10^9 bits) per second.
	RPCPerSec   float64 `json:"rpc_per_s"`
	PayloadGbps float64 `json:"payload_gbps"`
}

// CPU is CPU time (getrusage RUSAGE_SELF) used by the whole process, in nanoseconds.
type CPU struct {
	UserNs int64 `json:"user_ns"`
	SysNs  int64 `json:"sys_ns"`
}

// Interval is one sample of the throughput time series.
type Interval struct {
	// OffsetNs is the interval's start relative to Point.Start; DurationNs its length.
	OffsetNs   int64 `json:"offset_ns"`
	DurationNs int64 `json:"duration_ns"`
	// RPCs, PayloadBytes and Errors are what completed during the interval.
	RPCs         uint64 `json:"rpcs"`
	PayloadBytes uint64 `json:"payload_bytes"`
	Errors       uint64 `json:"errors"`
	// Histogram is the interval's RTT histogram (same format as Point.Histogram); empty if
	// the runner did not record one per interval.
	Histogram string `json:"rtt_histogram,omitempty"`
	// Classes are the interval's successful RPCs by message class ("short", "chunked",
	// "long"); absent when not recorded. A mix's per-class throughput over time.
	Classes map[string]uint64 `json:"classes,omitempty"`
}
