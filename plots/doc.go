// Package plots draws the benchmark's charts from results files with gonum/plot, as PNG and
// SVG: RTT percentiles against message size (one line per inline threshold), the percentile
// spectrum of each point in the HdrHistogram convention, throughput against message size, a
// threshold × size heatmap of median RTT marked with the message classes, each mix's p50, p99
// and RPC/s against the inline threshold, throughput over time, and a fan-in's client ranks
// (RPC/s, p50 and p99 per rank beside the aggregate). Every chart carries a caption naming the provider, the device and the negotiated
// connection parameters, so a published picture says what it measured.
//
// It reads only what package results exposes (the file schema and its HDR histograms) and never
// imports a datapath provider: charts can be drawn on any machine from files copied off the
// benchmark hosts. Render writes every chart that applies to a set of runs (Charts builds them
// without writing); the per-chart functions (Latency, Spectrum, Throughput, Heatmap, Timeline,
// Ranks)
// return a *Chart for callers that want one figure or want to adjust it before saving. A Chart
// keeps its legend or colour bar beside the data, never over it, and wraps its caption.
//
// Repeats of a point (the rounds of --repeat, and the runs of one setup: the same provider,
// device, host and configuration) are one point on the charts: the line charts draw the median
// of their values with the min-max range as whiskers (lines with whiskers a little apart, and
// a band when only one line has them), and say how many there were; the rank charts a marker
// per rank at the median with whiskers, the ranks a categorical axis; a spectrum pools the
// samples of all the rounds into one line. PNGs are 300 dpi (2700 × 1800 pixels), for print;
// a chart of disturbed points says so in its caption.
// The heatmap colours a cell by its median's ratio to the best threshold of its size on a
// fixed log scale (1× to 4×), and marks with ≈ the cells whose rounds overlap the best's.
//
// Input is never trusted: a run without points, a missing or corrupt histogram or a percentile
// the sample count cannot support (results.Supports) gives a clear error or a caption note
// naming what was left out, never a panic or a silently empty chart.
//
// Output is deterministic: the same runs give byte-identical SVG (no timestamps, sorted series),
// which is what the golden-file tests compare. Regenerate the goldens, and write every example
// chart as PNG to look at, with
//
//	go test ./plots -update
//	PLOTS_OUT=/tmp/plots go test ./plots -run TestExamples
package plots
