package datapath

// DeviceInfo are a device's attributes, as ibv_query_device and ibv_query_port report them.
// The whole struct goes into results files, so its JSON names are part of the schema.
type DeviceInfo struct {
	Name            string `json:"name"`
	Provider        string `json:"provider"`
	NodeType        string `json:"node_type,omitempty"` // "CA", "RNIC", "soft"
	FirmwareVersion string `json:"firmware_version,omitempty"`
	NodeGUID        string `json:"node_guid,omitempty"`
	VendorID        uint32 `json:"vendor_id,omitempty"`
	VendorPartID    uint32 `json:"vendor_part_id,omitempty"`
	// MaxInlineData is what an RC queue pair on this device actually accepts (probed by
	// creating one), not a hope.
	MaxInlineData int        `json:"max_inline_data"`
	MaxSGE        int        `json:"max_sge"`
	MaxQPWR       int        `json:"max_qp_wr"`
	MaxCQE        int        `json:"max_cqe"`
	MaxQPRdAtom   int        `json:"max_qp_rd_atom"`
	MaxMRSize     uint64     `json:"max_mr_size"`
	MaxMW         int        `json:"max_mw"`
	Ports         []PortInfo `json:"ports"`
}

// PortInfo describes one port.
type PortInfo struct {
	Num       int       `json:"num"`
	State     string    `json:"state"` // "ACTIVE", "DOWN", ...
	ActiveMTU int       `json:"active_mtu"`
	LinkLayer string    `json:"link_layer"` // "InfiniBand", "Ethernet", "soft"
	GIDs      []GIDInfo `json:"gids,omitempty"`
}

// GIDInfo is one populated GID table entry.
type GIDInfo struct {
	Index  int    `json:"index"`
	GID    string `json:"gid"`
	Type   string `json:"type,omitempty"` // "IB/RoCE v1", "RoCE v2"
	NetDev string `json:"netdev,omitempty"`
}
