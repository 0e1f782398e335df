package results

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"time"
)

// HlogFormatVersion is the HdrHistogram interval log format version WriteHlog writes.
const HlogFormatVersion = "1.3"

// WriteHlog writes r as an HdrHistogram interval log (.hlog), the format HdrHistogram's
// HistogramLogReader (Java, Go, C, Rust, Python) and tools such as HistogramLogProcessor and
// HdrHistogramVisualizer read:
//
//	#[Logged with rpcrdma-bench ...]
//	#[Histogram log format version 1.3]
//	#[StartTime: 1795320000.000 (seconds since epoch), 2026-11-22T04:00:00Z]
//	#[BaseTime: 1795320000.000 (seconds since epoch)]
//	"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//	0.000,1.250,0.012,HISTFAAAA...
//	Tag=proc=ECHO/call=64/...,0.000,1.250,0.012,HISTFAAAA...
//	Tag=proc=ECHO/call=64/.../rtt_class=short,0.000,1.250,0.012,HISTFAAAA...
//
// Each line is one interval: its start in seconds relative to BaseTime (the run's start), its
// length in seconds, its maximum in milliseconds (the convention: values are recorded in ns
// and the max is divided by 1e6), and its histogram in the V2 compressed base64 encoding.
//
// Every point is written three ways, so that a reader finds what it looks for:
//   - untagged: every RPC of the run, which is what tools read without a -tag option (the
//     reference HistogramLogProcessor fails on a log with no untagged line);
//   - tagged with the point's Key: the point alone;
//   - tagged with the Key and "/rtt_class=CLASS": each message class that has round trips of
//     its own, over the whole point.
//
// The first two come one line per interval when the point's intervals carry histograms, else
// one line covering the whole measurement.
func WriteHlog(w io.Writer, r *Run) error {
	bw := bufio.NewWriter(w)
	base := r.Start
	secs := float64(base.UnixNano()) / 1e9
	fmt.Fprintf(bw, "#[Logged with %s]\n", r.Tool)
	fmt.Fprintf(bw, "#[Histogram log format version %s]\n", HlogFormatVersion)
	fmt.Fprintf(bw, "#[StartTime: %.3f (seconds since epoch), %s]\n", secs, base.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(bw, "#[BaseTime: %.3f (seconds since epoch)]\n", secs)
	fmt.Fprintln(bw, `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`)
	for i := range r.Points {
		p := &r.Points[i]
		key := p.Params.Key()
		off := p.Start.Sub(base)
		line := func(tag string, start time.Duration, length int64, hist string) error {
			h, err := DecodeHistogram(hist)
			if err != nil {
				return fmt.Errorf("hlog: point %s: %w", key, err)
			}
			var maxMs float64
			if h.TotalCount() > 0 {
				maxMs = float64(h.Max()) / 1e6
			}
			if tag != "" {
				fmt.Fprintf(bw, "Tag=%s,", tag)
			}
			_, err = fmt.Fprintf(bw, "%.3f,%.3f,%.3f,%s\n", math.Max(0, start.Seconds()), float64(length)/1e9, maxMs, hist)
			return err
		}
		perInterval := len(p.Intervals) > 0
		for _, iv := range p.Intervals {
			perInterval = perInterval && iv.Histogram != ""
		}
		for _, tag := range []string{"", key} {
			if !perInterval {
				if err := line(tag, off, p.DurationNs, p.Histogram); err != nil {
					return err
				}
				continue
			}
			for _, iv := range p.Intervals {
				if err := line(tag, off+time.Duration(iv.OffsetNs), iv.DurationNs, iv.Histogram); err != nil {
					return err
				}
			}
		}
		for _, c := range p.Classes {
			if c.RTT.Count == 0 || c.Histogram == "" {
				continue
			}
			if err := line(key+"/rtt_class="+c.Class, off, p.DurationNs, c.Histogram); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
