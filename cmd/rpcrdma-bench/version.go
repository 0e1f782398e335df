package main

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
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
					return fail(e, "version", session.Usagef("takes no arguments, got %q", args))
				}
				fmt.Fprint(e.stdout, versionText())
				return exitOK
			}
		},
	}
}

// versionText is the module version and VCS state from the build info, the Go version and
// each provider with whether it works in this binary.
func versionText() string {
	var b strings.Builder
	version, commit := "(devel)", "unknown"
	var when, dirty string
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = " " + s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = " (modified)"
				}
			}
		}
	}
	fmt.Fprintf(&b, "rpcrdma-bench %s\ncommit %s%s%s\n%s %s/%s\n", version, commit, dirty, when, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	b.WriteString("providers:")
	for _, p := range providers() {
		fmt.Fprintf(&b, " %s", p.Name())
		if _, err := p.Devices(); errors.Is(err, datapath.ErrNotSupported) {
			fmt.Fprintf(&b, " (unavailable: %s)", unprefixed(p.Name(), err))
		}
	}
	if len(providers()) == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\n")
	return b.String()
}
