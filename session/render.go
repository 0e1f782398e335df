package session

import (
	"fmt"
	"io"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// Render writes runs, read from the files names, in format: text (the table each command
// prints, with a data-quality note per run and, for several, one over them all), csv, hlog (the first run), bench, thresholds or
// switches. The caller has checked format.
func Render(w io.Writer, format string, runs []*results.Run, names []string) error {
	switch format {
	case "csv":
		return results.WriteCSVSources(w, names, runs...)
	case "hlog":
		return results.WriteHlog(w, runs[0])
	case "bench":
		return results.WriteBench(w, runs...)
	case "thresholds":
		return results.WriteThresholdsOf(w, runs, 0)
	case "switches":
		for i, r := range runs {
			if len(runs) > 1 {
				fmt.Fprintf(w, "\n== %s ==", names[i])
			}
			WriteSwitches(w, r)
		}
		return nil
	}
	for i, r := range runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if len(runs) > 1 {
			// Several blocks look alike: say which file each one is.
			fmt.Fprintf(w, "== %s ==\n", names[i])
		}
		if err := results.WriteText(w, r); err != nil {
			return err
		}
	}
	if q := results.Quality(runs); q != "" && len(runs) > 1 {
		// Each run's table ends with its own note; this one is over them all.
		fmt.Fprintln(w, "all runs: "+q)
	}
	return nil
}

// WriteSwitches writes where each size changed message class in r, per threshold and depth.
func WriteSwitches(w io.Writer, r *results.Run) {
	sw := Switches(r)
	fmt.Fprintln(w, "\nclass switches (size in (below, at]):")
	if len(sw) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, s := range sw {
		fmt.Fprintf(w, "  thr %-5s depth %-3d %-7s -> %-7s between %s and %s\n", workloads.FormatSize(s.Threshold), s.Depth,
			s.From, s.To, workloads.FormatSize(s.Below), workloads.FormatSize(s.At))
	}
}
