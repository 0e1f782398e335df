package nfs3

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc"
	"github.com/rpcrdma-bench/rpcrdma-bench/oncrpc/internal/nfsbase"
)

// NFSPort is the NFS service's TCP port (RFC 1813; the Linux server's default).
const NFSPort = "2049"

// Setup finds the files a run names on host's export: the export's root handle from mountd
// (MNT), then the handles of readName and writeName (LOOKUP) and readName's size
// (GETATTR), over NFS on TCP port 2049, before any RPC-over-RDMA connection exists. The
// files must exist; with verify, readName must hold the benchmark pattern keyed by
// PatternSeed (see Files). Errors name the step, the file and the cause (an NFS3ERR_*
// status, an unreachable server).
func (c *MountConfig) Setup(ctx context.Context, host, export, readName, writeName string) (Files, error) {
	f := Files{Seed: PatternSeed, Name: readName}
	root, _, err := c.Mount(ctx, host, export)
	if err != nil {
		return f, err
	}
	f.Dir = root
	where := host + ":" + strings.TrimSuffix(export, "/")
	if f.Read, err = c.lookup(ctx, host, root, readName); err != nil {
		return f, fmt.Errorf("nfs %s/%s: %w", where, readName, err)
	}
	if f.Write, err = c.lookup(ctx, host, root, writeName); err != nil {
		return f, fmt.Errorf("nfs %s/%s: %w", where, writeName, err)
	}
	attr, err := c.getattr(ctx, host, f.Read)
	if err != nil {
		return f, fmt.Errorf("nfs %s/%s: %w", where, readName, err)
	}
	if err := nfsbase.CheckRegular(where+"/"+readName, attr.Type == TypeReg, attr.Type); err != nil {
		return f, fmt.Errorf("nfs %w", err)
	}
	f.Size = attr.Size
	return f, nil
}

// Call makes one NFSv3 call (AUTH_SYS) to host over TCP and returns its result body: for
// setting up files and for recording a server's replies, not for measuring.
func (c *MountConfig) Call(ctx context.Context, host string, proc uint32, args []byte) ([]byte, error) {
	cred, err := c.cred()
	if err != nil {
		return nil, err
	}
	call := oncrpc.Call{Prog: Program, Vers: Version, Proc: proc, Cred: cred}
	return c.call(ctx, net.JoinHostPort(host, NFSPort), &call, args)
}

func (c *MountConfig) lookup(ctx context.Context, host string, dir FH, name string) (FH, error) {
	a := LookupArgs{Dir: dir, Name: []byte(name)}
	b := make([]byte, a.Size())
	if _, err := a.Encode(b); err != nil {
		return nil, fmt.Errorf("LOOKUP: %w", err)
	}
	body, err := c.Call(ctx, host, ProcLookup, b)
	if err != nil {
		return nil, fmt.Errorf("LOOKUP: %w", err)
	}
	var r LookupRes
	if _, err := r.Decode(body); err != nil {
		return nil, fmt.Errorf("LOOKUP: result: %w", err)
	}
	if r.Status != OK {
		return nil, fmt.Errorf("LOOKUP: %v", r.Status)
	}
	return FH(append([]byte{}, r.FH...)), nil
}

func (c *MountConfig) getattr(ctx context.Context, host string, fh FH) (Fattr3, error) {
	a := GetattrArgs{FH: fh}
	b := make([]byte, a.Size())
	if _, err := a.Encode(b); err != nil {
		return Fattr3{}, fmt.Errorf("GETATTR: %w", err)
	}
	body, err := c.Call(ctx, host, ProcGetattr, b)
	if err != nil {
		return Fattr3{}, fmt.Errorf("GETATTR: %w", err)
	}
	var r GetattrRes
	if _, err := r.Decode(body); err != nil {
		return Fattr3{}, fmt.Errorf("GETATTR: result: %w", err)
	}
	if r.Status != OK {
		return Fattr3{}, fmt.Errorf("GETATTR: %v", r.Status)
	}
	return r.Attr, nil
}
