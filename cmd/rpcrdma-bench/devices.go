package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

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
					return fail(e, "devices", usageErrorf("takes no arguments, got %q", args))
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
				writeDevice(e.stdout, d)
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

// writeDevice prints one device in a few lines: the attributes the benchmark depends on,
// then one line per port and one per populated GID.
func writeDevice(w io.Writer, d datapath.DeviceInfo) {
	fmt.Fprintf(w, "%s  provider %s  node %s", d.Name, d.Provider, orDash(d.NodeType))
	if d.FirmwareVersion != "" {
		fmt.Fprintf(w, "  fw %s", d.FirmwareVersion)
	}
	if d.NodeGUID != "" {
		fmt.Fprintf(w, "  guid %s", d.NodeGUID)
	}
	if d.VendorID != 0 || d.VendorPartID != 0 {
		fmt.Fprintf(w, "  vendor %#x part %d", d.VendorID, d.VendorPartID)
	}
	fmt.Fprintf(w, "\n  max_inline_data %d  max_sge %d  max_qp_wr %d  max_qp_rd_atom %d  max_cqe %d  max_mr_size %s  max_mw %d\n",
		d.MaxInlineData, d.MaxSGE, d.MaxQPWR, d.MaxQPRdAtom, d.MaxCQE, fmtBytes(d.MaxMRSize), d.MaxMW)
	for _, p := range d.Ports {
		fmt.Fprintf(w, "  port %d  %s  mtu %d  link %s\n", p.Num, orDash(p.State), p.ActiveMTU, orDash(p.LinkLayer))
		for _, g := range p.GIDs {
			extra := strings.TrimSpace(g.Type + "  " + g.NetDev)
			fmt.Fprintf(w, "    gid[%d] %s  %s\n", g.Index, g.GID, extra)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtBytes(n uint64) string {
	switch {
	case n >= 1<<40 && n%(1<<40) == 0:
		return fmt.Sprintf("%dT", n>>40)
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dG", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	}
	return fmt.Sprint(n)
}

// unprefixed is err's text without the "NAME: " its provider put in front, which the line
// printing it already says.
func unprefixed(name string, err error) string {
	return strings.TrimPrefix(err.Error(), name+": ")
}
