package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
	"github.com/rpcrdma-bench/rpcrdma-bench/workloads"
)

// judgeFlags are the measuring commands' judgement of their own results: against a
// baseline, as compare judges (--baseline, --threshold, --metrics, --alpha).
type judgeFlags struct {
	baseline  []string
	threshold string
	metrics   string
	alpha     float64
}

func addJudgeFlags(fs *pflag.FlagSet, j *judgeFlags) {
	fs.StringArrayVar(&j.baseline, "baseline", nil, "judge the results against these base results as compare does and exit as it does (0 ok, 1 regressed, 3 inconclusive): files, directories (their *.json) or a quoted glob; repeat the flag for several")
	fs.StringVar(&j.threshold, "threshold", "", "with --baseline: tolerated changes NAME=CHANGE%,... as compare --threshold (not --thresholds, the inline thresholds)")
	fs.StringVar(&j.metrics, "metrics", "", "with --baseline: judge these metrics, as compare --metrics")
	fs.Float64Var(&j.alpha, "alpha", 0.05, "family-wise error rate of the judgement (--baseline, or --repeat auto's best threshold), split over --repeat auto's looks")
}

// planJudgement is the judgement the flags ask for, nil for none.
func planJudgement(e *env, w *workloadFlags, pts []workloads.Point) (*session.Judgement, error) {
	f := &w.judge
	if len(f.baseline) == 0 {
		for _, n := range []string{"threshold", "metrics"} {
			if w.fs.Changed(n) {
				return nil, usageErrorf("--%s judges against a baseline: give --baseline too", n)
			}
		}
		if !w.auto {
			return nil, nil
		}
	}
	c := session.JudgeConfig{Compare: results.CompareConfig{Alpha: f.alpha}, Auto: w.auto, Budget: w.repeat, Points: pts, Sweep: w.sweep}
	if len(f.baseline) > 0 && f.alpha > 0 && f.alpha < 1 { // a bad --alpha is named first
		cfg, err := compareConfig(f.alpha, f.threshold, f.metrics)
		if err != nil {
			return nil, err
		}
		files, err := baselineFiles(f.baseline)
		if err != nil {
			return nil, err
		}
		if c.Base, err = readRuns(e, files); err != nil {
			return nil, usageErrorf("--baseline: %v", err)
		}
		c.Compare = cfg
	}
	j, err := session.PlanJudgement(c)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return j, nil
}

// compareConfig is the judgement compare's --alpha, --threshold and --metrics ask for.
func compareConfig(alpha float64, thresholds, metrics string) (results.CompareConfig, error) {
	th, err := results.ParseThresholds(thresholds)
	if err != nil {
		return results.CompareConfig{}, usageError{"--threshold: " + err.Error()}
	}
	cfg := results.CompareConfig{Alpha: alpha, Thresholds: th}
	if metrics != "" {
		if cfg.Metrics, err = results.ParseMetrics(metrics); err != nil {
			return cfg, usageError{"--metrics: " + err.Error()}
		}
	}
	return cfg, nil
}

// baselineFiles expands --baseline's globs and directories into files.
func baselineFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, usageErrorf("--baseline %q: %v", a, err)
		}
		if len(m) == 0 {
			return nil, usageErrorf("--baseline %q: no such file", a)
		}
		files = append(files, m...)
	}
	files, _, err := expandDirs(files)
	return files, err
}

// printVerdict prints the judgement of the complete run r to out (and its verdict to
// stderr) and returns its exit status; auto says the rounds were --repeat auto's.
func printVerdict(e *env, out io.Writer, name string, j *session.Judgement, auto bool, r *results.Run) int {
	v, err := j.Judge(r)
	if rec := j.Record; auto {
		fmt.Fprintf(out, "\nrepeat auto: %d of at most %d rounds; judged from round %d at alpha %g per look (%g over %d looks)\n",
			v.Rounds, rec.Budget, rec.FirstLook, rec.LookAlpha, rec.Alpha, rec.Looks)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, err)
		return exitUsage
	}
	fmt.Fprintln(out)
	if v.Comparison == nil {
		if err := results.WriteThresholds(out, v.Thresholds); err != nil {
			fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, err)
		}
		if v.Exit != exitOK {
			fmt.Fprintf(e.stderr, "rpcrdma-bench %s: best threshold not settled for every row (exit %d)\n", name, v.Exit)
		}
		return v.Exit
	}
	if err := results.WriteCompareText(out, v.Comparison); err != nil {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, err)
	}
	if v.Exit != exitOK {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %s (exit %d)\n", name, v.Comparison.Verdict, v.Exit)
	}
	return v.Exit
}
