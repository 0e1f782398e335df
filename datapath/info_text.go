package datapath

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints d in a few lines, as `rpcrdma-bench devices` does: the attributes the
// benchmark depends on, then one line per port and one per populated GID.
func (d DeviceInfo) WriteText(w io.Writer) {
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
