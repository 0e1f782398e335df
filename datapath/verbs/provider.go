//go:build verbs && cgo

package verbs

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"unsafe"

	"github.com/rpcrdma-bench/rpcrdma-bench/datapath"
	"golang.org/x/sys/unix"
)

// Provider is the verbs provider.
type Provider struct {
	cfg Config

	mu     sync.Mutex
	inline map[string]int // probed max_inline_data by device name
}

var _ datapath.Provider = (*Provider)(nil)

// New returns the provider.
func New(cfg Config) *Provider { return &Provider{cfg: cfg, inline: map[string]int{}} }

// Name is "verbs".
func (p *Provider) Name() string { return "verbs" }

var errLayout = &datapath.OpError{Op: "verbs", Err: errors.New("datapath.SGE or datapath.Completion no longer match the C layout this provider writes in place")}

// contexts returns the verbs contexts librdmacm uses (so that rdma_cm ids resolve to them).
func contexts() ([]*C.struct_ibv_context, **C.struct_ibv_context, error) {
	if !layoutOK() {
		return nil, nil, errLayout
	}
	var n C.int
	list, err := C.rdma_get_devices(&n)
	if list == nil {
		if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENOENT) {
			return nil, nil, nil // no RDMA devices (or no RDMA subsystem)
		}
		if err == nil {
			err = errors.New("rdma_get_devices returned nothing")
		}
		return nil, nil, &datapath.OpError{Op: "rdma_get_devices", Err: err}
	}
	return unsafe.Slice(list, int(n)), list, nil
}

func ctxName(ctx *C.struct_ibv_context) string {
	return C.GoString(C.ibv_get_device_name(ctx.device))
}

