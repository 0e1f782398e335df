package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/results"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// compareCommand is the compare subcommand.
func compareCommand() *command {
	return &command{
		name:    "compare",
		summary: "Judge current results against base ones with confidence intervals: ok, regressed or inconclusive (the CI gate)",
		usage:   "[flags] BASE.json|DIR... -- CURRENT.json|DIR...   (or: BASE CURRENT)",
		examples: `  rpcrdma-bench compare old-*.json -- new-*.json        # p50 +10%, p99 +20%, rps -10%
  rpcrdma-bench compare --threshold 'p99=+10%,throughput=-5%' old-*.json -- new-*.json
  rpcrdma-bench compare --threshold all=5% --metrics p50,p99,rps --format markdown base/*.json -- head/*.json
  rpcrdma-bench compare --format junit base/ -- head/ > compare.xml   # directories: their *.json

Every complete point of a run is one sample of its point (a file with repeated rounds gives
several). For each judged metric and point, the change is the Hodges-Lehmann ratio
current/base with a Mann-Whitney confidence interval; the verdict is regressed when the
interval lies beyond the tolerance, ok when it lies within, inconclusive when it straddles
or the runs are too few for an interval. Intervals are Bonferroni-adjusted so that any wrong
ok or regressed has probability at most --alpha over the whole invocation: more points and
metrics need more runs (5 a side cover up to 12 judgements, 6 up to 46). Judged: --metrics,
else the metrics --threshold names, else p50, p99 and rps; a metric without a --threshold
value has its default tolerance (p50 +10%, p90 +15%, p99 +20%, p99.9 +30%, mean +10%,
rps -10%, gbps -10%). Disturbed runs (other processes took more than 10% of the host's CPU
time, or a collection ran) are left out while enough others remain; with too few left, the
metric is inconclusive and says what it would have been.

Exit status: 0 ok, 1 regressed (or a base point missing in current), 2 bad usage or input,
3 inconclusive (no regression, but not everything judged could be decided: add runs).`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			thresholds := fs.String("threshold", "", "tolerated changes NAME=CHANGE%,... (p50, p90, p99, p99.9, mean, rps, gbps, latency, throughput, all); the metrics named are judged")
			alpha := fs.Float64("alpha", 0.05, "family-wise error rate: the chance of any wrong ok or regressed verdict")
			metrics := fs.String("metrics", "", "judge these metrics, comma-separated (default: those --threshold names, else p50,p99,rps)")
			format := fs.String("format", "text", "output: text, markdown, json or junit")
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
		return fail(e, "compare", session.Usagef("want BASE CURRENT, or BASE... -- CURRENT... (got %d files and no --)", len(args)))
	}
	var err error
	if base, _, err = expandDirs(base); err != nil {
		return fail(e, "compare", err)
	}
	if cur, _, err = expandDirs(cur); err != nil {
		return fail(e, "compare", err)
	}
	if len(base) == 0 || len(cur) == 0 {
		return fail(e, "compare", session.Usagef("need at least one base and one current results file"))
	}
	write, ok := compareFormats[format]
	if !ok {
		return fail(e, "compare", session.Usagef("unknown --format %q (want text, markdown, json or junit)", format))
	}
	if !(alpha > 0 && alpha < 1) {
		return fail(e, "compare", session.Usagef("--alpha %g is not in (0, 1)", alpha))
	}
	cfg, err := session.CompareConfig(alpha, thresholds, metrics)
	if err != nil {
		return fail(e, "compare", err)
	}
	if slices.Contains(base, stdio) && slices.Contains(cur, stdio) {
		return fail(e, "compare", session.Usagef(`"-" (standard input) can be one side only`))
	}
	b, err := readRuns(e, base)
	if err != nil {
		return fail(e, "compare", session.UsageError{Msg: err.Error()})
	}
	c, err := readRuns(e, cur)
	if err != nil {
		return fail(e, "compare", session.UsageError{Msg: err.Error()})
	}
	cmp, err := results.Compare(b, c, cfg)
	if err != nil {
		return fail(e, "compare", session.UsageError{Msg: err.Error()})
	}
	if err := write(e.stdout, cmp); err != nil {
		return fail(e, "compare", err)
	}
	if code := cmp.ExitCode(); code != exitOK {
		// Also where a CI log shows it next to the exit status, whatever --format wrote.
		fmt.Fprintf(e.stderr, "rpcrdma-bench compare: %s (exit %d)\n", cmp.Verdict, code)
	}
	return cmp.ExitCode()
}

// exitInconclusive is compare's exit status when it could not decide everything it judged.
const exitInconclusive = results.ExitInconclusive

// compareFormats are compare's --format values.
var compareFormats = map[string]func(io.Writer, *results.Comparison) error{
	"text":     results.WriteCompareText,
	"markdown": results.WriteCompareMarkdown,
	"json":     results.WriteCompareJSON,
	"junit":    results.WriteCompareJUnit,
}
