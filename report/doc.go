// Package report turns a set of results files into one page a person reads or publishes: a
// self-contained HTML file (charts inlined as SVG, a small stylesheet, no external requests)
// and a Markdown version of the same content whose charts are PNG files written beside it.
//
// The page holds, in this order: an overview of the runs (source, provider, device, host,
// points, rounds per point, status with its message), the charts package plots draws for them
// (a repeated point as the median of its rounds with their range), and per run its
// environment (host, kernel, CPU, Go, provider, the device's attributes and ports), the summary
// table (per point, with its round when repeated, and message class: count, RTT
// p50/p90/p99/p99.9/max, RPC/s, Gb/s, errors;
// a percentile the sample count cannot support shows as "–"), a fan-in's client ranks (per
// point its fairness line: Jain's index, the slowest rank, the p50/p99 spread, skew, overlap,
// failed ranks; and a row per rank), the callbacks the peer made over the backchannel (per
// point and callback procedure: calls, p50/p99/max, errors) and the delegation recalls (per
// point: recall, delegreturn and conflict latencies, not granted, retries), the RDMA operations, the
// negotiated connection parameters (both sides' RFC 8797 private data, the effective inline
// thresholds each way, credits, remote invalidation), the errors and the run's configuration.
//
// Write reads nothing itself: the caller passes the runs (results.ReadFiles) and says where
// they came from in Config.Sources. Results files are input, never trusted markup: every value
// is escaped (html/template for the page, explicit escaping for Markdown), and an SVG chart is
// inlined only after a check that it holds nothing but the drawing elements gonum emits.
//
// Output is deterministic: the same runs and Config give byte-identical files (no generation
// time unless Config.Generated asks for one, runs and points in the order given), which is what
// the golden tests compare. Regenerate the goldens with
//
//	go test ./report -update
package report
