package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

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

// autoRecord is how a results file's config records the judgement a run made of itself.
type autoRecord struct {
	// Judge is "baseline" (against --baseline) or "thresholds" (the best inline threshold).
	Judge string `json:"judge"`
	// Budget is the most rounds; FirstLook the first round judged; Looks the rounds judged
	// at most, each at LookAlpha, Alpha split evenly over them.
	Budget    int     `json:"budget"`
	FirstLook int     `json:"first_look"`
	Looks     int     `json:"looks"`
	Alpha     float64 `json:"alpha"`
	LookAlpha float64 `json:"look_alpha"`
}

// judgement is the judgement a measuring command makes of its results, planned before it
// measures.
type judgement struct {
	rec  autoRecord
	base []*results.Run
	cfg  results.CompareConfig // Alpha is the per-look alpha
	auto bool
}

// planJudgement is the judgement the flags ask for, nil for none.
func planJudgement(e *env, w *workloadFlags, pts []workloads.Point) (*judgement, error) {
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
	if !(f.alpha > 0 && f.alpha < 1) {
		return nil, usageErrorf("--alpha %g is not in (0, 1)", f.alpha)
	}
	budget := max(w.repeat, 1)
	j := &judgement{auto: w.auto, rec: autoRecord{Budget: budget, Alpha: f.alpha}}
	judged := 0
	if len(f.baseline) > 0 {
		cfg, err := compareConfig(f.alpha, f.threshold, f.metrics)
		if err != nil {
			return nil, err
		}
		files, err := baselineFiles(f.baseline)
		if err != nil {
			return nil, err
		}
		if j.base, err = readRuns(e, files); err != nil {
			return nil, usageErrorf("--baseline: %v", err)
		}
		self, err := results.Compare(j.base, j.base, cfg)
		if err != nil {
			return nil, usageErrorf("--baseline: %v", err)
		}
		j.rec.Judge, j.cfg, judged = "baseline", cfg, self.Judged
	} else {
		ths := map[int]bool{}
		for _, p := range pts {
			ths[p.Threshold] = true
		}
		if !w.sweep || len(ths) < 2 {
			return nil, usageErrorf("--repeat auto repeats until a judgement is conclusive: give --baseline, or sweep two or more --thresholds (the best threshold is judged)")
		}
		j.rec.Judge = "thresholds"
		judged = (len(pts) - len(pts)/len(ths)) * len(results.ThresholdMetrics)
	}
	first, looks, lookAlpha := session.Looks(budget, judged, f.alpha)
	if !w.auto {
		first, looks, lookAlpha = budget, 1, f.alpha
	}
	if w.auto && first > budget {
		return nil, usageErrorf("--repeat auto:%d: %d judgements at --alpha %g over the looks need %d rounds before any can be conclusive: raise the budget or judge fewer points or metrics",
			budget, judged, f.alpha, first)
	}
	j.rec.FirstLook, j.rec.Looks, j.rec.LookAlpha = first, looks, lookAlpha
	j.cfg.Alpha = lookAlpha
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
		for _, name := range strings.Split(metrics, ",") {
			m, ok := metricByName(strings.TrimSpace(name))
			if !ok {
				return cfg, usageErrorf("--metrics: unknown metric %q (want p50, p90, p99, p99.9, mean, rps or gbps)", name)
			}
			cfg.Metrics = append(cfg.Metrics, m)
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

// afterRound is the session's hook that ends it once the judgement is conclusive.
func (j *judgement) afterRound() func(*results.Run, int) bool {
	if !j.auto {
		return nil
	}
	if j.base != nil {
		return session.UntilConclusive(j.rec.FirstLook, session.AgainstBaseline(j.base, j.cfg))
	}
	return session.UntilConclusive(j.rec.FirstLook, session.ThresholdsSettled(j.cfg.Alpha))
}

// finish prints the judgement of the complete run r to out (and its verdict to stderr) and
// returns its exit status: compare's, or for the best threshold 0 when every row is settled,
// exitInconclusive otherwise.
func (j *judgement) finish(e *env, out io.Writer, name string, r *results.Run) int {
	rounds := 0
	for _, p := range r.Points {
		rounds = max(rounds, p.Round, 1)
	}
	if j.auto {
		fmt.Fprintf(out, "\nrepeat auto: %d of at most %d rounds; judged from round %d at alpha %g per look (%g over %d looks)\n",
			rounds, j.rec.Budget, j.rec.FirstLook, j.rec.LookAlpha, j.rec.Alpha, j.rec.Looks)
	}
	if j.base == nil {
		cs := results.BestThresholds([]*results.Run{r}, j.cfg.Alpha)
		fmt.Fprintln(out)
		if err := results.WriteThresholds(out, cs); err != nil {
			fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, err)
		}
		for i := range cs {
			if !session.Settled(&cs[i]) {
				fmt.Fprintf(e.stderr, "rpcrdma-bench %s: best threshold not settled for every row (exit %d)\n", name, exitInconclusive)
				return exitInconclusive
			}
		}
		return exitOK
	}
	cmp, err := results.Compare(j.base, []*results.Run{r}, j.cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: --baseline: %v\n", name, err)
		return exitUsage
	}
	fmt.Fprintln(out)
	if err := results.WriteCompareText(out, cmp); err != nil {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, err)
	}
	code := cmp.ExitCode()
	if code != exitOK {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %s (exit %d)\n", name, cmp.Verdict, code)
	}
	return code
}
