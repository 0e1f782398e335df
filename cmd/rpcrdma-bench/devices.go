package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"github.com/rpcrdma-bench/rpcrdma-bench/session"
)

// devicesCommand is the devices subcommand.
func devicesCommand() *command {
	return &command{
		name:    "devices",
		summary: "List providers and their devices with attributes (a short ibv_devinfo)",
		usage:   "[--provider NAME] [--device NAME] [--json]",
		examples: `  rpcrdma-bench devices                      # every provider and device
  rpcrdma-bench devices --provider verbs     # only RDMA hardware (build with -tags verbs)
  rpcrdma-bench devices --device rxe0 --json # one device, as the results files record it`,
		flags: func(fs *pflag.FlagSet) func(*env, []string) int {
			provider := fs.String("provider", "", "list only this provider's devices")
			device := fs.String("device", "", "list only the device with this name")
			asJSON := fs.Bool("json", false, "print the attributes as JSON (datapath.DeviceInfo)")
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return fail(e, "devices", session.Usagef("takes no arguments, got %q", args))
				}
				return devices(e, *provider, *device, *asJSON)
			}
		},
	}
}

func devices(e *env, provider, device string, asJSON bool) int {
	ps := providers()
	if provider != "" {
		p, err := lookupProvider(provider)
		if err != nil {
			return fail(e, "devices", err)
		}
		ps = []datapath.Provider{p}
	}
	var (
		all    = []datapath.DeviceInfo{}
		failed bool
		found  bool
	)
	for _, p := range ps {
		infos, err := p.Devices()
		if errors.Is(err, datapath.ErrNotSupported) {
			if provider != "" {
				// Asked for by name: its absence is the answer, and a failure.
				fmt.Fprintf(e.stderr, "rpcrdma-bench devices: %s: not available: %s\n", p.Name(), unprefixed(p.Name(), err))
				failed = true
			} else if !asJSON {
				fmt.Fprintf(e.stdout, "%s: not available: %s\n", p.Name(), unprefixed(p.Name(), err))
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "rpcrdma-bench devices: %s: %s\n", p.Name(), unprefixed(p.Name(), err))
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
				d.WriteText(e.stdout)
			}
		}
		if len(infos) == 0 && device == "" && !asJSON {
			fmt.Fprintf(e.stdout, "%s: no devices\n", p.Name())
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return fail(e, "devices", err)
		}
	}
	if device != "" && !found {
		fmt.Fprintf(e.stderr, "rpcrdma-bench devices: no device %q\n", device)
		return exitFailed
	}
	if failed {
		return exitFailed
	}
	return exitOK
}

// unprefixed is err's text without the "NAME: " its provider put in front, which the line
// printing it already says.
func unprefixed(name string, err error) string {
	return strings.TrimPrefix(err.Error(), name+": ")
}
