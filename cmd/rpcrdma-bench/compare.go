package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// compareCommand is the compare subcommand.
func compareCommand() *command {
	return &command{
		name:    "compare",
		summary: "Compare base and current results: changes beyond noise and thresholds fail (the CI gate)",
		usage:   "[flags] BASE.json|DIR... -- CURRENT.json|DIR...   (or: BASE CURRENT)",
		examples: `  rpcrdma-bench compare old.json new.json
  rpcrdma-bench compare --threshold 'p99=+10%,throughput=-5%' old-*.json -- new-*.json
  rpcrdma-bench compare --threshold all=5% --metrics p50,p99,rps --format markdown base/*.json -- head/*.json
  rpcrdma-bench compare build/demo/preregistered -- build/demo/windows   # directories: their *.json

Runs of the same point are samples: with 4 or more runs per side (at the default --alpha 0.05;
5 at 0.01) a Mann-Whitney U test decides what is beyond noise (as benchstat does); with fewer,
the thresholds alone decide, and a metric without a threshold is not judged at all (the
summary warns). Exit status 1 means a regression (or a base point missing from current).`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			thresholds := fs.String("threshold", "", "tolerated changes NAME=CHANGE%,... (p50, p90, p99, p99.9, mean, rps, gbps, latency, throughput, all); default none")
			alpha := fs.Float64("alpha", 0.05, "significance level of the U test")
			metrics := fs.String("metrics", "", "compare only these metrics, comma-separated (default all)")
			format := fs.String("format", "text", "output: text or markdown")
			return func(e *env, args []string) int {
				return compare(e, fs, *thresholds, *alpha, *metrics, *format, args)
			}
		},
	}
}

func compare(e *env, fs *pflag.FlagSet, thresholds string, alpha float64, metrics, format string, args []string) int {
	var base, cur []string
	switch dash := fs.ArgsLenAtDash(); {
	case dash >= 0:
		base, cur = args[:dash], args[dash:]
	case len(args) == 2:
		base, cur = args[:1], args[1:]
	default:
		return fail(e, "compare", usageErrorf("want BASE CURRENT, or BASE... -- CURRENT... (got %d files and no --)", len(args)))
	}
	var err error
	if base, _, err = expandDirs(base); err != nil {
		return fail(e, "compare", err)
	}
	if cur, _, err = expandDirs(cur); err != nil {
		return fail(e, "compare", err)
	}
	if len(base) == 0 || len(cur) == 0 {
		return fail(e, "compare", usageErrorf("need at least one base and one current results file"))
	}
	if format != "text" && format != "markdown" {
		return fail(e, "compare", usageErrorf("unknown --format %q (want text or markdown)", format))
	}
	if !(alpha > 0 && alpha < 1) {
		return fail(e, "compare", usageErrorf("--alpha %g is not in (0, 1)", alpha))
	}
	th, err := results.ParseThresholds(thresholds)
	if err != nil {
		return fail(e, "compare", usageError{"--threshold: " + err.Error()})
	}
	cfg := results.CompareConfig{Alpha: alpha, Thresholds: th}
	if metrics != "" {
		for _, name := range strings.Split(metrics, ",") {
			m, ok := metricByName(strings.TrimSpace(name))
			if !ok {
				return fail(e, "compare", usageErrorf("--metrics: unknown metric %q (want p50, p90, p99, p99.9, mean, rps or gbps)", name))
			}
			cfg.Metrics = append(cfg.Metrics, m)
		}
	}
	if slices.Contains(base, stdio) && slices.Contains(cur, stdio) {
		return fail(e, "compare", usageErrorf(`"-" (standard input) can be one side only`))
	}
	b, err := readRuns(e, base)
	if err != nil {
		return fail(e, "compare", usageError{err.Error()})
	}
	c, err := readRuns(e, cur)
	if err != nil {
		return fail(e, "compare", usageError{err.Error()})
	}
	cmp, err := results.Compare(b, c, cfg)
	if err != nil {
		return fail(e, "compare", usageError{err.Error()})
	}
	if format == "markdown" {
		err = results.WriteCompareMarkdown(e.stdout, cmp)
	} else {
		err = results.WriteCompareText(e.stdout, cmp)
	}
	if err != nil {
		return fail(e, "compare", err)
	}
	if w := cmp.Warning(); w != "" {
		// Also where a CI log shows it next to the exit status, whatever --format wrote.
		fmt.Fprintf(e.stderr, "rpcrdma-bench compare: %s\n", w)
	}
	return cmp.ExitCode()
}

// metricByName finds a results metric by the name its String method writes (p999 is
// accepted for p99.9).
func metricByName(name string) (results.Metric, bool) {
	if name == "p999" {
		name = "p99.9"
	}
	i := slices.IndexFunc(allMetrics(), func(m results.Metric) bool { return m.String() == name })
	if i < 0 {
		return 0, false
	}
	return results.Metric(i), true
}

func allMetrics() []results.Metric {
	ms := make([]results.Metric, results.NumMetrics)
	for i := range ms {
		ms[i] = results.Metric(i)
	}
	return ms
}
