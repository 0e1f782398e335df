package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
)

// Devices writes the devices of providers ps to stdout, as text or as JSON (a list of
// datapath.DeviceInfo), only the one named device when it is not "", and a provider's
// failure to stderr; named says ps is the one provider asked for by name, whose absence is
// a failure. failed says something asked for was not found or failed; err is a failure to
// write the JSON.
func Devices(stdout, stderr io.Writer, ps []datapath.Provider, named bool, device string, asJSON bool) (failed bool, err error) {
	all, found := []datapath.DeviceInfo{}, false
	for _, p := range ps {
		infos, err := p.Devices()
		if errors.Is(err, datapath.ErrNotSupported) {
			if named {
				// Asked for by name: its absence is the answer, and a failure.
				fmt.Fprintf(stderr, "rpcrdma-bench devices: %s: not available: %s\n", p.Name(), unprefixed(p.Name(), err))
				failed = true
			} else if !asJSON {
				fmt.Fprintf(stdout, "%s: not available: %s\n", p.Name(), unprefixed(p.Name(), err))
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "rpcrdma-bench devices: %s: %s\n", p.Name(), unprefixed(p.Name(), err))
			failed = true
			continue
		}
		for _, d := range infos {
			if device != "" && d.Name != device {
				continue
			}
			found = true
			if d.Provider == "" {
				d.Provider = p.Name()
			}
			all = append(all, d)
			if !asJSON {
				d.WriteText(stdout)
			}
		}
		if len(infos) == 0 && device == "" && !asJSON {
			fmt.Fprintf(stdout, "%s: no devices\n", p.Name())
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return failed, err
		}
	}
	if device != "" && !found {
		fmt.Fprintf(stderr, "rpcrdma-bench devices: no device %q\n", device)
		failed = true
	}
	return failed, nil
}

// unprefixed is err's text without the "NAME: " its provider put in front, which the line
// printing it already says.
func unprefixed(name string, err error) string {
	return strings.TrimPrefix(err.Error(), name+": ")
}

// Version is the module version and VCS state from the build info, the Go version and each
// provider of ps with whether it works in this binary.
func Version(ps []datapath.Provider) string {
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
	for _, p := range ps {
		fmt.Fprintf(&b, " %s", p.Name())
		if _, err := p.Devices(); errors.Is(err, datapath.ErrNotSupported) {
			fmt.Fprintf(&b, " (unavailable: %s)", unprefixed(p.Name(), err))
		}
	}
	if len(ps) == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\n")
	return b.String()
}
