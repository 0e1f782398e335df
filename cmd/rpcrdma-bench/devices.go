package main

import (
	"github.com/spf13/pflag"

	"github.com/rpcrdma-bench/rpcrdma-bench/cli"
	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
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
					return fail(e, "devices", cli.Usagef("takes no arguments, got %q", args))
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
	failed, err := cli.Devices(e.stdout, e.stderr, ps, provider != "", device, asJSON)
	switch {
	case err != nil:
		return fail(e, "devices", err)
	case failed:
		return exitFailed
	}
	return exitOK
}