// Devices lists the RDMA devices with their attributes. An empty list is not an error.
func (p *Provider) Devices() ([]datapath.DeviceInfo, error) {
	ctxs, list, err := contexts()
	if err != nil {
		return nil, err
	}
	if list != nil {
		defer C.rdma_free_devices(list)
	}
	infos := make([]datapath.DeviceInfo, 0, len(ctxs))
	for _, ctx := range ctxs {
		pd := C.ibv_alloc_pd(ctx)
		if pd == nil {
			return nil, &datapath.OpError{Op: "ibv_alloc_pd " + ctxName(ctx), Err: errors.New("failed")}
		}
		info, err := p.query(ctx, pd)
		C.ibv_dealloc_pd(pd)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// Open opens the named device ("" for the first).
func (p *Provider) Open(name string) (datapath.Device, error) {
	ctxs, list, err := contexts()
	if err != nil {
		return nil, err
	}
	var ctx *C.struct_ibv_context
	var names []string
	for _, c := range ctxs {
		n := ctxName(c)
		names = append(names, n)
		if ctx == nil && (name == "" || name == n) {
			ctx = c
		}
	}
	if ctx == nil {
		if list != nil {
			C.rdma_free_devices(list)
		}
		if len(ctxs) == 0 {
			return nil, &datapath.OpError{Op: "verbs: open", Err: fmt.Errorf("%w: no RDMA devices", datapath.ErrNotSupported)}
		}
		return nil, &datapath.OpError{Op: "verbs: open", Err: fmt.Errorf("no device %q (have %s)", name, strings.Join(names, ", "))}
	}
	pd, cerr := C.ibv_alloc_pd(ctx)
	if pd == nil {
		C.rdma_free_devices(list)
		return nil, &datapath.OpError{Op: "ibv_alloc_pd", Err: cerr}
	}
	info, err := p.query(ctx, pd)
	if err != nil {
		C.ibv_dealloc_pd(pd)
		C.rdma_free_devices(list)
		return nil, err
	}
	d := &device{p: p, list: list, ctx: ctx, pd: pd, info: info, mrs: map[uint32]*mr{}}
	d.cdev = (*C.struct_vb_dev)(C.calloc(1, C.sizeof_struct_vb_dev))
	if d.cdev == nil {
		C.ibv_dealloc_pd(pd)
		C.rdma_free_devices(list)
		return nil, &datapath.OpError{Op: "verbs: open", Err: unix.ENOMEM}
	}
	for i := range C.VB_MAX_QPS {
		d.slots = append(d.slots, i)
	}
	d.ip = deviceIP(info)
	return d, nil
}

func (p *Provider) query(ctx *C.struct_ibv_context, pd *C.struct_ibv_pd) (datapath.DeviceInfo, error) {
	name := ctxName(ctx)
	var a C.struct_vb_dev_attr
	if rc := C.vb_query_device(ctx, &a); rc != 0 {
		return datapath.DeviceInfo{}, opErr("ibv_query_device "+name, rc)
	}
	info := datapath.DeviceInfo{
		Name:            name,
		Provider:        "verbs",
		NodeType:        nodeType(int(a.node_type)),
		FirmwareVersion: C.GoString(&a.fw_ver[0]),
		NodeGUID:        guid(uint64(a.node_guid)),
		VendorID:        uint32(a.vendor_id),
		VendorPartID:    uint32(a.vendor_part_id),
		MaxSGE:          int(a.max_sge),
		MaxQPWR:         int(a.max_qp_wr),
		MaxCQE:          int(a.max_cqe),
		MaxQPRdAtom:     int(min(a.max_qp_rd_atom, a.max_qp_init_rd_atom)),
		MaxMRSize:       uint64(a.max_mr_size),
		MaxMW:           int(a.max_mw),
	}
	p.mu.Lock()
	inl, ok := p.inline[name]
	p.mu.Unlock()
	if !ok {
		rc := C.vb_probe_inline(ctx, pd, C.int(p.cfg.inlineProbeMax()))
		if rc < 0 {
			return info, opErr("ibv_create_qp (inline probe) "+name, rc)
		}
		inl = int(rc)
		p.mu.Lock()
		p.inline[name] = inl
		p.mu.Unlock()
	}
	info.MaxInlineData = inl
	var ifaces []net.Interface // listed once, for iWARP GIDs without a netdev
	for port := 1; port <= int(a.phys_port_cnt); port++ {
		var pa C.struct_vb_port_attr
		if rc := C.vb_query_port(ctx, C.int(port), &pa); rc != 0 {
			return info, opErr(fmt.Sprintf("ibv_query_port %s/%d", name, port), rc)
		}
		pi := datapath.PortInfo{
			Num:       port,
			State:     portState(int(pa.state)),
			ActiveMTU: int(pa.active_mtu),
			LinkLayer: linkLayer(int(pa.link_layer)),
		}
		for i := 0; i < int(pa.gid_tbl_len); i++ {
			var g C.struct_vb_gid
			if C.vb_query_gid(ctx, C.int(port), C.int(i), &g) != 0 {
				continue // empty entry (ENODATA)
			}
			raw := C.GoBytes(unsafe.Pointer(&g.raw[0]), 16)
			if allZero(raw) {
				continue
			}
			netdev := C.GoString(&g.netdev[0])
			if netdev == "" && info.NodeType == "RNIC" {
				if ifaces == nil {
					ifaces, _ = net.Interfaces()
				}
				netdev = iwarpNetDev(raw, ifaces)
			}
			pi.GIDs = append(pi.GIDs, datapath.GIDInfo{
				Index:  i,
				GID:    gidString(raw),
				Type:   gidLabel(int(g._type) == C.IBV_GID_TYPE_ROCE_V2, info.NodeType),
				NetDev: netdev,
			})
		}
		info.Ports = append(info.Ports, pi)
	}
	return info, nil
}

// gidString writes a GID as eight groups of four hex digits, as ibv_devinfo -v and sysfs do
// (net.IP would print an IPv4-mapped GID as a bare IPv4 address).
func gidString(raw []byte) string {
	var b strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02x%02x", raw[i], raw[i+1])
	}
	return b.String()
}

func guid(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

func nodeType(t int) string {
	switch t {
	case C.IBV_NODE_CA:
		return "CA"
	case C.IBV_NODE_SWITCH:
		return "switch"
	case C.IBV_NODE_ROUTER:
		return "router"
	case C.IBV_NODE_RNIC:
		return "RNIC"
	case C.IBV_NODE_USNIC, C.IBV_NODE_USNIC_UDP:
		return "usNIC"
	}
	return "unknown"
}

func portState(s int) string {
	switch s {
	case C.IBV_PORT_DOWN:
		return "DOWN"
	case C.IBV_PORT_INIT:
		return "INIT"
	case C.IBV_PORT_ARMED:
		return "ARMED"
	case C.IBV_PORT_ACTIVE:
		return "ACTIVE"
	case C.IBV_PORT_ACTIVE_DEFER:
		return "ACTIVE_DEFER"
	}
	return "NOP"
}

func linkLayer(l int) string {
	if l == C.IBV_LINK_LAYER_ETHERNET {
		return "Ethernet"
	}
	return "InfiniBand"
}

// deviceIP is the address Listen and Connect bind to by default: an address of the network
// interface behind the device's GIDs (IPv4 preferred), so rdma_cm resolves to this device.
func deviceIP(info datapath.DeviceInfo) net.IP {
	var v6 net.IP
	for _, p := range info.Ports {
		for _, g := range p.GIDs {
			if g.NetDev == "" {
				continue
			}
			ifi, err := net.InterfaceByName(g.NetDev)
			if err != nil {
				continue
			}
			addrs, _ := ifi.Addrs()
			for _, a := range addrs {
				ipn, ok := a.(*net.IPNet)
				if !ok {
					continue
				}
				if ip4 := ipn.IP.To4(); ip4 != nil {
					return ip4
				}
				if v6 == nil && ipn.IP.IsGlobalUnicast() {
					v6 = ipn.IP
				}
			}
		}
	}
	return v6
}
