package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"
)

// compareCommand is the compare subcommand.
func compareCommand() *command {
	return &command{
		name:    "compare",
		summary: "Judge current results against base ones with confidence intervals: ok, regressed or inconclusive (the CI gate)",
		usage:   "[flags] BASE.json|DIR... -- CURRENT.json|DIR...   (or: BASE CURRENT)",
		examples: `  rpcrdma-bench compare old-*.json -- new-*.json        # p50 +10%, p99 +30%, rps -10%
  rpcrdma-bench compare --threshold 'p99=+10%,throughput=-5%' old-*.json -- new-*.json
  rpcrdma-bench compare --threshold all=5% --metrics p50,p99,rps --format markdown base/*.json -- head/*.json
  rpcrdma-bench compare --format junit base/ -- head/ > compare.xml   # directories: their *.json

The unit is a process of the tool: a results file, or the points of one "process" in it
(--repeat runs its rounds in fresh processes), each the median of its rounds; one process a
side never decides. For each judged metric and point, the change is the Hodges-Lehmann ratio
current/base over the processes with a Mann-Whitney confidence interval; the verdict is
regressed when the interval lies beyond the tolerance, ok when it lies within, inconclusive
when it straddles or the processes are too few for an interval. Holm's step-down procedure
over all judgements keeps the chance of any wrong ok or regressed at most --alpha: more
points and metrics need more processes (5 a side cover up to 12 judgements, 6 up to 46). An
inconclusive headline says what the evidence leans to and what would decide it. Judged: --metrics,
else the metrics --threshold names, else p50, p99 and rps, and at fan-in points jain and
slowest; a metric without a --threshold value has its default tolerance:
` + results.DefaultTolerances() + `.
Disturbed runs (other processes took more than 10% of the host's CPU time, or a collection ran) are left out while enough others remain; with too few left, the
metric is inconclusive and says what it would have been. --report writes the same judgement
to files as well (JUnit: inconclusive is an error, never a skipped case).

Exit status: 0 ok, 1 regressed, 2 bad usage or input, 3 inconclusive (no regression, but not
everything judged could be decided: the headline says what the evidence leans to and what
would decide it), 4 the measurement failed (a base point missing in current).`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			thresholds := fs.String("threshold", "", "tolerated changes NAME=CHANGE%,... (p50, p90, p99, p99.9, mean, rps, gbps, jain, slowest, latency, throughput, fairness, all); the metrics named are judged")
			alpha := fs.Float64("alpha", 0.05, "family-wise error rate: the chance of any wrong ok or regressed verdict")
			metrics := fs.String("metrics", "", "judge these metrics, comma-separated (default: those --threshold names, else p50,p99,rps and at fan-in points jain,slowest)")
			format := fs.String("format", "text", "output: "+cli.FormatHelp(cli.CompareFormats))
			hostTol := fs.Float64("host-tolerance", results.DefaultHostTolerance, "withhold a verdict the host could have made: a regression when the host-speed probe ran more than this many percent slower for the current side, an ok when faster (negative: no check, for sides measured on different machines on purpose)")
			underLoad := fs.Bool("under-load", true, "judge verdicts that rest on disturbed processes when both sides ran under comparable load (median other-process CPU within 10 points); --under-load=false leaves them inconclusive")
			reports := fs.StringArray("report", nil, "also write the comparison to `FILE`, in the format its name says (.json, .bmf.json, .xml JUnit, .md Markdown, .txt); repeat for several")
			return func(e *env, args []string) int {
				return compare(e, fs, cli.CompareFiles{Alpha: *alpha, Thresholds: *thresholds, Metrics: *metrics, Format: *format, Reports: *reports, UnderLoad: *underLoad, HostTolerance: *hostTol}, args)
			}
		},
	}
}

func compare(e *env, fs *pflag.FlagSet, c cli.CompareFiles, args []string) int {
	switch dash := fs.ArgsLenAtDash(); {
	case dash >= 0:
		c.Base, c.Current = args[:dash], args[dash:]
	case len(args) == 2:
		c.Base, c.Current = args[:1], args[1:]
	default:
		return fail(e, "compare", cli.Usagef("want BASE CURRENT, or BASE... -- CURRENT... (got %d files and no --)", len(args)))
	}
	c.Warnings = e.stderr
	cmp, err := cli.Compare(e.stdin, e.stdout, c)
	if err != nil {
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
