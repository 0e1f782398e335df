package main

import (
	"fmt"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/spf13/pflag"
)

// versionCommand is the version subcommand.
func versionCommand() *command {
	return &command{
		name:     "version",
		summary:  "Print the version, commit, Go version and the providers compiled in",
		usage:    "",
		examples: "  rpcrdma-bench version",
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, "version", cli.Usagef("takes no arguments, got %q", args))
				}
				fmt.Fprint(e.stdout, cli.Version(providers()))
				return exitOK
			}
		},
	}
}
