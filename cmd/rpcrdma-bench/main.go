// Command rpcrdma-bench measures RPC-over-RDMA transports: latency and throughput of real
// RPCs through the protocol's short, chunked and long message classes, on the pure-Go soft
// provider or on RDMA hardware through libibverbs.
//
// Usage:
//
//	rpcrdma-bench COMMAND [flags]
//
// Run "rpcrdma-bench help" for the commands and "rpcrdma-bench COMMAND --help" for each
// command's flags and examples.
//
// Exit status: 0 when the command did what was asked; 1 when the gate (compare, or a
// measuring command's --baseline) found a regression; 2 for bad usage or bad input (an
// unknown flag, a malformed size, CPU list or results file); 3 when the gate could not
// decide; 4 when the command or its measurement failed or was interrupted (results measured
// before the failure are still written) or a base point is missing from current.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/internal/completion"
	"github.com/rpcrdma-bench/rpcrdma-bench/results"

	"github.com/spf13/pflag"
)

// Exit codes; bad usage is a cli.UsageError.
const (
	exitOK     = 0
	exitFailed = results.ExitFailed // the command or its measurement failed or was interrupted
	exitUsage  = 2                  // bad usage or bad input
)

func main() {
	os.Exit(newCLI(builtinCommands()...).MainIO(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// env is what a command runs with: where it reads "-" from and where it writes, so tests
// can supply and capture them.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// args are the command and its arguments, as a new process of the tool takes them.
	args []string
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	// usage is the synopsis line after "rpcrdma-bench NAME".
	usage string
	// examples is shown under the flags in --help.
	examples string
	// flags declares the command's flags on fs and returns the function that runs it with
	// the parsed flags and the remaining arguments.
	flags func(fs *pflag.FlagSet) func(e *env, args []string) int
}

// builtinCommands are the subcommands this binary has, all listed here: those that measure
// and serve (with the transport engine's connectors), then those that work on results files
// and describe the build.
func builtinCommands() []*command {
	return append(engineCommands(openEngine, openServer),
		reportCommand(), plotCommand(), compareCommand(), devicesCommand(), versionCommand(), faninCommand())
}

// commandSet is a set of commands by name: the binary's own in main, with fakes in tests.
type commandSet map[string]*command

func newCLI(cs ...*command) commandSet {
	m := make(commandSet, len(cs))
	for _, c := range cs {
		m[c.name] = c
	}
	return m
}

// Main runs the CLI with args (without the program name) and an empty standard input, and
// returns the exit status.
func (commands commandSet) Main(args []string, stdout, stderr io.Writer) int {
	return commands.MainIO(args, strings.NewReader(""), stdout, stderr)
}

// MainIO is Main reading standard input from stdin (results named "-").
func (commands commandSet) MainIO(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, args: args}
	if len(args) == 0 {
		commands.usage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "--version":
		name = "version"
	case "completion":
		return commands.completion(e, args[1:])
	case "help", "-h", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return runCommand(e, c, []string{"--help"})
			}
			fmt.Fprintf(e.stderr, "rpcrdma-bench: unknown command %q%s\n", args[1], suggest(args[1], commands.names()))
			return exitUsage
		}
		commands.usage(e.stdout)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(e.stderr, "rpcrdma-bench: unknown command %q%s\nRun 'rpcrdma-bench help' for the list of commands.\n", name, suggest(name, commands.names()))
		return exitUsage
	}
	return runCommand(e, c, args[1:])
}

func runCommand(e *env, c *command, args []string) int {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard) // errors are reported below, once, with the command's name
	run := c.flags(fs)
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		commandUsage(e.stdout, c, fs)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v%s\nRun 'rpcrdma-bench %s --help' for usage.\n", c.name, err, flagHint(err, fs), c.name)
		return exitUsage
	}
	return run(e, fs.Args())
}

func (commands commandSet) usage(w io.Writer) {
	fmt.Fprintln(w, "rpcrdma-bench measures RPC-over-RDMA (RFC 8166) latency and throughput.")
	fmt.Fprintln(w, "\nUsage:\n  rpcrdma-bench COMMAND [flags]\n\nCommands:")
	for _, n := range commands.names() {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "  %-9s %s\n", "completion", "Print a shell completion script: bash, zsh or fish")
	fmt.Fprintln(w, "\nRun 'rpcrdma-bench COMMAND --help' for a command's flags and examples; --version is 'version'.")
	fmt.Fprintln(w, "\nExit status:")
	for _, x := range exitStatuses {
		fmt.Fprintf(w, "  %d  %s\n", x.code, x.meaning)
	}
}

// exitStatuses are the exit codes the commands use, one help line each.
var exitStatuses = []struct {
	code    int
	meaning string
}{
	{exitOK, "ok"},
	{results.ExitRegression, "regressed: compare or --baseline found a regression beyond its tolerance"},
	{exitUsage, "bad usage or input: an unknown flag, a malformed value, an unreadable results file"},
	{exitInconclusive, "inconclusive: compare, --baseline or --repeat auto could not decide every judged metric"},
	{exitFailed, "failed: the command or its measurement failed or was interrupted (what it measured is written), or a base point is missing"},
}

func commandUsage(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  rpcrdma-bench %s %s\n", c.summary, c.name, c.usage)
	if fl := fs.FlagUsages(); fl != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", fl)
	}
	if c.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(c.examples, "\n"))
	}
}

// fail reports err for command name and returns the exit status it calls for.
func fail(e *env, name string, err error) int {
	fmt.Fprintf(e.stderr, "rpcrdma-bench %s: %v\n", name, err)
	var ue cli.UsageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailed
}

// names are the commands' names, sorted.
func (commands commandSet) names() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// perftestFlags are perftest's single-dash flags and what says the same here; the rest of the
// map is in docs/usage.md, "From perftest".
var perftestFlags = map[string]struct{ flag, note string }{
	"s": {"sizes", "perftest's -s SIZE is --sizes SIZE"},
	"n": {"count", "perftest's -n ITERS is --count N"},
	"D": {"duration", "perftest's -D SECS is --duration with a unit: -D 2 is --duration 2s"},
	"d": {"device", "perftest's -d DEV is --device DEV"},
	"t": {"depth", "perftest's -t DEPTH is --depth N"},
}

// flagHint is what to add to a flag parsing error: "did you mean --NAME?" for a mistyped
// long flag, the two dashes a Go-style -NAME lacks, or the flag that does what a perftest
// flag did.
func flagHint(err error, fs *pflag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		if s := completion.Closest(name, names); s != "" {
			return "; did you mean --" + s + "?"
		}
		return ""
	}
	// pflag: "unknown shorthand flag: 'd' in -duration"
	_, tok, ok := strings.Cut(err.Error(), "' in -")
	if !ok || !strings.HasPrefix(err.Error(), "unknown shorthand flag: ") {
		return ""
	}
	tok, _, _ = strings.Cut(tok, "=")
	if p, ok := perftestFlags[tok]; ok && fs.Lookup(p.flag) != nil {
		return "; " + p.note + " (more in docs/usage.md, 'From perftest')"
	}
	if fs.Lookup(tok) != nil {
		return "; long flags take two dashes: --" + tok
	}
	if s := completion.Closest(tok, names); s != "" && len(tok) > 1 {
		return "; long flags take two dashes: did you mean --" + s + "?"
	}
	return ""
}

// suggest is "; did you mean NAME?" for the one of names closest to a mistyped word, "" when
// none is close.
func suggest(word string, names []string) string {
	if s := completion.Closest(word, names); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}
