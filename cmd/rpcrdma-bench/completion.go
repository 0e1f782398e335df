package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/internal/completion"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// completionValues are the fixed values of the flags that take one, for shell completion.
func completionValues(cmd, flag string) []string {
	switch flag {
	case "provider":
		var names []string
		for _, p := range providers() {
			names = append(names, p.Name())
		}
		return names
	case "poll":
		return []string{"busy", "event", "hybrid"}
	case "memory":
		return []string{"preregistered", "windows"}
	case "inline-rule":
		return []string{"exact", "linux"}
	case "program":
		return []string{"nfs3", "nfs4"}
	case "format":
		return map[string][]string{"report": {"text", "csv", "hlog", "bench", "bmf", "switches", "thresholds", "html"},
			"compare": {"text", "markdown", "json", "junit", "bmf"}, "plot": {"png", "svg", "png,svg"}}[cmd]
	}
	return nil
}

// completion writes the completion script for shell (args[0]) of these commands.
func (commands cli) completion(e *env, args []string) int {
	if len(args) != 1 || args[0] == "--help" || args[0] == "-h" {
		out := e.stderr
		if len(args) == 1 {
			out = e.stdout
		}
		io.WriteString(out, "Usage:\n  rpcrdma-bench completion bash|zsh|fish\n\nExamples:\n"+
			"  source <(rpcrdma-bench completion bash)                  # this shell\n"+
			"  rpcrdma-bench completion fish > ~/.config/fish/completions/rpcrdma-bench.fish\n")
		if len(args) == 1 {
			return exitOK
		}
		return exitUsage
	}
	c := completion.Config{Program: "rpcrdma-bench", Values: completionValues}
	for _, n := range commands.names() {
		fs := pflag.NewFlagSet(n, pflag.ContinueOnError)
		commands[n].flags(fs)
		c.Commands = append(c.Commands, completion.Command{Name: n, Summary: commands[n].summary, Flags: fs})
	}
	if err := completion.Write(e.stdout, args[0], c); err != nil {
		return fail(e, "completion", session.UsageError{Msg: err.Error()})
	}
	return exitOK
}
